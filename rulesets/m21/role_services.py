"""The M21 day actions of roles and items (RULES.md M-ROLE reporter, item cop, desperado; M-ITEM-1, M-MAFIA-2): a
gun fired by day, the reporter's "Extra, Extra!" and the item cop's confiscation. (The judge's powers are the day's:
``rulesets.m21.services``.)

Each is a ``do_<verb>_<noun>(game, ..., *, acting_user, now=None)`` in one transaction with a ``GameEvent``; it
works only while a day is open and before its planned deadline, for a living seat that has the power now.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from cities.models import Game, GameStatus, LifeStatus, Resident
from cities.services import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from voting.tallies import ForumRemovalCause

from . import items as item_data
from .day_services import open_day
from .host_services import do_remove_m21_player
from .models import M21Seat
from .night_models import HoldingPlace, M21Holding, M21Night
from .night_services import _site_message
from .roles import EXTRA_MAX_WORDS, ROLES
from .service_common import thread_of


def _day_seat(game: Game, acting_user, now: datetime, rule: str):
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.", rule=rule)
    seat = Resident.objects.filter(game=game, user=acting_user).select_related("m21_seat").first() \
        if acting_user is not None and acting_user.is_authenticated else None
    if seat is None or getattr(seat, "m21_seat", None) is None:
        raise NotAllowed("Only players of this game do this.", rule=rule)
    if seat.status != LifeStatus.ALIVE:
        raise NotAllowed("Only living players do this.", rule=rule)
    day = open_day(game)
    if day is None or day.ended_at is not None or now >= day.deadline:
        raise WrongState("This is done by day, while the day is open.", rule=rule)
    return seat, day


def _state(seat: Resident) -> dict:
    return dict(seat.m21_seat.state or {})


def _set_state(seat: Resident, state: dict) -> None:
    M21Seat.objects.filter(pk=seat.m21_seat.pk).update(state=state)


def _role_pm(seat: Resident):
    return getattr(seat.m21_seat, "role_pm", None)


@transaction.atomic
def do_fire_gun(game: Game, *, target: str, acting_user, now: datetime | None = None) -> bool:
    """Fire a held gun by day (M-MAFIA-2: one shot, day or night; M-ITEM-1): the gun is spent; the target dies at
    once (M-VOTE-9: votes on them are void) unless a desperado who killed a mafioso last night is immune today
    (M-ROLE desperado). Returns True when the target died. Raises ``NotAllowed``/``WrongState``/``InvalidInput``."""
    now = now or timezone.now()
    seat, day = _day_seat(game, acting_user, now, "M-ITEM-1")
    gun = M21Holding.objects.select_for_update().filter(game=game, seat=seat, item="gun", place=HoldingPlace.SEAT,
                                                        until__isnull=True).first()
    if gun is None:
        raise NotAllowed("You hold no gun.", rule="M-ITEM-1")
    victim = Resident.objects.filter(game=game, name=target, status=LifeStatus.ALIVE).select_related(
        "m21_seat").first()
    if victim is None or victim.pk == seat.pk:
        raise InvalidInput("Choose a living player other than yourself.", rule="M-ITEM-1")
    M21Holding.objects.filter(pk=gun.pk).update(until=now)
    immune = _state(victim).get("immune_day") == day.number
    record_event(game, "m21.gun_fired", actor=acting_user, at=now,
                 payload={"day": day.number, "by": seat.pk, "target": victim.pk, "immune": immune})
    if immune:
        pm = _role_pm(seat)
        if pm is not None:
            _site_message(pm, f"You fired your gun at {victim.name}, who is immune to gunshots today. The gun is "
                              "spent.", now)
        thread = thread_of(game)
        _site_message(thread, f"A shot rang out: **{victim.name}** survived it.", now)
        return False
    do_remove_m21_player(victim, acting_user=None, cause=ForumRemovalCause.KILLED, reveal_role=True, now=now)
    return True


@transaction.atomic
def do_publish_extra(game: Game, *, text: str, acting_user, now: datetime | None = None):
    """The reporter's "Extra, Extra!" (M-ROLE reporter): once per game, by day, a message of at most 10 words,
    published in the game thread by the site for the host. Raises ``InvalidInput`` for an empty or too long text."""
    now = now or timezone.now()
    seat, day = _day_seat(game, acting_user, now, "M-ROLE")
    if seat.m21_seat.role != "reporter":
        raise NotAllowed("Only the reporter publishes an extra.", rule="M-ROLE")
    state = _state(seat)
    if int(state.get("extra_left", 1)) <= 0:
        raise WrongState("You have already published your extra.", rule="M-ROLE")
    words = text.split()
    if not words:
        raise InvalidInput("Write the message of your extra.", rule="M-ROLE")
    if len(words) > EXTRA_MAX_WORDS:
        raise InvalidInput(f"An extra has at most {EXTRA_MAX_WORDS} words; yours has {len(words)}.", rule="M-ROLE")
    state["extra_left"] = 0
    _set_state(seat, state)
    message = _site_message(thread_of(game), f"**EXTRA, EXTRA!** {' '.join(words)}", now)
    record_event(game, "m21.extra_published", actor=acting_user, at=now, payload={"day": day.number})
    return message


def found_items(seat: Resident, day_number: int) -> dict[str, list[str]]:
    """What the item cop ``seat`` found in the night before day ``day_number``: {target name: item keys}."""
    night = M21Night.objects.filter(game=seat.game, number=day_number - 1, outcome__isnull=False).first()
    if night is None:
        return {}
    return {r["target"]: list(r["answer"]) for r in night.outcome["results"]
            if r["player"] == seat.name and r["kind"] == "investigate" and isinstance(r["answer"], list)}


@transaction.atomic
def do_confiscate_item(game: Game, *, target: str, item: str, acting_user, now: datetime | None = None):
    """The item cop's confiscation (M-ROLE item cop): once per game, the day after finding ``item`` on ``target``,
    take it from them into the evidence safe (the item cop cannot use it); the holder is told. Raises
    ``NotAllowed``/``WrongState``/``InvalidInput`` (not found last night, no longer held)."""
    now = now or timezone.now()
    seat, day = _day_seat(game, acting_user, now, "M-ROLE")
    if seat.m21_seat.role != "item_cop":
        raise NotAllowed("Only the item cop confiscates.", rule="M-ROLE")
    state = _state(seat)
    if int(state.get("confiscate_left", 1)) <= 0:
        raise WrongState("You have already confiscated an item.", rule="M-ROLE")
    if item not in found_items(seat, day.number).get(target, []):
        raise InvalidInput("You can confiscate only an item you found last night.", rule="M-ROLE")
    holder = Resident.objects.filter(game=game, name=target).select_related("m21_seat").first()
    row = M21Holding.objects.select_for_update().filter(game=game, seat=holder, item=item, place=HoldingPlace.SEAT,
                                                        until__isnull=True).first()
    if row is None:
        raise InvalidInput(f"{target} no longer holds that item.", rule="M-ROLE")
    M21Holding.objects.filter(pk=row.pk).update(until=now)
    M21Holding.objects.create(game=game, item=item, place=HoldingPlace.SAFE, seat=None, source="confiscated",
                              since=now)
    state["confiscate_left"] = 0
    _set_state(seat, state)
    name = item_data.item_catalogue()[item].name
    pm = _role_pm(holder)
    if pm is not None:
        _site_message(pm, f"The police confiscated your {name}.", now)
    own = _role_pm(seat)
    if own is not None:
        _site_message(own, f"You confiscated {target}'s {name}: it is in the evidence safe.", now)
    record_event(game, "m21.item_confiscated", actor=acting_user, at=now,
                 payload={"day": day.number, "target": holder.pk, "item": item})
    return row



def night_killers(game: Game, night_number: int) -> dict[str, str]:
    """{victim name: killer name} of the deaths of night ``night_number`` (from its stored trace)."""
    night = M21Night.objects.filter(game=game, number=night_number, outcome__isnull=False).first()
    if night is None:
        return {}
    return {e["player"]: e["killer"] for step in night.outcome["steps"] for e in step["events"]
            if e["event"] == "death"}


@transaction.atomic
def do_post_mortem(game: Game, *, target: str, acting_user, now: datetime | None = None) -> str:
    """The coroner's post mortem (M-ROLE coroner): once per game, during the day after a night kill, learn the role
    of the player who killed ``target`` (the corpse is brought in: not going out). Returns the killer's role key;
    the answer is posted in the coroner's role inbox. Raises ``NotAllowed``/``WrongState``/``InvalidInput`` (no
    player killed last night by that name)."""
    now = now or timezone.now()
    seat, day = _day_seat(game, acting_user, now, "M-ROLE")
    if seat.m21_seat.role != "coroner":
        raise NotAllowed("Only the coroner conducts a post mortem.", rule="M-ROLE")
    state = _state(seat)
    if int(state.get("post_mortem_left", 1)) <= 0:
        raise WrongState("You have already conducted your post mortem.", rule="M-ROLE")
    killer = night_killers(game, day.number - 1).get(target)
    if killer is None:
        raise InvalidInput("A post mortem is done on a player killed last night, within one phase of the death.",
                           rule="M-ROLE")
    killer_seat = Resident.objects.select_related("m21_seat").get(game=game, name=killer)
    role_key = killer_seat.m21_seat.role
    state["post_mortem_left"] = 0
    _set_state(seat, state)
    pm = _role_pm(seat)
    if pm is not None:
        _site_message(pm, f"Post mortem of {target}: they were killed by the {ROLES[role_key].name}.", now)
    record_event(game, "m21.post_mortem", actor=acting_user, at=now, payload={"day": day.number, "target": target})
    return role_key
