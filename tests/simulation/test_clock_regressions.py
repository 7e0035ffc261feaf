"""Regressions the simulated game (test_lepra_game.py) revealed in the clock's night start."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cities.models import GameDay
from rulesets.lepra.court.judge_services import do_schedule_judge_election
from rulesets.lepra.staff_kinds import StaffKind
from tests.cities.clock_helpers import DAY1, advance, clocked_game
from rulesets.lepra.models import JudgeElection

H = timedelta(hours=1)


def _utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_a_judge_election_opening_after_the_day_ends_does_not_hold_the_night_back_L_DAY_3_L_JUDGE_5(db):
    # A failed election's successor opens 6 h after the failure (L-JUDGE-5, L-DAY-4): here at 01:30 in Moscow.
    # It belongs to the night and the next day: night 1 starts at 00:00 as planned, not at the opening.
    built = clocked_game("clock-late-election")
    game = built.game
    advance(game, DAY1)
    city = game.cities.order_by("number").first()
    election = do_schedule_judge_election(city, _utc(2027, 3, 1, 22, 30), _utc(2027, 3, 2, 4), now=DAY1 + H,
                                          acting_user=built.staff[StaffKind.ARBITER])
    advance(game, _utc(2027, 3, 1, 23))
    assert GameDay.objects.get(game=game, number=1).ended_at == _utc(2027, 3, 1, 21)  # 00:00 in Moscow
    election.refresh_from_db()
    assert election.opened_at == _utc(2027, 3, 1, 22, 30)


def test_night_waits_for_the_days_election_but_not_for_its_failed_successor_L_DAY_4_L_JUDGE_5(db):
    # The day's election runs until 01:00 in Moscow: the night waits for its close. Nobody proposed a candidate,
    # so it fails and the site schedules a successor 6 h later (L-JUDGE-5); that one does not hold the night.
    built = clocked_game("clock-day-election")
    game = built.game
    advance(game, DAY1)
    city = game.cities.order_by("number").first()
    election = do_schedule_judge_election(city, _utc(2027, 3, 1, 18), _utc(2027, 3, 1, 22), now=DAY1 + H,
                                          acting_user=built.staff[StaffKind.ARBITER])
    advance(game, _utc(2027, 3, 1, 23))
    assert GameDay.objects.get(game=game, number=1).ended_at == _utc(2027, 3, 1, 22)
    election.refresh_from_db()
    assert election.winner is None and election.closed_at == _utc(2027, 3, 1, 22)
    successor = JudgeElection.objects.get(follows=election)
    assert (successor.opens_at, successor.opened_at) == (_utc(2027, 3, 2, 4), None)


def test_final_post_of_a_game_won_by_day_tells_of_no_night_that_never_was_L_POST_2_L_WIN_1(db):
    # Day 2: the Procurator names the executed of both cities (no nominees, L-VOTE-7): the last mafia die at noon
    # and the honest win (L-WIN-1). The next morning's daily post closes the game; it reports day 2's results but
    # no "night 2" with "nobody was killed": that night never took place.
    from cities.models import Alignment, GameStatus, PostKind, PublicPost, Resident
    from rulesets.lepra.day.services import do_decide_execution
    from tests.setup_factory import in_game_language

    built = clocked_game("clock-won-by-day")
    game = built.game
    advance(game, DAY1 + 24 * H)
    for mafioso in Resident.objects.filter(game=game, alignment=Alignment.MAFIA).order_by("city__number"):
        do_decide_execution(mafioso.city, mafioso, acting_user=built.procurator, now=DAY1 + 29 * H)
    game.refresh_from_db()
    assert game.status == GameStatus.FINISHED
    advance(game, DAY1 + 48 * H)
    post = PublicPost.objects.get(game=game, kind=PostKind.DAILY, title=in_game_language(game, "Day %(day)d", day=3))
    assert post.published_at == DAY1 + 48 * H
    assert in_game_language(game, "Results of day %(day)d", day=2) in post.body
    assert in_game_language(game, "Night %(night)d", night=2) not in post.body
    assert in_game_language(game, "Nobody was killed tonight.") not in post.body


def test_day_1_start_opens_the_standing_inboxes_of_a_game_set_up_without_them_L_INBOX_1_L_INBOX_5(db):
    # Nothing but the demo opened the city, personal, cemetery, office, bar and court inboxes: a game set up
    # through the pages started with none. The day 1 start opens them (by the site), with the day's number.
    from cities.models import Resident
    from inboxes.models import Inbox, Membership
    from rulesets.lepra.kinds import LepraInboxKind
    from rulesets.lepra.clock.services import do_start_game_clock
    from tests.setup_factory import build_game

    built = build_game("numbers", slug="clock-no-inboxes", cities=2, size=5)
    game = built.game
    assert not Inbox.objects.filter(game=game, kind=LepraInboxKind.CITY).exists()
    do_start_game_clock(game, first_day_starts_at=DAY1, acting_user=built.procurator, now=DAY1 - 24 * H)
    advance(game, DAY1)
    residents = list(Resident.objects.filter(game=game))
    city_inboxes = Inbox.objects.filter(game=game, kind=LepraInboxKind.CITY)
    assert sorted((i.city.number, i.day_number) for i in city_inboxes) == [(1, 1), (2, 1)]
    for inbox in city_inboxes:
        assert set(Membership.objects.filter(inbox=inbox).values_list("resident__name", "state")) == {
            (r.name, "member") for r in residents if r.city_id == inbox.city_id}
    assert sorted(Inbox.objects.filter(game=game, kind=LepraInboxKind.PERSONAL).values_list("resident__name", flat=True)) \
        == sorted(r.name for r in residents)
    assert {k: Inbox.objects.filter(game=game, kind=k).count() for k in
            (LepraInboxKind.CEMETERY, LepraInboxKind.OFFICE, LepraInboxKind.BAR, LepraInboxKind.COURT)} == dict.fromkeys(
        (LepraInboxKind.CEMETERY, LepraInboxKind.OFFICE, LepraInboxKind.BAR, LepraInboxKind.COURT), 1)


def test_a_city_without_living_mafia_or_honest_awaits_no_procurator_decision_L_WIN_2_L_VOTE_7(db):
    # On day 9 of the simulated game Beta had no living honest resident: the city page showed it "awaiting the
    # Procurator's decision", and the Procurator could have executed someone there. L-WIN-2: such a city (and a
    # city without living mafia) holds no more executions.
    import pytest

    from cities.models import Alignment, Resident
    from inboxes.membership_services import do_kill_resident
    from inboxes.models import DeathCause
    from kernel.errors import WrongState
    from rulesets.lepra.day.services import awaiting_procurator, do_decide_execution

    built = clocked_game("clock-no-votes")
    game = built.game
    advance(game, DAY1 + 24 * H)  # day 2: nobody nominated yet
    one, two = game.cities.order_by("number")
    assert awaiting_procurator(one, 2) and awaiting_procurator(two, 2)
    for mafioso in Resident.objects.filter(city=one, alignment=Alignment.MAFIA):  # city 1: no living mafia
        do_kill_resident(mafioso, DeathCause.PENALTY, acting_user=None, now=DAY1 + 26 * H)
    for honest in Resident.objects.filter(city=two, alignment=Alignment.HONEST):  # city 2: no living honest
        do_kill_resident(honest, DeathCause.PENALTY, acting_user=None, now=DAY1 + 26 * H)
    # Until the daily post announces their sides (L-DEATH-2) nothing may tell that these were the last (L-STAFF-6).
    assert (awaiting_procurator(one, 2), awaiting_procurator(two, 2)) == (True, True)
    Resident.objects.filter(game=game).exclude(status="alive").update(alignment_announced=True)
    assert (awaiting_procurator(one, 2), awaiting_procurator(two, 2)) == (False, False)
    for city, alignment in ((one, Alignment.HONEST), (two, Alignment.MAFIA)):
        living = Resident.objects.filter(city=city, alignment=alignment, status="alive").first()
        with pytest.raises(WrongState) as refused:
            do_decide_execution(city, living, acting_user=built.procurator, now=DAY1 + 27 * H)
        assert refused.value.rule == "L-WIN-2"
        assert Resident.objects.get(pk=living.pk).status == "alive"
