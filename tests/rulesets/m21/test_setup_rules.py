"""The pure M21 setup module (``rulesets.m21.setup``): legal setups (M-SETUP-1), the site's draw, cop sanity by
probability (M-ROLE-1), the provable deal and the public setup post."""
from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from rulesets.m21.roles import COP_ROLES, MAFIA_POWER_ROLES, ROLES, TOWN_POWER_ROLES
from rulesets.m21.setup import (
    INSANE_KEY,
    PostRules,
    SetupError,
    SetupShape,
    check_setup,
    deal_roles,
    default_shape,
    draw_insane_cop,
    draw_setup,
    role_pm_text,
    setup_post_text,
    verify_deal,
)

SEED_DEFAULT = {"citizen": 11, "judge": 1, "cop": 1, "desperado": 1, "watcher": 1,
                "goon": 2, "godfather": 1, "hooker": 1, "ninja": 1}


def test_the_seeds_default_game_is_legal_M_SETUP_1():
    setup = check_setup(SEED_DEFAULT, players=20)
    assert (setup.players, setup.town, setup.mafia) == (20, 15, 5)
    assert list(setup.counts) == ["citizen", "judge", "cop", "desperado", "watcher", "goon", "godfather", "ninja",
                                  "hooker"]
    assert Counter(setup.deck()) == Counter(SEED_DEFAULT)


@pytest.mark.parametrize(("counts", "message"), [
    ({**SEED_DEFAULT, "cop": 2}, "Cop: a power role is in the game at most once (0-1)."),
    ({**SEED_DEFAULT, "hooker": 2}, "Hooker: a power role is in the game at most once (0-1)."),
    ({**SEED_DEFAULT, "citizen": -1}, "Law-abiding citizen: the number of seats must be a whole number, 0 or more."),
    ({**SEED_DEFAULT, "citizen": "11"}, "Law-abiding citizen: the number of seats must be a whole number"),
    ({**SEED_DEFAULT, "wizard": 1}, "Unknown role(s): wizard."),
    ({"citizen": 5}, "The setup needs at least one mafia seat (a goon or a mafia power role)."),
    ({"goon": 3}, "The setup needs at least one town seat."),
    ({"citizen": 3, "goon": 3}, "The mafia (3) must be fewer than half of the 6 players"),
    ({"citizen": 2, "goon": 1}, "A game has 4 to 60 players; this setup has 3."),
])
def test_illegal_setups_are_refused_with_the_reason_M_SETUP_1(counts, message):
    with pytest.raises(SetupError) as refused:
        check_setup(counts)
    assert str(refused.value).startswith(message)


def test_the_setup_must_seat_exactly_the_players_signed_up_M_SETUP_1():
    with pytest.raises(SetupError, match="The setup has 20 seats but 19 players signed up"):
        check_setup(SEED_DEFAULT, players=19)


@pytest.mark.parametrize(("value", "expected"), [(0, Fraction(0)), ("1/4", Fraction(1, 4)), ("0.5", Fraction(1, 2)),
                                                  (1, Fraction(1))])
def test_the_chance_of_an_insane_cop_is_a_probability_M_ROLE_1(value, expected):
    assert check_setup(SEED_DEFAULT, cop_insanity=value).cop_insanity == expected


@pytest.mark.parametrize("value", ["-0.1", "1.5", "abc"])
def test_an_impossible_chance_is_refused_M_ROLE_1(value):
    with pytest.raises(SetupError, match="chance of an insane cop"):
        check_setup(SEED_DEFAULT, cop_insanity=value)


def test_the_default_shape_scales_the_seeds_proportions_M_SETUP_1():
    assert default_shape(20) == SetupShape(town_power=4, citizens=11, mafia_power=3, goons=2)
    assert default_shape(9) == SetupShape(town_power=1, citizens=6, mafia_power=1, goons=1)
    assert default_shape(4) == SetupShape(town_power=0, citizens=3, mafia_power=1, goons=0)
    with pytest.raises(SetupError, match="A game has 4 to 60 players, not 3."):
        default_shape(3)


@pytest.mark.parametrize("players", [4, 7, 12, 20, 33, 60])
def test_the_site_draws_only_legal_setups_M_SETUP_1(players):
    for seed in range(30):
        setup = draw_setup(players, random.Random(seed))
        assert setup.players == players
        assert all(n == 1 for key, n in setup.counts.items() if key in TOWN_POWER_ROLES + MAFIA_POWER_ROLES)
        shape = default_shape(players)
        assert sum(1 for key in setup.counts if key in TOWN_POWER_ROLES) == shape.town_power
        assert sum(1 for key in setup.counts if key in MAFIA_POWER_ROLES) == shape.mafia_power
        assert 2 * setup.mafia < players


def test_the_draw_varies_the_power_roles_and_honours_exclusions_M_SETUP_1():
    drawn = {frozenset(draw_setup(20, random.Random(seed)).counts) for seed in range(20)}
    assert len(drawn) > 10
    setup = draw_setup(20, random.Random(1), exclude=["inventor", "thief"])
    assert "inventor" not in setup.counts and "thief" not in setup.counts
    with pytest.raises(SetupError, match="not enough power roles"):
        draw_setup(20, random.Random(1), shape=SetupShape(town_power=10, citizens=5, mafia_power=3, goons=2))


def test_cop_sanity_is_drawn_with_the_hosts_probability_M_ROLE_1():
    never = check_setup(SEED_DEFAULT, cop_insanity=0)
    always = check_setup({**SEED_DEFAULT, "citizen": 10, "item_cop": 1}, cop_insanity=1)
    assert {draw_insane_cop(never, random.Random(seed)) for seed in range(50)} == {None}
    assert {draw_insane_cop(always, random.Random(seed)) for seed in range(50)} == {"cop", "item_cop"}
    quarter = check_setup(SEED_DEFAULT, cop_insanity="1/4")
    insane = sum(draw_insane_cop(quarter, random.Random(seed)) is not None for seed in range(2000))
    assert 400 < insane < 600
    no_cops = check_setup({"citizen": 5, "goon": 2}, cop_insanity=1)
    assert draw_insane_cop(no_cops, random.Random(0)) is None


def test_the_deal_gives_every_player_one_role_and_is_provable_M_SETUP_1():
    setup = check_setup({**SEED_DEFAULT, "citizen": 10, "item_cop": 1}, cop_insanity=1)
    players = [f"player{n:02}" for n in range(20)]
    deal = deal_roles(setup, players, random.Random(7))
    assert sorted(deal.roles) == players
    assert Counter(deal.roles.values()) == Counter(setup.counts)
    assert deal.insane is not None and deal.roles[deal.insane] in COP_ROLES
    assert deal.lists()[INSANE_KEY] == [deal.insane]
    assert len(deal.commitment) == 64
    assert verify_deal(deal.roles, deal.insane, deal.salt, deal.commitment)
    swapped = dict(deal.roles)
    a, b = players[0], next(p for p in players if deal.roles[p] != deal.roles[players[0]])
    swapped[a], swapped[b] = swapped[b], swapped[a]
    assert not verify_deal(swapped, deal.insane, deal.salt, deal.commitment)
    assert not verify_deal(deal.roles, None, deal.salt, deal.commitment)
    with pytest.raises(SetupError, match="The setup has 20 seats but there are 19 players."):
        deal_roles(setup, players[:19], random.Random(7))


def test_the_setup_post_lists_every_role_text_and_the_rules_M_SETUP_1_M_VOTE():
    setup = check_setup(SEED_DEFAULT, cop_insanity="1/4")
    text = setup_post_text(setup)
    for key in setup.counts:
        assert ROLES[key].text in text
    assert "| Law-abiding citizen | 11 |" in text and "| Mafia goon | 2 |" in text
    assert "**Town (15)**" in text and "**Mafia (5)**" in text
    for words in ("`##VOTE name`", "`##VOTE No Lynch` is a valid vote", "`##UNVOTE`", "**`##END`**", "`##UNEND`",
                  "floor(n/2) + 1", "a tie imprisons nobody", "**Must vote:**", "post at least twice",
                  "days last 48 hours and nights 24 hours; phases shift at 22:00 Europe/London",
                  "With a chance of 25% one of the cops is insane", "spectators' thread"):
        assert words in text
    assert ROLES["inventor"].text not in text
    strict = setup_post_text(setup, PostRules(self_votes_allowed=False, no_lynch_allowed=False, day_hours=24))
    assert "Self-votes are not allowed." in strict and "No Lynch` is a valid" not in strict
    assert "days last 24 hours" in strict


def test_the_role_pm_names_the_mafia_partners_and_never_sanity_M_ROLE_1():
    goon = role_pm_text("goon", partners=[("Bob", "Godfather"), ("Eve", "Hooker")], mafia_thread="the mafia thread")
    assert "Your Mafia partners are Bob (Godfather), Eve (Hooker)." in goon
    assert "XXXXXXX" not in goon
    hooker = role_pm_text("hooker", partners=[("Bob", "Godfather")])
    assert hooker.startswith(ROLES["hooker"].text)
    assert hooker.endswith("Your Mafia partners are Bob (Godfather). At night you talk with them in the mafia thread.")
    assert role_pm_text("cop") == ROLES["cop"].text
    with pytest.raises(ValueError, match="never told"):
        role_pm_text("cop", insane=True)
