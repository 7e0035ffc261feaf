"""The flip (RULES.md M-VOTE-6, M-ROLE-1): the post that announces an imprisonment or a death names the player's
role, side and an insane cop's insanity; a modkill flips only when the host chooses."""
from __future__ import annotations

import pytest

from cities.models import LifeStatus
from rulesets.m21 import services
from rulesets.m21.console_services import do_modkill_m21_player
from rulesets.m21.flips import flip_text

from .day_helpers import build_game

pytestmark = pytest.mark.django_db


def site_posts(table) -> list[str]:
    return list(table.thread.messages.filter(author_resident__isnull=True, author_user__isnull=True)
                .order_by("received_at", "id").values_list("body", flat=True))


def hammer_on(table, target: str) -> None:
    voters = [n for n in table.users if n != target][:4]
    for name in voters:
        table.post(name, f"##VOTE {target}\n##END")


def test_flip_text_names_role_side_and_insanity_M_VOTE_6_M_ROLE_1():
    assert flip_text("godfather") == "They were the Godfather (Mafia)."
    assert flip_text("cop", sane=False) == "They were the Cop (Town). They were INSANE."
    assert flip_text("cop") == "They were the Cop (Town)."
    # Sanity means nothing for a role that is not a cop.
    assert flip_text("citizen", sane=False) == "They were the Law-abiding citizen (Town)."


def test_the_hammer_post_flips_the_imprisoned_player_M_VOTE_6():
    table = build_game()
    godfather = table.name_of_role("godfather")
    hammer_on(table, godfather)
    assert table.seat(godfather).status == LifeStatus.IMPRISONED
    assert any(p.startswith(f"**Day 1 is over:** the hammer fell. **{godfather} is imprisoned.** "
                            f"They were the Godfather (Mafia).") for p in site_posts(table))
    assert table.seat(godfather).alignment_announced is True


def test_an_insane_cop_imprisoned_at_the_deadline_flips_with_the_insanity_M_VOTE_6_M_ROLE_1():
    table = build_game(cop_insanity=1)
    cop = table.name_of_role("cop")
    voters = [n for n in table.users if n != cop][:3]
    for name in voters:
        table.post(name, f"##VOTE {cop}")
    table.run_clock(table.day(1).deadline)
    assert table.seat(cop).status == LifeStatus.IMPRISONED
    assert any(f"the deadline passed. **{cop} is imprisoned.** They were the Cop (Town). They were INSANE." in p
               for p in site_posts(table))


def test_a_modkill_flips_an_insane_cop_only_when_the_host_reveals_M_VOTE_6_M_SETUP_4():
    table = build_game(cop_insanity=1)
    cop, citizen = table.name_of_role("cop"), table.names_of_roles("citizen")[0]
    do_modkill_m21_player(table.seat(cop), reveal_role=True, acting_user=table.host, now=table.tick())
    do_modkill_m21_player(table.seat(citizen), reveal_role=False, acting_user=table.host, now=table.tick())
    posts = site_posts(table)
    assert f"**{cop} has been removed from the game.** They were the Cop (Town). They were INSANE." in posts
    assert f"**{citizen} has been removed from the game.**" in posts
    assert not any(p.startswith(f"**{citizen} has been removed") and "They were" in p for p in posts)


def test_a_judges_casting_vote_post_flips_too_M_VOTE_6():
    table = build_game()
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    town = [n for n in table.users if n not in (godfather, hooker)]
    table.post(town[0], f"##VOTE {godfather}")
    table.post(town[1], f"##VOTE {godfather}")
    table.post(town[2], f"##VOTE {hooker}")
    table.post(town[3], f"##VOTE {hooker}")
    judge = table.name_of_role("judge")
    table.run_clock(table.day(1).deadline)
    services.do_cast_judge_vote(table.game, table.seat(godfather), acting_user=table.users[judge], now=table.tick())
    assert any(f"**{godfather} is imprisoned.** They were the Godfather (Mafia). The Judge's casting vote" in p
               for p in site_posts(table))
