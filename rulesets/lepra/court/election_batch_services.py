"""Judge elections opened or closed together by the clock (L-JUDGE-4/5, L-DAY-4; DESIGN.md "The clock"): when
the elections of several cities of one game fall due at the same planned time (every city's on day 1, or every
failed round again), the scheduler runs their events in one batch (``cities.scheduler.BATCH_HANDLERS``). These
services open or close, in a number of statements that does not grow with the number of cities, the elections
that have nothing of their own to do (no candidate at the opening, no precinct at the close): exactly what
``do_open_election`` / ``do_close_election`` do for each, rows, messages and audit rows alike. Every other
election of the batch is left untouched for those services, one by one.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import City, GameStatus, ScheduledEvent
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.rendering import render_markdown
from kernel.audit import record_events
from kernel.errors import NotAllowed
from rulesets.lepra.models import ElectionReason, JudgeElection, JudgeProposal, Precinct

from .judge_services import (
    ELECTION_NOTICE,
    compute_election_tally,
    election_announcement,
    election_result_text,
)

#: The author of the site's messages (``inboxes.services.do_post_site_message``).
SITE_AUTHOR = "Mafia Host"


def _check_site(acting_user) -> None:
    if acting_user is not None:
        raise NotAllowed(_("Only the clock opens and closes elections together."), rule="L-JUDGE-4")


def _locked(game, election_ids: list[int]) -> list[JudgeElection]:
    """The elections of ``game`` among ``election_ids``, locked, with their city and game, in the given order."""
    rows = {e.pk: e for e in JudgeElection.objects.select_for_update(of=("self",)).select_related("city", "game")
            .filter(game=game, pk__in=election_ids)}
    return [rows[pk] for pk in election_ids if pk in rows]


def _city_inboxes(cities: list[City]) -> dict[int, Inbox]:
    """city id -> its live city inbox (``judge_services.current_city_inbox`` for each), in one query."""
    out: dict[int, Inbox] = {}
    for inbox in (Inbox.objects.filter(city__in=cities, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True,
                                       killed_at__isnull=True).select_related("game").order_by("-id")):
        out.setdefault(inbox.city_id, inbox)
    return out


@transaction.atomic
def do_open_elections(game, election_ids: list[int], *, acting_user, now: datetime | None = None) -> set[int]:
    """Open, at ``now`` and as ``do_open_election`` opens each by the scheduler, the elections of ``game`` among
    ``election_ids`` that have no candidate (L-JUDGE-4: no precinct to open, no proxy ballot to cast): pending,
    not opened, before their close, in a running game. Returns the ids of the elections opened; the others (a
    candidate proposed, opened or closed already, too late, not found) are left untouched for
    ``do_open_election``. The site only (``acting_user`` None; raises ``NotAllowed`` otherwise)."""
    now = now or timezone.now()
    _check_site(acting_user)
    elections = _locked(game, election_ids)
    if not elections or elections[0].game.status != GameStatus.RUNNING:
        return set()
    with_candidates = set(JudgeProposal.objects.filter(election__in=elections).values_list("election_id", flat=True))
    plain = [e for e in elections if e.pk not in with_candidates and e.opened_at is None and e.is_pending
             and now < e.closes_at]
    if not plain:
        return set()
    JudgeElection.objects.filter(pk__in=[e.pk for e in plain]).update(opened_at=now)
    record_events(elections[0].game, [("election.opened", {"election": e.pk, "precincts": []}) for e in plain],
                  actor=None, at=now)
    return {e.pk for e in plain}


@transaction.atomic
def do_close_elections(game, election_ids: list[int], *, acting_user, now: datetime | None = None) -> set[int]:
    """Close, at ``now`` and as ``do_close_election`` closes each by the scheduler, the elections of ``game``
    among ``election_ids`` that opened without a precinct (no candidate): each fails (L-JUDGE-5), its result is
    stored and posted in the city inbox, its pending close events after ``now`` are cancelled, and a new election
    is scheduled by the site, opening 6 h later (L-DAY-4) for as long as this one lasted, with its clock events,
    announced in the city inbox. In a running game only. Returns the ids of the elections closed; the others
    (precincts to count, not opened, closed already, a game not running, not found) are left untouched for
    ``do_close_election``. The site only (``acting_user`` None; raises ``NotAllowed`` otherwise)."""
    now = now or timezone.now()
    _check_site(acting_user)
    elections = _locked(game, election_ids)
    if not elections or elections[0].game.status != GameStatus.RUNNING:
        return set()
    game = elections[0].game
    with_precincts = set(Precinct.objects.filter(election__in=elections).values_list("election_id", flat=True))
    plain = [e for e in elections if e.pk not in with_precincts and e.opened_at is not None and e.closed_at is None]
    if not plain:
        return set()
    results = {}
    for election in plain:
        election.closed_at = now
        result, names = compute_election_tally(election, precincts=[])
        election.result = {**result.as_dict(), "names": names}
        election.winner = None
        results[election.pk] = (result, names)
    JudgeElection.objects.bulk_update(plain, ["closed_at", "result", "winner"])
    ids = [e.pk for e in plain]
    ScheduledEvent.objects.filter(game=game, kind="election_close", done_at__isnull=True, cancelled_at__isnull=True,
                                  payload__election__in=ids, due_at__gt=now).update(cancelled_at=now)
    follows = JudgeElection.objects.bulk_create([
        JudgeElection(game=game, city=e.city, day=game.day_number, reason=ElectionReason.FAILED, announced_at=now,
                      opens_at=now + ELECTION_NOTICE, closes_at=now + ELECTION_NOTICE + (e.closes_at - e.opens_at),
                      follows=e)
        for e in plain])
    follow_ids = [f.pk for f in follows]
    ScheduledEvent.objects.filter(game=game, kind__in=["election_open", "election_close"], done_at__isnull=True,
                                  cancelled_at__isnull=True, payload__election__in=follow_ids).update(cancelled_at=now)
    ScheduledEvent.objects.bulk_create([
        ScheduledEvent(game=game, kind=kind, due_at=due, payload={"election": f.pk}, created_at=now, created_by=None)
        for f in follows for kind, due in (("election_open", f.opens_at), ("election_close", f.closes_at))])
    inboxes = _city_inboxes([e.city for e in plain])
    messages: list[Message] = []
    with translation.override(game.language):
        for election, follow in zip(plain, follows, strict=True):
            inbox = inboxes.get(election.city_id)
            if inbox is None:
                continue
            result, names = results[election.pk]
            for text in (election_result_text(game, election.city, result, names, None),
                         election_announcement(follow, after_failure=True)):
                text = text.strip()
                messages.append(Message(inbox=inbox, author_name=SITE_AUTHOR, body=text,
                                        body_html=render_markdown(text), received_at=now))
    Message.objects.bulk_create(messages)
    posted = iter(messages)
    rows = []
    for election, follow in zip(plain, follows, strict=True):
        inbox = inboxes.get(election.city_id)
        result_message = next(posted) if inbox is not None else None
        if result_message is not None:
            rows.append(("message.site_posted", {"inbox": inbox.pk, "message": result_message.pk}))
        rows.append(("election.closed", {"election": election.pk, "winner": None}))
        if inbox is not None:
            rows.append(("message.site_posted", {"inbox": inbox.pk, "message": next(posted).pk}))
        rows.append(("election.scheduled", {"election": follow.pk, "city": election.city_id,
                                            "reason": ElectionReason.FAILED, "opens_at": follow.opens_at.isoformat(),
                                            "closes_at": follow.closes_at.isoformat()}))
    record_events(game, rows, actor=None, at=now)
    return set(ids)
