"""The standing tally kept as data (``rulesets.lepra.day.standing``: the ``LepraVote`` rows written in the vote's transaction)
against the full recount from the messages (``compute_session_tally``, the oracle), after random sequences of
votes, retractions, repeated votes, deaths of nominees and voters, and the close (L-VOTE-2, L-VOTE-4, L-VOTE-5,
L-VOTE-9); the voting inbox page reads the stored tally; ``manage.py audit_tallies`` reports agreement."""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cities.models import LifeStatus
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause
from inboxes.posting import do_post_message
from kernel.errors import RuleViolation
from rulesets.lepra.day.selectors import tally_box
from rulesets.lepra.day.services import compute_session_tally, do_close_voting
from rulesets.lepra.day.standing import audit_session_tally, comparable, stored_session_tally
from tests.rulesets.lepra.day.day_helpers import CLOSES, OPENS, city1_day, nominate_and_open
from rulesets.lepra.models import LepraVote, VoteState

STEP = st.tuples(st.integers(0, 5), st.integers(0, 2),
                 st.sampled_from(["казнить", "казнить", "не казнить", "не казнить", "kill nominee", "kill voter"]))


def _latest_retraction_flags(inboxes) -> dict:
    """{(inbox, voter): [flagged vote ids]} for the flagged rows (``LepraVote.latest_retraction``)."""
    flagged: dict = {}
    for vote in LepraVote.objects.filter(inbox__in=inboxes, latest_retraction=True).order_by("id"):
        flagged.setdefault((vote.inbox_id, vote.voter_id), []).append(vote.pk)
    return flagged


def _latest_retractions(inboxes) -> dict:
    """What the flags must be: each voter's retracted vote whose retraction is the latest (time, then id)."""
    latest: dict = {}
    for vote in LepraVote.objects.filter(inbox__in=inboxes, state=VoteState.RETRACTED).select_related("retracted_by"):
        key = (vote.retracted_by.received_at, vote.retracted_by_id)
        if (vote.inbox_id, vote.voter_id) not in latest or key > latest[(vote.inbox_id, vote.voter_id)][0]:
            latest[(vote.inbox_id, vote.voter_id)] = (key, vote.pk)
    return {pair: [vote_id] for pair, (_key, vote_id) in latest.items()}


def _play(demo, steps, *, close: bool) -> list[str]:
    """Run ``steps`` (voter index, nominee index, action) in a fresh voting of city 1; return the checks that
    failed (empty: the stored tally always equalled the recount)."""
    day = city1_day(demo)
    nominees = day.plain[:3]
    session = nominate_and_open(demo, day, nominees)
    inboxes = [day.inbox_of(n) for n in nominees]
    voters = day.plain[:6]
    failures = []
    at = OPENS
    for voter_n, nominee_n, action in steps:
        at += timedelta(seconds=7)
        voter = voters[voter_n]
        voter.refresh_from_db()
        try:
            if action == "kill nominee":
                do_kill_resident(nominees[nominee_n], DeathCause.PENALTY, acting_user=None, now=at)
            elif action == "kill voter":
                do_kill_resident(voter, DeathCause.PENALTY, acting_user=None, now=at)
            else:
                do_post_message(inboxes[nominee_n], action, acting_user=voter.user, now=at)
        except RuleViolation:
            pass  # refused (a second vote, a retraction without a vote, the dead, a killed inbox): nothing stored
        difference = audit_session_tally(session)
        if difference is not None:
            failures.append(f"after {action!r} by {voter_n} on {nominee_n}: {difference}")
        flagged = _latest_retraction_flags(inboxes)
        if flagged != _latest_retractions(inboxes):
            failures.append(f"after {action!r} by {voter_n} on {nominee_n}: latest retractions flagged {flagged}")
    if close:
        stored, _names = stored_session_tally(session)
        do_close_voting(session, acting_user=None, now=CLOSES)
        session.refresh_from_db()
        closed = dict(session.result)
        closed.pop("names")
        closed.pop("refused")
        for tally in closed["nominees"]:
            tally.pop("last_word_seq")
        if comparable(stored) != closed:
            failures.append(f"at the close: {comparable(stored)} != {closed}")
    return failures


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(steps=st.lists(STEP, max_size=30), close=st.booleans())
def test_stored_tally_equals_the_recount_after_any_votes_retractions_deaths_and_the_close_L_VOTE_4(
        demo, steps, close):
    with transaction.atomic():
        failures = _play(demo, steps, close=close)
        transaction.set_rollback(True)
    assert failures == []


def test_stored_tally_orders_retractions_at_the_same_instant_by_message_as_the_recount_L_VOTE_4(demo):
    """The stored tally reads one row per voter; two latest retractions on the same microsecond are ordered by
    the retraction's message, as the recount orders them (the later posted, with the larger id, comes second)."""
    day = city1_day(demo)
    nominee = day.plain[0]
    session = nominate_and_open(demo, day, [nominee])
    inbox = day.inbox_of(nominee)
    v1, v2, v3 = day.plain[1:4]
    at = OPENS + timedelta(minutes=1)
    for voter in (v1, v2, v3):
        do_post_message(inbox, "казнить", acting_user=voter.user, now=at)
    same = at + timedelta(minutes=1)
    for voter in (v2, v3, v1):  # posted in this order at one instant: v2's retraction has the smallest id
        do_post_message(inbox, "не казнить", acting_user=voter.user, now=same)
    stored, _names = stored_session_tally(session)
    recount, _names = compute_session_tally(session)
    assert comparable(stored) == comparable(recount)
    assert stored.tally(str(nominee.pk)).changed_mind == (str(v2.pk), str(v3.pk), str(v1.pk))


def test_stored_tally_reads_two_statements_and_two_rows_per_voter_whatever_their_votes_L_VOTE_4(
        demo, django_assert_num_queries):
    """A voter who voted and retracted 15 times costs the stored tally what one vote costs: the standing row and
    the latest retraction, flagged; the result equals the recount's."""
    day = city1_day(demo)
    nominee = day.plain[0]
    session = nominate_and_open(demo, day, [nominee])
    inbox = day.inbox_of(nominee)
    fickle, steady = day.plain[1:3]
    at = OPENS
    for _ in range(15):
        for text in ("казнить", "не казнить"):
            at += timedelta(seconds=30)
            do_post_message(inbox, text, acting_user=fickle.user, now=at)
    do_post_message(inbox, "казнить", acting_user=steady.user, now=at + timedelta(seconds=30))
    do_post_message(inbox, "казнить", acting_user=fickle.user, now=at + timedelta(seconds=60))
    assert LepraVote.objects.filter(inbox=inbox, voter=fickle).count() == 16
    assert list(LepraVote.objects.filter(inbox=inbox, voter=fickle, latest_retraction=True)
                .values_list("retracted_by__received_at", flat=True)) == [at]
    with django_assert_num_queries(2):
        stored, _names = stored_session_tally(session)
    recount, _names = compute_session_tally(session)
    assert comparable(stored) == comparable(recount)
    assert stored.tally(str(nominee.pk)).voters == (str(steady.pk), str(fickle.pk))
    assert stored.tally(str(nominee.pk)).revoted == (str(fickle.pk),)


def test_stored_tally_ranks_and_voids_exactly_as_the_recount_on_a_known_sequence_L_VOTE_5(demo):
    day = city1_day(demo)
    a, b, c = day.plain[:3]
    session = nominate_and_open(demo, day, [a, b, c])
    inbox_a, inbox_b, inbox_c = (day.inbox_of(n) for n in (a, b, c))
    v1, v2, v3, v4 = day.plain[3:7]
    at = OPENS
    for inbox, voter, text in [(inbox_a, v1, "казнить"), (inbox_b, v2, "казнить"), (inbox_a, v2, "казнить"),
                               (inbox_b, v1, "казнить"), (inbox_a, v1, "не казнить"), (inbox_a, v1, "казнить"),
                               (inbox_b, v3, "казнить"), (inbox_b, v3, "не казнить"), (inbox_c, v4, "казнить")]:
        at += timedelta(minutes=1)
        do_post_message(inbox, text, acting_user=voter.user, now=at)
    do_kill_resident(c, DeathCause.PENALTY, acting_user=None, now=at + timedelta(minutes=1))
    stored, names = stored_session_tally(session)
    recount, _names = compute_session_tally(session)
    assert comparable(stored) == comparable(recount)
    key = {r.pk: str(r.pk) for r in (a, b, c, v1, v2, v3, v4)}
    # a: v2 then v1 again (v1 retracted and re-voted at minute 6), latest at minute 6; b: v2, v1, latest minute 4.
    assert stored.tally(key[a.pk]).voters == (key[v2.pk], key[v1.pk])
    assert stored.tally(key[a.pk]).revoted == (key[v1.pk],)
    assert stored.tally(key[b.pk]).voters == (key[v2.pk], key[v1.pk])
    assert stored.tally(key[b.pk]).changed_mind == (key[v3.pk],)
    assert stored.ranking == (key[b.pk], key[a.pk])  # equal counts: b reached 2 first (L-VOTE-5)
    assert stored.leader == key[b.pk] and stored.tied_leaders == (key[b.pk], key[a.pk])
    assert stored.tally(key[c.pk]).void is True and stored.tally(key[c.pk]).voters == (key[v4.pk],)  # L-VOTE-9
    assert names[key[v1.pk]] == v1.name
    c.refresh_from_db()
    assert c.status != LifeStatus.ALIVE
    box = tally_box(session)
    assert [(row.nominee, row.count, row.void) for row in box.rows] == [(b.name, 2, False), (a.name, 2, False),
                                                                      (c.name, 1, True)]
    out = StringIO()
    call_command("audit_tallies", stdout=out)
    assert out.getvalue().strip().endswith("1 open votings checked, 0 mismatched")
