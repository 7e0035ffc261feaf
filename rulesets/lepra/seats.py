"""The Lepra ranks of a seat (``rulesets.lepra.models.LepraSeat``): every read and write of them goes through here.

Reads take a ``Resident`` and use its ``lepra_seat`` relation: select it (``select_related(SEAT)``, or
``kernel.rulesets.seat_state_relations()`` in the engine) and they cost no query; a resident without a
``LepraSeat`` row holds no rank. Query forms (``rank_q``) select the same residents in the database. Writes go
through ``do_set_seat_flags`` (the site's draws and elections, L-ASSIGN, L-JUDGE, L-NIGHT-3) and the helpers the
death service and the day call inside their transactions (``record_deaths``, ``make_spirits``, ``lay_spirit``).
The ranks are secrets of L-STAFF-6 but the judge's (L-CITY-4): pages learn them only through the access policy.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities.models import LifeStatus, Resident
from rulesets.lepra.inbox_services import renew_court
from rulesets.lepra.kinds import LepraInboxKind
from kernel.audit import record_event, record_events
from kernel.errors import InvalidInput, NotAllowed
from rulesets.lepra.models import CommissarCheck

from .models import LepraSeat

#: The related name of a resident's ``LepraSeat`` (``select_related(SEAT)``).
SEAT = "lepra_seat"
#: The ranks ``do_set_seat_flags`` sets (``is_spirit`` follows deaths and days, not draws).
RANKS = ("is_commissar", "is_judge", "is_godfather")
FLAGS = (*RANKS, "is_spirit")


def seat_of(resident: Resident) -> LepraSeat | None:
    """The ``LepraSeat`` of ``resident`` or None (no rank ever). No query when it was selected or read before."""
    try:
        return resident.lepra_seat
    except ObjectDoesNotExist:
        return None


def is_commissar(resident: Resident) -> bool:
    """True when ``resident`` is (or was, dead) their city's commissar (L-COMM)."""
    seat = seat_of(resident)
    return seat is not None and seat.is_commissar


def is_judge(resident: Resident) -> bool:
    """True when ``resident`` holds the judge's seat of their city (L-JUDGE); a death vacates it."""
    seat = seat_of(resident)
    return seat is not None and seat.is_judge


def is_sitting_judge(resident: Resident) -> bool:
    """True when ``resident`` is their city's judge and alive (L-JUDGE, L-CITY-4)."""
    return is_judge(resident) and resident.status == LifeStatus.ALIVE


def is_godfather(resident: Resident) -> bool:
    """True when ``resident`` holds the godfather's rank (L-NIGHT-3); a dead godfather keeps it until replaced."""
    seat = seat_of(resident)
    return seat is not None and seat.is_godfather


def is_spirit(resident: Resident) -> bool:
    """True when ``resident`` is a spirit of the day (killed at night, L-SPIRIT-1/2)."""
    seat = seat_of(resident)
    return seat is not None and seat.is_spirit


def commissar_since(resident: Resident) -> datetime | None:
    """When ``resident`` became commissar (aware UTC), or None (not dated, or not a commissar)."""
    seat = seat_of(resident)
    return seat.commissar_since if seat is not None else None


def godfather_dates(resident: Resident) -> tuple[datetime | None, datetime | None]:
    """(since, until) of ``resident``'s godfather rank (aware UTC; None: undated / still held)."""
    seat = seat_of(resident)
    return (seat.godfather_since, seat.godfather_until) if seat is not None else (None, None)


def was_godfather_at(resident: Resident, moment: datetime | None) -> bool:
    """True when ``resident`` was their city's godfather at ``moment`` (aware UTC; None: now). A rank without a
    start date is older than the dates (counted from the start)."""
    if moment is None:
        return is_godfather(resident)
    since, until = godfather_dates(resident)
    if not is_godfather(resident) and until is None:
        return False
    return (since is None or since <= moment) and (until is None or until > moment)


def was_commissar_at(resident: Resident, moment: datetime | None) -> bool:
    """True when ``resident`` was a commissar at ``moment`` (aware UTC; None: now)."""
    if not is_commissar(resident):
        return False
    since = commissar_since(resident)
    return moment is None or since is None or since <= moment


#: The secret ranks of ``LepraRuleset.seat_roles`` by key, and their flags.
RANK_FLAGS = {"commissar": "is_commissar", "godfather": "is_godfather"}


def holds_rank(resident: Resident, key: str, moment: datetime | None = None) -> bool:
    """True when ``resident`` held the secret rank ``key`` ("commissar" or "godfather") at ``moment`` (aware UTC;
    None: now). Raises ``ValueError`` for another key."""
    if key == "commissar":
        return was_commissar_at(resident, moment)
    if key == "godfather":
        return was_godfather_at(resident, moment)
    raise ValueError(f"unknown Lepra rank {key!r}")


def checked_by_commissar(seat: Resident, resident: Resident) -> bool:
    """True when ``seat`` is a commissar of ``resident``'s city who checked ``resident`` (L-NIGHT-5: the answer is
    his); one query, for a commissar only."""
    if not is_commissar(seat) or seat.city_id != resident.city_id:
        return False
    return CommissarCheck.objects.filter(commissar=seat, target=resident).exists()


def public_positions(resident: Resident) -> list[tuple[str, object]]:
    """The public positions of ``resident`` as (key, label): a sitting judge (L-CITY-4), a spirit of the day
    (L-SPIRIT-2)."""
    positions: list[tuple[str, object]] = []
    if is_sitting_judge(resident):
        positions.append(("judge", gettext_lazy("judge")))
    if is_spirit(resident) and resident.status != LifeStatus.ALIVE:
        positions.append(("spirit", gettext_lazy("spirit")))
    return positions


def standing_members(kind: str, residents: Iterable[Resident]) -> list[Resident] | None:
    """The members of a new standing inbox of ``kind`` among ``residents``: the cemetery's dead but the spirits
    (L-INBOX-6, L-SPIRIT-2), the police station's living commissars (L-INBOX-3), the court's living sitting judges
    (L-INBOX-2); None for another kind (the engine's choice). The instance form of ``standing_members_q``."""
    if kind == LepraInboxKind.CEMETERY:
        return [r for r in residents if r.status != LifeStatus.ALIVE and not is_spirit(r)]
    if kind == LepraInboxKind.POLICE:
        return [r for r in residents if r.status == LifeStatus.ALIVE and is_commissar(r)]
    if kind == LepraInboxKind.COURT:
        return [r for r in residents if is_sitting_judge(r)]
    return None


def standing_members_q(kind: str) -> Q | None:
    """``Q`` over Resident: the query form of ``standing_members``; None for another kind."""
    if kind == LepraInboxKind.CEMETERY:
        return ~Q(status=LifeStatus.ALIVE) & rank_q("is_spirit", False)
    if kind == LepraInboxKind.POLICE:
        return Q(status=LifeStatus.ALIVE) & rank_q("is_commissar")
    if kind == LepraInboxKind.COURT:
        return Q(status=LifeStatus.ALIVE) & rank_q("is_judge")
    return None


def rank_q(flag: str, value: bool = True, *, prefix: str = "") -> Q:
    """``Q`` selecting the residents whose ``flag`` (of ``FLAGS``) is ``value``; ``prefix`` the path to the
    resident ("" for Resident itself, e.g. "resident__" from a model with a ``resident`` key). A resident without a
    ``LepraSeat`` has every flag False. Raises ``ValueError`` for another flag."""
    if flag not in FLAGS:
        raise ValueError(f"unknown Lepra seat flag {flag!r}")
    q = Q(**{f"{prefix}{SEAT}__{flag}": True})
    return q if value else ~q


def _seat_for_write(resident: Resident) -> LepraSeat:
    """The seat of ``resident`` to write, its copies of the resident's city, alignment and status brought up to
    date (a new, unsaved one when it has none)."""
    seat = seat_of(resident)
    if seat is None:
        seat = LepraSeat(resident=resident)
    seat.city_id, seat.alignment, seat.status = resident.city_id, resident.alignment, resident.status
    return seat


def _save(seat: LepraSeat, fields: Iterable[str]) -> None:
    if seat._state.adding:
        seat.save(force_insert=True)
    else:
        seat.save(update_fields=[*fields, "city", "alignment", "status"])


@transaction.atomic
def do_set_seat_flags(resident: Resident, *, acting_user, now: datetime | None = None, **flags) -> Resident:
    """Set Lepra ranks of ``resident`` (``is_commissar``, ``is_judge``, ``is_godfather``: booleans) as a draw or an
    election decided (L-ASSIGN, L-COMM, L-JUDGE, L-NIGHT-3), dating the secret ones (L-STAFF-6 [interp]: knowledge
    is dated by the death of the one who knows). Only the site (``acting_user`` None) calls this. Returns the
    resident, its ``lepra_seat`` updated. Raises ``NotAllowed`` for a person, ``InvalidInput`` for another flag;
    the named DB constraints reject a second commissar, sitting judge or living godfather in a city, a mafia
    commissar and an honest godfather (``IntegrityError``).

    The audit row names the flags but not their values, and names the resident only for the public judge's seat:
    a row naming the holder of a secret rank would be a list of the mafia for the Procurator.
    """
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Roles are set by the site's draws and elections, not by hand."), rule="L-ASSIGN-3")
    unknown = set(flags) - set(RANKS)
    if unknown:
        raise InvalidInput(f"Unknown resident flags: {sorted(unknown)}")
    seat = _seat_for_write(resident)
    fields = list(flags)
    if "is_godfather" in flags and bool(flags["is_godfather"]) != seat.is_godfather:
        if flags["is_godfather"]:
            seat.godfather_since, seat.godfather_until = now, None
        else:
            seat.godfather_until = now
        fields += ["godfather_since", "godfather_until"]
    if flags.get("is_commissar") and not seat.is_commissar:
        seat.commissar_since = now
        fields.append("commissar_since")
    for key, value in flags.items():
        setattr(seat, key, bool(value))
    _save(seat, fields)
    resident.lepra_seat = seat
    public = [key for key in flags if key == "is_judge"]
    payload = ({"resident": resident.pk, "flags": public} if public and len(public) == len(flags)
               else {"flags": sorted(flags)})
    record_event(resident.game, "resident.flags", actor=None, at=now, payload=payload)
    return resident


def record_deaths(game, residents: list[Resident], *, spirit_of: Mapping[int, bool], now: datetime) -> list[Resident]:
    """The Lepra side of deaths already recorded on ``residents`` (status dead, ``died_at`` = ``now``), in the
    death service's transaction: a seat killed at night with ``spirit_of[id]`` becomes a spirit for the day
    (L-SPIRIT-1/2), every other is none; a judge's seat is vacated (L-JUDGE, its ``resident.flags`` audit row as
    ``do_set_seat_flags`` writes it). At most one upsert (none when no dying seat has a rank or becomes a spirit)
    and one audit insert. Returns the judges who died."""
    judges = [r for r in residents if is_judge(r)]
    seats = []
    for resident in residents:
        if seat_of(resident) is None and not spirit_of.get(resident.pk):
            continue  # no rank before, none now: no row to write
        seat = _seat_for_write(resident)
        seat.is_spirit, seat.is_judge = bool(spirit_of.get(resident.pk)), False
        resident.lepra_seat = seat
        seats.append(seat)
    if seats:
        LepraSeat.objects.bulk_create(seats, update_conflicts=True, unique_fields=["resident"],
                                      update_fields=["status", "is_spirit", "is_judge"])
    for seat in seats:
        seat._state.adding = False
    if judges:
        record_events(game, [("resident.flags", {"resident": j.pk, "flags": ["is_judge"]}) for j in judges],
                      actor=None, at=now)
    return judges


def after_deaths(game, residents: list[Resident], *, spirit_of: Mapping[int, bool], acting_user,
                 now: datetime) -> None:
    """What deaths do to the Lepra seats (``LepraRuleset.after_deaths``): ``record_deaths``, then a new court
    inbox when judges died (L-INBOX-2), in the death service's transaction."""
    if record_deaths(game, residents, spirit_of=spirit_of, now=now):
        renew_court(game, actor=acting_user, now=now)


def make_spirits(residents: list[Resident]) -> None:
    """Make the dead ``residents`` spirits for the day (L-SPIRIT-2), in the caller's transaction."""
    for resident in residents:
        seat = _seat_for_write(resident)
        seat.is_spirit = True
        _save(seat, ["is_spirit"])
        resident.lepra_seat = seat


def lay_spirit(resident: Resident) -> None:
    """``resident`` is a spirit no more (laid to rest, L-SPIRIT-2), in the caller's transaction."""
    seat = seat_of(resident)
    if seat is not None and seat.is_spirit:
        seat.is_spirit = False
        seat.save(update_fields=["is_spirit"])
