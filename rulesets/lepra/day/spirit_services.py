"""The spirit rule in the morning (RULES.md L-SPIRIT-1/2): the service that turns a city's honest residents killed
that night into spirits for the day."""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.models import Alignment, City, GameEvent, LifeStatus, Resident
from inboxes import policies, viewer_reads
from inboxes.models import DeathCause
from rulesets.lepra.inbox_services import release_from_cemetery
from kernel.audit import record_event
from kernel.errors import NotAllowed, WrongState
from rulesets.lepra.staff_kinds import StaffKind

from .. import seats
from .services import _check_running, _voting_started
from .spirits import spirit_rule_applies


def _night_start(game, now: datetime) -> datetime:
    """The start of the night that ended this morning [interp]: 24 hours before today's day start (L-DAY-1)."""
    zone = ZoneInfo(game.time_zone)
    local = timezone.localtime(now, zone)
    start = datetime.combine(local.date(), game.day_start, tzinfo=zone)
    if start > now:
        start -= timedelta(days=1)
    return start - timedelta(days=1)


@transaction.atomic
def do_apply_spirit_rule(city: City, *, acting_user=None, now: datetime | None = None) -> list[Resident]:
    """Apply L-SPIRIT-1 to ``city`` in the morning: when its living honest residents are as many as its living
    mafia (``rulesets.lepra.day.spirits.spirit_rule_applies``), the honest residents of the city killed that night (cause
    killed, died since ``_night_start``) become spirits for the day (L-SPIRIT-2): their Lepra seat a spirit's,
    taken out of the cemetery (removed there), still banned in the city inbox; they get a vote in every voting inbox opened
    today and go to the cemetery at the end of the day (``rulesets.lepra.inbox_services.do_lay_spirit_to_rest``).

    By the site (``acting_user`` None) or the Procurator, before the city's voting opens. Returns the new spirits
    (empty when the rule does not apply; a second run changes nothing). Raises ``NotAllowed`` or ``WrongState``
    (voting opened, game not running). The counts stay inside: only the result (who is a spirit) is shown.
    """

    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = city.game
    if acting_user is not None and not policies.holds_role(acting_user, game, StaffKind.PROCURATOR):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-SPIRIT-1")
    _check_running(game)
    if _voting_started(city, game.day_number, now):
        raise WrongState(_("Voting has started: the spirit rule is applied in the morning."), rule="L-SPIRIT-1")
    residents = list(Resident.objects.select_for_update(of=("self",)).select_related(seats.SEAT).filter(city=city))
    living = [r for r in residents if r.status == LifeStatus.ALIVE]
    honest = sum(1 for r in living if r.alignment == Alignment.HONEST)
    if not spirit_rule_applies(honest, len(living) - honest):
        return []
    since = _night_start(game, now)
    killed_ids = {e.payload.get("resident") for e in GameEvent.objects.filter(
        game=game, kind="resident.died", at__gt=since, at__lte=now, payload__cause=DeathCause.KILLED)}
    spirits = [r for r in residents if r.pk in killed_ids and r.status == LifeStatus.DEAD and not seats.is_spirit(r)
               and r.alignment == Alignment.HONEST]
    seats.make_spirits(spirits)
    for r in spirits:
        release_from_cemetery(r, now=now)
        viewer_reads.forget_viewer_cache(r.user)
    if spirits:
        record_event(game, "voting.spirits", actor=acting_user, at=now,
                     payload={"city": city.pk, "spirits": [r.pk for r in spirits]})
    return spirits
