"""Missed voting windows (DESIGN.md "The clock"; RULES.md L-DAY-3, L-VOTE-7): never skipped silently.

When the scheduler was down over a city's whole voting window (its ``voting_open`` runs at or after the planned
close), the voting cannot open any more at the planned times. The site then tells the staff at once: an audit row
(``voting.window_missed``), a site message in the game's office (read by the Procurator, the Tribunes and the
Arbiter), a line on their dashboards and on the clock page. The city's Tribune, the Arbiter or the Procurator can
set a new window for the same day in one action (``do_reschedule_missed_voting``), within the L-DAY-3 limit: all
voting is over by the planned end of the day (00:00). Past that, the city awaits the Procurator's decision
(L-VOTE-7) like a city without votes.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import Game, GameDay, GameEvent, GameStatus, ScheduledEvent
from cities.services import record_event
from inboxes import policies, viewer_reads
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.services import do_post_site_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.timezones import zoned_time
from rulesets.lepra.clock.services import do_replan_clock, voting_window_limits
from rulesets.lepra.models import VotingSession
from rulesets.lepra.staff_kinds import StaffKind

#: A rescheduled window suggested by the pages: it opens this long after the action and lasts this long (shorter
#: when 00:00 comes first).
SUGGESTED_NOTICE = timedelta(minutes=10)
SUGGESTED_LENGTH = timedelta(hours=2)


def _local(game: Game, moment: datetime) -> str:
    """``moment`` in the game's zone with the zone's abbreviation (office messages have many readers)."""
    return zoned_time(moment, game.time_zone, "H:i")


def _office_of(game: Game) -> Inbox | None:
    return Inbox.objects.filter(game=game, kind=LepraInboxKind.OFFICE, killed_at__isnull=True).order_by("pk").first()


def _tell_staff(game: Game, text_fn, now: datetime) -> None:
    office = _office_of(game)
    if office is not None:
        with translation.override(game.language):
            text = text_fn()
        do_post_site_message(office, text, acting_user=None, now=now)


def is_missed(session: VotingSession, now: datetime) -> bool:
    """The window of ``session`` is over and the voting never opened (the clock was down all along)."""
    return session.opened_at is None and session.closed_at is None and session.closes_at <= now


def missed_votings(game: Game, now: datetime, *, city=None) -> list[VotingSession]:
    """The sessions of ``game``'s current day whose window was missed and which can still be rescheduled or must be
    decided, in city order (``city`` narrows to one city). Read by the clock page and the dashboards."""
    sessions = (VotingSession.objects.filter(game=game, day=game.day_number, opened_at__isnull=True,
                                             closed_at__isnull=True, closes_at__lte=now)
                .select_related("city").order_by("city__number"))
    if city is not None:
        sessions = sessions.filter(city=city)
    return list(sessions)


def _reported(session: VotingSession) -> bool:
    return GameEvent.objects.filter(game=session.game_id, kind="voting.window_missed", payload__session=session.pk,
                                    payload__closes_at=session.closes_at.isoformat()).exists()


@transaction.atomic
def do_report_missed_voting(session: VotingSession, *, now: datetime | None = None) -> bool:
    """By the site (the ``voting_open`` / ``voting_close`` handlers): record that the window of ``session`` was
    missed and tell the staff in the office (once per window). Returns True when it reported now, False when the
    window is not missed or was reported already."""
    now = now or timezone.now()
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    game, city = session.game, session.city
    if not is_missed(session, now) or _reported(session):
        return False
    ends_by = voting_window_limits(game, session.day, now)[1]
    record_event(game, "voting.window_missed", actor=None, at=now, payload={
        "session": session.pk, "city": city.pk, "day": session.day, "opens_at": session.opens_at.isoformat(),
        "closes_at": session.closes_at.isoformat()})
    if now < ends_by:
        def text():
            return _("The execution voting of %(city)s (day %(day)d, %(opens)s–%(closes)s) did not take place: the "
                     "site's clock was stopped. The Tribune, the Arbiter or the Procurator can set a new time today, "
                     "before %(end)s, on the staff pages.") % {
                "city": city.name, "day": session.day, "opens": _local(game, session.opens_at),
                "closes": _local(game, session.closes_at), "end": _local(game, ends_by)}
    else:
        def text():
            return _("The execution voting of %(city)s (day %(day)d, %(opens)s–%(closes)s) did not take place: the "
                     "site's clock was stopped and the day is over. The Procurator decides the execution "
                     "(L-VOTE-7).") % {"city": city.name, "day": session.day, "opens": _local(game, session.opens_at),
                                       "closes": _local(game, session.closes_at)}
    _tell_staff(game, text, now)
    return True


def can_reschedule(user, session: VotingSession) -> bool:
    """``user`` is the Tribune of the session's city, the Arbiter or the Procurator of its game."""
    if user is None or not user.is_authenticated:
        return False
    viewer_reads.forget_viewer_cache(user)
    return (policies.holds_role(user, session.game_id, StaffKind.TRIBUNE, city_id=session.city_id)
            or policies.holds_role(user, session.game_id, StaffKind.ARBITER)
            or policies.holds_role(user, session.game_id, StaffKind.PROCURATOR))


def suggested_window(session: VotingSession, now: datetime) -> tuple[datetime, datetime]:
    """A new window for a missed ``session`` (aware UTC): opens ``SUGGESTED_NOTICE`` after ``now`` (to the minute)
    and lasts ``SUGGESTED_LENGTH``, closing no later than the planned end of the day (L-DAY-3)."""
    opens = (now + SUGGESTED_NOTICE).replace(second=0, microsecond=0) + timedelta(minutes=1)
    ends_by = voting_window_limits(session.game, session.day, now)[1]
    return opens, min(opens + SUGGESTED_LENGTH, ends_by)


@transaction.atomic
def do_reschedule_missed_voting(session: VotingSession, opens_at: datetime, closes_at: datetime, *, acting_user,
                                now: datetime | None = None) -> VotingSession:
    """Set a new window for a missed voting of the current day (one action by the city's Tribune, the Arbiter or
    the Procurator): ``now`` < ``opens_at`` < ``closes_at`` ≤ the planned end of the day (L-DAY-3, 00:00); the
    first-half announcement limit does not apply to a recovery. The session's events are laid out anew, the
    night's plan follows (``do_replan_clock``), the city is told in its inbox and the staff in the office.
    Returns the session. Raises ``NotAllowed``, ``InvalidInput`` (bad times) or ``WrongState`` (not missed, the
    day is over, the game not running)."""
    now = now or timezone.now()
    session = VotingSession.objects.select_for_update(of=("self",)).select_related("city", "game").get(pk=session.pk)
    game, city = session.game, session.city
    if not can_reschedule(acting_user, session):
        raise NotAllowed(_("Only the Tribune of %(city)s, the Arbiter or the Procurator may do this.")
                         % {"city": city.name}, rule="L-DAY-3")
    if game.status != GameStatus.RUNNING or session.day != game.day_number:
        raise WrongState(_("This voting belongs to a day that is over."), rule="L-DAY-3")
    if not is_missed(session, now):
        raise WrongState(_("This voting was not missed."), rule="L-DAY-3")
    if GameDay.objects.filter(game=game, number=session.day, ended_at__isnull=False).exists():
        raise WrongState(_("The night has begun: the Procurator decides the execution."), rule="L-VOTE-7")
    if opens_at is None or closes_at is None or timezone.is_naive(opens_at) or timezone.is_naive(closes_at):
        raise InvalidInput(_("Voting times must include their time zone."), rule="L-DAY-3")
    if not now < opens_at < closes_at:
        raise InvalidInput(_("The voting must open in the future and before it closes."), rule="L-DAY-3")
    ends_by = voting_window_limits(game, session.day, now)[1]
    if closes_at > ends_by:
        raise InvalidInput(_("Voting must close no later than the end of the day (%(end)s).")
                           % {"end": _local(game, ends_by)}, rule="L-DAY-3")
    old = (session.opens_at, session.closes_at)
    session.opens_at, session.closes_at = opens_at, closes_at
    session.save(update_fields=["opens_at", "closes_at"])
    ScheduledEvent.objects.filter(game=game, kind__in=["voting_open", "voting_close"], done_at__isnull=True,
                                  cancelled_at__isnull=True, payload__session=session.pk).update(cancelled_at=now)
    for kind, due in (("voting_open", opens_at), ("voting_close", closes_at)):
        ScheduledEvent.objects.create(game=game, kind=kind, due_at=due, payload={"session": session.pk},
                                      created_at=now, created_by=acting_user)
    record_event(game, "voting.rescheduled", actor=acting_user, at=now, payload={
        "session": session.pk, "city": city.pk, "from": [t.isoformat() for t in old],
        "to": [opens_at.isoformat(), closes_at.isoformat()]})
    city_inbox = Inbox.objects.filter(city=city, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True,
                                      killed_at__isnull=True).order_by("-pk").first()

    def text():
        return _("New time of today's execution voting in %(city)s: %(opens)s–%(closes)s.") % {
            "city": city.name, "opens": _local(game, opens_at), "closes": _local(game, closes_at)}
    if city_inbox is not None:
        with translation.override(game.language):
            do_post_site_message(city_inbox, text(), acting_user=None, now=now)
    _tell_staff(game, text, now)
    do_replan_clock(game, acting_user=acting_user, reason="voting.rescheduled", now=now)
    return session
