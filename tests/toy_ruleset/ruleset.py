"""The toy ruleset: one town of players in no city (``has_cities`` stays False); roles citizen, witness (a vanilla
townie) and mafioso; by day the living post ``vote NAME`` in the game thread and at the day's end the most votes
(no tie) are executed; by night the mafia post ``kill NAME`` in their thread and at the night's end the last such
line kills. The town wins when no mafioso
lives, the mafia when they are at least as many as the town. Everything goes through the shared engine: the
registry, inboxes and their policy, post hooks, the scheduler, the night pipeline, the death service, the archive.

``register(monkeypatch)`` registers the spec, its hooks and its handlers for one test (the registries are
restored afterwards)."""
from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from types import MappingProxyType

from django.db import models, transaction
from django.utils.html import format_html_join

from cities.models import (
    HOST_STAFF_KIND,
    Alignment,
    Game,
    GameEvent,
    GameStatus,
    LifeStatus,
    Resident,
    ScheduledEvent,
    Signup,
)
from cities.services import do_set_game_status
from inboxes import hooks, policies
from inboxes.membership_services import do_kill_residents
from inboxes.models import DeathCause, Inbox, Message
from inboxes.policies import StaffGrant
from inboxes.services import do_post_site_message, new_inbox
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.events import Audience
from kernel.ruleset_parts import ArchiveSection
from kernel.rulesets import RulesetSpec, register_ruleset
from roles.night import Death, NightAction, NightContext, NightState, NightStep, ResidentState, resolve_night

KEY = "toy"
#: The toy's own staff kind (``ToyRuleset.staff_kinds``).
REFEREE = "referee"
DAY = timedelta(hours=24)
NIGHT = timedelta(hours=12)
VOTE = re.compile(r"^vote\s+(?P<name>\S.*)$", re.IGNORECASE | re.MULTILINE)
KILL = re.compile(r"^kill\s+(?P<name>\S.*)$", re.IGNORECASE | re.MULTILINE)


class ToyInboxKind(models.TextChoices):
    """The toy's own inbox kinds, registered on its spec (``inbox_kind_choices``): no shared file names them."""

    SQUARE = "toy_square", "Town square"
    DEN = "toy_den", "Mafia den"


class ToyKill(NightStep):
    """The mafia's kill: the last ``kill`` line of the night names a living player, who dies."""

    key = "toy_kill"

    def apply(self, ctx: NightContext) -> None:
        action = ctx.last_action("kill", 1)
        victim = ctx.state.resident(action.target) if action is not None else None
        if victim is not None and victim.alive:
            ctx.deaths.append(Death(resident=victim.id, city=victim.city))


class ToyRuleset(RulesetSpec):
    """The toy: English, UTC, a host who reads every thread, a referee who reads the game thread, players in a game
    thread, the mafia in their thread; no secret inbox, no Lepra or M21 page."""

    key = KEY
    name = "Toy"
    language = "en"
    #: The host and a staff kind of the toy's own: a referee, who reads the game thread and does nothing else.
    staff_kinds = MappingProxyType({HOST_STAFF_KIND: "Host", REFEREE: "Referee"})
    inbox_kind_choices = tuple(ToyInboxKind.choices)
    standing_inbox_kinds = (ToyInboxKind.SQUARE, ToyInboxKind.DEN)
    inbox_kinds = frozenset(standing_inbox_kinds)
    post_hook_kinds = (ToyInboxKind.SQUARE, ToyInboxKind.DEN)
    scheduler_kinds = ("toy_day_end", "toy_night_end")
    policy_grants = MappingProxyType({"staff": {
        HOST_STAFF_KIND: (StaffGrant(ToyInboxKind.SQUARE, post=True), StaffGrant(ToyInboxKind.DEN, post=True)),
        REFEREE: (StaffGrant(ToyInboxKind.SQUARE, post=False),)}})
    night_steps = (ToyKill(),)
    texts = MappingProxyType({"procurator_title": "Host", "won_town": "The town won.",
                              "won_mafia": "The mafia won.", "no_winner": "Nobody won.",
                              "dead_may_not_post": "The dead are silent.",
                              "imprisoned_may_not_post": "The imprisoned are silent.",
                              "archive_log_in_to_open": "Log in to read more."})
    daily_post_sections = ("deaths",)
    #: The audit log words the toy's own event kinds, and its host browses them.
    audit_sentences = MappingProxyType({"toy.dealt": "%(actor)s dealt the roles to %(count)s players."})
    event_families = (("toy.", Audience.PROCURATOR),)
    #: The toy's rules have no IDs: its refusals cite none.
    rule_ids = MappingProxyType({})
    archive_sections = ("cast",)

    def check_victory(self, game) -> str | None:
        living = list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).values_list("alignment", flat=True))
        mafia = living.count(Alignment.MAFIA)
        if mafia == 0:
            return "town"
        if mafia >= len(living) - mafia:
            return "mafia"
        return None

    def daily_post_section(self, game, day: int, key: str, context) -> str:
        names = ", ".join(context) or "nobody"
        return f"Night {day - 1}: {names} died."

    def archive_section(self, game, key: str, *, viewer) -> ArchiveSection | None:
        if game.status != GameStatus.FINISHED:
            return None
        roles = roles_of(game)
        rows = format_html_join("", "<li data-player=\"{}\">{}: {}</li>",
                                ((r.name, r.name, roles[str(r.pk)]) for r in
                                 Resident.objects.filter(game=game).order_by("name")))
        return ArchiveSection(key="cast", title="Cast", html=f"<ul class=\"toy-cast\">{rows}</ul>")


class VoteHook(hooks.PostHook):
    """``vote NAME`` in the game thread by day: checked against the living; the tally is read from the posts."""

    def check(self, inbox, seat, text, now):
        match = VOTE.search(text)
        if seat is None or match is None:
            return None
        if inbox.game.day_number < 1 or _phase(inbox.game) != "day":
            raise WrongState("Votes are taken by day.")
        return _living_named(inbox.game, match["name"]).pk


class KillHook(hooks.PostHook):
    """``kill NAME`` in the mafia thread by night: the night's action (the last one counts)."""

    def check(self, inbox, seat, text, now):
        match = KILL.search(text)
        if seat is None or match is None:
            return None
        if _phase(inbox.game) != "night":
            raise WrongState("The mafia kill by night.")
        target = _living_named(inbox.game, match["name"])
        if target.alignment == Alignment.MAFIA:
            raise InvalidInput("The mafia do not kill their own.")
        return target.pk


def _living_named(game: Game, name: str) -> Resident:
    found = Resident.objects.filter(game=game, status=LifeStatus.ALIVE, name__iexact=name.strip()).first()
    if found is None:
        raise InvalidInput(f"No living player is named {name.strip()}.")
    return found


def _phase(game: Game) -> str:
    pending = ScheduledEvent.objects.filter(game=game, done_at__isnull=True, kind__in=ToyRuleset.scheduler_kinds)
    kind = pending.order_by("due_at").values_list("kind", flat=True).first()
    return {"toy_day_end": "day", "toy_night_end": "night"}.get(kind, "over")


def roles_of(game: Game) -> dict[str, str]:
    """{resident id as str: role} as the deal recorded it."""
    return GameEvent.objects.get(game=game, kind="toy.dealt").payload["roles"]


def thread(game: Game, kind: str = ToyInboxKind.SQUARE) -> Inbox:
    return Inbox.objects.get(game=game, kind=kind)


@transaction.atomic
def do_deal_toy_game(game: Game, *, acting_user, rng: random.Random, now: datetime) -> list[Resident]:
    """Seat every signed-up player, deal the roles (one mafioso per four players, one witness, citizens), open the
    game thread and the mafia thread and start day 1, which ends 24 h later. The host only."""
    if not policies.holds_role(acting_user, game, HOST_STAFF_KIND):
        raise NotAllowed("Only the host deals.")
    users = [s.user for s in Signup.objects.filter(game=game, withdrawn_at__isnull=True).select_related("user")
             .order_by("signed_up_at", "id")]
    if len(users) < 4:
        raise InvalidInput("The toy needs four players.")
    mafia_count = max(1, len(users) // 4)
    roles = ["mafioso"] * mafia_count + ["witness"] + ["citizen"] * (len(users) - mafia_count - 1)
    rng.shuffle(roles)
    residents = [Resident.objects.create(game=game, city=None, user=user, name=user.display_name or user.username,
                                         alignment=Alignment.MAFIA if role == "mafioso" else Alignment.HONEST)
                 for user, role in zip(users, roles, strict=True)]
    record_event(game, "toy.dealt", actor=acting_user, at=now,
                 payload={"roles": {str(r.pk): role for r, role in zip(residents, roles, strict=True)},
                          "count": len(residents)})
    new_inbox(game, ToyInboxKind.SQUARE, title="Town square", actor=acting_user, now=now, members=residents)
    new_inbox(game, ToyInboxKind.DEN, title="Mafia den", actor=acting_user, now=now,
              members=[r for r in residents if r.alignment == Alignment.MAFIA])
    do_set_game_status(game, GameStatus.RUNNING, acting_user=acting_user, day_number=1, now=now)
    ScheduledEvent.objects.create(game=game, kind="toy_day_end", due_at=now + DAY, payload={"day": 1},
                                  created_at=now)
    return residents


def _finish_if_won(game: Game, now: datetime) -> str | None:
    winner = ToyRuleset().check_victory(game)
    if winner is not None:
        game.status, game.ended_at = GameStatus.FINISHED, now
        game.save(update_fields=["status", "ended_at"])
        record_event(game, "game.finished", actor=None, at=now, payload={"winner": winner})
        do_post_site_message(thread(game), f"The game is over: {winner} wins.", acting_user=None, now=now)
    return winner


def day_end(event: ScheduledEvent, now: datetime) -> str:
    """The day's vote: each living voter's last ``vote`` line of the day counts; the most votes (no tie) die."""
    game = event.game
    living = {r.pk: r for r in Resident.objects.filter(game=game, status=LifeStatus.ALIVE)}
    started = event.due_at - DAY
    votes: dict[int, int] = {}
    for message in (Message.objects.filter(inbox=thread(game), author_resident__in=list(living),
                                           received_at__gte=started, received_at__lt=event.due_at)
                    .order_by("received_at", "id")):
        match = VOTE.search(message.body)
        target = next((r for r in living.values() if match and r.name.lower() == match["name"].strip().lower()), None)
        if target is not None:
            votes[message.author_resident_id] = target.pk
    counts: dict[int, int] = {}
    for target in votes.values():
        counts[target] = counts.get(target, 0) + 1
    top = max(counts.values(), default=0)
    leaders = [pk for pk, n in counts.items() if n == top]
    if len(leaders) == 1:
        do_kill_residents([(living[leaders[0]], False)], DeathCause.EXECUTED, acting_user=None, now=event.due_at)
        text = f"Day {event.payload['day']}: {living[leaders[0]].name} is executed with {top} votes."
    else:
        text = f"Day {event.payload['day']}: no execution."
    do_post_site_message(thread(game), text, acting_user=None, now=event.due_at)
    if _finish_if_won(game, event.due_at) is None:
        ScheduledEvent.objects.create(game=game, kind="toy_night_end", due_at=event.due_at + NIGHT,
                                      payload={"night": event.payload["day"]}, created_at=now)
    return text


def night_end(event: ScheduledEvent, now: datetime) -> str:
    """The night: the mafia's last ``kill`` line through the shared pipeline, the deaths through the death
    service, the morning post in the game thread, then the next day."""
    game = event.game
    night = event.payload["night"]
    residents = list(Resident.objects.filter(game=game))
    state = NightState(night=night, city_order=(1,), residents=tuple(
        ResidentState(id=r.pk, city=1, alignment=r.alignment, alive=r.status == LifeStatus.ALIVE) for r in residents))
    actions = []
    for seq, message in enumerate(Message.objects.filter(
            inbox=thread(game, ToyInboxKind.DEN), received_at__gte=event.due_at - NIGHT,
            received_at__lt=event.due_at, author_resident__isnull=False).order_by("received_at", "id")):
        match = KILL.search(message.body)
        target = next((r for r in residents if match and r.name.lower() == match["name"].strip().lower()), None)
        if target is not None:
            actions.append(NightAction(kind="kill", city=1, target=target.pk, seq=seq))
    outcome = resolve_night(state, actions, ToyRuleset.night_steps)
    by_id = {r.pk: r for r in residents}
    dead = do_kill_residents([(by_id[d.resident], False) for d in outcome.deaths], DeathCause.KILLED,
                             acting_user=None, now=event.due_at)
    spec = ToyRuleset()
    text = spec.daily_post_text(game, night + 1, [r.name for r in dead])
    do_post_site_message(thread(game), text, acting_user=None, now=event.due_at)
    if _finish_if_won(game, event.due_at) is None:
        Game.objects.filter(pk=game.pk).update(day_number=night + 1)
        ScheduledEvent.objects.create(game=game, kind="toy_day_end", due_at=event.due_at + DAY,
                                      payload={"day": night + 1}, created_at=now)
    return text


def register(monkeypatch) -> ToyRuleset:
    """Register the toy for one test: its spec, post hooks and clock handlers, the registries restored after."""
    import cities.scheduler
    import kernel.rulesets

    monkeypatch.setattr(kernel.rulesets, "_REGISTRY", dict(kernel.rulesets._REGISTRY))
    monkeypatch.setattr(hooks, "POST_HOOKS", dict(hooks.POST_HOOKS))
    monkeypatch.setattr(cities.scheduler, "HANDLERS", dict(cities.scheduler.HANDLERS))
    spec = register_ruleset(ToyRuleset())
    hooks.register_post_hook(ToyInboxKind.SQUARE, VoteHook(), ruleset=KEY)
    hooks.register_post_hook(ToyInboxKind.DEN, KillHook(), ruleset=KEY)
    cities.scheduler.handler("toy_day_end")(day_end)
    cities.scheduler.handler("toy_night_end")(night_end)
    return spec
