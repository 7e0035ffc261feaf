"""What the M21 host's console reads (RULES.md M-SETUP-4, M-VOTE-5, M-NIGHT-1, M-MAFIA-2, M-ITEM-1): the phase clock
with its planned times, what needs the hosts now, the players' table and the items in play.

Only the game's hosts reach these reads (``rulesets.m21.staff_admin`` checks ``services.is_host`` first); the hosts
know every role (M-SETUP-4). Even so the night's submissions are read by count only: what a player submitted is
theirs and the resolution's, and the console needs no more than "how many have acted".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from cities.models import Game, GameStatus, LifeStatus, Resident, ScheduledEvent
from inboxes.models import Message

from . import items as item_data
from . import night_services, services
from .console_services import wall_time
from .day_services import OFFENCE_WORDS, display_names
from .models import DayStatus, M21Seat
from .night_models import HoldingPlace, M21Holding, M21NightAction
from .roles import ROLES

#: A living player who has not posted in the game thread for this long while a day runs is listed as a candidate
#: for replacement (the host decides; nothing is automatic).
SILENT_HOURS = 24


@dataclass(frozen=True)
class PlannedTime:
    """One planned time of the clock: ``what`` happens at ``at`` (aware UTC), ``local`` the same in the game's zone
    with the zone named."""

    what: str
    at: datetime
    local: str


@dataclass
class PhaseClock:
    """The running phase: ``phase`` ("day", "casting vote", "night", "not started", "over"), its ``number``,
    ``starts_at`` and planned ``ends_at`` (aware UTC or None) with their wall-clock texts, and the clock's pending
    events in order."""

    phase: str
    number: int | None
    starts_at: datetime | None
    ends_at: datetime | None
    starts_local: str = ""
    ends_local: str = ""
    pending: list[PlannedTime] = field(default_factory=list)

    @property
    def can_move(self) -> bool:
        """True when the hosts may extend or shorten the phase (an open day or a running night)."""
        return self.phase in ("day", "night")


_EVENT_WORDS = {"m21_day_start": "day {day} starts", "m21_day_deadline": "day {day} deadline",
                "m21_casting_window_end": "day {day}: the casting vote window closes",
                "m21_night_start": "night {day} starts", "m21_night_end": "night {night} ends and is resolved"}


def phase_clock(game: Game, now: datetime) -> PhaseClock:
    """The ``PhaseClock`` of ``game`` at ``now`` (aware UTC)."""
    pending = []
    for event in ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True,
                                               kind__in=list(_EVENT_WORDS)).order_by("due_at", "id"):
        words = _EVENT_WORDS[event.kind].format(day=event.payload.get("day", "?"),
                                                night=event.payload.get("night", "?"))
        pending.append(PlannedTime(what=words, at=event.due_at, local=wall_time(event.due_at, game)))
    if game.status == GameStatus.FINISHED:
        clock = PhaseClock("over", None, None, game.ended_at)
    else:
        day = services.open_day(game)
        night_event = next((e for e in ScheduledEvent.objects.filter(
            game=game, kind="m21_night_end", done_at__isnull=True, cancelled_at__isnull=True).order_by("due_at")),
            None)
        if day is not None and day.status == DayStatus.OPEN:
            clock = PhaseClock("day", day.number, day.starts_at, day.deadline)
        elif day is not None:
            clock = PhaseClock("casting vote", day.number, day.ended_at, day.casting_window_ends_at)
        elif night_event is not None:
            last = services.current_day(game)
            clock = PhaseClock("night", int(night_event.payload["night"]), last.ended_at if last else None,
                               night_event.due_at)
        else:
            clock = PhaseClock("not started", None, None, None)
    clock.pending = pending
    clock.starts_local = wall_time(clock.starts_at, game) if clock.starts_at else ""
    clock.ends_local = wall_time(clock.ends_at, game) if clock.ends_at else ""
    return clock


@dataclass(frozen=True)
class HostNeed:
    """One "what needs you now" line: ``key``, ``label`` and ``count`` (never who, never what)."""

    key: str
    label: str
    count: int


def night_submission_count(game: Game) -> int:
    """How many seats have a night action standing in the running night (their last submission is not a
    withdrawal; an item use counts apart from the role action), 0 by day. A count only (M-NIGHT-1)."""
    night = night_services.open_night(game)
    if night is None:
        return 0
    last: dict[tuple[int, str], str] = {}
    for seat_id, action, item in (M21NightAction.objects.filter(night=night).order_by("submitted_at", "id")
                                  .values_list("seat_id", "action", "item")):
        group = f"item:{item}" if item and action in ("use_item", night_services.WITHDRAW) else "role"
        last[(seat_id, group)] = action
    return len({seat for (seat, _group), action in last.items() if action != night_services.WITHDRAW})


def last_offenders(game: Game) -> tuple[int | None, list[dict]]:
    """(day number, offenders) of the latest decided day (M-VOTE-5, as the day stored them), or (None, []). Each
    offender is ``{"seat": the seat's name now (L-REPLACE-1), "offences": [the offences in words]}``."""
    day = game.m21_days.filter(status=DayStatus.DECIDED).order_by("-number").first()
    if day is None or not day.result:
        return None, []
    names = display_names(game)
    return day.number, [{"seat": names.get(o["seat"], o["seat"]),
                         "offences": [OFFENCE_WORDS.get(code, code) for code in o["offences"]]}
                        for o in day.result.get("offenders", [])]


def silent_players(game: Game, now: datetime) -> list[Resident]:
    """Living players with no game-thread post in the last ``SILENT_HOURS`` while a day has run that long, or whose
    account can no longer log in: candidates for a replacement (L-REPLACE-1). Posts are public, so is this."""
    day = services.open_day(game)
    living = list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).select_related("user").order_by("name"))
    inactive = [r for r in living if not r.user.is_active]
    if day is None or day.status != DayStatus.OPEN or now - day.starts_at < timedelta(hours=SILENT_HOURS):
        return inactive
    since = now - timedelta(hours=SILENT_HOURS)
    posted = set(Message.objects.filter(inbox=day.thread, received_at__gte=since, received_at__lte=now,
                                        author_resident__isnull=False).values_list("author_resident_id", flat=True))
    return [r for r in living if r.pk not in posted or not r.user.is_active]


def host_needs(game: Game, now: datetime) -> list[HostNeed]:
    """What needs the hosts of ``game`` now, by count: night actions standing (resolved at the night's end), a
    tie waiting for the Judge's casting vote, the must-vote offenders of the last day (M-VOTE-5), players to
    consider replacing. Lines with a zero count are left out."""
    if game.status != GameStatus.RUNNING:
        return []
    day = services.open_day(game)
    number, offenders = last_offenders(game)
    needs = [
        HostNeed("m21_night_actions", "Night actions submitted (resolved at the night's end)",
                 night_submission_count(game)),
        HostNeed("m21_casting_vote", "A tie waits for the Judge's casting vote",
                 int(day is not None and day.status == DayStatus.AWAITING_CASTING_VOTE)),
        HostNeed("m21_offenders", f"Must-vote offenders of day {number} (M-VOTE-5)" if number else
                 "Must-vote offenders (M-VOTE-5)", len(offenders)),
        HostNeed("m21_replacements", f"Players silent for {SILENT_HOURS} h or inactive (replacement candidates)",
                 len(silent_players(game, now))),
    ]
    return [need for need in needs if need.count]


#: Item key -> its name (the default catalogue: names do not change with a game's gadget configuration).
_ITEM_NAMES = {key: item.name for key, item in item_data.item_catalogue().items()}


@dataclass(frozen=True)
class PlayerRow:
    """One seat on the console: its ``resident``, role name (the hosts know it, M-SETUP-4), sanity of a cop,
    life status and the items it holds."""

    resident: Resident
    role: str
    insane: bool
    status: str
    items: tuple[str, ...]


def player_rows(game: Game) -> list[PlayerRow]:
    """Every seat of ``game`` by name, with role, status and items held."""
    held: dict[int, list[str]] = {}
    for holding in M21Holding.objects.filter(game=game, until__isnull=True, place=HoldingPlace.SEAT):
        held.setdefault(holding.seat_id, []).append(holding.item)
    rows = []
    for seat in (M21Seat.objects.filter(resident__game=game).select_related("resident", "resident__user")
                 .order_by("resident__name")):
        role = ROLES[seat.role]
        rows.append(PlayerRow(resident=seat.resident, role=role.name, insane=role.is_cop and not seat.sane,
                              status=seat.resident.get_status_display(),
                              items=tuple(_ITEM_NAMES.get(k, k) for k in held.get(seat.resident_id, []))))
    return rows


@dataclass(frozen=True)
class Stash:
    """The items (M-MAFIA-2, M-ITEM-1): ``unused`` stash items not yet in play, ``held`` (item, holder, since as a
    wall-clock time in the game's zone),
    ``safe`` (confiscated items in the evidence safe)."""

    unused: list[str]
    held: list[tuple[str, str, str]]
    safe: list[str]


def stash_of(game: Game) -> Stash:
    """The items of ``game`` as the hosts see them."""
    name = _ITEM_NAMES
    held = [(name.get(h.item, h.item), h.seat.name, wall_time(h.since, game))
            for h in M21Holding.objects.filter(game=game, until__isnull=True, place=HoldingPlace.SEAT)
            .select_related("seat").order_by("since", "id")]
    return Stash(unused=[name.get(k, k) for k in night_services.stash_items(game)], held=held,
                 safe=[name.get(k, k) for k in night_services.confiscated_items(game)])
