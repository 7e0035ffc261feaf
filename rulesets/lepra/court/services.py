"""The Supreme Court (RULES.md L-COURT-1..4) and confrontation and last-word requests (L-NOM-4)."""
from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import Game, GameStatus, LifeStatus, Resident, ScheduledEvent
from inboxes import policies
from inboxes.membership_services import do_kill_resident
from inboxes.models import DeathCause, Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.services import do_post_site_message
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.clock.services import do_replan_clock
from rulesets.lepra.court.decision import court_decision
from rulesets.lepra.day.services import (
    FIRST_EXECUTION_DAY,
    _after_day_death,
    _check_running,
    _local,
    _seat_of,
)
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra.models import (
    CourtCase,
    CourtProcedure,
    CourtProcedureChoice,
    CourtVote,
    DecisionSource,
    ExecutionDecision,
    SpeechKind,
    SpeechRequest,
    VotingSession,
)

# --------------------------------------------------------------------------------------------------------------
# The Supreme Court (L-COURT-1..4)
# --------------------------------------------------------------------------------------------------------------

def _court_inbox(game):
    return Inbox.objects.filter(game=game, kind=LepraInboxKind.COURT, rolled_over_at__isnull=True,
                                killed_at__isnull=True).order_by("-id").first()


def _sitting_judges(game) -> list[Resident]:
    return list(Resident.objects.filter(seats.rank_q("is_judge"), game=game, status=LifeStatus.ALIVE)
                .order_by("city__number"))


def court_procedure_of(game) -> str:
    """The procedure of ``game``'s court (a ``CourtProcedure`` code, L-COURT-3): the Arbiter's choice, else the
    default, at least half of the votes cast."""
    chosen = CourtProcedureChoice.objects.filter(game=game).values_list("procedure", flat=True).first()
    return chosen or CourtProcedure.VOTES_CAST


def court_procedure_text(game, procedure: str) -> str:
    """How a sentence is confirmed under ``procedure`` (L-COURT-3), one sentence in ``game``'s language."""
    with translation.override(game.language):
        if procedure == CourtProcedure.SITTING_JUDGES:
            return _("A sentence is confirmed by at least half of the sitting judges; two nominees with as many "
                     "votes each is no decision.")
        return _("A sentence is confirmed by at least half of the votes cast; two nominees with half of the votes "
                 "each is no decision.")


@transaction.atomic
def do_set_court_procedure(game, procedure: str, *, acting_user, now: datetime | None = None
                           ) -> CourtProcedureChoice:
    """The Supreme Arbiter sets how ``game``'s court confirms a sentence (L-COURT-3): ``procedure`` a
    ``CourtProcedure`` code. Per game, before the court sits: refused once any case of the game has been put before
    the court. Announced in the court's inbox (when the court is formed; every case's announcement names the
    procedure too) and audited (``court.procedure_set``). Returns the stored choice. Raises ``NotAllowed`` (not
    the game's Arbiter), ``InvalidInput`` (unknown procedure, the procedure in force already) or ``WrongState``
    (game over, the court has sat)."""
    now = now or timezone.now()
    game = Game.objects.select_for_update(no_key=True).get(pk=game.pk)  # one choice at a time, before any case
    if acting_user is None or not policies.holds_role(acting_user, game, StaffKind.ARBITER):
        raise NotAllowed(_("Only the Supreme Arbiter sets the court's procedure."), rule="L-COURT-3")
    if procedure not in CourtProcedure.values:
        raise InvalidInput(_("Choose one of the court's procedures."), rule="L-COURT-3")
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."), rule="L-COURT-3")
    first = CourtCase.objects.filter(game=game).order_by("opened_at", "pk").first()
    if first is not None:
        raise WrongState(_("The court has already sat in this game (day %(day)d, %(at)s): its procedure is set "
                           "before the court sits and can no longer change.")
                         % {"day": first.day, "at": _local(game, first.opened_at)}, rule="L-COURT-3")
    previous = court_procedure_of(game)
    if procedure == previous:
        raise InvalidInput(_("The court already follows this procedure."), rule="L-COURT-3")
    choice, _created = CourtProcedureChoice.objects.update_or_create(
        game=game, defaults={"procedure": procedure, "set_at": now, "set_by": acting_user})
    court = _court_inbox(game)
    if court is not None:
        with translation.override(game.language):
            text = _("The Supreme Arbiter has set the court's procedure. %(procedure)s") % {
                "procedure": court_procedure_text(game, procedure)}
        do_post_site_message(court, text, acting_user=None, now=now)
    record_event(game, "court.procedure_set", actor=acting_user, at=now,
                 payload={"procedure": procedure, "previous": previous})
    return choice


@transaction.atomic
def do_put_before_court(session: VotingSession, deadline: datetime, *, acting_user,
                        now: datetime | None = None) -> CourtCase:
    """The Arbiter puts ``session``'s result before the Supreme Court (L-COURT-1) until ``deadline`` (aware UTC,
    future): the candidates are the L-VOTE-5 leader or the tied leaders (L-COURT-2). Announced in the court
    inbox; a ``court_deadline`` event closes the case (L-COURT-4). Raises ``NotAllowed`` (not the Arbiter),
    ``InvalidInput`` (bad deadline) or ``WrongState`` (voting not closed, no leader: L-VOTE-7, already before
    the court)."""
    now = now or timezone.now()
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    game, city = session.game, session.city
    if acting_user is None or not policies.holds_role(acting_user, game, StaffKind.ARBITER):
        raise NotAllowed(_("Only the Supreme Arbiter puts a case before the court."), rule="L-COURT-1")
    # The game's row orders this case after any procedure being set (L-COURT-3: set before the court sits).
    Game.objects.select_for_update(no_key=True).values_list("pk", flat=True).get(pk=game.pk)
    _check_running(game)
    if session.closed_at is None:
        raise WrongState(_("Voting is not closed yet."), rule="L-COURT-1")
    leader = (session.result or {}).get("leader")
    if leader is None:
        raise WrongState(_("Nobody was voted for: the Procurator decides."), rule="L-VOTE-7")
    if CourtCase.objects.filter(session=session).exists():
        raise WrongState(_("This result is already before the court."), rule="L-COURT-1")
    if deadline is None or timezone.is_naive(deadline) or deadline <= now:
        raise InvalidInput(_("The court's deadline must be a future time with its time zone."), rule="L-COURT-4")
    candidates = session.result.get("tied_leaders") or [leader]
    case = CourtCase.objects.create(session=session, game=game, city=city, day=session.day, candidates=candidates,
                                    leader_id=int(leader), deadline=deadline, opened_at=now)
    ScheduledEvent.objects.create(game=game, kind="court_deadline", due_at=deadline, payload={"case": case.pk},
                                  created_at=now, created_by=acting_user)
    court = _court_inbox(game)
    if court is not None:
        names = session.result.get("names", {})
        with translation.override(game.language):
            text = _("The court decides on %(city)s: %(candidates)s. Deadline: %(deadline)s.") % {
                "city": city.name, "candidates": ", ".join(names.get(c, c) for c in candidates),
                "deadline": _local(game, deadline)}
            text += "\n\n" + court_procedure_text(game, court_procedure_of(game))
        do_post_site_message(court, text, acting_user=None, now=now)
    record_event(game, "court.case_opened", actor=acting_user, at=now,
                 payload={"case": case.pk, "session": session.pk, "candidates": candidates})
    # A deadline after the day's end holds the night; its end, the draft and the next day move with it.
    do_replan_clock(game, acting_user=acting_user, reason="court.case_opened", now=now)
    return case


@transaction.atomic
def do_court_vote(case: CourtCase, choice: Resident, *, acting_user, now: datetime | None = None) -> CourtVote:
    """A sitting judge confirms the sentence of ``choice`` (L-COURT-2): the leader, or one of the tied leaders.
    One vote per judge, never changed. When a candidate is confirmed under the game's procedure whatever the
    judges still to vote do (``rulesets.lepra.court.decision.court_decision``, ``court_procedure_of``, L-COURT-3)
    the sentence is executed at once. Raises ``NotAllowed`` (not a sitting judge), ``InvalidInput`` (not a
    candidate, voted already) or ``WrongState`` (decided, past the deadline)."""
    now = now or timezone.now()
    case = CourtCase.objects.select_for_update(of=("self",)).select_related("game", "city").get(pk=case.pk)
    game = case.game
    seat = check_court_vote(case, acting_user=acting_user, now=now)
    if str(choice.pk) not in case.candidates:
        raise InvalidInput(_("%(name)s is not before the court.") % {"name": choice.name}, rule="L-COURT-2")
    try:
        with transaction.atomic():
            vote = CourtVote.objects.create(case=case, judge=seat, choice=choice, at=now)
    except IntegrityError:
        raise InvalidInput(_("You have already voted in this case."), rule="L-COURT-3") from None
    record_event(game, "court.voted", actor=acting_user, at=now, payload={"case": case.pk, "judge": seat.pk,
                                                                         "choice": choice.pk})
    votes = {str(v.judge_id): str(v.choice_id) for v in CourtVote.objects.filter(case=case)}
    sentenced = court_decision(case.candidates, votes, len(_sitting_judges(game)), final=False,
                               procedure=court_procedure_of(game))
    if sentenced is not None:
        _sentence(case, Resident.objects.get(pk=int(sentenced)), fallback=False, actor=acting_user, now=now)
    return vote


@transaction.atomic
def do_close_court_case(case: CourtCase, *, acting_user, now: datetime | None = None) -> CourtCase:
    """At the court's deadline (the scheduler, or the Arbiter): the votes as they are decide under the game's
    procedure (L-COURT-3: by default at least half of the votes cast); without a decision the L-VOTE-5 leader is executed (L-COURT-4). Raises ``NotAllowed`` or ``WrongState`` (decided
    already, before the deadline for the scheduler)."""
    now = now or timezone.now()
    case = CourtCase.objects.select_for_update(of=("self",)).select_related("game", "city", "leader").get(pk=case.pk)
    game = case.game
    if acting_user is not None and not policies.holds_role(acting_user, game, StaffKind.ARBITER):
        raise NotAllowed(_("Only the Supreme Arbiter closes a court case."), rule="L-COURT-4")
    if case.decided_at is not None:
        raise WrongState(_("The court has already decided this case."), rule="L-COURT-3")
    votes = {str(v.judge_id): str(v.choice_id) for v in CourtVote.objects.filter(case=case)}
    judges = max(len(_sitting_judges(game)), len(votes), 1)
    sentenced = court_decision(case.candidates, votes, judges, final=True, procedure=court_procedure_of(game))
    if sentenced is None:
        _sentence(case, case.leader, fallback=True, actor=acting_user, now=now)
    else:
        _sentence(case, Resident.objects.get(pk=int(sentenced)), fallback=False, actor=acting_user, now=now)
    return case


def check_court_vote(case: CourtCase, *, acting_user, now: datetime) -> Resident:
    """Whether ``acting_user`` may vote in ``case`` now, whatever the choice (L-COURT-1..4): returns their seat, a
    sitting judge who has not voted in it, or raises ``NotAllowed`` (not a sitting judge), ``InvalidInput``
    (voted already) or ``WrongState`` (game not running, decided, past the deadline). Changes nothing."""
    seat = policies.seat_in(acting_user, case.game) if acting_user is not None else None
    if seat is None or not seats.is_sitting_judge(seat):
        raise NotAllowed(_("Only sitting judges vote in the Supreme Court."), rule="L-COURT-1")
    _check_running(case.game)
    if case.decided_at is not None:
        raise WrongState(_("The court has already decided this case."), rule="L-COURT-3")
    if now >= case.deadline:
        raise WrongState(_("The court's deadline has passed."), rule="L-COURT-4")
    if CourtVote.objects.filter(case=case, judge=seat).exists():
        raise InvalidInput(_("You have already voted in this case."), rule="L-COURT-3")
    return seat


def _sentence(case: CourtCase, resident: Resident, *, fallback: bool, actor, now: datetime) -> None:
    """Execute ``resident`` (L-COURT-4): record the decision, kill (cause executed), announce the sentence in the
    city inbox. The alignment stays secret until the daily post announces it (L-DEATH-2, L-STAFF-6), as for every
    cause of death."""
    game = case.game
    case.decided_at, case.sentenced, case.fallback = now, resident, fallback
    case.save(update_fields=["decided_at", "sentenced", "fallback"])
    ExecutionDecision.objects.create(game=game, city=case.city, day=case.day, resident=resident,
                                     source=DecisionSource.COURT, at=now)
    resident = Resident.objects.get(pk=resident.pk)
    if resident.status == LifeStatus.ALIVE:
        do_kill_resident(resident, DeathCause.EXECUTED, acting_user=None, now=now)
    city_inbox = Inbox.objects.filter(city=case.city, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True,
                                      killed_at__isnull=True).order_by("-id").first()
    with translation.override(game.language):  # the side is the daily post's to announce, as for every death
        text = (_("The Supreme Court did not decide; the leader of the vote is executed: %(name)s. The daily post "
                  "announces their side.") if fallback
                else _("The Supreme Court sentenced %(name)s. The daily post announces their side.")) % {
            "name": resident.name}
    if city_inbox is not None:
        do_post_site_message(city_inbox, text, acting_user=None, now=now)
    record_event(game, "court.sentenced", actor=actor, at=now,
                 payload={"case": case.pk, "resident": resident.pk, "fallback": fallback})
    _after_day_death(game, now)


# --------------------------------------------------------------------------------------------------------------
# Confrontation and last word requests (L-NOM-4)
# --------------------------------------------------------------------------------------------------------------

def _speech_cutoff(city, day: int, now: datetime) -> datetime | None:
    """The planned opening of ``city``'s voting on ``day`` when it has passed at ``now`` (or the voting opened),
    else None: requests of the day close then, as nominations and proxy requests do (L-NOM-4), however late the
    clock opens the voting."""
    session = VotingSession.objects.filter(city=city, day=day).only("opens_at", "opened_at").first()
    if session is None or (session.opened_at is None and now < session.opens_at):
        return None
    return session.opens_at  # an early opening by the Tribune moved it to that moment


@transaction.atomic
def do_request_speech(game, kind: str, *, acting_user, other: Resident | None = None, note: str = "",
                      now: datetime | None = None) -> SpeechRequest:
    """``acting_user``'s seat demands a confrontation with ``other`` or a last word (L-NOM-4); the record goes to
    the Tribune and the Procurator. A living resident (or a spirit), from day 2; ``other`` a living resident of the
    seat's own city, not the seat; before the planned opening of the city's voting that day (requests close then,
    whatever the clock does). Raises ``NotAllowed`` (no seat, dead) or ``InvalidInput`` (unknown kind, bad other,
    long note) or ``WrongState`` (game not running, day 1, the voting's planned opening passed)."""
    now = now or timezone.now()
    seat = _seat_of(acting_user, game)
    game = seat.game
    _check_running(game)
    if game.day_number < FIRST_EXECUTION_DAY:
        raise WrongState(_("Requests start on day 2."), rule="L-NOM-4")
    if seat.status != LifeStatus.ALIVE and not seats.is_spirit(seat):
        raise NotAllowed(_("Only living residents may ask for this."), rule="L-NOM-4")
    opening = _speech_cutoff(seat.city, game.day_number, now)
    if opening is not None:
        raise WrongState(_("Requests for today closed when voting opened at %(at)s: a confrontation or a last word "
                           "is asked for before the voting.") % {"at": _local(game, opening, acting_user)},
                         rule="L-NOM-4")
    if kind not in SpeechKind.values:
        raise InvalidInput(_("Choose a confrontation or a last word."), rule="L-NOM-4")
    if kind == SpeechKind.CONFRONTATION:
        if other is None or other.game_id != game.pk or other.pk == seat.pk or other.status != LifeStatus.ALIVE:
            raise InvalidInput(_("Choose another living resident for the confrontation."), rule="L-NOM-4")
        if other.city_id != seat.city_id:  # the request goes to the city's Tribune, about the city's day
            raise InvalidInput(_("A confrontation is held with a resident of your own city; %(name)s lives in "
                                 "another city.") % {"name": other.name}, rule="L-NOM-4")
    else:
        other = None
    note = (note or "").strip()
    if len(note) > 300:
        raise InvalidInput(_("The note is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(note), "max": 300})
    request = SpeechRequest.objects.create(game=game, city=seat.city, day=game.day_number, resident=seat, kind=kind,
                                           other=other, note=note, at=now)
    record_event(game, "voting.speech_requested", actor=acting_user, at=now,
                 payload={"request": request.pk, "kind": kind, "resident": seat.pk,
                          "other": other.pk if other else None})
    return request
