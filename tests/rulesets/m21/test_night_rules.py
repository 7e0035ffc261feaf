"""The M21 night, rule by rule, with exact outcomes (RULES.md M-NIGHT-1..7, M-MAFIA-1, M-MAFIA-2, M-WIN-1).

Role-by-role and item-by-item behaviour is in ``test_roles_night.py`` and ``test_night_items.py``; the bug bank of
night resolution is in ``test_night_bug_bank.py``.
"""
from __future__ import annotations

from rulesets.m21.night import NIGHT_STEPS

from .night_helpers import Night, deaths, events, results_of, visits

# --- M-NIGHT-1: the order -------------------------------------------------------------------------------------


def test_nine_steps_run_in_the_order_of_M_NIGHT_1():
    out = Night().resolve()
    assert [(s["step"], s["key"]) for s in out["steps"]] == [
        (0, "submissions"), (1, "start_watching"), (2, "roleblocks"), (3, "reporter_hides"), (4, "investigations"),
        (5, "inventor_delivers"), (6, "jailbreak"), (7, "thief_robs"), (8, "kills"), (9, "protections"),
    ]
    assert [s.number for s in NIGHT_STEPS] == list(range(1, 10))


def test_the_last_submission_of_an_actor_counts_M_NIGHT_1():
    out = Night().act("Ann", "investigate", "Joe").act("Ann", "investigate", "Ivy").resolve()
    assert results_of(out, "Ann") == [("investigate", "Ivy", "guilty")]
    assert events(out, "submissions", "replaced") == [
        {"event": "replaced", "actor": "Ann", "action": "investigate", "seq": 1}]


def test_reporter_visit_and_hide_are_alternatives_last_counts_M_NIGHT_1():
    out = Night().act("Eve", "visit", "Ann").act("Eve", "hide").vote("Ivy", "Eve").resolve()
    assert results_of(out, "Eve") == []
    assert deaths(out) == {}
    assert out["state"]["Eve"] == {"hide_left": 0, "extra_left": 1}


def test_roleblock_at_step_2_comes_before_the_hide_at_step_3_M_NIGHT_1():
    out = Night().act("Hal", "roleblock", "Eve").act("Eve", "hide").vote("Ivy", "Eve").resolve()
    assert deaths(out) == {"Eve": "mafia"}
    assert out["state"]["Eve"]["hide_left"] == 1
    assert events(out, "reporter_hides", "fails") == [
        {"event": "fails", "actor": "Eve", "action": "hide", "reason": "roleblocked"}]


def test_item_cop_at_step_4_sees_the_item_the_thief_takes_at_step_7_M_NIGHT_1():
    out = (Night().player("Joe", items=["gun"]).act("Ida", "investigate", "Joe").act("Tom", "rob", "Joe")
           .resolve())
    assert results_of(out, "Ida") == [("investigate", "Joe", ["gun"])]
    assert results_of(out, "Tom") == [("rob", "Joe", ["gun"])]
    assert results_of(out, "Joe") == [("robbed", None, ["gun"])]
    assert out["items"]["Joe"] == [] and out["items"]["Tom"] == ["gun"]


def test_a_gadget_delivered_at_step_5_can_be_stolen_at_step_7_M_NIGHT_1():
    out = Night().act("Inv", "deliver", "Joe", item="first_aid_kit").act("Tom", "rob", "Joe").resolve()
    assert results_of(out, "Joe") == [("received", None, ["first_aid_kit"]), ("robbed", None, ["first_aid_kit"])]
    assert out["items"]["Tom"] == ["first_aid_kit"]
    assert out["state"]["Inv"] == {"gadgets_delivered": ["first_aid_kit"]}


def test_a_gun_stolen_at_step_7_no_longer_fires_for_its_owner_at_step_8_M_NIGHT_1():
    out = Night().player("Joe", items=["gun"]).use("Joe", "gun", "Ivy").act("Tom", "rob", "Joe").resolve()
    assert deaths(out) == {}
    assert events(out, "kills", "fails") == [
        {"event": "fails", "actor": "Joe", "action": "gun", "reason": "no longer holds the item"}]


# --- M-NIGHT-2: roleblocks, pending kills, protections, deaths together ----------------------------------------


def test_roleblocked_players_later_actions_fail_and_keep_their_uses_M_NIGHT_2():
    out = (Night().act("Hal", "roleblock", "Cat").act("Cat", "shoot", "Ivy").act("Hal", "roleblock", "Cat")
           .resolve())
    assert deaths(out) == {}
    assert out["state"]["Cat"] == {"shots_left": 2}
    assert events(out, "kills", "fails") == [
        {"event": "fails", "actor": "Cat", "action": "shoot", "reason": "roleblocked"}]


def test_protection_cancels_a_pending_kill_and_the_saved_player_is_told_M_NIGHT_2():
    out = Night().vote("Ivy", "Joe").act("Dan", "protect", "Joe").resolve()
    assert out["deaths"] == []
    assert out["saved"] == ["Joe"]
    assert results_of(out, "Joe") == [("saved", None, "saved")]
    assert results_of(out, "Dan") == []


def test_protection_does_not_cancel_the_strongman_kill_M_NIGHT_2():
    out = Night().vote("Ivy", "Joe").act("Sam", "strongman_kill").act("Dan", "protect", "Joe").resolve()
    assert out["deaths"] == [{"player": "Joe", "cause": "strongman"}]
    assert out["saved"] == []
    assert results_of(out, "Joe") == []
    assert out["state"]["Sam"] == {"strongman_left": 0}
    assert out["state"]["Dan"]["bag_left"] == 1


def test_kills_are_pending_until_step_9_and_deaths_happen_together_M_NIGHT_2():
    out = Night().vote("Ivy", "Cat").act("Cat", "shoot", "Ivy").resolve()
    assert deaths(out) == {"Cat": "mafia", "Ivy": "desperado"}
    for step in out["steps"]:
        names = {e["event"] for e in step["events"]}
        assert ("death" in names) == (step["step"] == 9)
    assert [e["target"] for e in events(out, "kills", "kill_pending")] == ["Cat", "Ivy"]


# --- M-NIGHT-3: going out, visits that happened -----------------------------------------------------------------


def test_watch_results_come_from_visits_that_happened_M_NIGHT_3():
    out = (Night().act("Bob", "watch", "Joe").act("Ann", "investigate", "Joe").act("Fay", "investigate", "Joe")
           .act("Hal", "roleblock", "Ann").resolve())
    assert results_of(out, "Bob") == [("watch", "Joe", ["Fay"])]
    assert ("Ann", "Joe", 4) not in visits(out)


def test_reporter_learns_whether_the_target_went_out_and_headlines_it_M_NIGHT_3():
    out = Night().act("Eve", "visit", "Ann").act("Ann", "investigate", "Joe").resolve()
    assert results_of(out, "Eve") == [("visit", "Ann", "went out")]
    assert out["headlines"] == ["Ann went out last night!"]
    quiet = Night().act("Eve", "visit", "Joe").resolve()
    assert results_of(quiet, "Eve") == [("visit", "Joe", "stayed home")]
    assert quiet["headlines"] == []


def test_a_roleblocked_player_did_not_go_out_M_NIGHT_3():
    out = (Night().act("Eve", "visit", "Ann").act("Ann", "investigate", "Joe").act("Hal", "roleblock", "Ann")
           .resolve())
    assert results_of(out, "Eve") == [("visit", "Ann", "stayed home")]
    assert out["headlines"] == []


def test_a_roleblocked_watcher_learns_nothing_M_NIGHT_3():
    out = Night().act("Bob", "watch", "Joe").act("Hal", "roleblock", "Bob").vote("Ivy", "Joe").resolve()
    assert results_of(out, "Bob") == []
    assert ("Bob", "Joe", 1) not in visits(out)
    assert events(out, "roleblocks", "watch_void") == [{"event": "watch_void", "actor": "Bob", "target": "Joe"}]


def test_the_post_mortem_and_a_hide_are_not_going_out_M_NIGHT_3():
    out = Night().act("Bob", "watch", "Eve").act("Eve", "hide").act("Fay", "investigate", "Eve").resolve()
    assert results_of(out, "Bob") == [("watch", "Eve", ["Fay"])]
    assert results_of(out, "Fay") == []


# --- M-NIGHT-4: results to everyone, the dead too ---------------------------------------------------------------


def test_results_reach_a_player_who_died_that_night_M_NIGHT_4():
    out = Night().act("Ann", "investigate", "Ivy").act("Bob", "watch", "Ann").vote("Ivy", "Ann").resolve()
    assert deaths(out) == {"Ann": "mafia"}
    assert results_of(out, "Ann") == [("investigate", "Ivy", "guilty")]
    assert results_of(out, "Bob") == [("watch", "Ann", ["Ivy"])]
    assert "Ann" not in out["items"]


# --- M-NIGHT-5: simultaneous steps, items leave play -------------------------------------------------------------


def test_a_desperado_killed_by_the_mafia_still_shoots_M_NIGHT_5():
    out = Night().vote("Gus", "Cat").act("Cat", "shoot", "Hal").resolve()
    assert deaths(out) == {"Cat": "mafia", "Hal": "desperado"}
    assert results_of(out, "Cat") == [("immunity", "Hal", "immune to gunshots tomorrow")]


def test_the_items_of_the_dead_leave_play_M_NIGHT_5():
    out = Night().player("Joe", items=["gun", "armour"]).vote("Ivy", "Joe").act("Sam", "strongman_kill").resolve()
    assert deaths(out) == {"Joe": "strongman"}
    assert "Joe" not in out["items"]
    assert all("gun" not in held for held in out["items"].values())
    assert [e["item"] for e in events(out, "protections", "item")] == ["gun", "armour"]


def test_an_item_delivered_to_a_player_who_dies_that_night_leaves_play_M_NIGHT_5():
    out = Night().act("Inv", "deliver", "Joe", item="goggles").vote("Ivy", "Joe").resolve()
    assert deaths(out) == {"Joe": "mafia"}
    assert results_of(out, "Joe") == [("received", None, ["goggles"])]
    assert all("goggles" not in held for held in out["items"].values())
    assert out["state"]["Inv"] == {"gadgets_delivered": ["goggles"]}


# --- M-NIGHT-6: investigation answers ----------------------------------------------------------------------------


def test_cop_answers_M_NIGHT_6():
    for target, answer in (("Gus", "innocent"), ("Ivy", "guilty"), ("Hal", "guilty"), ("Nin", "guilty"),
                           ("Joe", "innocent"), ("Bob", "innocent")):
        out = Night().act("Ann", "investigate", target).resolve()
        assert results_of(out, "Ann") == [("investigate", target, answer)], target


def test_vanilla_cop_learns_only_vanilla_or_not_vanilla_never_the_role_M_NIGHT_6_M_ROLE():
    for target, answer in (("Gus", "vanilla"), ("Ivy", "vanilla"), ("Joe", "vanilla"), ("Hal", "not vanilla"),
                           ("Ann", "not vanilla"), ("Sam", "not vanilla"), ("Jud", "not vanilla"),
                           ("Nin", "not vanilla"), ("Tom", "not vanilla")):
        out = Night().act("Fay", "investigate", target).resolve()
        assert results_of(out, "Fay") == [("investigate", target, answer)], target


def test_item_cop_sees_the_items_held_at_step_4_the_godfathers_too_M_NIGHT_6():
    out = Night().player("Gus", items=["gun", "whiskey"]).act("Ida", "investigate", "Gus").resolve()
    assert results_of(out, "Ida") == [("investigate", "Gus", ["gun", "whiskey"])]
    empty = Night().act("Ida", "investigate", "Joe").resolve()
    assert results_of(empty, "Ida") == [("investigate", "Joe", [])]


def test_insane_cops_get_the_opposite_M_NIGHT_6_M_ROLE_1():
    out = Night().player("Ann", sane=False).act("Ann", "investigate", "Ivy").resolve()
    assert results_of(out, "Ann") == [("investigate", "Ivy", "innocent")]
    out = Night().player("Ann", sane=False).act("Ann", "investigate", "Gus").resolve()
    assert results_of(out, "Ann") == [("investigate", "Gus", "guilty")]
    out = Night().player("Fay", sane=False).act("Fay", "investigate", "Hal").resolve()
    assert results_of(out, "Fay") == [("investigate", "Hal", "vanilla")]
    out = Night().player("Ida", sane=False).player("Joe", items=["gun"]).act("Ida", "investigate", "Joe").resolve()
    assert results_of(out, "Ida") == [("investigate", "Joe", [])]


def test_insane_item_cop_reports_a_seeded_random_item_on_an_itemless_target_M_NIGHT_6_M_ROLE_1():
    answers = set()
    for seed in range(12):
        night = Night(seed=seed).player("Ida", sane=False).act("Ida", "investigate", "Joe")
        out = night.resolve()
        [(_, _, answer)] = results_of(out, "Ida")
        assert len(answer) == 1 and answer[0] in {"gun", "binoculars", "whiskey", "goggles", "grenade", "armour",
                                                    "balloon", "first_aid_kit", "police_radio"}
        [draw] = events(out, "investigations", "draw")
        assert draw["purpose"] == "insane_item_cop" and draw["value"] == answer[0]
        assert night.resolve() == out
        answers.add(answer[0])
    assert len(answers) > 1


def test_insane_vanilla_cop_gets_the_opposite_answer_never_a_role_M_ROLE_1():
    for seed in range(4):
        out = Night(seed=seed).player("Fay", sane=False).act("Fay", "investigate", "Joe").resolve()
        assert results_of(out, "Fay") == [("investigate", "Joe", "not vanilla")]
        assert events(out, "investigations", "draw") == []
    out = Night().player("Fay", sane=False).act("Fay", "investigate", "Gus").resolve()
    assert results_of(out, "Fay") == [("investigate", "Gus", "not vanilla")]


# --- M-NIGHT-7: the site's readings ------------------------------------------------------------------------------


def test_mafia_kill_goes_to_the_most_current_votes_of_the_living_mafia_M_NIGHT_7():
    out = (Night().player("Nin", alive=False).vote("Gus", "Joe").vote("Ivy", "Joe").vote("Hal", "Kim")
           .vote("Nin", "Kim").vote("Tom", "Kim").vote("Ivy", "Kim").vote("Gus", "Kim").vote("Tom", "Joe")
           .resolve())
    assert deaths(out) == {"Kim": "mafia"}
    assert events(out, "kills", "tally")[0]["counts"] == {"Kim": 3, "Joe": 1}


def test_a_night_gun_fires_at_step_8_and_a_protection_saves_its_target_M_NIGHT_7():
    out = Night().player("Ivy", items=["gun"]).use("Ivy", "gun", "Ann").act("Dan", "protect", "Ann").resolve()
    assert deaths(out) == {}
    assert out["saved"] == ["Ann"]
    assert out["items"]["Ivy"] == []
    shot = Night().player("Ivy", items=["gun"]).use("Ivy", "gun", "Ann").resolve()
    assert deaths(shot) == {"Ann": "gun"}


def test_a_balloon_holder_is_away_from_the_start_of_the_night_M_NIGHT_7():
    out = (Night().player("Joe", items=["balloon"]).use("Joe", "balloon").act("Bob", "watch", "Joe")
           .vote("Ivy", "Joe").act("Ann", "investigate", "Joe").resolve())
    assert deaths(out) == {}
    assert results_of(out, "Ann") == []
    assert results_of(out, "Bob") == []
    assert out["items"]["Joe"] == []
    assert events(out, "start_watching", "away") == [{"event": "away", "player": "Joe"}]


def test_the_armour_cancels_one_pending_non_strongman_kill_M_NIGHT_7():
    out = Night().player("Joe", items=["armour"]).vote("Ivy", "Joe").resolve()
    assert deaths(out) == {}
    assert out["saved"] == ["Joe"] and out["items"]["Joe"] == []
    twice = Night().player("Hal", items=["armour"]).vote("Ivy", "Joe").act("Cat", "shoot", "Hal").resolve()
    assert deaths(twice) == {"Joe": "mafia"}
    two_kills = (Night().player("Joe", items=["armour"]).player("Ivy", items=["gun"]).vote("Gus", "Joe")
                 .use("Ivy", "gun", "Joe").resolve())
    assert deaths(two_kills) == {"Joe": "gun"}
    strong = Night().player("Joe", items=["armour"]).vote("Ivy", "Joe").act("Sam", "strongman_kill").resolve()
    assert deaths(strong) == {"Joe": "strongman"}


def test_a_busted_out_player_uses_an_unused_night_action_the_next_night_M_NIGHT_7():
    out = (Night().player("Ann", imprisoned=True, busted_out=True).act("Ann", "investigate", "Ivy")
           .act("Fay", "investigate", "Ann").resolve())
    assert results_of(out, "Ann") == [("investigate", "Ivy", "guilty")]
    assert events(out, "submissions", "ignored") == [
        {"event": "ignored", "actor": "Fay", "action": "investigate", "seq": 2, "reason": "the target is not in play"}]


# --- M-MAFIA-1: the kill vote, its carrier ----------------------------------------------------------------------


def test_majority_of_kill_votes_decides_and_the_last_voter_carries_it_out_M_MAFIA_1():
    out = Night().vote("Ivy", "Joe").vote("Hal", "Kim").vote("Gus", "Joe").act("Bob", "watch", "Joe").resolve()
    assert deaths(out) == {"Joe": "mafia"}
    assert events(out, "kills", "carries_out") == [{"event": "carries_out", "actor": "Gus", "target": "Joe"}]
    assert results_of(out, "Bob") == [("watch", "Joe", ["Gus"])]


def test_a_tie_is_broken_by_the_living_godfathers_vote_M_MAFIA_1():
    out = Night().vote("Gus", "Kim").vote("Ivy", "Joe").resolve()
    assert deaths(out) == {"Kim": "mafia"}
    assert events(out, "kills", "tie_broken") == [{"event": "tie_broken", "by": "godfather", "target": "Kim"}]


def test_without_a_living_godfather_the_oldest_vote_breaks_a_tie_M_MAFIA_1():
    out = Night().player("Gus", alive=False).vote("Ivy", "Joe").vote("Hal", "Kim").vote("Gus", "Kim").resolve()
    assert deaths(out) == {"Joe": "mafia"}
    assert events(out, "kills", "tie_broken") == [{"event": "tie_broken", "by": "oldest vote", "target": "Joe"}]


def test_the_previous_voter_carries_out_the_kill_when_the_last_cannot_M_MAFIA_1():
    out = (Night().player("Ivy", items=["whiskey"]).vote("Tom", "Joe").vote("Ivy", "Joe").vote("Gus", "Joe")
           .act("Bob", "watch", "Joe").act("Hal", "roleblock", "Gus").resolve())
    assert deaths(out) == {"Joe": "mafia"}
    assert events(out, "kills", "cannot_carry") == [
        {"event": "cannot_carry", "actor": "Gus", "reason": "roleblocked"}]
    assert events(out, "kills", "carries_out") == [{"event": "carries_out", "actor": "Ivy", "target": "Joe"}]
    assert results_of(out, "Bob") == [("watch", "Joe", ["Ivy"])]


def test_no_kill_when_no_voter_for_the_target_can_act_M_MAFIA_1():
    out = (Night().player("Hal", items=["whiskey"]).vote("Ivy", "Joe").vote("Gus", "Kim").vote("Tom", "Joe")
           .act("Hal", "roleblock", "Ivy").use("Hal", "whiskey", "Tom").resolve())
    assert deaths(out) == {}
    assert events(out, "kills", "no_kill") == [
        {"event": "no_kill", "target": "Joe", "reason": "no voter for the target can act"}]


def test_votes_on_mafia_and_by_non_mafia_are_void_M_MAFIA_1():
    out = Night().vote("Joe", "Kim").vote("Ivy", "Hal").resolve()
    assert deaths(out) == {}
    assert [(e["voter"], e["reason"]) for e in events(out, "kills", "vote_void")] == [
        ("Joe", "not a living mafioso"), ("Ivy", "not a town player in play")]


# --- M-MAFIA-2: the stash ---------------------------------------------------------------------------------------


def test_the_stash_item_is_collected_at_the_end_of_the_night_M_MAFIA_2():
    night = Night().vote("Ivy", "Joe")
    night.extra["stash_assignment"] = {"item": "gun", "to": "Hal"}
    night.use("Hal", "gun", "Kim")
    out = night.resolve()
    assert deaths(out) == {"Joe": "mafia"}
    assert out["items"]["Hal"] == ["gun"]
    assert events(out, "protections", "item")[-1] == {"event": "item", "holder": "Hal", "item": "gun",
                                                      "change": "gained", "reason": "stash"}


def test_a_stash_item_assigned_to_a_mafioso_who_dies_stays_in_the_stash_M_MAFIA_2():
    night = Night().act("Cat", "shoot", "Hal")
    night.extra["stash_assignment"] = {"item": "binoculars", "to": "Hal"}
    out = night.resolve()
    assert deaths(out) == {"Hal": "desperado"}
    assert events(out, "protections", "stash_uncollected") == [
        {"event": "stash_uncollected", "item": "binoculars", "holder": "Hal"}]


# --- M-WIN-1 -----------------------------------------------------------------------------------------------------


def test_town_wins_when_the_last_mafioso_dies_at_night_M_WIN_1():
    roster = {"Ann": "cop", "Cat": "desperado", "Joe": "citizen", "Ivy": "goon"}
    out = Night(roster).act("Cat", "shoot", "Ivy").vote("Ivy", "Joe").resolve()
    assert deaths(out) == {"Joe": "mafia", "Ivy": "desperado"}
    assert out["winner"] == "town"


def test_mafia_win_when_they_reach_half_of_the_living_M_WIN_1():
    roster = {"Ann": "cop", "Joe": "citizen", "Kim": "citizen", "Ivy": "goon", "Gus": "godfather"}
    out = Night(roster).vote("Ivy", "Joe").resolve()
    assert out["winner"] == "mafia"
    assert Night(roster).resolve()["winner"] is None
