"""The M21 day actions of roles and items (RULES.md M-ROLE reporter, item cop, desperado, coroner, jailbreaker;
M-ITEM-1, M-MAFIA-2): a gun fired by day, the reporter's "Extra, Extra!", the item cop's confiscation, the coroner's
post mortem and the busted-out prisoner's message to the Jailbreaker. (The judge's powers are the day's:
``rulesets.m21.services``.)

Each is a ``do_<verb>_<noun>(game, ..., *, acting_user, now=None)`` in one transaction with a ``GameEvent``; it
works only while a day is open and before its planned deadline, for a living seat that has the power now.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from cities.models import Game, GameStatus, LifeStatus, Resident, ScheduledEvent
from cities.services import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from voting.forum_vote import ForumRemovalCause

from . import items as item_data
from .day_services import open_day
from .host_services import do_remove_m21_player
from .models import DayStatus, M21DayOrder, M21Seat, OrderKind
from .night_models import HoldingPlace, M21Holding, M21Night
from .night_pages import target_order
from .night_services import _site_message
from .roles import BUST_OUT_MESSAGE_MAX_WORDS, EXTRA_MAX_WORDS, ROLES
from .service_common import thread_of


def _day_seat(game: Game, acting_user, now: datetime, rule: str):
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.", rule=rule)
    seat = Resident.objects.filter(game=game, user=acting_user).select_related("m21_seat").first() \
        if acting_user is not None and acting_user.is_authenticated else None
    if seat is None or getattr(seat, "m21_seat", None) is None:
        raise NotAllowed("Only players of this game do this.", rule=rule)
    final = _has_final_action(seat)
    if seat.status != LifeStatus.ALIVE and not final:
        raise NotAllowed("Only living players do this.", rule=rule)
    day = open_day(game)
    if day is None or day.ended_at is not None or now >= day.deadline:
        raise WrongState("This is done by day, while the day is open.", rule=rule)
    if final:  # the busted-out prisoner's one unused action (M-ROLE jailbreaker): spent with this one
        _set_state(seat, _state(seat) | {"busted_out_acted": True})
    return seat, day


def _has_final_action(seat: Resident) -> bool:
    """M-ROLE jailbreaker, M-NIGHT-7: a busted-out prisoner "may use one unused action" (a day action happens at
    once, a night one the next night) until they have used it."""
    state = _state(seat)
    return seat.status == LifeStatus.IMPRISONED and bool(state.get("busted_out")) and not state.get("busted_out_acted")


def _state(seat: Resident) -> dict:
    return dict(seat.m21_seat.state or {})


def _set_state(seat: Resident, state: dict) -> None:
    M21Seat.objects.filter(pk=seat.m21_seat.pk).update(state=state)
    seat.m21_seat.state = state


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
    do_remove_m21_player(victim, acting_user=None, cause=ForumRemovalCause.KILLED, reveal_role=True, killer=seat,
                         now=now)
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



def current_phase(game: Game, now: datetime) -> int | None:
    """The phase running at ``now`` as a number: day ``d`` is ``2d - 1`` (until its planned deadline, and while a
    tie waits for the Judge), night ``n`` is ``2n``; None between phases or outside a running game."""
    day = open_day(game)
    if day is not None and (day.status != DayStatus.OPEN or now < day.deadline):
        return 2 * day.number - 1
    event = ScheduledEvent.objects.filter(game=game, kind="m21_night_end", done_at__isnull=True,
                                          cancelled_at__isnull=True).order_by("due_at").first()
    if event is not None and now < event.due_at:
        return 2 * int(event.payload["night"])
    return None


def killings(game: Game) -> dict[str, tuple[int, str]]:
    """Every kill of the game (M-ROLE coroner: "a player who has been KILLED"), {victim name: (phase of the death,
    the killer's role key)}: the deaths of each resolved night (the mafia's kill, the strongman's, a desperado's
    shot or backfire, a gun or a grenade, from the stored trace; the roles from the night's own file), and the
    deaths by day (a gun, from the day's removal records). Imprisonment and a host's removal are not kills."""
    kills: dict[str, tuple[int, str]] = {}
    for night in M21Night.objects.filter(game=game, outcome__isnull=False).order_by("number"):
        roles = {p["name"]: p["role"] for p in (night.input or {}).get("players", [])}
        for step in night.outcome["steps"]:
            for e in step["events"]:
                if e["event"] == "death" and e.get("killer") in roles:
                    kills[e["player"]] = (2 * night.number, roles[e["killer"]])
    for order in M21DayOrder.objects.filter(day__game=game, kind=OrderKind.REMOVAL).select_related("day", "seat"):
        if order.payload.get("killer_role"):
            kills[order.seat.name] = (2 * order.day.number - 1, order.payload["killer_role"])
    return kills


@transaction.atomic
def do_post_mortem(game: Game, *, target: str, acting_user, now: datetime | None = None) -> str:
    """The coroner's post mortem (M-ROLE coroner): once per game, by day or by night, learn the role of the player
    who killed ``target``, within one phase of the death: in the phase of the death or the next one (a night's
    dead are examined the next day; a day's dead, shot, that day or the night after). The corpse is brought in:
    not going out (M-NIGHT-3). Returns the killer's role key; the answer is posted in the coroner's role inbox.
    Raises ``NotAllowed`` (not a living coroner), ``WrongState`` (used, no phase running), ``InvalidInput`` (not
    killed, or longer ago than one phase); nothing changes then."""
    now = now or timezone.now()
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.", rule="M-ROLE")
    seat = Resident.objects.filter(game=game, user=acting_user).select_related("m21_seat").first() \
        if acting_user is not None and acting_user.is_authenticated else None
    if seat is None or getattr(seat, "m21_seat", None) is None or seat.m21_seat.role != "coroner":
        raise NotAllowed("Only the coroner conducts a post mortem.", rule="M-ROLE")
    final = _has_final_action(seat)
    if seat.status != LifeStatus.ALIVE and not final:
        raise NotAllowed("Only living players do this.", rule="M-ROLE")
    state = _state(seat) | ({"busted_out_acted": True} if final else {})
    if int(state.get("post_mortem_left", 1)) <= 0:
        raise WrongState("You have already conducted your post mortem.", rule="M-ROLE")
    phase = current_phase(game, now)
    if phase is None:
        raise WrongState("No phase is running.", rule="M-ROLE")
    death = killings(game).get(target)
    if death is None or not 0 <= phase - death[0] <= 1:
        raise InvalidInput("A post mortem is done on a player who was killed, within one phase of the death.",
                           rule="M-ROLE")
    role_key = death[1]
    state["post_mortem_left"] = 0
    _set_state(seat, state)
    pm = _role_pm(seat)
    if pm is not None:
        _site_message(pm, f"Post mortem of {target}: they were killed by the {ROLES[role_key].name}.", now)
    record_event(game, "m21.post_mortem", actor=acting_user, at=now, payload={"phase": phase, "target": target})
    return role_key


def jailbreaker_of(seat: Resident) -> Resident | None:
    """The seat that busted ``seat`` out of the penitentiary (M-ROLE jailbreaker), from the stored nights' results;
    None when nobody did."""
    for night in M21Night.objects.filter(game=seat.game, outcome__isnull=False).order_by("-number"):
        for result in night.outcome["results"]:
            if result["kind"] == "bust_out" and result["target"] == seat.name:
                return Resident.objects.filter(game=seat.game, name=result["player"]).select_related(
                    "m21_seat__role_pm").first()
    return None


def may_send_bust_out_message(seat: Resident | None) -> bool:
    """Whether ``seat`` is a busted-out prisoner who has not yet sent the Jailbreaker their message (the page shows
    the form; ``do_send_bust_out_message`` decides)."""
    state = dict(getattr(getattr(seat, "m21_seat", None), "state", None) or {})
    return (seat is not None and seat.status == LifeStatus.IMPRISONED and bool(state.get("busted_out"))
            and not state.get("bust_out_message_sent"))


@transaction.atomic
def do_send_bust_out_message(game: Game, *, text: str, acting_user, now: datetime | None = None):
    """The busted-out prisoner's message to the Jailbreaker (M-ROLE jailbreaker: "bust out an imprisoned player,
    who may send them 20 words"): once, while the game runs, after the night of the bust out, at most
    ``BUST_OUT_MESSAGE_MAX_WORDS`` words (whitespace-separated). Delivered "via the GM": the site posts it in the
    Jailbreaker's role PM, which the hosts read; the prisoner is told it went, never who the Jailbreaker is.
    Returns the delivered Message. Raises ``NotAllowed`` (not a busted-out prisoner of this game), ``WrongState``
    (game not running, already sent), ``InvalidInput`` (empty, over 20 words); nothing changes then."""
    now = now or timezone.now()
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.", rule="M-ROLE")
    seat = Resident.objects.select_for_update(of=("self",)).filter(
        game=game, user=acting_user).select_related("m21_seat__role_pm").first() \
        if acting_user is not None and acting_user.is_authenticated else None
    state = dict(getattr(getattr(seat, "m21_seat", None), "state", None) or {})
    if seat is None or seat.status != LifeStatus.IMPRISONED or not state.get("busted_out"):
        raise NotAllowed("Only a prisoner who was busted out sends the Jailbreaker a message.", rule="M-ROLE")
    if state.get("bust_out_message_sent"):
        raise WrongState("You have already sent the Jailbreaker your message.", rule="M-ROLE")
    words = (text or "").split()
    if not words:
        raise InvalidInput("Write your message to the Jailbreaker.", rule="M-ROLE")
    if len(words) > BUST_OUT_MESSAGE_MAX_WORDS:
        raise InvalidInput(f"A message to the Jailbreaker has at most {BUST_OUT_MESSAGE_MAX_WORDS} words; yours has "
                           f"{len(words)}.", rule="M-ROLE")
    jailbreaker = jailbreaker_of(seat)
    pm = _role_pm(jailbreaker) if jailbreaker is not None else None
    if pm is None:
        raise WrongState("Nobody is there to receive your message.", rule="M-ROLE")
    state["bust_out_message_sent"] = True
    _set_state(seat, state)
    message = _site_message(pm, f"**A message from {seat.name}, whom you busted out:** {' '.join(words)}", now)
    own = _role_pm(seat)
    if own is not None:
        _site_message(own, f"Your message was delivered to the Jailbreaker: {' '.join(words)}", now)
    record_event(game, "m21.bust_out_message_sent", actor=acting_user, at=now,
                 payload={"from": seat.pk, "to": jailbreaker.pk, "words": len(words)})
    return message


def day_actions_for(seat: Resident | None, now: datetime) -> dict[str, object]:
    """What the game page offers ``seat`` among the actions of this module at ``now`` (the services decide again):
    ``gun`` living targets, ``extra`` True, ``confiscate`` {target: items found}, ``post_mortem`` the killed within
    one phase, ``bust_out_message`` True; only the keys that apply. Nothing for a seat of a game not running."""
    if seat is None or getattr(seat, "m21_seat", None) is None or seat.game.status != GameStatus.RUNNING:
        return {}
    game, state, role_key = seat.game, _state(seat), seat.m21_seat.role
    offers: dict[str, object] = {}
    if may_send_bust_out_message(seat):
        offers["bust_out_message"] = True
    if seat.status != LifeStatus.ALIVE and not _has_final_action(seat):
        return offers
    phase = current_phase(game, now)
    day = open_day(game)
    by_day = day is not None and day.ended_at is None and now < day.deadline
    living = list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).exclude(pk=seat.pk)
                  .values_list("name", flat=True))
    partners = ({n for n, key in Resident.objects.filter(game=game, status=LifeStatus.ALIVE, m21_seat__isnull=False)
                 .values_list("name", "m21_seat__role") if ROLES[key].is_mafia} if ROLES[role_key].is_mafia else set())
    living.sort(key=lambda name: target_order(name, partners))
    if by_day and M21Holding.objects.filter(game=game, seat=seat, item="gun", place=HoldingPlace.SEAT,
                                            until__isnull=True).exists():
        offers["gun"] = living
    if by_day and role_key == "reporter" and int(state.get("extra_left", 1)) > 0:
        offers["extra"] = True
    if by_day and role_key == "item_cop" and int(state.get("confiscate_left", 1)) > 0:
        found = {name: keys for name, keys in found_items(seat, day.number).items() if keys}
        if found:
            offers["confiscate"] = found
    if role_key == "coroner" and int(state.get("post_mortem_left", 1)) > 0 and phase is not None:
        dead = sorted(name for name, (at, _role) in killings(game).items() if 0 <= phase - at <= 1)
        if dead:
            offers["post_mortem"] = dead
    return offers
