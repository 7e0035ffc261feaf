"""Night actions and resolution through the services (issue 6): L-NIGHT-1..7, L-DAY-5, L-JUDGE-7, L-SPIRIT-1,
L-DEATH-1, idempotent resolution and the night_end scheduled event."""
from __future__ import annotations

from datetime import timedelta

import pytest

from cities.models import GameEvent, GameStatus, LifeStatus, Resident, ScheduledEvent
from cities.scheduler import try_run_one_due_event
from inboxes import knowledge, policies
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra.models import GodfatherElection, NightActionKind, NightResolution
from rulesets.lepra import seats
from rulesets.lepra.night import services as night_services
from tests.rulesets.lepra.night.conftest import NOW, kill, set_day

TOUR = NightActionKind.TOUR
LATER = NOW + timedelta(hours=10)


def decide(ng, city_number, target, *, user=None, kind=NightActionKind.KILL, at=NOW):
    city = ng.cities[city_number - 1]
    return night_services.do_submit_night_decision(city, target, kind=kind, now=at,
                                             acting_user=user or ng.godfather[city_number].user)


# --------------------------------------------------------------------------------------------------------------
# L-NIGHT-1, L-NIGHT-2, L-NIGHT-6: the decision
# --------------------------------------------------------------------------------------------------------------

def test_godfather_kills_one_honest_resident_of_own_city_L_NIGHT_1(ng):
    victim = ng.honest[1][0]
    decide(ng, 1, victim)
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert [(d.resident, d.touring) for d in outcome.deaths] == [(victim.pk, False)]
    victim = ng.r(victim)
    assert (victim.status, victim.died_at) == (LifeStatus.DEAD, LATER)
    event = GameEvent.objects.get(game=ng.game, kind="resident.died", payload__resident=victim.pk)
    assert event.payload["cause"] == "killed"


def test_mafia_cannot_target_a_mafioso_or_another_citys_resident_L_NIGHT_1(ng10):
    with pytest.raises(InvalidInput) as own:
        decide(ng10, 1, ng10.mafia[1][1])
    assert own.value.rule == "L-NIGHT-1"
    with pytest.raises(InvalidInput):
        decide(ng10, 1, ng10.honest[2][0])
    kill(ng10.honest[1][0])
    with pytest.raises(InvalidInput):
        decide(ng10, 1, ng10.honest[1][0])  # dead


def test_only_the_godfather_or_the_consigliere_decides_L_NIGHT_2(ng10):
    plain_mafioso = next(m for m in ng10.mafia[1] if not seats.is_godfather(m))
    for user in (plain_mafioso.user, ng10.procurator, ng10.honest[1][0].user, ng10.godfather[2].user):
        with pytest.raises(NotAllowed):
            decide(ng10, 1, ng10.honest[1][0], user=user)


def test_decision_changed_twice_the_last_counts_L_NIGHT_6(ng):
    first, second = ng.honest[1]
    decide(ng, 1, first, at=NOW)
    decide(ng, 1, None, at=NOW + timedelta(minutes=1))
    decide(ng, 1, second, at=NOW + timedelta(minutes=2))
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert [d.resident for d in outcome.deaths] == [second.pk]
    assert ng.r(first).status == LifeStatus.ALIVE


def test_no_kill_decision_kills_nobody_L_NIGHT_2(ng):
    decide(ng, 1, ng.honest[1][0])
    decide(ng, 1, None, at=NOW + timedelta(minutes=1))
    assert night_services.do_resolve_night(ng.game, night=2, now=LATER).deaths == ()


def test_no_decision_means_no_kill_L_NIGHT_2(ng):
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert outcome.deaths == ()
    assert Resident.objects.filter(game=ng.game, status=LifeStatus.ALIVE).count() == 15


def test_consigliere_enters_the_decision_when_the_godfather_is_silent_L_NIGHT_2(ng):
    victim = ng.honest[1][1]
    decision = decide(ng, 1, victim, user=ng.consigliere)
    assert decision.by_consigliere is True
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert [d.resident for d in outcome.deaths] == [victim.pk]


def test_consigliere_cannot_override_the_godfathers_decision_L_NIGHT_2(ng):
    decide(ng, 1, None)
    with pytest.raises(NotAllowed) as refused:
        decide(ng, 1, ng.honest[1][0], user=ng.consigliere, at=NOW + timedelta(minutes=1))
    assert refused.value.rule == "L-NIGHT-2"
    assert night_services.do_resolve_night(ng.game, night=2, now=LATER).deaths == ()


def test_decision_is_told_in_the_mafia_inbox_only(ng):
    victim = ng.honest[1][0]
    decide(ng, 1, victim)
    mafia_inbox = night_services.mafia_inbox_of(ng.cities[0])
    assert Message.objects.filter(inbox=mafia_inbox, body__contains=victim.name).count() == 1
    others = Message.objects.filter(body__contains=victim.name).exclude(inbox=mafia_inbox)
    assert others.exclude(inbox__kind=LepraInboxKind.NOTARY).count() == 0  # the draw's notary lists name everyone
    event = GameEvent.objects.get(game=ng.game, kind="night.decision")
    assert set(event.payload) == {"decision", "city", "night", "kind"}


def test_decision_after_the_night_is_resolved_is_refused_L_NIGHT_6(ng):
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    with pytest.raises(WrongState):
        decide(ng, 1, ng.honest[1][0], at=LATER)


# --------------------------------------------------------------------------------------------------------------
# L-DAY-5: night 1
# --------------------------------------------------------------------------------------------------------------

def test_night_1_refuses_kills_touring_and_checks_but_elects_godfathers_L_DAY_5(ng10):
    set_day(ng10, 1)
    with pytest.raises(WrongState) as kill_refused:
        decide(ng10, 1, ng10.honest[1][0])
    assert kill_refused.value.rule == "L-DAY-5"
    with pytest.raises(WrongState):
        decide(ng10, 1, ng10.honest[2][0], kind=TOUR)
    with pytest.raises(WrongState) as check_refused:
        night_services.do_check_resident(ng10.mafia[1][0], acting_user=ng10.commissar[1].user, now=NOW)
    assert check_refused.value.rule == "L-DAY-5"
    election = night_services.do_open_godfather_election(ng10.cities[0], acting_user=ng10.consigliere, now=NOW)
    assert election.night == 1
    assert night_services.touring_city_for(ng10.game, 1) is None
    outcome = night_services.do_resolve_night(ng10.game, night=1, now=LATER)
    assert (outcome.deaths, outcome.checks, outcome.touring_city) == ((), 0, None)


# --------------------------------------------------------------------------------------------------------------
# L-NIGHT-3: godfathers
# --------------------------------------------------------------------------------------------------------------

def test_godfather_elected_by_simple_vote_the_consigliere_opens_L_NIGHT_3(ng10):
    set_day(ng10, 1)
    city = ng10.cities[0]
    old, other = ng10.mafia[1]
    election = night_services.do_open_godfather_election(city, acting_user=ng10.consigliere, now=NOW)
    night_services.do_vote_godfather(election, other, acting_user=old.user, now=NOW)
    night_services.do_vote_godfather(election, old, acting_user=other.user, now=NOW)
    night_services.do_vote_godfather(election, other, acting_user=other.user, now=NOW + timedelta(minutes=1))  # changed
    winner = night_services.do_close_godfather_election(election, acting_user=ng10.consigliere, now=NOW)
    assert winner.pk == other.pk
    assert (seats.is_godfather(ng10.r(other)), seats.is_godfather(ng10.r(old))) == (True, False)
    assert night_services.living_godfather(city).pk == other.pk


def test_tied_election_fails_and_the_consigliere_appoints_L_NIGHT_3(ng10):
    city = ng10.cities[0]
    a, b = ng10.mafia[1]
    election = night_services.do_open_godfather_election(city, acting_user=ng10.consigliere, now=NOW)
    night_services.do_vote_godfather(election, a, acting_user=a.user, now=NOW)
    night_services.do_vote_godfather(election, b, acting_user=b.user, now=NOW)
    assert night_services.do_close_godfather_election(election, acting_user=ng10.consigliere, now=NOW) is None
    night_services.do_appoint_godfather(city, b, acting_user=ng10.consigliere, now=NOW)
    assert night_services.living_godfather(city).pk == b.pk
    with pytest.raises(NotAllowed):
        night_services.do_appoint_godfather(city, a, acting_user=ng10.procurator, now=NOW)


def test_mafia_may_demand_a_reelection_others_may_not_L_NIGHT_3(ng10):
    city = ng10.cities[0]
    with pytest.raises(NotAllowed):
        night_services.do_open_godfather_election(city, acting_user=ng10.honest[1][0].user, now=NOW)
    with pytest.raises(NotAllowed):
        night_services.do_open_godfather_election(city, acting_user=ng10.mafia[2][0].user, now=NOW)
    election = night_services.do_open_godfather_election(city, acting_user=ng10.mafia[1][1].user, now=NOW)
    assert election.closed_at is None
    with pytest.raises(WrongState):
        night_services.do_open_godfather_election(city, acting_user=ng10.consigliere, now=NOW)
    with pytest.raises(InvalidInput):
        night_services.do_vote_godfather(election, ng10.honest[1][0], acting_user=ng10.mafia[1][0].user, now=NOW)


def test_open_election_closes_at_night_end(ng10):
    city = ng10.cities[0]
    a, b = ng10.mafia[1]
    election = night_services.do_open_godfather_election(city, acting_user=ng10.consigliere, now=NOW)
    night_services.do_vote_godfather(election, b, acting_user=a.user, now=NOW)
    night_services.do_resolve_night(ng10.game, night=2, now=LATER)
    assert night_services.living_godfather(city).pk == b.pk


def test_dead_godfather_triggers_a_new_election_L_NIGHT_3(ng10):
    victim = ng10.godfather[2]  # city 1 tours on night 2 and kills city 2's godfather (a mafioso there too)
    decide(ng10, 1, victim, kind=TOUR)
    outcome = night_services.do_resolve_night(ng10.game, night=2, now=LATER)
    assert [(d.resident, d.touring, d.by_city) for d in outcome.deaths] == [(victim.pk, True, ng10.cities[0].pk)]
    election = GodfatherElection.objects.get(city=ng10.cities[1], closed_at__isnull=True)
    assert election.opened_at == LATER


def test_godfather_executed_by_day_triggers_a_new_election_L_NIGHT_3(ng10):
    from rulesets.lepra.day.services import do_decide_execution
    do_decide_execution(ng10.cities[1], ng10.godfather[2], acting_user=ng10.procurator, now=NOW)
    assert GodfatherElection.objects.filter(city=ng10.cities[1], closed_at__isnull=True).count() == 1


# --------------------------------------------------------------------------------------------------------------
# L-NIGHT-4, L-JUDGE-7: touring
# --------------------------------------------------------------------------------------------------------------

def test_touring_kills_a_resident_of_another_city_L_NIGHT_4(ng):
    victim = ng.honest[3][0]
    decide(ng, 1, victim, kind=TOUR)
    decide(ng, 1, ng.honest[1][0])
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert sorted((d.resident, d.touring) for d in outcome.deaths) == sorted(
        [(victim.pk, True), (ng.honest[1][0].pk, False)])


def test_touring_cannot_kill_the_sitting_judge_L_JUDGE_7(ng):
    with pytest.raises(InvalidInput) as refused:
        decide(ng, 1, ng.judge[2], kind=TOUR)
    assert refused.value.rule == "L-JUDGE-7"
    with pytest.raises(InvalidInput):
        decide(ng, 1, ng.honest[1][0], kind=TOUR)  # own city: that is the home kill


def test_home_mafia_may_kill_their_own_judge_L_JUDGE_7(ng):
    decide(ng, 2, ng.judge[2])
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    judge = ng.r(ng.judge[2])
    assert (judge.status, seats.is_judge(judge)) == (LifeStatus.DEAD, False)


def test_only_the_touring_city_tours_L_NIGHT_4(ng):
    with pytest.raises(WrongState) as refused:
        decide(ng, 2, ng.honest[1][0], kind=TOUR)
    assert refused.value.rule == "L-NIGHT-4"


def test_touring_rotation_in_city_order_skipping_a_city_without_mafia_L_NIGHT_4(ng):
    c1, _c2, c3 = ng.cities
    assert night_services.touring_city_for(ng.game, 2) == c1
    kill(ng.mafia[2][0])  # city 2 has no living mafia any more, and the daily post has said so
    Resident.objects.filter(pk=ng.mafia[2][0].pk).update(alignment_announced=True)
    assert [(n, c.pk) for n, c in night_services.touring_rotation_list(ng.game)] == [(2, c1.pk), (3, c3.pk)]
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    set_day(ng, 3)
    assert night_services.touring_city_for(ng.game, 3) == c3
    night_services.do_resolve_night(ng.game, night=3, now=LATER + timedelta(days=1))
    set_day(ng, 4)
    assert night_services.touring_city_for(ng.game, 4) == c1
    assert NightResolution.objects.get(game=ng.game, night=3).touring_city == c3


def test_the_public_rotation_keeps_a_city_whose_last_mafioso_died_until_the_alignment_is_announced_L_STAFF_6(
        ng, client):
    c1, c2, c3 = ng.cities
    before = [(2, c1.pk), (3, c2.pk), (4, c3.pk)]
    assert [(n, c.pk) for n, c in night_services.touring_rotation_list(ng.game)] == before
    for mafioso in ng.mafia[2]:  # executed or killed: nobody may know yet that they were mafia (L-DEATH-2)
        kill(mafioso)
    assert [(n, c.pk) for n, c in night_services.touring_rotation_list(ng.game)] == before
    html = client.get(f"/games/{ng.game.slug}/").content.decode()
    assert c2.name in html[html.index('class="touring-rotation"'):].split("</p>")[0]
    Resident.objects.filter(pk__in=[m.pk for m in ng.mafia[2]]).update(alignment_announced=True)  # the daily post
    assert [(n, c.pk) for n, c in night_services.touring_rotation_list(ng.game)] == [(2, c1.pk), (3, c3.pk)]


def test_touring_rotation_is_on_the_game_page_L_NIGHT_4(ng, client):
    response = client.get(f"/games/{ng.game.slug}/")
    html = response.content.decode()
    assert "touring-rotation" in html
    for city in ng.cities:
        assert city.name in html


# --------------------------------------------------------------------------------------------------------------
# L-NIGHT-5: commissar checks; L-INBOX-3, L-DEATH-1: a killed commissar
# --------------------------------------------------------------------------------------------------------------

def test_commissar_check_answered_at_once_and_truthfully_L_NIGHT_5(ng):
    commissar = ng.commissar[1]
    mafioso = ng.mafia[1][0]
    check = night_services.do_check_resident(mafioso, acting_user=commissar.user, now=NOW)
    assert check.is_mafia is True
    channel = night_services.check_channel_of(ng.cities[0])
    bodies = list(Message.objects.filter(inbox=channel).values_list("author_name", "body"))
    assert [a for a, _ in bodies] == ["Mafia Host", "Mafia Host"]
    assert mafioso.name in bodies[0][1] and mafioso.name in bodies[1][1]
    assert Membership.objects.get(inbox=channel, resident=commissar).state == MembershipState.BANNED
    assert knowledge.visible_alignment(commissar.user, ng.r(mafioso)) == "mafia"
    assert knowledge.visible_alignment(commissar.user, ng.r(ng.honest[1][0])) is None


def test_commissar_checks_once_per_night_a_living_resident_of_own_city_L_NIGHT_5(ng):
    user = ng.commissar[1].user
    with pytest.raises(InvalidInput):
        night_services.do_check_resident(ng.mafia[2][0], acting_user=user, now=NOW)  # another city
    night_services.do_check_resident(ng.honest[1][0], acting_user=user, now=NOW)
    with pytest.raises(InvalidInput) as twice:
        night_services.do_check_resident(ng.mafia[1][0], acting_user=user, now=NOW)
    assert twice.value.rule == "L-NIGHT-5"
    with pytest.raises(NotAllowed):
        night_services.do_check_resident(ng.mafia[1][0], acting_user=ng.honest[1][0].user, now=NOW)
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert outcome.checks == 1
    event = GameEvent.objects.get(game=ng.game, kind="night.resolved")
    assert event.payload["checks"] == 1


def test_consigliere_reads_the_check_without_the_askers_name_L_NIGHT_5(ng, client):
    commissar = ng.commissar[1]
    night_services.do_check_resident(ng.mafia[1][0], acting_user=commissar.user, now=NOW)
    channel = night_services.check_channel_of(ng.cities[0])
    assert policies.can_read_inbox(ng.consigliere, channel)
    client.force_login(ng.consigliere)
    html = client.get(f"/inboxes/{channel.public_id}/").content.decode()
    assert ng.mafia[1][0].name in html  # the question is there
    assert commissar.name not in html  # the asker is not
    assert commissar.user.public_name not in html


def test_killed_commissar_is_removed_from_the_police_station_L_INBOX_3(ng):
    commissar = ng.commissar[1]
    police = Inbox.objects.get(game=ng.game, kind=LepraInboxKind.POLICE)
    assert Membership.objects.get(inbox=police, resident=commissar).state == MembershipState.MEMBER
    decide(ng, 1, commissar)
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert Membership.objects.get(inbox=police, resident=commissar).state == MembershipState.REMOVED
    assert not policies.can_read_inbox(commissar.user, police)
    set_day(ng, 3)
    with pytest.raises(NotAllowed):
        night_services.do_check_resident(ng.mafia[1][0], acting_user=commissar.user, now=LATER)


# --------------------------------------------------------------------------------------------------------------
# L-NIGHT-7: gifts and fish
# --------------------------------------------------------------------------------------------------------------

def test_gift_through_the_consigliere_delivered_anonymously_by_city_L_NIGHT_7(ng):
    c1, c2, _c3 = ng.cities
    with pytest.raises(InvalidInput):  # city 1 has not toured yet
        night_services.do_send_gift(c2, c1, "gift", "Спасибо!", acting_user=ng.consigliere, now=NOW)
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    set_day(ng, 3)
    with pytest.raises(NotAllowed):
        night_services.do_send_gift(c2, c1, "gift", "x", acting_user=ng.godfather[2].user, now=LATER)
    night_services.do_send_gift(c2, c1, "fish", "Рыба вам.", acting_user=ng.consigliere, now=LATER)
    message = Message.objects.filter(inbox=night_services.mafia_inbox_of(c1)).order_by("-received_at", "-id").first()
    assert c2.name in message.body and "Рыба вам." in message.body
    assert message.author_name == "Mafia Host"
    assert ng.godfather[2].name not in message.body


# --------------------------------------------------------------------------------------------------------------
# L-SPIRIT-1: the spirit rule day
# --------------------------------------------------------------------------------------------------------------

def test_spirit_rule_day_night_victim_becomes_a_spirit_L_SPIRIT_1(ng):
    # City 1: 1 mafioso, honest judge, commissar, 2 plain; two plain die by day: 2 honest and 1 mafioso remain.
    for r in ng.honest[1]:
        kill(r)
    decide(ng, 1, ng.judge[1])
    outcome = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    assert [(d.resident, d.spirit) for d in outcome.deaths] == [(ng.judge[1].pk, True)]
    judge = ng.r(ng.judge[1])
    assert (judge.status, seats.is_spirit(judge)) == (LifeStatus.DEAD, True)
    cemetery = Inbox.objects.get(game=ng.game, kind=LepraInboxKind.CEMETERY)
    assert not Membership.objects.filter(inbox=cemetery, resident=judge, state=MembershipState.MEMBER).exists()
    assert GameEvent.objects.get(game=ng.game, kind="voting.spirits").payload == {
        "city": ng.cities[0].pk, "spirits": [judge.pk]}
    from rulesets.lepra.day.spirit_services import do_apply_spirit_rule
    assert do_apply_spirit_rule(ng.cities[0], now=LATER) == []  # the morning rule finds nothing more to do
    assert ng.refresh().status == GameStatus.RUNNING  # 1 honest + 1 mafia here, 8 honest vs 3 mafia overall


# --------------------------------------------------------------------------------------------------------------
# Resolution: once, audited, by the clock
# --------------------------------------------------------------------------------------------------------------

def test_resolution_is_idempotent_L_NIGHT_6(ng):
    victim = ng.honest[1][0]
    decide(ng, 1, victim)
    first = night_services.do_resolve_night(ng.game, night=2, now=LATER)
    decide_after = Resident.objects.filter(game=ng.game, status=LifeStatus.ALIVE).count()
    second = night_services.do_resolve_night(ng.game, night=2, now=LATER + timedelta(minutes=5))
    assert second == first
    assert Resident.objects.filter(game=ng.game, status=LifeStatus.ALIVE).count() == decide_after == 14
    assert NightResolution.objects.filter(game=ng.game, night=2).count() == 1
    assert GameEvent.objects.filter(game=ng.game, kind="night.resolved").count() == 1
    assert GameEvent.objects.filter(game=ng.game, kind="resident.died").count() == 1


def test_night_resolved_event_payload_has_deaths_and_a_check_count_only(ng):
    victim = ng.honest[3][1]
    decide(ng, 1, victim, kind=TOUR)
    night_services.do_check_resident(ng.mafia[2][0], acting_user=ng.commissar[2].user, now=NOW)
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    payload = GameEvent.objects.get(game=ng.game, kind="night.resolved").payload
    assert payload == {
        "night": 2, "checks": 1, "touring_city": ng.cities[0].pk,
        "deaths": [{"resident": victim.pk, "city": ng.cities[2].pk, "cause": "killed", "touring": True,
                    "by_city": ng.cities[0].pk, "spirit": False}],
    }


def test_only_the_site_or_the_procurator_resolves(ng):
    with pytest.raises(NotAllowed):
        night_services.do_resolve_night(ng.game, night=2, acting_user=ng.consigliere, now=LATER)


def test_night_end_scheduled_event_resolves_the_night(ng):
    victim = ng.honest[2][0]
    decide(ng, 2, victim)
    event = ScheduledEvent.objects.create(game=ng.game, kind="night_end", due_at=LATER, payload={"night": 2},
                                         created_at=NOW)
    ran = []
    while (result := try_run_one_due_event(LATER + timedelta(seconds=1))) is not None:
        ran.append((result.kind, result.ok))
    assert ("night_end", True) in ran
    event.refresh_from_db()
    assert event.done_at is not None
    assert ng.r(victim).status == LifeStatus.DEAD
    assert NightResolution.objects.filter(game=ng.game, night=2).count() == 1


def test_judge_killed_at_night_gets_a_site_scheduled_election_L_JUDGE_2(ng):
    """The resolution schedules the new election where a judge died: 6 h notice, next full hour, 6 h long."""
    from rulesets.lepra.models import JudgeElection
    decide(ng, 2, ng.judge[2])
    night_services.do_resolve_night(ng.game, night=2, now=LATER)
    elections = list(JudgeElection.objects.filter(game=ng.game).values_list("city__number", "opens_at", "closes_at"))
    opens = (LATER + timedelta(hours=6)).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    assert elections == [(2, opens, opens + timedelta(hours=6))]
    assert set(ScheduledEvent.objects.filter(game=ng.game, kind__in=["election_open", "election_close"])
               .values_list("kind", "due_at")) == {("election_open", opens), ("election_close", opens + timedelta(hours=6))}
    assert GameEvent.objects.filter(game=ng.game, kind="election.scheduled", actor=None).count() == 1


def test_commissar_on_the_clock_cannot_check_before_the_night_starts_L_NIGHT_5(ng):
    """With a phase plan, a check during day 2 (before night 2 starts) is refused: no answer before the vote."""
    from cities.models import GameDay
    from rulesets.lepra.models import CommissarCheck
    GameDay.objects.create(game=ng.game, number=2, starts_at=NOW - timedelta(hours=12), ends_at=NOW + timedelta(hours=2),
                           night_ends_at=NOW + timedelta(hours=11))
    with pytest.raises(WrongState) as refused:
        night_services.do_check_resident(ng.honest[1][0], acting_user=ng.commissar[1].user, now=NOW)
    assert refused.value.rule == "L-NIGHT-6"
    assert CommissarCheck.objects.filter(game=ng.game).count() == 0
