"""The night page's legal actions, the mafia thread's kill lines and tally, and the morning's texts (RULES.md
M-NIGHT-1, M-NIGHT-4, M-MAFIA-1, M-ROLE, M-ROLE-1, M-ITEM-1)."""
from __future__ import annotations

import pytest

from rulesets.m21.night import M21Death, M21Result, MafiaVote, Seat, kill_tally
from rulesets.m21.night_pages import (
    check_choice,
    morning_post_text,
    night_options,
    parse_kill_lines,
    result_text,
    tally_text,
)

SEATS = (
    Seat("Ann", "cop"), Seat("Bob", "inventor", state={"gadgets_delivered": ["goggles", "grenade"]}),
    Seat("Cat", "desperado", state={"shots_left": 0}), Seat("Dan", "coroner"), Seat("Eve", "reporter"),
    Seat("Gus", "godfather", items=("gun", "binoculars")), Seat("Jay", "jailbreaker"),
    Seat("Joe", "citizen", items=("armour", "balloon")), Seat("Kim", "citizen", alive=False),
    Seat("Pat", "citizen", imprisoned=True), Seat("Sam", "strongman", state={"strongman_left": 0}),
)
LIVING_BUT = {me: tuple(s.name for s in SEATS if s.living and s.name != me) for me in ("Ann", "Bob", "Dan", "Eve",
                                                                                          "Gus")}


def _options(me, **kw):
    return [(o.key, o.targets, o.items, o.needs_target) for o in night_options(SEATS, me, **kw)]


def test_night_page_lists_exactly_the_legal_actions_and_targets_M_NIGHT_1_M_ROLE():
    assert _options("Ann") == [("investigate", LIVING_BUT["Ann"], (), True)]
    assert _options("Bob") == [("deliver", LIVING_BUT["Bob"], ("armour", "balloon", "first_aid_kit", "police_radio"),
                                True)]
    assert _options("Cat") == []
    assert _options("Dan") == [("protect", LIVING_BUT["Dan"], (), True)]
    assert _options("Eve") == [("visit", LIVING_BUT["Eve"], (), True), ("hide", (), (), False)]
    # A mafioso's partners come last (Jay, Sam), after the town in name order.
    gus = ("Ann", "Bob", "Cat", "Dan", "Eve", "Joe", "Jay", "Sam")
    assert _options("Gus") == [("use_item:gun", gus, (), True), ("use_item:binoculars", gus, (), True)]
    assert _options("Jay") == [("bust_out", ("Pat",), (), True)]
    assert _options("Jay", confiscated=["whiskey"]) == [("bust_out", ("Pat",), (), True),
                                                        ("safecrack", (), ("whiskey",), False)]
    assert _options("Joe") == [("use_item:balloon", (), (), False)]
    assert _options("Sam") == []
    assert _options("Kim") == [] and _options("Pat") == [] and _options("Nobody") == []


def test_an_active_armour_is_offered_when_the_host_makes_it_so_M_ITEM_1():
    assert ("use_item:armour", (), (), False) in _options("Joe", gadget_config={"armour": {"passive": False}})


def test_a_choice_outside_the_options_is_refused_M_NIGHT_1():
    options = night_options(SEATS, "Ann")
    assert check_choice(options, "investigate", "Gus", None).action == "investigate"
    with pytest.raises(ValueError, match="Choose one of the players offered"):
        check_choice(options, "investigate", "Kim", None)
    with pytest.raises(ValueError, match="Choose one of the players offered"):
        check_choice(options, "investigate", "Ann", None)
    with pytest.raises(ValueError, match="That action is not open to you tonight."):
        check_choice(options, "shoot", "Gus", None)
    bob = night_options(SEATS, "Bob")
    with pytest.raises(ValueError, match="Choose one of the items offered"):
        check_choice(bob, "deliver", "Ann", "goggles")
    eve = night_options(SEATS, "Eve")
    with pytest.raises(ValueError, match="This action takes no target."):
        check_choice(eve, "hide", "Ann", None)


def test_kill_lines_of_the_mafia_thread_M_MAFIA_1():
    text = "we should go for ann\n**kill Ann**\nactually\n<b>KILL joe</b>\nkill\n  kill  Bob the Builder  "
    assert parse_kill_lines(text) == ["Ann", "joe", "Bob the Builder"]
    assert parse_kill_lines("skill Ann\nkilled Ann") == []


def test_live_tally_text_shows_target_and_carrier_M_MAFIA_1():
    seats = {s.name: s for s in (Seat("Ann", "cop"), Seat("Joe", "citizen"), Seat("Gus", "godfather"),
                                 Seat("Ivy", "goon"), Seat("Hal", "hooker"))}
    tally = kill_tally(seats, [MafiaVote("Ivy", "Joe", 1), MafiaVote("Gus", "Ann", 2)])
    assert (tally.target, tally.carriers, tally.tie_broken_by) == ("Ann", ("Gus",), "godfather")
    assert tally_text(tally.counts, tally.target, tally.carriers, tally.tie_broken_by, living_mafia=3) == (
        "Kill vote (3 mafia in play): Joe 1, Ann 1. Tonight's kill now: Ann (tie broken by the godfather), "
        "carried out by Gus.")
    assert tally_text({}, None, (), None, living_mafia=3) == "Kill vote: no votes yet (3 mafia in play)."


def test_morning_post_reveals_roles_and_insanity_never_the_killer_M_NIGHT_4_M_ROLE_1():
    seats = {"Ann": Seat("Ann", "cop", sane=False), "Ivy": Seat("Ivy", "goon")}
    text = morning_post_text(2, [M21Death("Ann", "mafia", "Ivy"), M21Death("Ivy", "desperado", "Cat")], seats,
                             ["Hal went out last night!"])
    assert text == ("## Morning after night 2\n\n"
                    "**Ann** was killed in the night. They were the Cop (Town). They were INSANE.\n"
                    "**Ivy** was shot dead in the night. They were the Mafia goon (Mafia).\n\n"
                    "### The Metrodipolis Herald\n\n- Hal went out last night!")
    assert "Cat" not in text
    assert morning_post_text(3, [], seats, []) == "## Morning after night 3\n\nNobody died in the night."


@pytest.mark.parametrize(("result", "text"), [
    (M21Result("Ann", "investigate", "Gus", "innocent"), "Your investigation of Gus: INNOCENT."),
    (M21Result("Fay", "investigate", "Hal", "not vanilla"), "Your investigation of Hal: NOT VANILLA."),
    (M21Result("Fay", "investigate", "Gus", "vanilla"), "Your investigation of Gus: VANILLA."),
    (M21Result("Ida", "investigate", "Gus", ["gun"]), "Your investigation of Gus: Gun."),
    (M21Result("Ida", "investigate", "Joe", []), "Your investigation of Joe: no item."),
    (M21Result("Eve", "visit", "Hal", "went out"), "You watched Hal: they went out."),
    (M21Result("Bob", "watch", "Joe", ["Ivy", "Dan"]), "You watched Joe. Visitors: Ivy, Dan."),
    (M21Result("Bob", "watch", "Joe", []), "You watched Joe. Visitors: nobody."),
    (M21Result("Joe", "saved", None, "saved"), "Someone attacked you in the night, but you were saved."),
    (M21Result("Joe", "desperado", "Cat", "targeted you"),
     "The Desperado (Cat) targeted you last night, and died for it."),
    (M21Result("Ida", "safe_robbed", None, ["gun"]), "Your evidence safe was broken into. Missing: Gun."),
])
def test_private_results_are_worded_for_the_role_inbox_M_NIGHT_4_M_NIGHT_6(result, text):
    assert result_text(result) == text
