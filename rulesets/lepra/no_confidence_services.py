"""Lepra's complaints of no confidence in the Arbiter or the Consigliere (L-IMPEACH-3).

Every ``do_`` function is one transaction that checks the rules, writes its ``GameEvent`` audit row and raises a
``kernel.errors.RuleViolation`` subclass with a readable message, changing nothing when refused.

What must never leak, and why: the Procurator must not learn who the mafia are (L-STAFF-6). A mafia
complaint therefore reaches him only as messages written by the site and signed "the mafia of city C": the
message rows carry no author seat and no author account, so no page, console column, notification, search,
profile or export can name or link a mafioso from them; the complaint inbox's member list is hidden
(``secret_member_kinds``); the audit rows the Procurator can browse have no actor and name no resident,
and the one row that records which mafioso wrote is of a kind nobody sees while the game runs
(``no_confidence.mafia_author``). The e-mail to the Procurator names the city only.
"""
from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import HOST_STAFF_KIND, Alignment, Game, GameStatus, LifeStatus, Resident, StaffRole
from cities.staff_kinds import staff_kinds_of
from inboxes import policies, viewer_reads
from inboxes.models import Inbox, Message
from inboxes.posting import do_post_message
from inboxes.rendering import has_visible_text, render_markdown
from inboxes.services import do_create_inbox, kind_for
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState

from .models import NoConfidenceCase, NoConfidenceRuling, NoConfidenceTarget

#: The longest ruling reason or bonus, in characters.
MAX_TEXT_LENGTH = 2000


def _in_language(game: Game, text_fn):
    with translation.override(game.language):
        return text_fn()


def _check_running(game: Game) -> None:
    if game.status != GameStatus.RUNNING:
        raise WrongState(_("The game is not running."))


def _clean(text: str, *, what: str, required: bool = True, limit: int = MAX_TEXT_LENGTH) -> str:
    text = (text or "").strip()
    if required and not has_visible_text(text):
        raise InvalidInput(_("The %(what)s is empty.") % {"what": what})
    if len(text) > limit:
        raise InvalidInput(_("The %(what)s is too long: %(length)d characters, at most %(max)d.")
                           % {"what": what, "length": len(text), "max": limit})
    return text


def _procurator_role(game: Game) -> StaffRole:
    role = StaffRole.objects.filter(game=game, kind=HOST_STAFF_KIND).select_related("user").first()
    if role is None:
        raise WrongState(_("This game has no Procurator."))
    return role


def _mail(user, subject: str, body: str) -> None:
    """Send one e-mail after the transaction commits (nothing is sent for a rolled-back change)."""
    if user is not None and user.email:
        transaction.on_commit(lambda: send_mail(subject, body, None, [user.email]))


# --------------------------------------------------------------------------------------------------------------
# No confidence in the Arbiter or the Consigliere
# --------------------------------------------------------------------------------------------------------------

def mafia_signature(city) -> str:
    """How a mafia complaint is signed, in the active language: "the mafia of <city>"."""
    return _("The mafia of %(city)s") % {"city": city.name}


def _living_seat(game: Game, acting_user) -> Resident:
    viewer_reads.forget_viewer_cache(acting_user)
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if seat is None or seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only living residents may express no confidence."), rule="L-IMPEACH-3")
    return Resident.objects.select_for_update(of=("self",)).select_related("city").get(pk=seat.pk)


def _living_mafioso(game: Game, acting_user) -> Resident:
    seat = _living_seat(game, acting_user)
    if seat.alignment != Alignment.MAFIA:
        raise NotAllowed(_("Only the living mafia of a city may express no confidence in the Consigliere."),
                         rule="L-IMPEACH-3")
    return seat


def _notify_procurator(case: NoConfidenceCase, procurator: StaffRole) -> None:
    game = case.game

    def body():
        about = (_("the Supreme Arbiter") if case.target == NoConfidenceTarget.ARBITER else _("the Consigliere"))
        source = (case.complainant.name if case.complainant_id is not None else mafia_signature(case.city))
        return (_("%(game)s: a complaint of no confidence in %(about)s from %(source)s is before you. Rule on it "
                  "in the staff console (complaints of no confidence).")
                % {"game": game.title, "about": about, "source": source})
    _mail(procurator.user, _in_language(game, lambda: _("Mafia Host: a complaint of no confidence")),
          _in_language(game, body))


@transaction.atomic
def check_may_complain(game: Game, target: str, *, acting_user) -> Resident:
    """Whether ``acting_user`` may express no confidence in ``target`` (``NoConfidenceTarget``) now, before any
    text is read: returns their seat, a living resident (a living mafioso for the Consigliere), or
    raises what the filing raises for it: ``NotAllowed`` (no living seat, not mafia) or ``WrongState`` (game not
    running, no such staff member). Changes nothing."""
    _check_running(game)
    if target == NoConfidenceTarget.ARBITER:
        seat = _living_seat(game, acting_user)
        if not StaffRole.objects.filter(game=game, kind__in=staff_kinds_of(game, "court_staff_kinds")).exists():
            raise WrongState(_("This game has no Supreme Arbiter."), rule="L-IMPEACH-3")
        return seat
    seat = _living_mafioso(game, acting_user)
    if not StaffRole.objects.filter(game=game, kind__in=staff_kinds_of(game, "night_staff_kinds")).exists():
        raise WrongState(_("This game has no Consigliere."), rule="L-IMPEACH-3")
    return seat


@transaction.atomic
def do_file_no_confidence_in_arbiter(game: Game, text: str, *, acting_user,
                                     now: datetime | None = None) -> NoConfidenceCase:
    """A living resident expresses no confidence in the Supreme Arbiter to the Procurator, from
    their personal inbox's page. A complaint inbox (kind ``complaint``) is opened with the resident as its member
    and the Procurator reading and answering (``STAFF_GRANTS``); ``text`` is its first message, posted under the
    resident's name. The Procurator is told by e-mail. At most one open complaint per resident.

    Returns the NoConfidenceCase. Raises ``NotAllowed`` (not a living resident), ``InvalidInput`` (empty or too
    long text), ``WrongState`` (game not running, no Arbiter, an open complaint of theirs exists).
    """
    now = now or timezone.now()
    _check_running(game)
    seat = _living_seat(game, acting_user)
    text = _clean(text, what=_("complaint"), limit=settings.MAFIA_MESSAGE_MAX_LENGTH)
    if not StaffRole.objects.filter(game=game, kind__in=staff_kinds_of(game, "court_staff_kinds")).exists():
        raise WrongState(_("This game has no Supreme Arbiter."), rule="L-IMPEACH-3")
    if NoConfidenceCase.objects.filter(complainant=seat, target=NoConfidenceTarget.ARBITER,
                                       ruled_at__isnull=True).exists():
        raise WrongState(_("Your complaint about the Supreme Arbiter is still before the Procurator: write in it."),
                         rule="L-IMPEACH-3")
    procurator = _procurator_role(game)
    title = _in_language(game, lambda: _("No confidence in the Supreme Arbiter: %(name)s") % {"name": seat.name})
    inbox = do_create_inbox(game, kind_for(game, "arbiter_complaint"), title=title, city=seat.city, organizer=procurator,
                            members=[seat], acting_user=None, now=now)
    case = NoConfidenceCase.objects.create(game=game, target=NoConfidenceTarget.ARBITER, city=seat.city,
                                           complainant=seat, inbox=inbox, filed_at=now)
    viewer_reads.forget_viewer_cache(acting_user)
    do_post_message(inbox, text, acting_user=acting_user, now=now)
    record_event(game, "no_confidence.filed", actor=acting_user, at=now,
                 payload={"case": case.pk, "target": case.target, "city": seat.city_id, "inbox": inbox.pk,
                          "resident": seat.pk})
    _notify_procurator(case, procurator)
    return case


def _post_signed(case: NoConfidenceCase, seat: Resident, text: str, *, acting_user, now: datetime) -> Message:
    """The site posts ``text`` in the mafia complaint, signed "the mafia of city C": no author seat, no author
    account. Who wrote it goes to an audit row nobody sees while the game runs."""
    signature = _in_language(case.game, lambda: mafia_signature(case.city))
    message = Message.objects.create(inbox=case.inbox, author_name=signature[:100], body=text,
                                     body_html=render_markdown(text), received_at=now)
    record_event(case.game, "no_confidence.posted", actor=None, at=now,
                 payload={"case": case.pk, "inbox": case.inbox_id, "message": message.pk})
    record_event(case.game, "no_confidence.mafia_author", actor=acting_user, at=now,
                 payload={"case": case.pk, "message": message.pk, "resident": seat.pk})
    return message


@transaction.atomic
def do_file_no_confidence_in_consigliere(game: Game, text: str, *, acting_user,
                                         now: datetime | None = None) -> NoConfidenceCase:
    """A living mafioso expresses, for the mafia of their city, no confidence in the Consigliere to the Procurator, from
    the mafia inbox's page. A mafia complaint inbox (kind ``mafia_compl``) is opened: the city's living mafia read it
    (read-only members; they write through ``do_write_in_mafia_complaint``), the Procurator reads and answers, the
    Consigliere does not read it. ``text`` is its first message, signed "the mafia of city C". The Procurator is told by
    e-mail, which names the city only.

    Returns the NoConfidenceCase (no complainant stored). Raises ``NotAllowed`` (not a living mafioso),
    ``InvalidInput`` (empty or too long text), ``WrongState`` (game not running, no Consigliere, the city's mafia
    have an open complaint).
    """
    now = now or timezone.now()
    _check_running(game)
    seat = _living_mafioso(game, acting_user)
    text = _clean(text, what=_("complaint"), limit=settings.MAFIA_MESSAGE_MAX_LENGTH)
    if not StaffRole.objects.filter(game=game, kind__in=staff_kinds_of(game, "night_staff_kinds")).exists():
        raise WrongState(_("This game has no Consigliere."), rule="L-IMPEACH-3")
    if NoConfidenceCase.objects.select_for_update().filter(city=seat.city, target=NoConfidenceTarget.CONSIGLIERE,
                                                           ruled_at__isnull=True).exists():
        raise WrongState(_("The mafia of your city have a complaint before the Procurator: write in it."),
                         rule="L-IMPEACH-3")
    procurator = _procurator_role(game)
    mafia = list(Resident.objects.filter(city=seat.city, alignment=Alignment.MAFIA, status=LifeStatus.ALIVE)
                 .order_by("pk"))
    title = _in_language(game, lambda: _("No confidence in the Consigliere: %(signature)s")
                         % {"signature": mafia_signature(seat.city)})
    inbox = do_create_inbox(game, kind_for(game, "consigliere_complaint"), title=title, city=seat.city, organizer=procurator,
                            banned=mafia, acting_user=None, now=now)
    for resident in mafia:
        viewer_reads.forget_viewer_cache(resident.user)
    case = NoConfidenceCase.objects.create(game=game, target=NoConfidenceTarget.CONSIGLIERE, city=seat.city,
                                           inbox=inbox, filed_at=now)
    _post_signed(case, seat, text, acting_user=acting_user, now=now)
    record_event(game, "no_confidence.filed", actor=None, at=now,
                 payload={"case": case.pk, "target": case.target, "city": seat.city_id, "inbox": inbox.pk})
    _notify_procurator(case, procurator)
    return case


@transaction.atomic
def do_write_in_mafia_complaint(case: NoConfidenceCase, text: str, *, acting_user,
                                now: datetime | None = None) -> Message:
    """A living mafioso of the case's city writes in their city's open mafia complaint; the message
    is the site's, signed "the mafia of city C". Returns the Message. Raises ``NotAllowed`` (not a living
    mafioso of that city: the same refusal for everyone else), ``InvalidInput`` (empty or too long text),
    ``WrongState`` (ruled, closed, game not running)."""
    now = now or timezone.now()
    case = NoConfidenceCase.objects.select_for_update(of=("self",)).select_related("game", "city", "inbox").get(
        pk=case.pk)
    _check_running(case.game)
    seat = _living_mafioso(case.game, acting_user)
    if case.target != NoConfidenceTarget.CONSIGLIERE or seat.city_id != case.city_id:
        raise NotAllowed(_("Only the living mafia of a city may express no confidence in the Consigliere."),
                         rule="L-IMPEACH-3")
    if case.ruled_at is not None or case.inbox.killed_at is not None:
        raise WrongState(_("The Procurator has ruled on this complaint."), rule="L-IMPEACH-3")
    text = _clean(text, what=_("message"), limit=settings.MAFIA_MESSAGE_MAX_LENGTH)
    return _post_signed(case, seat, text, acting_user=acting_user, now=now)


def _ruling_text(case: NoConfidenceCase) -> str:
    if case.ruling == NoConfidenceRuling.BONUS:
        text = _("The Procurator's ruling: the complaint is well-founded. Bonus: %(bonus)s") % {"bonus": case.bonus}
    else:
        text = _("The Procurator's ruling: the complaint is unfounded.")
    return f"{text}\n\n" + _("Reason: %(reason)s") % {"reason": case.reason}


@transaction.atomic
def do_rule_on_no_confidence(case: NoConfidenceCase, ruling: str, *, reason: str, bonus: str = "", acting_user,
                             now: datetime | None = None) -> NoConfidenceCase:
    """The Procurator rules on a complaint of no confidence: ``bonus`` (well-founded; ``bonus`` is
    the free text of the bonus the complainants may claim) or ``unfounded``, always with a ``reason``. The ruling
    is recorded, told in the complaint inbox (a site message its readers see: for the mafia, "the same way"), and
    the inbox is closed to posting; it stays readable and is disclosed after the game.

    Returns the case. Raises ``NotAllowed`` (not the Procurator), ``InvalidInput`` (unknown ruling, no reason,
    a bonus text missing for ``bonus`` or given for ``unfounded``, texts too long), ``WrongState`` (already ruled,
    game not running).
    """
    now = now or timezone.now()
    case = NoConfidenceCase.objects.select_for_update(of=("self",)).select_related("game", "city", "inbox").get(
        pk=case.pk)
    game = case.game
    if acting_user is None or not policies.holds_role(acting_user, game, HOST_STAFF_KIND):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-IMPEACH-3")
    _check_running(game)
    if ruling not in NoConfidenceRuling.values:
        raise InvalidInput(_("Rule the complaint well-founded (with a bonus) or unfounded."),
                           rule="L-IMPEACH-3")
    if case.ruled_at is not None:
        raise WrongState(_("The Procurator has ruled on this complaint."), rule="L-IMPEACH-3")
    reason = _clean(reason, what=_("reason"))
    bonus = _clean(bonus, what=_("bonus"), required=ruling == NoConfidenceRuling.BONUS)
    if ruling == NoConfidenceRuling.UNFOUNDED and bonus:
        raise InvalidInput(_("A bonus is granted only to a well-founded complaint."),
                           rule="L-IMPEACH-3")
    case.ruling, case.ruled_at, case.reason, case.bonus = ruling, now, reason, bonus
    case.save(update_fields=["ruling", "ruled_at", "reason", "bonus"])
    text = _in_language(game, lambda: _ruling_text(case))
    Message.objects.create(inbox=case.inbox, author_name="Mafia Host", body=text, body_html=render_markdown(text),
                           received_at=now)
    if case.inbox.killed_at is None:
        Inbox.objects.filter(pk=case.inbox_id).update(killed_at=now)
        record_event(game, "inbox.killed", actor=acting_user, at=now, payload={"inbox": case.inbox_id})
    record_event(game, "no_confidence.ruled", actor=acting_user, at=now,
                 payload={"case": case.pk, "target": case.target, "city": case.city_id, "ruling": ruling,
                          "reason": reason, "bonus": bonus})
    return case


def no_confidence_cases_for(viewer, game: Game) -> list[NoConfidenceCase]:
    """The complaints of no confidence ``viewer`` may follow on their page: their own complaints
    about the Arbiter, and the complaints of their city's mafia about the Consigliere when they read that inbox
    (``policies.can_read_inbox``: the mafia of the city, living at its filing). Newest first."""
    seat = policies.seat_in(viewer, game)
    if seat is None:
        return []
    cases = (NoConfidenceCase.objects.filter(game=game, city_id=seat.city_id).select_related("inbox__game", "city")
             .order_by("-filed_at", "-id"))
    return [c for c in cases if (c.complainant_id == seat.pk) or
            (c.target == NoConfidenceTarget.CONSIGLIERE and policies.can_read_inbox(viewer, c.inbox))]


__all__ = [
    "MAX_TEXT_LENGTH", "check_may_complain", "do_file_no_confidence_in_arbiter", "do_file_no_confidence_in_consigliere",
    "do_rule_on_no_confidence", "do_write_in_mafia_complaint", "mafia_signature", "no_confidence_cases_for",
]
