"""The Lepra day through the services (issue 4): nominations (L-NOM), the voting session (L-DAY-3, L-VOTE) and
exact tallies computed by the pure core over the stored messages."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils import translation

from cities.models import City, LifeStatus, Resident
from inboxes.membership_services import do_kill_resident
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.day.services import (
    compute_session_tally,
    do_accept_proxy,
    do_close_voting,
    do_nominate,
    do_request_proxy,
    do_schedule_voting,
)
from tests.rulesets.lepra.day.day_helpers import english  # noqa: F401 - the autouse fixture (messages in English)
from tests.rulesets.lepra.day.day_helpers import (
    CLOSES,
    MORNING,
    OPENS,
    US,
    _refusal,
    city1_day,
    nominate_and_open,
)
from tests.setup_factory import in_game_language
from rulesets.lepra.models import LepraVote, Nomination, VoteState

# ---------------------------------------------------------------------------------------------------------------
# Nominations (L-NOM-1..3)
# ---------------------------------------------------------------------------------------------------------------

def test_one_nomination_per_resident_per_day_L_NOM_1(demo):
    day = city1_day(demo)
    a, b, voter = day.plain[0], day.plain[1], day.plain[2]
    nomination = do_nominate(a, acting_user=voter.user, now=MORNING)
    assert (nomination.day, nomination.nominator, nomination.nominee) == (2, voter, a)
    assert _refusal(InvalidInput, do_nominate, b, acting_user=voter.user, now=MORNING) == (
        f"You have already nominated {a.name} today.")
    assert Nomination.objects.filter(nominator=voter).count() == 1


def test_only_living_residents_of_the_same_city_can_be_nominated_L_NOM_1(demo):
    day = city1_day(demo)
    other = Resident.objects.filter(seats.rank_q("is_judge", False), game=demo.game, city__number=2).first()
    assert _refusal(InvalidInput, do_nominate, other, acting_user=day.plain[0].user, now=MORNING) == (
        "Only residents of your own city can be nominated.")
    dead = day.plain[3]
    do_kill_resident(dead, "killed", acting_user=None, now=MORNING)
    assert _refusal(InvalidInput, do_nominate, dead, acting_user=day.plain[0].user, now=MORNING) == (
        f"{dead.name} is not alive.")


def test_the_sitting_judge_cannot_be_nominated_L_NOM_2(demo):
    day = city1_day(demo)
    judge = demo.seat("judge")
    assert _refusal(InvalidInput, do_nominate, judge, acting_user=day.plain[0].user, now=MORNING) == (
        f"{judge.name} is the sitting judge and cannot be nominated.")


def test_a_spirit_cannot_nominate_L_NOM_3(demo):
    day = city1_day(demo)
    spirit = day.plain[0]
    do_kill_resident(spirit, "killed", spirit=True, acting_user=None, now=MORNING)
    assert _refusal(NotAllowed, do_nominate, day.plain[1], acting_user=spirit.user, now=MORNING) == (
        "A spirit cannot nominate.")


def test_nominations_close_when_voting_starts_L_NOM_1(demo):
    day = city1_day(demo)
    nominate_and_open(demo, day, [day.plain[0]])
    assert _refusal(WrongState, do_nominate, day.plain[0], acting_user=day.plain[5].user, now=OPENS + US) == (
        "Voting has started: nominations are closed for today.")


# ---------------------------------------------------------------------------------------------------------------
# Scheduling (L-DAY-3)
# ---------------------------------------------------------------------------------------------------------------

def test_voting_must_close_by_midnight_in_the_game_zone_L_DAY_3(demo):
    city = City.objects.get(game=demo.game, number=1)
    midnight = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)  # 00:00 in Moscow
    assert _refusal(InvalidInput, do_schedule_voting, city, OPENS, midnight + US, acting_user=demo.tribune1,
                    now=MORNING).startswith("Voting must close no later than 00:00 (")
    session = do_schedule_voting(city, OPENS, midnight, acting_user=demo.tribune1, now=MORNING)
    assert session.closes_at == midnight


def test_only_the_citys_tribune_schedules_and_times_are_checked_L_DAY_3(demo):
    city = City.objects.get(game=demo.game, number=1)
    assert _refusal(NotAllowed, do_schedule_voting, city, OPENS, CLOSES, acting_user=demo.tribune2,
                    now=MORNING) == f"Only the Tribune of {city.name} may do this."
    assert _refusal(InvalidInput, do_schedule_voting, city, CLOSES, OPENS, acting_user=demo.tribune1,
                    now=MORNING) == "Voting must open before it closes."
    assert _refusal(InvalidInput, do_schedule_voting, city, MORNING, CLOSES, acting_user=demo.tribune1,
                    now=MORNING) == "The opening of voting must be in the future."


# ---------------------------------------------------------------------------------------------------------------
# Voting (L-VOTE)
# ---------------------------------------------------------------------------------------------------------------

def _post(resident, inbox, text, at):
    return do_post_message(inbox, text, acting_user=resident.user, now=at)


def test_open_creates_one_inbox_per_nominee_with_the_living_as_members_L_VOTE_1_L_INBOX_9(demo):
    day = city1_day(demo)
    a, b = day.plain[0], day.plain[1]
    nominate_and_open(demo, day, [a, b])
    inboxes = Inbox.objects.filter(kind=LepraInboxKind.VOTING, city=day.city).order_by("id")
    assert [i.resident for i in inboxes] == [a, b]
    living = Resident.objects.filter(city=day.city, status=LifeStatus.ALIVE).count()
    assert [i.memberships.count() for i in inboxes] == [living, living]
    assert {i.organizer.kind for i in inboxes} == {"tribune"}


def test_vote_at_closes_at_minus_1us_counts_and_at_closes_at_is_refused_L_VOTE_8(demo):
    day = city1_day(demo)
    a = day.plain[0]
    session = nominate_and_open(demo, day, [a])
    inbox = day.inbox_of(a)
    _post(day.plain[5], inbox, "казнить", CLOSES - US)
    message = _refusal(WrongState, _post, day.plain[6], inbox, "Казнить!", CLOSES)
    assert message == "Voting closed at Fri 20 Nov 2026, 23:00 MSK: your message came too late."
    do_close_voting(session, acting_user=None, now=CLOSES + timedelta(minutes=3))  # a late job
    session.refresh_from_db()
    tally = session.result["nominees"][0]
    assert (tally["count"], tally["voters"]) == (1, [str(day.plain[5].pk)])
    assert session.result["leader"] == str(a.pk)
    assert Message.objects.filter(inbox=inbox).count() == 1  # the refused post was not stored


def test_retraction_then_revote_counts_once_and_repeated_vote_is_refused_L_VOTE_2_L_VOTE_4(demo):
    day = city1_day(demo)
    a = day.plain[0]
    session = nominate_and_open(demo, day, [a])
    inbox = day.inbox_of(a)
    voter, other = day.plain[5], day.plain[6]
    t = OPENS + timedelta(minutes=1)
    _post(voter, inbox, "казнить", t)
    assert _refusal(InvalidInput, _post, voter, inbox, "казнить", t + US) == (
        "You already vote here: this vote does not count again.")
    _post(voter, inbox, "Не казнить.", t + 2 * US)
    _post(voter, inbox, "КАЗНИТЬ", t + 3 * US)
    _post(other, inbox, "казнить", t + 4 * US)
    _post(other, inbox, "не казнить", t + 5 * US)
    assert _refusal(InvalidInput, _post, other, inbox, "не казнить", t + 6 * US) == "You have no vote here to retract."
    result, _names = compute_session_tally(session)
    tally = result.tally(str(a.pk))
    assert (tally.voters, tally.changed_mind, tally.revoted) == ((str(voter.pk),), (str(other.pk),), (str(voter.pk),))
    assert tally.vote_times == {str(voter.pk): t + 3 * US}
    standing = LepraVote.objects.filter(inbox=inbox, state=VoteState.STANDING)
    assert [v.voter for v in standing] == [voter]
    assert LepraVote.objects.filter(inbox=inbox, state=VoteState.RETRACTED).count() == 2


def test_flood_is_refused_and_the_nominee_has_one_last_word_L_VOTE_3(demo):
    day = city1_day(demo)
    a = day.plain[0]
    nominate_and_open(demo, day, [a])
    inbox = day.inbox_of(a)
    t = OPENS + timedelta(minutes=1)
    assert _refusal(InvalidInput, _post, day.plain[5], inbox, "казнить его!", t) == (
        "Only «казнить» or «не казнить» can be posted here.")
    _post(a, inbox, "Я мирный, честное слово.", t + US)
    assert _refusal(InvalidInput, _post, a, inbox, "И ещё одно.", t + 2 * US) == (
        "You have already said your last word: only «казнить» or «не казнить» can be posted here now.")
    assert list(Message.objects.filter(inbox=inbox).values_list("body", flat=True)) == ["Я мирный, честное слово."]


def test_proxy_vote_timed_at_the_opening_wins_a_tie_L_NOM_6_L_VOTE_5(demo):
    day = city1_day(demo)
    a, b = day.plain[0], day.plain[1]
    absent, present = day.plain[5], day.plain[6]

    def proxies(session):
        request = do_request_proxy(a, acting_user=absent.user, now=MORNING)
        do_accept_proxy(request, acting_user=demo.tribune1, now=MORNING)

    session = nominate_and_open(demo, day, [a, b], before_open=proxies)
    _post(present, day.inbox_of(b), "казнить", OPENS)  # the same microsecond as the opening, but not a proxy
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    result = session.result
    assert [(t["nominee"], t["count"], t["latest_vote_at"]) for t in result["nominees"]] == [
        (str(a.pk), 1, "2026-11-20T15:00:00+00:00"), (str(b.pk), 1, "2026-11-20T15:00:00+00:00")]
    assert result["tied_leaders"] == [str(a.pk), str(b.pk)]
    # Same microsecond: the proxy message was stored first (lower id), so the name tie-break is not needed.
    proxy_vote = LepraVote.objects.get(voter=absent)
    assert (proxy_vote.proxy, proxy_vote.cast_at, proxy_vote.message.received_at) == (True, OPENS, OPENS)


def test_proxy_vote_beats_a_later_vote_in_a_tie_L_NOM_6_L_VOTE_5(demo):
    day = city1_day(demo)
    a, b = day.plain[0], day.plain[1]
    absent, present = day.plain[5], day.plain[6]

    def proxies(session):
        do_accept_proxy(do_request_proxy(b, acting_user=absent.user, now=MORNING), acting_user=demo.tribune1,
                        now=MORNING)

    session = nominate_and_open(demo, day, [a, b], before_open=proxies)
    _post(present, day.inbox_of(a), "казнить", OPENS + US)
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    assert session.result["ranking"] == [str(b.pk), str(a.pk)]
    assert session.result["leader"] == str(b.pk)
    assert session.result["tied_leaders"] == [str(b.pk), str(a.pk)]
    assert session.result["tie_unresolved"] is False


def test_a_spirits_vote_is_counted_L_SPIRIT_2_L_VOTE_1(demo):
    day = city1_day(demo)
    a = day.plain[0]
    spirit = day.plain[7]
    session = nominate_and_open(
        demo, day, [a], before_open=lambda s: do_kill_resident(spirit, "killed", spirit=True, acting_user=None,
                                                               now=MORNING))
    _post(spirit, day.inbox_of(a), "казнить", OPENS + timedelta(hours=1))
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    assert session.result["nominees"][0]["voters"] == [str(spirit.pk)]
    assert session.result["names"][str(spirit.pk)] == spirit.name


def test_a_nominee_who_dies_during_voting_voids_the_inbox_L_VOTE_9(demo):
    day = city1_day(demo)
    a, b = day.plain[0], day.plain[1]
    session = nominate_and_open(demo, day, [a, b])
    t = OPENS + timedelta(minutes=5)
    for i, voter in enumerate(day.plain[5:8]):
        _post(voter, day.inbox_of(a), "казнить", t + i * US)
    _post(day.plain[8], day.inbox_of(b), "казнить", t + 10 * US)
    do_kill_resident(a, "penalty", acting_user=None, now=t + timedelta(minutes=1))
    assert _refusal(WrongState, _post, day.plain[9], day.inbox_of(a), "казнить", t + timedelta(minutes=2)) == (
        "This inbox is closed.")
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    voided = session.result["nominees"][0]
    assert (voided["void"], voided["count"]) == (True, 3)
    assert (session.result["ranking"], session.result["leader"]) == ([str(b.pk)], str(b.pk))


def test_close_kills_the_inboxes_and_posts_the_result_in_the_city_inbox_L_VOTE_6(demo):
    day = city1_day(demo)
    a, b = day.plain[0], day.plain[1]
    session = nominate_and_open(demo, day, [a, b])
    t = OPENS + timedelta(minutes=5)
    _post(day.plain[5], day.inbox_of(a), "казнить", t)
    _post(day.plain[6], day.inbox_of(a), "казнить", t + US)
    _post(day.plain[7], day.inbox_of(b), "казнить", t + 2 * US)
    _post(day.plain[7], day.inbox_of(b), "не казнить", t + 3 * US)
    do_close_voting(session, acting_user=demo.tribune1, now=t + timedelta(minutes=1))
    session.refresh_from_db()
    assert session.closes_at == t + timedelta(minutes=1)
    assert set(Inbox.objects.filter(kind=LepraInboxKind.VOTING, city=day.city).values_list("killed_at", flat=True)) == {
        t + timedelta(minutes=1)}
    city_inbox = Inbox.objects.filter(kind=LepraInboxKind.CITY, city=day.city, rolled_over_at__isnull=True).get()
    post = Message.objects.filter(inbox=city_inbox).order_by("-id").first()
    assert post.author_name == "Mafia Host"
    assert f"{a.name}: 2 ({day.plain[5].name}, {day.plain[6].name})" in post.body
    assert day.plain[7].name in post.body
    assert _refusal(WrongState, do_close_voting, session, acting_user=demo.tribune1, now=CLOSES) == (
        "Voting is already closed.")


def test_no_votes_leaves_the_city_awaiting_the_procurator_L_VOTE_7(demo):
    day = city1_day(demo)
    session = nominate_and_open(demo, day, [day.plain[0]])
    do_close_voting(session, acting_user=None, now=CLOSES)
    session.refresh_from_db()
    assert (session.result["leader"], session.result["awaiting_decision"]) == (None, True)


def test_voters_are_told_when_the_nominee_dies_during_voting_L_VOTE_9(demo):
    day = city1_day(demo)
    a = day.plain[0]
    nominate_and_open(demo, day, [a])
    inbox = day.inbox_of(a)
    _post(day.plain[5], inbox, "казнить", OPENS + US)
    with translation.override("en"):
        do_kill_resident(a, "penalty", acting_user=None, now=OPENS + timedelta(minutes=1))
    notice = Message.objects.filter(inbox=inbox).order_by("-id").first()
    assert (notice.author_name, notice.received_at) == ("Mafia Host", OPENS + timedelta(minutes=1))
    assert notice.body == in_game_language(demo.game, "%(name)s has died: this voting is void and its votes do not "
                                                      "count.", name=a.name)


def test_tribune_extends_open_voting_until_midnight_at_most_L_DAY_3(demo):
    from cities.models import ScheduledEvent
    from rulesets.lepra.day.services import do_extend_voting
    day = city1_day(demo)
    session = nominate_and_open(demo, day, [day.plain[0]])
    midnight = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)
    assert _refusal(InvalidInput, do_extend_voting, session, midnight + US, acting_user=demo.tribune1,
                    now=OPENS).startswith("Voting must close no later than 00:00 (")
    do_extend_voting(session, midnight, acting_user=demo.tribune1, now=OPENS + US)
    session.refresh_from_db()
    assert session.closes_at == midnight
    assert list(ScheduledEvent.objects.filter(kind="voting_close", payload__session=session.pk,
                                              cancelled_at__isnull=True).values_list("due_at", flat=True)) == [midnight]
    _post(day.plain[5], day.inbox_of(day.plain[0]), "казнить", CLOSES)  # the old close no longer applies


def test_spirits_go_to_the_cemetery_when_their_citys_voting_closes_L_SPIRIT_2(demo):
    from inboxes.models import Membership, MembershipState
    day = city1_day(demo)
    spirit = day.plain[7]
    session = nominate_and_open(
        demo, day, [day.plain[0]], before_open=lambda s: do_kill_resident(spirit, "killed", spirit=True,
                                                                          acting_user=None, now=MORNING))
    do_close_voting(session, acting_user=None, now=CLOSES)
    spirit.refresh_from_db()
    assert seats.is_spirit(spirit) is False
    assert Membership.objects.get(resident=spirit, inbox__kind=LepraInboxKind.CEMETERY).state == MembershipState.MEMBER
