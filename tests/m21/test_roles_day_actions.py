"""Day actions of roles and items through the services (RULES.md M-ROLE reporter, item cop and desperado,
M-MAFIA-2, M-ITEM-1)."""
from __future__ import annotations

import pytest

from cities.models import LifeStatus
from inboxes.models import Message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.m21 import night_services as ns
from rulesets.m21 import role_services as rs
from rulesets.m21.night_models import HoldingPlace, M21Holding

from .day_helpers import build_game
from .test_night_services import end_night, mafia_post, role_pm_texts, to_night

pytestmark = pytest.mark.django_db

SETUP = {"citizen": 2, "reporter": 1, "item_cop": 1, "desperado": 1, "godfather": 1, "goon": 1}


def thread_texts(table) -> list[str]:
    return list(Message.objects.filter(inbox=table.thread).order_by("received_at", "id").values_list("body",
                                                                                                      flat=True))


def give(table, name: str, item: str) -> None:
    M21Holding.objects.create(game=table.game, item=item, place=HoldingPlace.SEAT, seat=table.seat(name),
                              source="stash", since=table.now)


def test_the_reporters_extra_is_published_once_with_at_most_ten_words_M_ROLE():
    table = build_game(setup=SETUP)
    reporter = table.name_of_role("reporter")
    with pytest.raises(InvalidInput, match="An extra has at most 10 words; yours has 11."):
        rs.do_publish_extra(table.game, text=" ".join(["word"] * 11), acting_user=table.users[reporter],
                            now=table.tick())
    with pytest.raises(NotAllowed, match="Only the reporter publishes an extra."):
        rs.do_publish_extra(table.game, text="hello", acting_user=table.users[table.name_of_role("goon")],
                            now=table.tick())
    rs.do_publish_extra(table.game, text="The  godfather wears   a red hat", acting_user=table.users[reporter],
                        now=table.tick())
    assert thread_texts(table)[-1] == "**EXTRA, EXTRA!** The godfather wears a red hat"
    with pytest.raises(WrongState, match="You have already published your extra."):
        rs.do_publish_extra(table.game, text="again", acting_user=table.users[reporter], now=table.tick())


def test_a_gun_fired_by_day_kills_at_once_and_is_spent_M_MAFIA_2_M_ITEM_1():
    table = build_game(setup=SETUP)
    goon = table.name_of_role("goon")
    citizen = table.names_of_roles("citizen")[0]
    give(table, goon, "gun")
    assert rs.do_fire_gun(table.game, target=citizen, acting_user=table.users[goon], now=table.tick()) is True
    assert table.seat(citizen).status == LifeStatus.DEAD
    assert thread_texts(table)[-1].startswith(f"**{citizen} has died.** They were the Law-abiding citizen.")
    with pytest.raises(NotAllowed, match="You hold no gun."):
        rs.do_fire_gun(table.game, target=table.name_of_role("reporter"), acting_user=table.users[goon],
                       now=table.tick())


def test_a_desperado_who_killed_a_mafioso_is_immune_to_gunshots_the_next_day_M_ROLE():
    table = build_game(setup=SETUP)
    desperado, goon = table.name_of_role("desperado"), table.name_of_role("goon")
    godfather = table.name_of_role("godfather")
    night = to_night(table)
    ns.do_submit_night_action(table.game, option="shoot", target=goon, acting_user=table.users[desperado],
                              now=table.tick())
    end_night(table, night)
    assert table.seat(goon).status == LifeStatus.DEAD
    assert "**Night 1.** You killed " + goon + ", a member of the Mafia: you are immune to gunshots today." in \
        role_pm_texts(table, desperado)
    give(table, godfather, "gun")
    assert rs.do_fire_gun(table.game, target=desperado, acting_user=table.users[godfather], now=table.tick()) is False
    assert table.seat(desperado).status == LifeStatus.ALIVE
    assert thread_texts(table)[-1] == f"A shot rang out: **{desperado}** survived it."


def test_the_item_cop_confiscates_a_found_item_the_next_day_into_the_safe_M_ROLE():
    table = build_game(setup=SETUP)
    item_cop, goon = table.name_of_role("item_cop"), table.name_of_role("goon")
    give(table, goon, "gun")
    night = to_night(table)
    ns.do_submit_night_action(table.game, option="investigate", target=goon, acting_user=table.users[item_cop],
                              now=table.tick())
    mafia_post(table, goon, f"kill {table.name_of_role('reporter')}")
    end_night(table, night)
    with pytest.raises(InvalidInput, match="You can confiscate only an item you found last night."):
        rs.do_confiscate_item(table.game, target=goon, item="whiskey", acting_user=table.users[item_cop],
                              now=table.tick())
    rs.do_confiscate_item(table.game, target=goon, item="gun", acting_user=table.users[item_cop], now=table.tick())
    assert ns.confiscated_items(table.game) == ["gun"]
    assert "The police confiscated your Gun." in role_pm_texts(table, goon)
    with pytest.raises(NotAllowed, match="You hold no gun."):
        rs.do_fire_gun(table.game, target=item_cop, acting_user=table.users[goon], now=table.tick())
    with pytest.raises(WrongState, match="You have already confiscated an item."):
        rs.do_confiscate_item(table.game, target=goon, item="gun", acting_user=table.users[item_cop],
                              now=table.tick())


def test_the_coroner_learns_the_killers_role_once_the_day_after_the_kill_M_ROLE():
    table = build_game(setup={"citizen": 2, "coroner": 1, "cop": 1, "desperado": 1, "godfather": 1, "goon": 1})
    coroner, goon = table.name_of_role("coroner"), table.name_of_role("goon")
    cop = table.name_of_role("cop")
    night = to_night(table)
    mafia_post(table, goon, f"kill {cop}")
    end_night(table, night)
    with pytest.raises(InvalidInput, match="A post mortem is done on a player killed last night"):
        rs.do_post_mortem(table.game, target=table.names_of_roles("citizen")[0], acting_user=table.users[coroner],
                          now=table.tick())
    assert rs.do_post_mortem(table.game, target=cop, acting_user=table.users[coroner], now=table.tick()) == "goon"
    assert f"Post mortem of {cop}: they were killed by the Mafia goon." in role_pm_texts(table, coroner)
    with pytest.raises(WrongState, match="You have already conducted your post mortem."):
        rs.do_post_mortem(table.game, target=cop, acting_user=table.users[coroner], now=table.tick())
