"""An M21 game run through the services (RULES.md M-SETUP-1..4, M-VOTE-1..9, M-ROLE judge): the deal and its
inboxes, the game thread's day with receipts, the hammer, the deadline, the Judge, extensions and replacements."""
from __future__ import annotations

from datetime import timedelta

import pytest

from cities.models import City, GameEvent, GameStatus, LifeStatus, Resident, ScheduledEvent, StaffRole
from inboxes import policies
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.m21.kinds import M21InboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.m21 import services
from rulesets.m21.console_selectors import phase_clock
from rulesets.m21.models import DayStatus, M21Game, M21Seat
from rulesets.m21.roles import ROLES
from rulesets.m21.setup import verify_deal
from tests.conftest import fresh
from tests.rulesets.m21.day_helpers import SEVEN, START, build_game

pytestmark = pytest.mark.django_db


def lines(table, message) -> list[str]:
    return [line["message"] for line in table.receipt(message)]


def test_a_new_m21_game_has_the_seeds_defaults_and_no_city_M_SETUP_2():
    table = build_game(start_day=False)
    settings = M21Game.objects.get(game=table.game)
    assert (table.game.ruleset, table.game.time_zone, table.game.language) == ("m21", "Europe/London", "en")
    assert (settings.day_hours, settings.night_hours, f"{settings.phase_shift:%H:%M}") == (48, 24, "22:00")
    # An M21 game has no city: the deal seats every player, opens every inbox and appoints the hosts in none.
    assert City.objects.filter(game=table.game).count() == 0
    assert list(Resident.objects.filter(game=table.game).values_list("city", flat=True)) == [None] * 7
    assert len(table.roles) == 7
    assert set(Inbox.objects.filter(game=table.game).values_list("city", flat=True)) == {None}
    assert Inbox.objects.filter(game=table.game).count() == 4 + 7  # the four standing threads, a role PM each
    assert list(StaffRole.objects.filter(game=table.game).values_list("city", flat=True)) == [None, None]


def test_the_deal_seats_every_player_with_a_role_and_a_role_pm_M_SETUP_1():
    table = build_game(start_day=False)
    seats = {s.resident.name: s.role for s in M21Seat.objects.filter(resident__game=table.game)
             .select_related("resident")}
    assert seats == table.roles
    assert sorted(seats.values()) == sorted(k for k, n in SEVEN.items() for _ in range(n))
    settings = M21Game.objects.get(game=table.game)
    assert verify_deal(table.roles, None, settings.deal_salt, settings.deal_commitment)
    post = settings.setup_post
    assert settings.deal_commitment in post.body
    for key in SEVEN:
        assert ROLES[key].text in post.body
    assert table.game.status == GameStatus.RUNNING
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    gf_pm = M21Seat.objects.get(resident__name=godfather, resident__game=table.game).role_pm
    gf_text = gf_pm.messages.get().body
    assert gf_text.startswith("**Your role: Godfather**")
    assert f"Your Mafia partners are {hooker} (Hooker)." in gf_text
    cop_text = M21Seat.objects.get(resident__name=table.name_of_role("cop"), resident__game=table.game).role_pm \
        .messages.get().body
    assert godfather not in cop_text and hooker not in cop_text


def test_the_setup_must_seat_exactly_the_players_M_SETUP_1():
    table = build_game(start_day=False, slug="m21-a")
    with pytest.raises(WrongState, match="The roles are dealt: the setup cannot change any more."):
        services.do_choose_m21_setup(table.game, SEVEN, acting_user=table.host, now=table.now)


def test_choosing_a_setup_for_the_wrong_number_of_players_is_refused_M_SETUP_1(django_user_model):
    from cities.recruitment_services import do_close_signups, do_sign_up
    from tests.rulesets.m21.day_helpers import make_user
    host = make_user("Solo")
    game = services.do_create_m21_game(title="Small", slug="m21-small", acting_user=host, now=START)
    for name in ("P1", "P2", "P3", "P4", "P5"):
        do_sign_up(game, acting_user=make_user(name), now=START)
    do_close_signups(game, acting_user=host, now=START)
    game.refresh_from_db()
    with pytest.raises(InvalidInput, match="The setup has 7 seats but 5 players signed up"):
        services.do_choose_m21_setup(game, SEVEN, acting_user=host, now=START)
    import random
    drawn = services.do_draw_m21_setup(game, acting_user=host, rng=random.Random(3), now=START)
    assert drawn.players == 5 and drawn.mafia == 1


def test_only_hosts_set_up_the_game_M_SETUP_4():
    table = build_game(start_day=False, slug="m21-b")
    with pytest.raises(NotAllowed, match="Only the hosts of this game may do this."):
        services.do_extend_m21_phase(table.game, 2, acting_user=table.users["Alice"], now=table.now)


def test_day_one_starts_at_the_phase_shift_with_a_48_hour_deadline_M_SETUP_2():
    table = build_game()
    day = table.day(1)
    assert (day.starts_at, day.deadline) == (START, START + timedelta(hours=48))
    assert table.thread.messages.last().body.startswith("**Day 1 has begun.** It ends at the deadline, "
                                                        "Wed 7 Jan 2026, 22:00 GMT")


def test_every_post_gets_a_receipt_of_its_commands_M_VOTE_1():
    table = build_game()
    msg = table.post("Alice", "I have a feeling.\n##VOTE bo\n##VOTE nobody-here")
    assert lines(table, msg) == ["Alice votes Bob.", "No living player matches 'nobody-here'."]
    assert msg.body == "I have a feeling.\n##VOTE bo\n##VOTE nobody-here"
    assert table.receipt(table.post("Bob", "just chatting")) == []


def test_a_vote_for_an_imprisoned_player_says_not_alive_M_VOTE_1():
    table = build_game()
    target = "Frank"
    services.do_remove_m21_player(table.seat(target), acting_user=table.host, now=table.tick())
    msg = table.post("Alice", "##VOTE Frank")
    assert lines(table, msg) == ["Frank is no longer alive."]


def hammer(table, target: str, voters: list[str]) -> list[Message]:
    return [table.post(name, f"##VOTE {target}\n##END") for name in voters]


def test_the_hammer_ends_the_day_at_once_and_starts_the_night_on_the_clock_M_VOTE_3_M_VOTE_8():
    table = build_game()
    voters = [n for n in table.users if n != "Bob"][:4]
    posts = hammer(table, "Bob", voters)
    day = table.day(1)
    assert day.status == DayStatus.DECIDED and day.how == "end_hammer"
    assert day.ended_at == posts[-1].received_at
    assert table.seat("Bob").status == LifeStatus.IMPRISONED
    late = table.post("Carol", "##VOTE Alice")
    assert lines(table, late) == ["No day is open: this carries no vote."]
    assert not ScheduledEvent.objects.filter(game=table.game, kind="m21_night_start").exists()
    announcements = list(table.thread.messages.filter(author_resident__isnull=True).order_by("received_at", "id")
                         .values_list("body", flat=True))
    assert announcements[-2].startswith("**Day 1 is over:** the hammer fell. **Bob is imprisoned.**")
    assert announcements[-1].startswith("**Night 1 has begun.**")


def test_a_night_after_a_hammer_ends_at_the_phase_shift_and_keeps_the_later_boundaries_on_it_M_SETUP_2():
    table = build_game()
    voters = [n for n in table.users if n != "Bob"][:4]
    hammered_at = hammer(table, "Bob", voters)[-1].received_at
    night_end = START + timedelta(hours=24)  # the phase shift nearest the hammer + 24 h, not the hammer + 24 h
    assert hammered_at > START
    # The night starts with the hammer, in the same transaction: no moment without a phase, no stale deadline.
    pending = list(ScheduledEvent.objects.filter(game=table.game, done_at__isnull=True, cancelled_at__isnull=True)
                   .values_list("kind", "due_at"))
    assert pending == [("m21_night_end", night_end)]
    stale = ScheduledEvent.objects.get(game=table.game, kind="m21_day_deadline")
    assert (stale.due_at, stale.cancelled_at, stale.done_at) == (START + timedelta(hours=48), hammered_at, None)
    clock = phase_clock(table.game, hammered_at)
    assert (clock.phase, clock.number, clock.starts_at, clock.ends_at) == ("night", 1, hammered_at, night_end)
    table.run_clock(night_end)
    day2 = table.day(2)
    assert (day2.starts_at, day2.deadline) == (night_end, night_end + timedelta(hours=48))
    assert ScheduledEvent.objects.get(game=table.game, kind="m21_day_deadline", payload__day=2,
                                      cancelled_at__isnull=True).due_at == day2.deadline


def test_three_end_marks_of_four_needed_do_not_hammer_M_VOTE_3():
    table = build_game()
    hammer(table, "Bob", ["Alice", "Carol", "Dave"])
    table.post("Erin", "##VOTE Bob")
    assert table.day(1).status == DayStatus.OPEN
    assert lines(table, table.post("Erin", "##END")) == ["Erin wants the day to end."]
    assert table.day(1).status == DayStatus.DECIDED


def test_end_without_a_vote_is_refused_and_unend_clears_the_mark_M_VOTE_2_M_VOTE_7():
    table = build_game()
    assert lines(table, table.post("Alice", "##END")) == ["##END needs a vote in place: vote first."]
    assert lines(table, table.post("Alice", "##VOTE Bob ##END ##UNEND")) == [
        "Alice votes Bob.", "Alice wants the day to end.", "Alice no longer wants the day to end."]


def test_at_the_deadline_the_plurality_is_imprisoned_M_VOTE_4():
    table = build_game()
    for name, target in [("Alice", "Bob"), ("Carol", "Bob"), ("Dave", "Erin")]:
        table.post(name, f"##VOTE {target}")
    table.run_clock(START + timedelta(hours=48))
    day = table.day(1)
    assert (day.status, day.how, day.ended_at, day.imprisoned.name) == (DayStatus.DECIDED, "deadline",
                                                                       START + timedelta(hours=48), "Bob")


def test_a_post_after_the_planned_deadline_carries_no_vote_however_late_the_clock_runs_M_VOTE_4():
    table = build_game()
    table.post("Alice", "##VOTE Bob")
    table.now = START + timedelta(hours=48, minutes=3)  # the clock has not run yet
    late = table.post("Carol", "##VOTE Dave\n##VOTE Dave")
    assert lines(table, late)[0] == "The day is over: this carries no vote."
    day = table.day(1)
    assert (day.status, day.how, day.ended_at, day.imprisoned.name) == (DayStatus.DECIDED, "deadline",
                                                                       START + timedelta(hours=48), "Bob")
    table.run_clock(table.now)
    assert table.day(1).imprisoned.name == "Bob"


def test_a_tie_imprisons_nobody_and_no_lynch_can_win_M_VOTE_4(django_user_model):
    table = build_game(setup={"citizen": 6, "goon": 1}, slug="m21-tie")
    table.post("Alice", "##VOTE Bob")
    table.post("Carol", "##VOTE Dave")
    table.run_clock(START + timedelta(hours=48))
    day = table.day(1)
    assert (day.status, day.imprisoned, day.result["end"]["tied"]) == (DayStatus.DECIDED, None, ["Bob", "Dave"])
    end_post = table.thread.messages.get(body__startswith="**Day 1 is over:**").body
    assert end_post.startswith("**Day 1 is over:** the deadline passed. **Nobody is imprisoned** (a tie or no "
                               "votes).")


def test_no_lynch_wins_the_deadline(django_user_model):
    table = build_game(setup={"citizen": 6, "goon": 1}, slug="m21-nl")
    for name in ("Alice", "Bob"):
        table.post(name, "##VOTE No Lynch")
    table.post("Carol", "##VOTE Dave")
    table.run_clock(START + timedelta(hours=48))
    assert (table.day(1).imprisoned, table.day(1).result["no_lynch"]) == (None, True)


def test_the_offenders_are_listed_for_the_hosts_only_M_VOTE_5():
    table = build_game()
    table.post("Alice", "##VOTE Bob")
    table.post("Alice", "second post")
    table.post("Bob", "##VOTE Carol")
    table.post("Bob", "##UNVOTE")
    table.run_clock(START + timedelta(hours=48))
    office = services.thread_of(table.game, M21InboxKind.OFFICE)
    report = office.messages.get().body
    assert report.startswith("**Day 1: must-vote offenders (M-VOTE-5)**")
    assert "- Bob: no vote in place at the end\n" in report
    assert "- Carol: no vote in place at the end, never voted, fewer than two posts" in report
    assert "- Alice" not in report
    assert policies.can_read_inbox(table.host, office) and policies.can_read_inbox(table.cohost, office)
    assert not any(policies.can_read_inbox(user, office) for user in table.users.values())


def test_imprisonment_moves_posting_rights_to_the_spectators_thread_M_VOTE_6_M_SETUP_3():
    table = build_game()
    hammer(table, "Bob", ["Alice", "Carol", "Dave", "Erin"])
    bob = fresh(table.users["Bob"])  # a new request's user: no policy cache from before the imprisonment
    thread, spectators = table.thread, services.thread_of(table.game, M21InboxKind.SPECTATORS)
    assert policies.can_read_inbox(bob, thread) and not policies.can_post_in_inbox(bob, thread, table.now)
    assert policies.can_post_in_inbox(bob, spectators, table.now)
    assert not any(policies.can_read_inbox(fresh(table.users[n]), spectators) for n in table.users if n != "Bob")
    with pytest.raises(NotAllowed):
        table.post("Bob", "##VOTE Alice")
    mafia = services.thread_of(table.game, M21InboxKind.MAFIA_THREAD)
    if table.roles["Bob"] in ("godfather", "hooker"):
        assert Membership.objects.get(inbox=mafia, resident=table.seat("Bob")).state == MembershipState.REMOVED


def test_self_votes_follow_the_host_M_VOTE_7():
    table = build_game(self_votes_allowed=False, slug="m21-self")
    assert lines(table, table.post("Alice", "##VOTE Alice")) == ["Self-votes are not allowed here."]


def test_votes_on_a_player_removed_during_the_day_are_void_and_voters_told_M_VOTE_9():
    table = build_game()
    table.post("Alice", "##VOTE Frank")
    table.post("Carol", "##VOTE Frank")
    services.do_remove_m21_player(table.seat("Frank"), acting_user=table.host, now=table.tick())
    notice = table.thread.messages.filter(author_resident__isnull=True).order_by("-received_at").first().body
    assert notice.startswith("**Frank has been removed from the game.** They were the ")
    assert notice.endswith("Votes on Frank are void: Alice, Carol, please vote again (M-VOTE-9).")
    table.run_clock(START + timedelta(hours=48))
    offenders = table.day(1).result["offenders"]
    assert [o for o in offenders if o["seat"] == "Alice"] == [{"seat": "Alice", "offences":
                                                                ["fewer_than_two_posts"]}]


def test_a_replacement_keeps_the_seats_vote_L_REPLACE_1():
    from tests.rulesets.m21.day_helpers import make_user
    table = build_game()
    table.post("Alice", "##VOTE Bob")
    newcomer = make_user("Newcomer")
    services.do_replace_m21_player(table.seat("Alice"), newcomer, acting_user=table.host, now=table.tick())
    table.users["Newcomer"] = newcomer
    assert lines(table, table.post("Newcomer", "##END")) == ["Alice wants the day to end."]
    outcome = services.day_outcome(table.day(1), now=table.now)
    assert dict(outcome.report.count.votes) == {"Bob": ("Alice",)}


def test_the_host_extends_the_day_and_the_deadline_moves_on_the_clock_M_SETUP_2():
    table = build_game()
    new = services.do_extend_m21_phase(table.game, 24, acting_user=table.cohost, now=table.tick())
    assert new == START + timedelta(hours=72) == table.day(1).deadline
    pending = ScheduledEvent.objects.get(game=table.game, kind="m21_day_deadline", cancelled_at__isnull=True,
                                         done_at__isnull=True)
    assert pending.due_at == new
    table.post("Alice", "##VOTE Bob")
    table.run_clock(START + timedelta(hours=48, minutes=1))
    assert table.day(1).status == DayStatus.OPEN
    table.run_clock(new)
    assert table.day(1).status == DayStatus.DECIDED
    with pytest.raises(InvalidInput, match="Extend by 1 to 72 hours."):
        services.do_extend_m21_phase(table.game, 100, acting_user=table.host, now=table.now)


def test_the_host_posts_the_vote_count_M_VOTE_8():
    table = build_game()
    table.post("Alice", "##VOTE Bob ##END")
    table.post("Carol", "##VOTE No Lynch")
    msg = services.do_post_vote_count(table.game, acting_user=table.host, now=table.tick())
    assert msg.body == ("Day 1\n\n**Vote count** (7 alive, 4 to hammer)\n\n- **Bob** (1, L-3): Alice (END)\n"
                        "- **No Lynch** (1, L-3): Carol\n- Not voting (5): Bob, Dave, Erin, Frank, Grace\n")
    with pytest.raises(NotAllowed):
        services.do_post_vote_count(table.game, acting_user=table.users["Alice"], now=table.now)


def test_the_judge_closes_proceedings_once_a_majority_votes_M_ROLE_judge():
    table = build_game()
    judge = table.user_of_role("judge")
    table.post("Alice", "##VOTE Bob")
    with pytest.raises(services.M21Refusal, match=r"majority \(4 of 7\) have a vote in place; 1 do\."):
        services.do_close_proceedings(table.game, acting_user=judge, now=table.tick())
    for name in ("Carol", "Dave", "Erin"):
        table.post(name, "##VOTE Bob" if name != "Erin" else "##VOTE Carol")
    assert services.do_close_proceedings(table.game, acting_user=judge, now=table.tick()) == (
        "Proceedings are closed: the day ends now.")
    day = table.day(1)
    assert (day.status, day.how, day.imprisoned.name) == (DayStatus.DECIDED, "close_proceedings", "Bob")
    assert M21Seat.objects.get(role="judge", resident__game=table.game).state["judge_power_left"] == 0
    with pytest.raises(NotAllowed, match="Only the Judge has this power."):
        services.do_close_proceedings(table.game, acting_user=table.users["Alice"] if table.roles["Alice"] != "judge"
                                      else table.users["Bob"], now=table.now)


def test_the_judges_casting_vote_within_15_minutes_breaks_a_tie_M_ROLE_judge():
    table = build_game()
    judge_name = table.name_of_role("judge")
    others = [n for n in table.users if n != judge_name]
    table.post(others[0], f"##VOTE {others[2]}")
    table.post(others[1], f"##VOTE {others[3]}")
    table.run_clock(START + timedelta(hours=48))
    day = table.day(1)
    assert (day.status, day.casting_window_ends_at) == (DayStatus.AWAITING_CASTING_VOTE,
                                                      START + timedelta(hours=48, minutes=15))
    assert not ScheduledEvent.objects.filter(game=table.game, kind="m21_night_start").exists()
    judge = table.users[judge_name]
    with pytest.raises(services.M21Refusal, match=f"Choose one of the tied candidates: {others[2]}, {others[3]}."):
        services.do_cast_judge_vote(table.game, table.seat(others[4]), acting_user=judge, now=table.tick(5))
    assert services.do_cast_judge_vote(table.game, table.seat(others[3]), acting_user=judge, now=table.tick(5)) == (
        f"Your casting vote goes to {others[3]}.")
    day.refresh_from_db()
    assert (day.status, day.imprisoned.name, day.result["judge_power"]) == (DayStatus.DECIDED, others[3],
                                                                            "casting_vote")


def test_a_tie_without_a_casting_vote_stands_after_15_minutes_M_ROLE_judge():
    table = build_game()
    judge_name = table.name_of_role("judge")
    others = [n for n in table.users if n != judge_name]
    table.post(others[0], f"##VOTE {others[2]}")
    table.post(others[1], f"##VOTE {others[3]}")
    table.run_clock(START + timedelta(hours=48, minutes=15))
    day = table.day(1)
    assert (day.status, day.imprisoned) == (DayStatus.DECIDED, None)
    with pytest.raises(services.M21Refusal, match="No day is open and no tie waits for a casting vote."):
        services.do_cast_judge_vote(table.game, table.seat(others[3]), acting_user=table.users[judge_name],
                                    now=table.tick())


def test_a_casting_vote_registered_in_advance_applies_at_the_deadline_M_ROLE_judge():
    table = build_game()
    judge_name = table.name_of_role("judge")
    others = [n for n in table.users if n != judge_name]
    judge = table.users[judge_name]
    assert services.do_cast_judge_vote(table.game, table.seat(others[2]), acting_user=judge, now=table.tick()) == (
        f"Registered: if the day ends in a tie involving {others[2]}, your casting vote goes to {others[2]}.")
    table.post(others[0], f"##VOTE {others[2]}")
    table.post(others[1], f"##VOTE {others[3]}")
    table.run_clock(START + timedelta(hours=48))
    assert table.day(1).imprisoned.name == others[2]
    assert GameEvent.objects.filter(game=table.game, kind="m21.day_decided").count() == 1


def _pm_of(table, name):
    return M21Seat.objects.get(resident__game=table.game, resident__name=name).role_pm


def test_the_judge_gives_orders_in_the_role_pm_M_ROLE_judge():
    from inboxes.posting import do_post_message
    table = build_game()
    judge_name = table.name_of_role("judge")
    judge, pm = table.users[judge_name], _pm_of(table, judge_name)
    do_post_message(pm, "##CLOSE PROCEEDINGS please", acting_user=judge, now=table.tick())
    assert pm.messages.order_by("-received_at", "-id").first().body == (
        "Refused: Proceedings can be closed only when a majority (4 of 7) have a vote in place; 0 do.")
    others = [n for n in table.users if n != judge_name]
    do_post_message(pm, f"##CASTING VOTE {others[0][:3]}", acting_user=judge, now=table.tick())
    assert pm.messages.order_by("-received_at", "-id").first().body == (
        f"Registered: if the day ends in a tie involving {others[0]}, your casting vote goes to {others[0]}.")
    for name in others[1:5]:
        table.post(name, f"##VOTE {others[0]}")
    do_post_message(pm, "##close proceedings", acting_user=judge, now=table.tick())
    assert pm.messages.order_by("-received_at", "-id").first().body == "Proceedings are closed: the day ends now."
    assert (table.day(1).how, table.day(1).imprisoned.name) == ("close_proceedings", others[0])


def test_orders_from_anyone_but_the_judge_are_refused_in_their_pm_M_ROLE_judge():
    from inboxes.posting import do_post_message
    table = build_game()
    name = table.name_of_role("cop")
    pm = _pm_of(table, name)
    do_post_message(pm, "##CLOSE PROCEEDINGS", acting_user=table.users[name], now=table.tick())
    assert pm.messages.order_by("-received_at", "-id").first().body == "Refused: Only the Judge has this power."
    assert table.day(1).status == DayStatus.OPEN
