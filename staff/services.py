"""Services of the staff consoles : stand-ins.

Every function is one transaction that checks the rules, writes its ``GameEvent`` audit row and raises a
``kernel.errors.RuleViolation`` subclass with a readable message. The admin (``staff.staff_admin``) calls these
and nothing else; so would any page.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.models import GameStatus, StaffRole
from cities.services import check_procurator
from cities.staff_kinds import staff_kinds_of
from inboxes import viewer_reads
from kernel.audit import record_event
from kernel.errors import InvalidInput, WrongState
from kernel.rulesets import rule_id

from .models import StaffStandIn

# --------------------------------------------------------------------------------------------------------------
# Stand-ins
# --------------------------------------------------------------------------------------------------------------

@transaction.atomic
def do_grant_stand_in(absent: StaffRole, stand_in: StaffRole, starts_at: datetime, ends_at: datetime, *,
                      acting_user, now: datetime | None = None) -> StaffStandIn:
    """The host grants ``stand_in`` (a city's staff role: a kind of the ruleset's ``city_staff_kinds``) the powers
    of ``absent`` (the role of the same kind in another city of the game) from ``starts_at`` to ``ends_at`` (aware
    UTC, end excluded). During the period the access policy gives the stand-in ``absent``'s grants in that city
    (``policies.standing_in_roles``); outside it, nothing.

    Returns the StaffStandIn. Raises ``NotAllowed`` (not the host), ``InvalidInput`` (a role that is not a city's
    staff role of this game, roles of different kinds, the same role, an end not after the start or already past),
    ``WrongState`` (game over). The refusals cite the ruleset's ``city_staff`` rule.
    """
    now = now or timezone.now()
    game = absent.game
    check_procurator(game, acting_user, rule="city_staff", site_may=False)
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))
    if (absent.kind not in staff_kinds_of(game, "city_staff_kinds") or stand_in.kind != absent.kind
            or stand_in.game_id != game.pk or absent.pk == stand_in.pk):
        raise InvalidInput(_("A stand-in holds the same city staff role in another city of the same game."),
                           rule=rule_id(game, "city_staff"))
    if starts_at.tzinfo is None or ends_at.tzinfo is None:
        raise InvalidInput(_("Times must carry a time zone."))
    if ends_at <= starts_at:
        raise InvalidInput(_("The end of the period must be after its start."), rule=rule_id(game, "city_staff"))
    if ends_at <= now:
        raise InvalidInput(_("The end of the period must be in the future."), rule=rule_id(game, "city_staff"))
    period = StaffStandIn.objects.create(game=game, city_id=absent.city_id, absent=absent, stand_in=stand_in,
                                         starts_at=starts_at, ends_at=ends_at, granted_by=acting_user,
                                         granted_at=now)
    viewer_reads.forget_viewer_cache(stand_in.user)
    record_event(game, "staff.stand_in_granted", actor=acting_user, at=now,
                 payload={"stand_in": period.pk, "city": absent.city_id, "absent": absent.pk,
                          "role": stand_in.pk, "from": starts_at.isoformat(), "until": ends_at.isoformat()})
    return period


@transaction.atomic
def do_end_stand_in(period: StaffStandIn, *, acting_user, now: datetime | None = None) -> StaffStandIn:
    """The host ends a stand-in period now; the stand-in loses the city's powers at once.
    Raises ``NotAllowed`` (not the host), ``WrongState`` (already ended or over)."""
    now = now or timezone.now()
    period = StaffStandIn.objects.select_for_update(of=("self",)).select_related("game").get(pk=period.pk)
    check_procurator(period.game, acting_user, rule="city_staff", site_may=False)
    if period.ended_at is not None or period.ends_at <= now:
        raise WrongState(_("This stand-in period is already over."), rule=rule_id(period.game, "city_staff"))
    period.ended_at = now
    period.ended_by = acting_user
    period.save(update_fields=["ended_at", "ended_by"])
    record_event(period.game, "staff.stand_in_ended", actor=acting_user, at=now,
                 payload={"stand_in": period.pk, "city": period.city_id})
    return period


__all__ = ["do_end_stand_in", "do_grant_stand_in"]
