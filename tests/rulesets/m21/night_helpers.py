"""Builders of M21 night files for the night tests: a standard roster and terse players, votes and actions."""
from __future__ import annotations

import itertools
from datetime import timedelta

import time_machine
from django.test import Client
from django.urls import reverse

from cities.models import GameStatus

from inboxes.models import Inbox, Message
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message
from rulesets.m21 import night_services as ns
from rulesets.m21.night_models import M21Night
from rulesets.m21.night_tool import resolve_night_json

#: name -> role of the standard roster (town first).
ROSTER = {
    "Ann": "cop", "Bob": "watcher", "Cat": "desperado", "Dan": "coroner", "Eve": "reporter", "Fay": "vanilla_cop",
    "Ida": "item_cop", "Inv": "inventor", "Jud": "judge", "Joe": "citizen", "Kim": "citizen",
    "Gus": "godfather", "Hal": "hooker", "Ivy": "goon", "Nin": "ninja", "Jay": "jailbreaker", "Sam": "strongman",
    "Tom": "thief",
}


class Night:
    """One night file being built: ``player(name, **fields)`` overrides a roster seat, ``act`` and ``vote`` add
    submissions in order (seq 1, 2, ...), ``resolve()`` returns the tool's JSON output."""

    def __init__(self, roster: dict[str, str] | None = None, *, night: int = 2, seed: int = 7):
        self.players = {name: {"name": name, "role": role} for name, role in (roster or ROSTER).items()}
        self.night, self.seed = night, seed
        self.votes: list[dict] = []
        self.actions: list[dict] = []
        self.extra: dict = {}
        self._seq = itertools.count(1)

    def player(self, name: str, **fields) -> Night:
        self.players[name].update(fields)
        return self

    def act(self, actor: str, action: str, target: str | None = None, item: str | None = None) -> Night:
        entry = {"actor": actor, "action": action, "seq": next(self._seq)}
        if target is not None:
            entry["target"] = target
        if item is not None:
            entry["item"] = item
        self.actions.append(entry)
        return self

    def use(self, actor: str, item: str, target: str | None = None) -> Night:
        return self.act(actor, "use_item", target, item)

    def vote(self, voter: str, target: str) -> Night:
        self.votes.append({"voter": voter, "target": target, "seq": next(self._seq)})
        return self

    def data(self) -> dict:
        return {"night": self.night, "seed": self.seed, "players": list(self.players.values()),
                "mafia_votes": self.votes, "actions": self.actions, **self.extra}

    def resolve(self) -> dict:
        return resolve_night_json(self.data())


def deaths(out: dict) -> dict[str, str]:
    """{player: cause} of an outcome."""
    return {d["player"]: d["cause"] for d in out["deaths"]}


def results_of(out: dict, player: str) -> list[tuple]:
    """The (kind, target, answer) results addressed to ``player``."""
    return [(r["kind"], r["target"], r["answer"]) for r in out["results"] if r["player"] == player]


def events(out: dict, step_key: str, name: str | None = None) -> list[dict]:
    """Events of the step ``step_key`` (optionally only those called ``name``)."""
    step = next(s for s in out["steps"] if s["key"] == step_key)
    return [e for e in step["events"] if name is None or e["event"] == name]


def visits(out: dict) -> list[tuple[str, str, int]]:
    """Every (visitor, target, step) of the trace that stood (a visit voided by a roleblock is dropped), in order."""
    made = [(e["actor"], e["target"], s["step"]) for s in out["steps"] for e in s["events"] if e["event"] == "visit"]
    for s in out["steps"]:
        for e in s["events"]:
            if e["event"] == "visit_void":
                made.remove((e["actor"], e["target"], e["step"]))
    return made


def to_night(table, victim: str | None = None):
    """Hammer ``victim`` (a citizen by default) on day 1 and run the clock into night 1; returns the night row."""
    victim = victim or table.names_of_roles("citizen")[0]
    voters = [n for n in table.users if n != victim][:4]
    for name in voters:
        table.post(name, f"##VOTE {victim}\n##END")
    table.run_clock(table.now + timedelta(minutes=1))
    night = ns.open_night(table.game)
    assert night is not None
    return night


def role_pm_texts(table, name: str) -> list[str]:
    pm = table.seat(name).m21_seat.role_pm
    return list(Message.objects.filter(inbox=pm).order_by("received_at", "id").values_list("body", flat=True))


def mafia_thread(table) -> Inbox:
    return Inbox.objects.get(game=table.game, kind=M21InboxKind.MAFIA_THREAD)


def mafia_post(table, name: str, text: str) -> Message:
    table.tick(1 / 60)
    return do_post_message(mafia_thread(table), text, acting_user=table.users[name], now=table.now)


def end_night(table, night: M21Night) -> M21Night:
    table.run_clock(night.planned_end)
    night.refresh_from_db()
    return night


def hammer(table, target: str) -> None:
    """A majority of the living (M-VOTE-8) vote ``target`` with ``##END``: the hammer falls (M-VOTE-3)."""
    living = [n for n in table.users if table.seat(n).status == "alive"]
    for name in [n for n in living if n != target][:len(living) // 2 + 1]:
        table.post(name, f"##VOTE {target}\n##END")


def play_to_night_one(table) -> None:
    """Day 1 hammered on the godfather; night 1 with a mafia kill of a citizen and the cop's check of the hooker."""
    hammer(table, table.name_of_role("godfather"))
    table.run_clock(table.now + timedelta(minutes=1))
    hooker, cop = table.name_of_role("hooker"), table.name_of_role("cop")
    table.victim = table.names_of_roles("citizen")[0]
    mafia = Inbox.objects.get(game=table.game, kind=M21InboxKind.MAFIA_THREAD)
    do_post_message(mafia, f"kill {table.victim}", acting_user=table.users[hooker], now=table.tick())
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())


def play_to_the_end(table) -> None:
    """Play to night 1 and end it, then hammer the hooker: the game is over."""
    play_to_night_one(table)
    night = ns.open_night(table.game)
    table.run_clock(night.planned_end)
    hammer(table, table.name_of_role("hooker"))
    table.game.refresh_from_db()
    assert table.game.status == GameStatus.FINISHED


def archive_page(table, user=None) -> str:
    """The archive page of the table's game as ``user`` (None: a visitor) reads it now (a 200)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    with time_machine.travel(table.tick(), tick=False):
        response = client.get(reverse("archive_game", args=[table.game.slug]))
    assert response.status_code == 200
    return response.content.decode()
