"""What the clock asks of the staff (DESIGN.md "The clock"): the problems the clock page and the staff dashboards
show at once, so that nothing goes wrong silently: the site's clock paused, an attempt that started and never
finished (a crashed worker), events failing or waiting, and missed voting windows (``rulesets.lepra.day.window_services``).

Nothing secret: kinds, times and counts (a night's error text is shown by class only, ``clock_admin``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.models import Game, ScheduledEvent
from cities.scheduler import clock_paused
from rulesets.lepra.day.window_services import missed_votings
from rulesets.lepra.staff_kinds import StaffKind
from staff.console import Need, staff_admin_site


@dataclass
class ClockProblems:
    """The clock's problems in one game: ``paused`` (the ``ClockPause`` or None), ``crashed`` (pending events
    whose last attempt started more than the task time limit ago and never finished), ``failing`` (pending events
    with an error, waits included) and ``missed`` (missed voting sessions of the current day)."""

    paused: object = None
    crashed: list = field(default_factory=list)
    failing: list = field(default_factory=list)
    missed: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.paused or self.crashed or self.failing or self.missed)


def clock_problems(game: Game, now: datetime) -> ClockProblems:
    """The ``ClockProblems`` of ``game`` at ``now`` (aware UTC)."""

    pending = ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True)
    stale = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return ClockProblems(
        paused=clock_paused(),
        crashed=list(pending.filter(started_at__lte=stale).order_by("due_at", "id")),
        failing=list(pending.exclude(last_error="").order_by("due_at", "id")),
        missed=missed_votings(game, now),
    )


def clock_needs(request, role) -> list:
    """Dashboard lines (``staff.console.register_dashboard_needs``): for the Procurator the clock's problems of the
    game; for a Tribune the missed voting windows of their city; for the Arbiter those of every city. Each line
    links where it is fixed (the clock page with its "retry now", or the reschedule form)."""

    game, now = role.game, timezone.now()
    if role.kind not in (StaffKind.PROCURATOR, StaffKind.TRIBUNE, StaffKind.ARBITER):
        return []
    missed = missed_votings(game, now, city=role.city if role.kind == StaffKind.TRIBUNE else None)
    needs = []
    if missed:
        url = reverse("admin:reschedule_voting", args=[missed[0].public_id], current_app=staff_admin_site.name)
        needs.append(Need("missed_voting", _("Missed voting windows to reschedule"), len(missed), url))
    if role.kind == StaffKind.PROCURATOR:
        problems = clock_problems(game, now)
        clock = reverse("admin:game_clock", args=[game.slug], current_app=staff_admin_site.name)
        needs.append(Need("clock_problems", _("Clock problems (paused, crashed or failing events)"),
                          int(problems.paused is not None) + len({e.pk for e in problems.crashed + problems.failing}),
                          clock))
    return needs
