"""The hosted M21 night: submissions, the mafia's kill vote and stash, the resolution at the planned end of the
night and the morning (RULES.md M-NIGHT-1..7, M-MAFIA-1, M-MAFIA-2, M-ROLE, M-ITEM-1, M-WIN-1).

Every state change is a ``do_<verb>_<noun>(..., *, acting_user, now=None)`` in one transaction with a ``GameEvent``.
The night's row (``M21Night``) is made on first need from the clock's ``m21_night_end`` event: its planned end is
the event's due time, and its seed is drawn once and recorded. ``resolve_m21_night_of`` is registered in
``rulesets.m21.night_frame.NIGHT_RESOLVERS``: at the planned end it reads every submission made up to the planned end
(however late it runs), builds the pure night's state and actions from the rows keyed by seats (``night_input``),
resolves them with the pure steps of ``rulesets.m21.night`` and applies the outcome seat by seat: deaths through
the shared death service (``inboxes.membership_services.do_kill_residents``), uses spent, items moved, private results in each
role inbox (the dead's too, M-NIGHT-4) and the morning post. The night is recorded as a night file
(``M21Night.input``: ``manage.py resolve_night m21`` gives the same outcome from it) and its outcome by name; ``rulesets.m21.night_frame.do_end_m21_night`` then checks victory (M-WIN-1) and starts the next day.

What must never leak: a submission and its confirmation are posted only in the actor's role inbox; the kill-vote
tally only in the mafia thread; results only in their addressee's role inbox; the morning post names deaths, the
dead's roles and insanity and the reporter's headlines, never an actor.
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from cities.models import Game, GameStatus, LifeStatus, PostKind, PublicPost, Resident, ScheduledEvent
from cities.services import record_event
from inboxes.models import DeathCause, Inbox, Message
from rulesets.m21.kinds import M21InboxKind
from inboxes.rendering import render_markdown
from inboxes.membership_services import do_kill_residents
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of
from roles.draw import system_rng
from voting.parsing import resolve_forum_name

from . import items as item_data
from .models import M21Seat
from .night import resolve_m21_night
from .night_context import M21NightState
from .night_data import M21Action, M21Result, MafiaVote, Seat
from .night_file import night_file_data
from .night_kills import kill_tally
from .night_models import HoldingPlace, M21Holding, M21Night, M21NightAction, M21StashAssignment
from .night_pages import (
    MorningPost,
    NightOption,
    check_choice,
    night_options,
    parse_kill_lines,
    result_text,
    tally_text,
)
from .roles import MAFIA, ROLES, fresh_state

WITHDRAW = "withdraw"
NIGHT_END_KIND = "m21_night_end"


# ----------------------------------------------------------------------------------------------------------------
# Reading the night
# ----------------------------------------------------------------------------------------------------------------


def open_night(game: Game, *, lock: bool = False) -> M21Night | None:
    """The night now running (its ``m21_night_end`` event not yet done), made on first need; None by day."""
    event = (ScheduledEvent.objects.filter(game=game, kind=NIGHT_END_KIND, done_at__isnull=True,
                                           cancelled_at__isnull=True).order_by("due_at").first())
    if event is None:
        return None
    return night_row(game, int(event.payload["night"]), lock=lock)


def night_row(game: Game, number: int, *, lock: bool = False, rng: random.Random | None = None) -> M21Night | None:
    """The ``M21Night`` of night ``number``, made from its clock event when missing (planned end = the event's due
    time; a seed drawn and recorded). None when the night was never scheduled."""
    qs = M21Night.objects.filter(game=game, number=number)
    night = (qs.select_for_update() if lock else qs).first()
    if night is not None:
        return night
    event = (ScheduledEvent.objects.filter(game=game, kind=NIGHT_END_KIND, payload__night=number)
             .order_by("-created_at").first())
    if event is None:
        return None
    seed = (rng or system_rng()).getrandbits(62)
    night, _ = M21Night.objects.get_or_create(game=game, number=number, defaults={
        "starts_at": event.created_at, "planned_end": event.due_at, "seed": seed})
    return night


def _seat_of(user, game: Game) -> Resident | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Resident.objects.filter(game=game, user=user).select_related("m21_seat").first()


def _holdings(game: Game) -> dict[int, list[str]]:
    held: dict[int, list[str]] = {}
    for h in M21Holding.objects.filter(game=game, until__isnull=True, place=HoldingPlace.SEAT).order_by("since", "id"):
        held.setdefault(h.seat_id, []).append(h.item)
    return held


def confiscated_items(game: Game) -> list[str]:
    """The items in the evidence safe (the item cop's confiscations still there)."""
    return list(M21Holding.objects.filter(game=game, until__isnull=True, place=HoldingPlace.SAFE)
                .values_list("item", flat=True))


def stash_items(game: Game) -> list[str]:
    """The stash items not yet brought into play (M-MAFIA-2): each of gun, binoculars, whiskey, once."""
    out = set(M21Holding.objects.filter(game=game, source="stash").values_list("item", flat=True))
    return [k for k in item_data.STASH_ITEMS if k not in out]


def seat_key(resident_id: int) -> str:
    """The key of the seat of resident ``resident_id`` in the pure night (``Seat.key``): its id as a string."""
    return str(resident_id)


def seats_of(game: Game) -> list[Seat]:
    """The game's seats as the pure night sees them (``rulesets.m21.night.Seat``), in seat order, keyed by
    ``seat_key``."""
    held = _holdings(game)
    seats = []
    for r in Resident.objects.filter(game=game).select_related("m21_seat").order_by("id"):
        m21 = getattr(r, "m21_seat", None)
        if m21 is None:
            continue
        stored = dict(m21.state or {})
        busted = bool(stored.get("busted_out", False)) and not stored.get("busted_out_acted", False)
        state = {k: stored[k] for k in fresh_state(m21.role) if k in stored}
        seats.append(Seat(name=r.name, role=m21.role, alive=r.status != LifeStatus.DEAD,
                          imprisoned=r.status == LifeStatus.IMPRISONED and not busted, busted_out=busted,
                          sane=m21.sane, items=tuple(held.get(r.pk, ())), state=state, key=seat_key(r.pk)))
    return seats


def options_for(seat: Resident, night: M21Night | None) -> list[NightOption]:
    """The night actions ``seat`` may submit now (``night_pages.night_options``); none by day."""
    if night is None or night.resolved_at is not None:
        return []
    return night_options(seats_of(seat.game), seat.name, confiscated=confiscated_items(seat.game))


def current_choices(night: M21Night, seat: Resident) -> dict[str, M21NightAction]:
    """The seat's standing submissions of ``night``: {option key: the last row}, withdrawn ones left out."""
    last: dict[str, M21NightAction] = {}
    for row in M21NightAction.objects.filter(night=night, seat=seat).select_related("target").order_by(
            "submitted_at", "id"):
        group = f"use_item:{row.item}" if row.item and row.action in ("use_item", WITHDRAW) else "role"
        last[group] = row
    return {g: r for g, r in last.items() if r.action != WITHDRAW}


def standing_text(seat: Resident, row: M21NightAction) -> str:
    """A standing submission in words for its player's night page: the action's label, its item, its target
    ("Roleblock → Carol", "Use the gun → Dave", "Deliver a gadget: Hand grenade → Bob")."""
    catalogue = item_data.item_catalogue()
    if row.action == "use_item":
        words = f"Use the {catalogue[row.item].name.lower()}" if row.item in catalogue else "Use an item"
    else:
        spec = ROLES[seat.m21_seat.role].action(row.action)
        words = (spec.label if spec is not None and spec.label else row.action.replace("_", " ").capitalize())
        if row.item in catalogue:
            words += f": {catalogue[row.item].name}"
    return words + (f" → {row.target.name}" if row.target_id is not None else "")


# ----------------------------------------------------------------------------------------------------------------
# Submitting
# ----------------------------------------------------------------------------------------------------------------


def _check_night_open(game: Game, now: datetime) -> M21Night:
    if game.status != GameStatus.RUNNING:
        raise WrongState("The game is not running.", rule="M-NIGHT-1")
    night = open_night(game, lock=True)
    if night is None:
        raise WrongState("It is not night: night actions are submitted at night.", rule="M-NIGHT-1")
    if now >= night.planned_end:
        raise WrongState("The night is over: submissions closed at its planned end.", rule="M-NIGHT-1")
    return night


def _check_player(game: Game, acting_user) -> Resident:
    seat = _seat_of(acting_user, game)
    if seat is None or getattr(seat, "m21_seat", None) is None:
        raise NotAllowed("Only players of this game submit night actions.", rule="M-NIGHT-1")
    return seat


def _role_pm(seat: Resident) -> Inbox | None:
    return getattr(seat.m21_seat, "role_pm", None)


def _site_message(inbox: Inbox, text: str, now: datetime) -> Message:
    message = Message.objects.create(inbox=inbox, author_name="Mafia Host", body=text,
                                     body_html=render_markdown(text), received_at=now)
    record_event(inbox.game, "message.site_posted", actor=None, at=now,
                 payload={"inbox": inbox.pk, "message": message.pk})
    return message


def _describe(option: NightOption, target: str | None, item: str | None) -> str:
    words = option.label
    if item and option.items:
        words += f": {item_data.item_catalogue()[item].name}"
    if target:
        words += f" on {target}"
    return words


@transaction.atomic
def do_submit_night_action(game: Game, *, option: str, target: str | None = None, item: str | None = None,
                           acting_user, now: datetime | None = None) -> M21NightAction:
    """Submit (or change) a night action of the acting player's seat (M-NIGHT-1): ``option`` an option key of
    ``options_for`` (``investigate``, ``use_item:gun``...), ``target`` a player's name, ``item`` for a delivery or a
    safecrack. The last submission of the role action (and of each item use) counts; submissions close at the
    night's planned end. Confirmed in the seat's role inbox. Raises ``NotAllowed`` (not a player), ``WrongState``
    (not night, night over), ``InvalidInput`` (an action or target not open to the seat)."""
    now = now or timezone.now()
    seat = _check_player(game, acting_user)
    night = _check_night_open(game, now)
    options = options_for(seat, night)
    try:
        chosen = check_choice(options, option, target or None, item or None,
                              seats={s.name: s for s in seats_of(game)} if target else None)
    except ValueError as error:
        raise InvalidInput(str(error), rule="M-NIGHT-1") from None
    target_seat = Resident.objects.get(game=game, name=target) if target else None
    row = M21NightAction.objects.create(night=night, seat=seat, action=chosen.action,
                                        item=chosen.item or item or "", target=target_seat, submitted_at=now)
    record_event(game, "m21.night_action", actor=acting_user, at=now,
                 payload={"night": night.number, "seat": seat.pk, "action": row.action, "item": row.item,
                          "target": target_seat.pk if target_seat else None})
    pm = _role_pm(seat)
    if pm is not None:
        _site_message(pm, f"Night {night.number}: your action is **{_describe(chosen, target, item)}**. You can "
                          f"change it until the night ends.", now)
    return row


@transaction.atomic
def do_withdraw_night_action(game: Game, *, option: str, acting_user, now: datetime | None = None) -> M21NightAction:
    """Take back the standing submission ``option`` (``role`` for the role action, or ``use_item:<item>``) before
    the night ends (M-NIGHT-1). Raises ``WrongState`` when nothing stands or the night is over."""
    now = now or timezone.now()
    seat = _check_player(game, acting_user)
    night = _check_night_open(game, now)
    standing = current_choices(night, seat)
    if option not in standing:
        raise WrongState("You have no such action standing tonight.", rule="M-NIGHT-1")
    row = M21NightAction.objects.create(night=night, seat=seat, action=WITHDRAW, item=standing[option].item
                                        if option != "role" else "", submitted_at=now)
    record_event(game, "m21.night_action_withdrawn", actor=acting_user, at=now,
                 payload={"night": night.number, "seat": seat.pk, "option": option})
    pm = _role_pm(seat)
    if pm is not None:
        _site_message(pm, f"Night {night.number}: you withdrew your action.", now)
    return row


def _living_mafia(game: Game) -> list[Resident]:
    return list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE, m21_seat__isnull=False)
                .select_related("m21_seat").filter(m21_seat__role__in=[k for k, r in ROLES.items() if r.is_mafia]))


def stash_assignment(night: M21Night | None) -> M21StashAssignment | None:
    """Tonight's stash assignment (M-MAFIA-2), with its holder and who assigned it, or None."""
    if night is None:
        return None
    return M21StashAssignment.objects.filter(night=night).select_related("holder", "assigned_by").first()


def stash_assignment_text(row: M21StashAssignment) -> str:
    """An assignment in words: "the Gun to Hal"."""
    return f"the {item_data.STASH_ITEMS[row.item].name} to {row.holder.name}"


@transaction.atomic
def do_assign_stash_item(game: Game, *, item: str, holder: str, acting_user,
                         now: datetime | None = None) -> M21StashAssignment:
    """Assign tonight's one stash item to a living mafioso (M-MAFIA-2): collected at the end of the night; a later
    assignment the same night replaces it, and says so. Announced in the mafia thread. Returns the new row, whose
    ``replaced`` attribute is the words of the assignment it replaced ("the Gun to Hal") or "". Raises
    ``NotAllowed`` (not a living mafioso), ``WrongState`` (not night), ``InvalidInput`` (no such item in the
    stash, holder not a living mafioso)."""
    now = now or timezone.now()
    seat = _check_player(game, acting_user)
    mafia = _living_mafia(game)
    if seat not in mafia:
        raise NotAllowed("Only the living mafia assign the stash's items.", rule="M-MAFIA-2")
    night = _check_night_open(game, now)
    if item not in stash_items(game):
        raise InvalidInput("That item is not in the stash.", rule="M-MAFIA-2")
    to = next((m for m in mafia if m.name == holder), None)
    if to is None:
        raise InvalidInput("Stash items go to a living member of the mafia.", rule="M-MAFIA-2")
    previous = stash_assignment(night)
    replaced = stash_assignment_text(previous) if previous is not None else ""
    M21StashAssignment.objects.filter(night=night).delete()
    row = M21StashAssignment.objects.create(night=night, item=item, holder=to, assigned_by=seat, assigned_at=now)
    record_event(game, "m21.stash_assigned", actor=acting_user, at=now,
                 payload={"night": night.number, "item": item, "holder": to.pk,
                          "replaced": {"item": previous.item, "holder": previous.holder_id} if previous else None})
    thread = Inbox.objects.filter(game=game, kind=M21InboxKind.MAFIA_THREAD).first()
    if thread is not None:
        name = item_data.STASH_ITEMS[item].name
        instead = f" It replaces {replaced}." if replaced else ""
        _site_message(thread, f"{seat.name} assigns tonight's stash item: **{name}** to {to.name} (collected at "
                              f"the end of the night).{instead}", now)
    row.replaced = replaced
    return row


# ----------------------------------------------------------------------------------------------------------------
# The mafia thread's kill vote (M-MAFIA-1)
# ----------------------------------------------------------------------------------------------------------------


def _kill_targets(game: Game) -> dict[str, list[str]]:
    return {seat_key(r.pk): [r.name] for r in Resident.objects.filter(game=game, status=LifeStatus.ALIVE,
                                                               m21_seat__isnull=False).select_related("m21_seat")
            if not ROLES[r.m21_seat.role].is_mafia}


def kill_votes(night: M21Night, *, until: datetime | None = None) -> list[MafiaVote]:
    """The ``kill name`` lines of the mafia thread posted during ``night`` up to ``until`` (default: the planned
    end), resolved to seat keys (M-MAFIA-1: a name matching no single town player is no vote), in order."""
    thread = Inbox.objects.filter(game=night.game, kind=M21InboxKind.MAFIA_THREAD).first()
    if thread is None:
        return []
    until = min(until or night.planned_end, night.planned_end)
    names = _kill_targets(night.game)
    votes = []
    messages = (Message.objects.filter(inbox=thread, author_resident__isnull=False, received_at__gte=night.starts_at,
                                       received_at__lt=until).select_related("author_resident")
                .order_by("received_at", "id"))
    for message in messages:
        for written in parse_kill_lines(message.body):
            resolution = resolve_forum_name(written, names)
            if resolution.resolved:
                votes.append(MafiaVote(seat_key(message.author_resident_id), resolution.seat, len(votes) + 1))
    return votes


def record_mafia_thread_post(inbox: Inbox, seat: Resident | None, message: Message, now: datetime) -> None:
    """The mafia thread's post hook (M-MAFIA-1): a post with ``kill name`` lines by a living mafioso at night gets
    a reply with what each line did and the live tally."""
    if seat is None or seat.status != LifeStatus.ALIVE:
        return
    lines = parse_kill_lines(message.body)
    if not lines:
        return
    night = open_night(inbox.game)
    if night is None or now >= night.planned_end:
        _site_message(inbox, f"{seat.name}: kill votes count only at night.", now)
        return
    names = _kill_targets(inbox.game)
    said = []
    for written in lines:
        resolution = resolve_forum_name(written, names)
        if resolution.resolved:
            said.append(f"{seat.name} votes to kill {names[resolution.seat][0]}.")
        elif resolution.ambiguous:
            candidates = ", ".join(names[c][0] for c in resolution.candidates)
            said.append(f"\"kill {written}\" is ambiguous: {candidates}. Not counted.")
        else:
            said.append(f"\"kill {written}\" matches no living town player. Not counted.")
    said.append(live_tally_text(night, until=now + timedelta(microseconds=1)))
    _site_message(inbox, "\n\n".join(said), now)


def live_tally_text(night: M21Night, *, until: datetime | None = None) -> str:
    """The mafia's kill vote of ``night`` up to ``until`` as the mafia thread and the night page show it
    (M-MAFIA-1), with the players' names."""
    seats = {s.key: s for s in seats_of(night.game)}
    tally = kill_tally(seats, kill_votes(night, until=until))
    living = sum(1 for s in seats.values() if s.living and s.alignment == MAFIA)
    counts = {seats[k].name: n for k, n in tally.counts.items()}
    return tally_text(counts, seats[tally.target].name if tally.target else None,
                      [seats[k].name for k in tally.carriers], tally.tie_broken_by, living_mafia=living)


# ----------------------------------------------------------------------------------------------------------------
# Resolution and the morning
# ----------------------------------------------------------------------------------------------------------------


def night_input(night: M21Night) -> tuple[M21NightState, list[M21Action]]:
    """The pure night's input of ``night`` from the rows, keyed by seats (``seat_key``), counting what was
    submitted before the planned end only: the seats at the end of the night, the mafia's kill votes, each seat's
    standing submissions (the last of the role action and of each item use, withdrawn ones left out; M-NIGHT-1),
    the evidence safe and the stash assignment (M-MAFIA-2). Votes and actions are numbered in submission order."""
    game = night.game
    seats = tuple(seats_of(game))
    votes = tuple(kill_votes(night))
    seq = len(votes)
    standing: dict[tuple[int, str], M21NightAction] = {}
    for row in (M21NightAction.objects.filter(night=night, submitted_at__lt=night.planned_end)
                .order_by("submitted_at", "id")):
        group = f"use_item:{row.item}" if row.item and row.action in ("use_item", WITHDRAW) else "role"
        standing[(row.seat_id, group)] = row
    actions = []
    for row in sorted(standing.values(), key=lambda r: (r.submitted_at, r.pk)):
        if row.action == WITHDRAW:
            continue
        seq += 1
        actions.append(M21Action(actor=seat_key(row.seat_id), action=row.action,
                                 target=seat_key(row.target_id) if row.target_id is not None else None,
                                 item=row.item or None, seq=seq))
    assignment = M21StashAssignment.objects.filter(night=night, assigned_at__lt=night.planned_end).first()
    state = M21NightState(night=night.number, seed=night.seed, seats=seats, votes=votes,
                          confiscated=tuple(confiscated_items(game)),
                          stash_assignment=(assignment.item, seat_key(assignment.holder_id)) if assignment else None)
    return state, actions


def resolve_m21_night_of(game: Game, number: int, now: datetime) -> None:
    """NIGHT_RESOLVERS entry: resolve night ``number`` at its planned end and apply the outcome seat by seat (see
    the module docstring). Runs in the clock's transaction; a night already resolved is left alone."""
    night = night_row(game, number, lock=True)
    if night is None or night.resolved_at is not None:
        return
    state, actions = night_input(night)
    outcome = resolve_m21_night(state, actions)
    names = {s.key: s.name for s in state.seats}
    out = outcome.as_json(names=names)
    at = night.planned_end
    by_key = {seat_key(r.pk): r for r in Resident.objects.filter(game=game).select_related("m21_seat")}
    _apply_items(game, outcome.steps, by_key, at)
    immune = {r.player for r in outcome.results if r.kind == "immunity"}
    for key, st in outcome.state.items():
        seat = by_key[key].m21_seat
        stored = dict(seat.state or {})
        new_state = stored | dict(st)
        if key in outcome.busted_out:
            new_state["busted_out"] = True
        elif stored.get("busted_out") and not stored.get("busted_out_acted"):
            # M-NIGHT-7: the night after the bust out is the seat's one night in play, acted or not; then the
            # seat is back in the penitentiary for good.
            new_state["busted_out_acted"] = True
        if key in immune:
            new_state["immune_day"] = number + 1  # M-ROLE desperado: immune to gunshots the following day
        if new_state != seat.state:
            M21Seat.objects.filter(pk=seat.pk).update(state=new_state)
    do_kill_residents([(by_key[d.player], False) for d in outcome.deaths], DeathCause.KILLED, acting_user=None,
                      now=at)
    for result, named in zip(outcome.results, out["results"], strict=True):
        pm = getattr(by_key[result.player].m21_seat, "role_pm", None)
        if pm is not None:
            _site_message(pm, f"**Night {number}.** {result_text(M21Result(**named))}", now)
    seats = {s.key: s for s in state.seats}
    text = ruleset_of(game).daily_post_text(game, number + 1,
                                            MorningPost(number, outcome.deaths, seats, outcome.headlines))
    post = PublicPost.objects.create(game=game, kind=PostKind.DAILY, title=f"Morning after night {number}",
                                     body=text, body_html=render_markdown(text), created_at=now, publish_at=at,
                                     published_at=now)
    thread = Inbox.objects.filter(game=game, kind=M21InboxKind.GAME_THREAD).first()
    if thread is not None:
        _site_message(thread, text, now)
    M21Night.objects.filter(pk=night.pk).update(input=night_file_data(state, actions), outcome=out, resolved_at=now,
                                                morning_post=post)
    record_event(game, "m21.night_resolved", actor=None, at=now,
                 payload={"night": number, "seed": night.seed, "deaths": [names[d.player] for d in outcome.deaths],
                          "winner": outcome.winner})


def _apply_items(game: Game, steps, by_key: dict[str, Resident], at: datetime) -> None:
    for step in steps:
        for e in step["events"]:
            if e["event"] == "safe" and e["change"] == "stolen":
                row = M21Holding.objects.filter(game=game, place=HoldingPlace.SAFE, item=e["item"],
                                                until__isnull=True).first()
                if row is not None:
                    M21Holding.objects.filter(pk=row.pk).update(until=at)
            if e["event"] != "item":
                continue
            seat = by_key[e["holder"]]
            if e["change"] == "gained" and e["reason"] == "roleblocked":
                # The use of this night's step 1 is void: the same holding goes on.
                row = M21Holding.objects.filter(game=game, place=HoldingPlace.SEAT, seat=seat, item=e["item"],
                                                until=at).order_by("-id").first()
                if row is not None:
                    M21Holding.objects.filter(pk=row.pk).update(until=None)
                    continue
            if e["change"] == "lost":
                row = M21Holding.objects.filter(game=game, place=HoldingPlace.SEAT, seat=seat, item=e["item"],
                                                until__isnull=True).first()
                if row is not None:
                    M21Holding.objects.filter(pk=row.pk).update(until=at)
            else:
                M21Holding.objects.create(game=game, item=e["item"], place=HoldingPlace.SEAT, seat=seat,
                                          source=e["reason"], since=at)
