"""Reads of the M21 pages, viewer-scoped through the access policy (``inboxes.policies``)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cities.models import Game, GameStatus, LifeStatus, Resident, Signup
from inboxes import policies
from rulesets.m21.kinds import M21InboxKind
from roles.draw import verify_commitment

from . import services
from .day_services import display_names
from .models import DayStatus, M21Day, M21Game, M21Seat
from .roles import ROLES


@dataclass
class DayView:
    """What the M21 game page shows about the current day: the day row, the live count's lines (only to those
    who may read the game thread) and the viewer's own Judge powers."""

    day: M21Day | None
    count_text: str
    count_rows: list[dict]
    not_voting: list[str]
    majority: int | None


def day_view(viewer, game: Game, now: datetime) -> DayView:
    """The current day as ``viewer`` may see it: the live vote count (M-VOTE-8) only if they may read the game
    thread (a count is derived from its posts)."""
    day = services.current_day(game)
    thread = services.thread_of(game)
    if day is None or thread is None or not policies.can_read_inbox(viewer, thread):
        return DayView(day=day if thread and policies.can_read_inbox(viewer, thread) else None, count_text="",
                       count_rows=[], not_voting=[], majority=None)
    names = display_names(game)

    def shown(label: str) -> str:
        return "No Lynch" if label == "NO_LYNCH" else names.get(label, label)

    if day.status == DayStatus.DECIDED and day.result:
        count = day.result["count"]
        rows = [{"target": shown(v["target"]), "count": v["count"], "needed": max(v["needed"] - v["count"], 0),
                 "voters": [shown(voter) for voter in v["voters"]]} for v in count["votes"]]
        return DayView(day=day, count_text="", count_rows=rows, not_voting=[shown(s) for s in count["not_voting"]],
                       majority=count["majority"])
    outcome = services.day_outcome(day, now=now)
    count = outcome.report.count
    marked = set(count.end_marked)
    rows = [{"target": shown(target), "count": len(voters), "needed": max(count.threshold(target) - len(voters), 0),
             "voters": [shown(v) + (" (END)" if v in marked else "") for v in voters]}
            for target, voters in count.votes.items()]
    return DayView(day=day, count_text="", count_rows=rows, not_voting=[shown(s) for s in count.not_voting],
                   majority=count.majority)


def judge_seat_of(viewer, game: Game) -> M21Seat | None:
    """The viewer's own seat when it is the living Judge with the power left (M-ROLE judge), else None."""
    seat = policies.seat_in(viewer, game)
    if seat is None or seat.status != LifeStatus.ALIVE:
        return None
    m21 = M21Seat.objects.filter(resident=seat, role="judge").first()
    if m21 is None or not m21.state.get("judge_power_left"):
        return None
    return m21


def own_role(viewer, game: Game) -> str | None:
    """The viewer's own role name (their seat's), or None."""
    seat = policies.seat_in(viewer, game)
    if seat is None:
        return None
    m21 = M21Seat.objects.filter(resident=seat).first()
    return ROLES[m21.role].name if m21 else None


def game_inboxes(viewer, game: Game):
    """The game's inboxes ``viewer`` may read, game thread first (the policy's query form)."""
    order = {M21InboxKind.GAME_THREAD: 0, M21InboxKind.ROLE_PM: 1, M21InboxKind.MAFIA_THREAD: 2, M21InboxKind.SPECTATORS: 3,
             M21InboxKind.OFFICE: 4}
    return sorted(policies.readable_inboxes(viewer, game), key=lambda i: (order.get(i.kind, 9), i.title))


def living_players(game: Game) -> list[Resident]:
    return list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).order_by("name"))


def active_signups(game: Game) -> list:
    """The game's active sign-ups in the order they came, with their users (the hosts' setup page)."""
    return list(Signup.objects.filter(game=game, withdrawn_at__isnull=True).select_related("user")
                .order_by("signed_up_at", "id"))


def settings_of(game: Game) -> M21Game | None:
    return M21Game.objects.filter(game=game).first()


@dataclass
class DealCheck:
    """The deal as published after the game (M-SETUP-1, the provable draw): the lists, the salt, the commitment
    and whether they match."""

    lists: dict[str, list[str]]
    salt: str
    commitment: str
    verified: bool


def deal_check(game: Game) -> DealCheck | None:
    """The deal's lists and salt with the verification of its commitment, once the game is over; None before (they
    are secret while the game runs)."""
    settings = settings_of(game)
    if game.status != GameStatus.FINISHED or settings is None or not settings.deal_commitment:
        return None
    lists = settings.deal_lists or {}
    return DealCheck(lists=lists, salt=settings.deal_salt, commitment=settings.deal_commitment,
                     verified=verify_commitment(lists, settings.deal_salt, settings.deal_commitment))
