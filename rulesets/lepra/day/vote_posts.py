"""A post in a Lepra voting inbox (the post hook's rule, ``rulesets.lepra.hooks``): deciding it before it is
stored (L-VOTE-2, L-VOTE-3, L-VOTE-8, L-NOM-5) and its standing-vote row (the stored tally, ``rulesets.lepra.day.standing``)."""
from __future__ import annotations

from datetime import datetime

from django.db.models import BigIntegerField, Case, Exists, F, FilteredRelation, OuterRef, Q, Subquery, Value, When
from django.utils.translation import gettext as _

from cities.models import Resident
from inboxes.hooks import HookWrites
from inboxes.models import Inbox, Message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.prepared import PreparedInsert, PreparedQuery, PreparedUpdate
from kernel.timezones import time_for
from rulesets.lepra.day.tally import LepraAccepted, LepraRefusal, LepraVoteMessage, tally_lepra_execution
from rulesets.lepra.models import LepraVote, SuicideDeclaration, VoteState, VotingSession
from rulesets.lepra.day.keywords import parse_lepra_execution


def _local(game, moment: datetime, viewer=None) -> str:
    """``moment`` as ``viewer`` reads it (their display zone, else the game's) with the zone's abbreviation."""
    return time_for(moment, viewer, game)


def _refusal_error(refusal: LepraRefusal, session: VotingSession | None, game, *, by_nominee: bool = False,
                   viewer=None):
    """The translated error for a refused voting post (L-VOTE-2/3/8); ``by_nominee``: the author is the nominee
    of the voting inbox (a second last word is refused with its own reason, L-VOTE-3)."""
    if refusal == LepraRefusal.NOT_OPEN_YET:
        if session is None:
            return WrongState(_("Voting has not opened yet."), rule="L-VOTE-8")
        return WrongState(_("Voting has not opened yet: it opens at %(at)s.") % {"at": _local(game, session.opens_at, viewer)},
                          rule="L-VOTE-8")
    if refusal == LepraRefusal.CLOSED:
        return WrongState(_("Voting closed at %(at)s: your message came too late.")
                          % {"at": _local(game, session.closes_at, viewer)}, rule="L-VOTE-8")
    if refusal == LepraRefusal.NOT_A_MEMBER:
        return NotAllowed(_("You have no vote here."), rule="L-VOTE-1")
    if refusal == LepraRefusal.RETRACTION_WITHOUT_VOTE:
        return InvalidInput(_("You have no vote here to retract."), rule="L-VOTE-2")
    if refusal == LepraRefusal.ALREADY_VOTING:
        return InvalidInput(_("You already vote here: this vote does not count again."), rule="L-VOTE-2")
    if refusal == LepraRefusal.FLOOD and by_nominee:
        return InvalidInput(_("You have already said your last word: only «казнить» or «не казнить» can be "
                              "posted here now."), rule="L-VOTE-3")
    return InvalidInput(_("Only «казнить» or «не казнить» can be posted here."), rule="L-VOTE-3")


def _session_for_voter(city_id, day, inbox_id, seat_id):
    standing = LepraVote.objects.filter(inbox_id=inbox_id, voter_id=seat_id, state=VoteState.STANDING)
    declared = SuicideDeclaration.objects.filter(resident_id=seat_id, day=day, confirmed_at__isnull=False)
    return (VotingSession.objects.filter(city_id=city_id, day=day).order_by("pk")
            .annotate(has_standing_vote=Exists(standing), declared_suicide=Exists(declared))[:1])


_INSERT_VOTE = PreparedInsert(LepraVote, ignore_conflicts=True)  # a second standing vote: no row


def _retraction(inbox_id, voter_id, message_id):
    """L-VOTE-2, in one statement: the voter's standing vote becomes their latest retraction (retracted by the
    message, at its receive time) and the previous latest one is no longer it; nothing changes when no vote
    stands (the previous latest row is touched only beside a standing one)."""
    standing = Q(state=VoteState.STANDING)
    stands = LepraVote.objects.filter(inbox_id=inbox_id, voter_id=voter_id, state=VoteState.STANDING)
    received_at = Message.objects.filter(pk=message_id).values("received_at")[:1]
    rows = (LepraVote.objects.filter(inbox_id=inbox_id, voter_id=voter_id)
            .filter(standing | (Q(latest_retraction=True) & Exists(stands))))
    return rows, {
        "state": Case(When(standing, then=Value(VoteState.RETRACTED)), default=F("state")),
        "retracted_by": Case(When(standing, then=Value(message_id)), default=F("retracted_by"),
                             output_field=BigIntegerField()),
        "retracted_at": Case(When(standing, then=Subquery(received_at)), default=F("retracted_at")),
        "latest_retraction": Case(When(standing, then=Value(True)), default=Value(False)),
    }


_RETRACT_VOTE = PreparedUpdate(_retraction, ints=("inbox_id", "voter_id", "message_id"))
#: The day's voting session of a voting inbox's city, with whether the voter has a standing vote in the inbox and
#: is a confirmed suicide that day: read by a vote whose lock did not read them (``voting_post_locked_reads``);
#: prepared (``kernel.prepared``).
_SESSION_FOR_VOTER = PreparedQuery(_session_for_voter, ints=("city_id", "day", "inbox_id", "seat_id"))
_SESSION_COLUMNS = ("id", "opens_at", "closes_at", "opened_at")


def voting_post_locked_reads() -> dict:
    """What a post in a voting inbox reads with the poster's locked membership (``PostHook.locked_reads``): the
    day's voting session of the inbox's city (unique per city and day), whether the seat has a standing vote in
    the inbox and whether it is a confirmed suicide that day (an unconfirmed declaration bars nothing, L-NOM-5);
    ``check_voting_post`` takes them from the seat."""
    standing = LepraVote.objects.filter(inbox_id=OuterRef("inbox_id"), voter_id=OuterRef("resident_id"),
                                        state=VoteState.STANDING)
    declared = SuicideDeclaration.objects.filter(resident_id=OuterRef("resident_id"), day=OuterRef("inbox__day_number"),
                                                 confirmed_at__isnull=False)
    return {"_voting_session": FilteredRelation("inbox__city__voting_sessions", condition=Q(
                inbox__city__voting_sessions__day=F("inbox__day_number"))),
            **{f"_session_{c}": F(f"_voting_session__{c}") for c in _SESSION_COLUMNS},
            "_has_standing_vote": Exists(standing), "_declared_suicide": Exists(declared)}


def _session_of_locked_reads(inbox: Inbox, seat: Resident) -> tuple[bool, VotingSession | None]:
    """(found, the session annotated as ``_SESSION_FOR_VOTER`` annotates it, or None when the city has none that
    day) from ``seat.locked_reads`` when they were read for ``inbox`` by the post's lock (``lock_for_post``);
    (False, None) when they were not (the caller then reads the session)."""
    inbox_id, reads = getattr(seat, "locked_reads", (None, None))
    if inbox_id != inbox.pk or "_session_id" not in reads:
        return False, None
    if reads["_session_id"] is None:
        return True, None
    session = VotingSession.from_db(seat._state.db, ["game_id", "city_id", "day", *_SESSION_COLUMNS],
                                    [inbox.game_id, inbox.city_id, inbox.day_number,
                                     *(reads[f"_session_{c}"] for c in _SESSION_COLUMNS)])
    session.has_standing_vote, session.declared_suicide = reads["_has_standing_vote"], reads["_declared_suicide"]
    return True, session


def check_voting_post(inbox: Inbox, seat: Resident | None, text: str, now: datetime) -> LepraAccepted | None:
    """Decide a post in the voting ``inbox`` (locked by the caller) by ``seat`` at receive time ``now``, before it
    is stored (L-VOTE-2, L-VOTE-3, L-VOTE-8): returns what it does (vote, retraction, last word), or raises the
    translated refusal and nothing is stored. A staff post (``seat`` None: the Tribune) is an announcement and
    returns None. The decision is the pure tally's, over the seat's standing vote here (the stored tally,
    ``rulesets.lepra.day.standing``: read with the session under the post's lock, ``voting_post_locked_reads``, else by one
    statement) plus this message; the nominee's own messages are read
    as well, for the last word (L-VOTE-3)."""
    if seat is None:
        return None
    read, session = _session_of_locked_reads(inbox, seat)
    if not read:
        found = _SESSION_FOR_VOTER(city_id=inbox.city_id, day=inbox.day_number, inbox_id=inbox.pk, seat_id=seat.pk)
        session = found[0] if found else None
    if session is None or session.opened_at is None:
        raise _refusal_error(LepraRefusal.NOT_OPEN_YET, session, inbox.game, viewer=seat.user)
    if session.declared_suicide and parse_lepra_execution(text) is not None:  # only a confirmed suicide (L-NOM-5)
        raise NotAllowed(_("Your suicide is confirmed: you take no part in voting."), rule="L-NOM-5")
    key, nominee = str(seat.pk), str(inbox.resident_id)
    if seat.pk == inbox.resident_id:
        # One query: the nominee's own messages here, each flagged when it is a proxy vote cast for them (L-NOM-6).
        own = list(Message.objects.filter(inbox=inbox, author_resident=seat)
                   .annotate(is_proxy=Exists(LepraVote.objects.filter(message=OuterRef("pk"), voter=seat, proxy=True)))
                   .only("pk", "received_at", "body").order_by("received_at", "id"))
        messages = [LepraVoteMessage(seq=m.pk, at=m.received_at, author=key, inbox=nominee, text=m.body,
                                     proxy=m.is_proxy) for m in own]
    else:
        # A voter's past here is their standing vote or none: the stored tally is kept in step with every post.
        messages = ([LepraVoteMessage(seq=0, at=session.opens_at, author=key, inbox=nominee, text="казнить")]
                    if session.has_standing_vote else [])
    seq = max((m.seq for m in messages), default=0) + 1
    messages.append(LepraVoteMessage(seq=seq, at=now, author=key, inbox=nominee, text=text))
    result = tally_lepra_execution(session.opens_at, session.closes_at, [key], [nominee], messages)
    receipt = next(r for r in result.receipts if r.seq == seq)
    if receipt.refusal is not None:
        raise _refusal_error(receipt.refusal, session, inbox.game, by_nominee=seat.pk == inbox.resident_id,
                             viewer=seat.user)
    return receipt.accepted


def voting_post_writes(inbox: Inbox, seat: Resident | None, message: Message, accepted: LepraAccepted | None,
                       now: datetime) -> HookWrites | None:
    """The standing-vote row of an accepted post (the stored tally, ``rulesets.lepra.day.standing``) as one statement that goes
    in the post's last round trip (``inboxes.hooks``), or None when the post changes no vote (the last word, a
    staff announcement). A second standing vote is impossible: the named unique constraint keeps the insert from
    storing it, and that is the player's "you already vote here" (double submits, two tabs); a retraction that
    finds no standing vote is "you have no vote here to retract" (L-VOTE-2). Either refusal rolls the post back."""
    if accepted == LepraAccepted.VOTE:
        vote = LepraVote(inbox=inbox, voter=seat, message=message, cast_at=now)
        return HookWrites((_INSERT_VOTE.statement(vote),), refusal=InvalidInput(
            _("You already vote here: this vote does not count again."), rule="L-VOTE-2"))
    if accepted == LepraAccepted.RETRACTION:
        retraction = _RETRACT_VOTE.statement(inbox_id=inbox.pk, voter_id=seat.pk, message_id=message.pk)
        return HookWrites((retraction,), refusal=InvalidInput(_("You have no vote here to retract."), rule="L-VOTE-2"))
    return None

