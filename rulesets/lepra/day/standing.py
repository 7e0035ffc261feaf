"""The standing tally of a Lepra execution voting kept as data (L-VOTE-2, L-VOTE-4, L-VOTE-5, L-VOTE-9).

``LepraVote`` is the table of the votes of every voting inbox: one row per «казнить» accepted (standing, or
retracted by the «не казнить» it names), written by ``rulesets.lepra.day.vote_posts.voting_post_writes`` in the vote's own
transaction under the inbox lock. The live tally of a city's voting is read from these rows (one statement for the
inboxes, one for the votes, whatever the number of messages), never recounted from the messages on a page view.

The full recount from the ordered messages (``rulesets.lepra.day.services.compute_session_tally``, the pure
``tally_lepra_execution``) stays the authority: the close stores its result, tests compare the two after random
sequences of votes, retractions, deaths and closes, and ``manage.py audit_tallies`` compares them on a live site.
Both rank through ``lepra_execution_result``, so they can only differ in the counted votes themselves.
"""
from __future__ import annotations

from django.db.models import Q

from cities.models import LifeStatus
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.day.tally import (
    LepraExecutionResult,
    _lepra_nominee_tally,
    _LepraInboxVoter,
    lepra_execution_result,
)
from rulesets.lepra.models import LepraVote, VoteState, VotingSession

from .services import compute_session_tally


def voting_inboxes_of(session: VotingSession) -> list[Inbox]:
    """The voting inboxes of ``session`` (one per nominee) with their nominees, in creation order: one query."""
    return list(Inbox.objects.filter(city_id=session.city_id, day_number=session.day, kind=LepraInboxKind.VOTING)
                .select_related("resident").order_by("id"))


def stored_session_tally(session: VotingSession, inboxes: list[Inbox] | None = None
                         ) -> tuple[LepraExecutionResult | None, dict[str, str]]:
    """The standing tally of ``session`` from its stored votes: ``(LepraExecutionResult, names)`` shaped as
    ``compute_session_tally``'s (residents keyed by ``str(pk)``; ``names`` maps the nominees and the voters who
    appear to their names), without receipts and last words (the recount has those). A nominee no longer alive
    makes their inbox void (L-VOTE-9). ``inboxes``: ``voting_inboxes_of(session)`` when the caller has read them.

    The votes are read one or two rows per (inbox, voter): the standing vote and the latest retraction
    (``LepraVote.latest_retraction``) are all the tally needs, so the cost follows the number of voters, not of
    messages or of votes. Two statements (one with ``inboxes``). Returns ``(None, {})`` before the opening."""
    if session.opened_at is None:
        return None, {}
    inboxes = voting_inboxes_of(session) if inboxes is None else inboxes
    names = {str(i.resident_id): i.resident.name for i in inboxes}
    nominee_of = {i.pk: str(i.resident_id) for i in inboxes}
    state: dict[str, dict[str, _LepraInboxVoter]] = {nominee: {} for nominee in nominee_of.values()}
    rows = (LepraVote.objects.filter(Q(state=VoteState.STANDING) | Q(latest_retraction=True),
                                     inbox_id__in=list(nominee_of)).order_by()
            .values_list("inbox_id", "voter_id", "voter__name", "state", "cast_at", "message_id",
                         "latest_retraction", "retracted_at", "retracted_by_id"))
    for inbox_id, voter_id, voter_name, vote_state, cast_at, message_id, latest, retracted_at, retraction_id in rows:
        key = str(voter_id)
        names[key] = voter_name
        voters = state[nominee_of[inbox_id]]
        voter = voters.get(key)
        if voter is None:
            voter = voters[key] = _LepraInboxVoter()
        if vote_state == VoteState.STANDING:
            voter.standing_at, voter.standing_key = cast_at, (cast_at, message_id)
        if latest:
            voter.retracted = True
            voter.last_retraction_key = (retracted_at, retraction_id)
    tallies = tuple(_lepra_nominee_tally(nominee_of[i.pk], state[nominee_of[i.pk]], None,
                                         i.resident.status != LifeStatus.ALIVE) for i in inboxes)
    return lepra_execution_result(session.opens_at, session.closes_at, tallies), names


def comparable(result: LepraExecutionResult | None) -> dict | None:
    """What the stored tally and the recount must agree on: ``result.as_dict()`` without the receipts and last
    words (which only the recount knows)."""
    if result is None:
        return None
    data = result.as_dict()
    data.pop("refused")
    for tally in data["nominees"]:
        tally.pop("last_word_seq")
    return data


def audit_session_tally(session: VotingSession) -> dict | None:
    """Compare the stored tally of ``session`` with the full recount from its messages (the oracle,
    ``compute_session_tally``): None when they agree, else ``{"stored": ..., "recount": ...}`` (``comparable``
    dicts). For ``manage.py audit_tallies`` and the tests."""
    stored, _names = stored_session_tally(session)
    recount, _names = compute_session_tally(session)
    stored, recount = comparable(stored), comparable(recount)
    return None if stored == recount else {"stored": stored, "recount": recount}
