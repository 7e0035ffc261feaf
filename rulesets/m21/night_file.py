"""The night file of ``manage.py resolve_night m21 FILE.json``: one M21 night as JSON, read into the pure night's
input (``rulesets.m21.night``) and checked field by field (RULES.md M-NIGHT-1, M-MAFIA-1, M-MAFIA-2, M-ITEM-1).

Shape (``rulesets/m21/examples/README.md`` has worked examples)::

    {"night": 2, "seed": 7,
     "players": [{"name": "Ann", "role": "cop", "alive": true, "sane": true, "items": ["armour"],
                  "state": {"shots_left": 2}, "imprisoned": false, "busted_out": false,
                  "seat": "12"}, ...],                          # "seat" optional: the seat's key
     "mafia_votes": [{"voter": "Gus", "target": "Ann", "seq": 1}, ...],
     "actions": [{"actor": "Ann", "action": "investigate", "target": "Gus", "seq": 2}, ...],
     "gadgets": {"grenade": {"self_death_chance": 0.25}},       # optional (M-ITEM-1)
     "confiscated": ["gun"],                                    # optional: the evidence safe
     "stash_assignment": {"item": "gun", "to": "Gus"}}          # optional (M-MAFIA-2)

The file names players; the night is keyed by seats. ``parse_night_file`` maps each name to its seat's key at this
edge (a player's ``seat``, or the name itself), and ``run_night_file`` maps the outcome back to names.

The shape is judged here (types, known keys, names of players that exist, unique names, seats and seqs), and one
reading: an action that names a target its action does not take is accepted when the target agrees with the night
(a strongman's kill naming the mafia's decided target, a self-only action naming the actor) and the target is
dropped; any other such target refuses the file, so no action is ever set aside for it unseen (M-NIGHT-1). The night
itself decides what another illegal but well-formed submission does (it is set aside, with the reason in the
trace). ``night_file_data`` writes a night (state and actions) back as a night file.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import items as item_data
from .night_context import M21NightState
from .night_data import USE_ITEM, M21Action, MafiaVote, Seat
from .night_kills import kill_tally
from .roles import CONFISCATED_ITEM, NO_TARGET, ROLES, role, seat_state

#: Every action key of a night file.
ACTION_KEYS = ("watch", "visit", "hide", "roleblock", "investigate", "deliver", "bust_out", "safecrack", "rob", "shoot",
               "strongman_kill", "protect", USE_ITEM)
ACTIONS_WITH_ITEM = ("deliver", "safecrack", USE_ITEM)


class NightFileError(ValueError):
    """A malformed night file; the message starts with the path of the offending field (``players[2].role``)."""


def _fail(path: str, message: str) -> None:
    raise NightFileError(f"{path}: {message}")


def _int(data: Mapping, key: str, path: str, *, minimum: int | None = None) -> int:
    if key not in data:
        _fail(f"{path}{key}", "is missing")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(f"{path}{key}", f"must be a whole number, not {value!r}")
    if minimum is not None and value < minimum:
        _fail(f"{path}{key}", f"must be at least {minimum}")
    return value


def _obj(value: object, path: str) -> Mapping:
    if not isinstance(value, Mapping):
        _fail(path, "must be an object")
    return value


def _list(data: Mapping, key: str, path: str, *, required: bool = True) -> list:
    if key not in data:
        if required:
            _fail(f"{path}{key}", "is missing")
        return []
    value = data[key]
    if not isinstance(value, list):
        _fail(f"{path}{key}", "must be a list")
    return value


def _bool(data: Mapping, key: str, path: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        _fail(f"{path}{key}", f"must be true or false, not {value!r}")
    return value


def _keys(data: Mapping, allowed: tuple[str, ...], path: str) -> None:
    for key in data:
        if key not in allowed:
            _fail(f"{path}{key}", f"unknown field (fields: {', '.join(allowed)})")


def _name(data: Mapping, key: str, path: str, names: set[str], *, required: bool = True) -> str | None:
    if key not in data or data[key] is None:
        if required:
            _fail(f"{path}{key}", "is missing")
        return None
    value = data[key]
    if not isinstance(value, str):
        _fail(f"{path}{key}", f"must be a player's name, not {value!r}")
    if value not in names:
        _fail(f"{path}{key}", f"no player is called {value!r}")
    return value


def _takes_no_target(seat: Seat, action: str, item: str | None, gadgets: Mapping | None) -> bool:
    """True when ``action`` (with ``item``; ``gadgets`` the file's gadget configuration) of ``seat`` names no
    player (hide, the strongman's kill, a safecrack, the balloon...)."""
    if action == USE_ITEM:
        found = item_data.item_catalogue(gadgets).get(item or "")
        return found is not None and found.target == NO_TARGET
    spec = role(seat.role).action(action)
    return spec is not None and spec.target in (NO_TARGET, CONFISCATED_ITEM)


def parse_night_file(data: object) -> tuple[M21NightState, list[M21Action]]:
    """Read a night file (already decoded JSON) into ``(M21NightState, [M21Action])`` keyed by seats (each player's
    ``seat``, or the name). Raises ``NightFileError`` whose message names the offending field and says what is
    wrong (also for a target an action does not take and the night does not agree with, M-NIGHT-1)."""
    data = _obj(data, "the night file")
    _keys(data, ("night", "seed", "players", "mafia_votes", "actions", "gadgets", "confiscated", "stash_assignment"),
          "")
    night = _int(data, "night", "", minimum=1)
    seed = _int(data, "seed", "")
    raw_players = _list(data, "players", "")
    if not raw_players:
        _fail("players", "must list at least one player")
    seats, names, keys = [], set(), {}
    for i, raw in enumerate(raw_players):
        path = f"players[{i}]."
        raw = _obj(raw, f"players[{i}]")
        _keys(raw, ("name", "role", "alive", "sane", "items", "state", "imprisoned", "busted_out", "seat"), path)
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            _fail(f"{path}name", "must be a non-empty name")
        if name in names:
            _fail(f"{path}name", f"{name!r} appears twice")
        names.add(name)
        role_key = raw.get("role")
        if role_key not in ROLES:
            _fail(f"{path}role", f"unknown role {role_key!r} (roles: {', '.join(ROLES)})")
        held = _list(raw, "items", path, required=False)
        for j, key in enumerate(held):
            if key not in item_data.ITEM_KEYS:
                _fail(f"{path}items[{j}]", f"unknown item {key!r} (items: {', '.join(item_data.ITEM_KEYS)})")
        state = raw.get("state") or {}
        _obj(state, f"{path}state")
        try:
            full_state = seat_state(role_key, state)
        except ValueError as exc:
            _fail(f"{path}state", str(exc))
        key = raw.get("seat", name)
        if isinstance(key, bool) or not isinstance(key, (str, int)) or not str(key).strip():
            _fail(f"{path}seat", f"must be a seat's key (a name or a number), not {key!r}")
        key = str(key)
        if key in keys.values():
            _fail(f"{path}seat", f"{key!r} is also the seat of another player")
        keys[name] = key
        seats.append(Seat(name=name, role=role_key, alive=_bool(raw, "alive", path, True),
                          imprisoned=_bool(raw, "imprisoned", path, False),
                          busted_out=_bool(raw, "busted_out", path, False), sane=_bool(raw, "sane", path, True),
                          items=tuple(held), state=MappingProxyType(full_state), key=key))
    seqs: dict[int, str] = {}

    def _seq(raw: Mapping, path: str) -> int:
        seq = _int(raw, "seq", path)
        if seq in seqs:
            _fail(f"{path}seq", f"{seq} is also the seq of {seqs[seq]}")
        seqs[seq] = path.rstrip(".")
        return seq

    gadgets = data.get("gadgets")
    if gadgets is not None:
        try:
            item_data.gadget_effects(_obj(gadgets, "gadgets"))
        except item_data.ItemConfigError as exc:
            _fail("gadgets", str(exc))
    votes = []
    for i, raw in enumerate(_list(data, "mafia_votes", "", required=False)):
        path = f"mafia_votes[{i}]."
        raw = _obj(raw, f"mafia_votes[{i}]")
        _keys(raw, ("voter", "target", "seq"), path)
        votes.append(MafiaVote(voter=keys[_name(raw, "voter", path, names)],
                               target=keys[_name(raw, "target", path, names)], seq=_seq(raw, path)))
    by_key = {s.key: s for s in seats}
    decided = kill_tally(by_key, votes).target
    actions = []
    for i, raw in enumerate(_list(data, "actions", "", required=False)):
        path = f"actions[{i}]."
        raw = _obj(raw, f"actions[{i}]")
        _keys(raw, ("actor", "action", "target", "item", "seq"), path)
        actor = _name(raw, "actor", path, names)
        action = raw.get("action")
        if action not in ACTION_KEYS:
            _fail(f"{path}action", f"unknown action {action!r} (actions: {', '.join(ACTION_KEYS)})")
        item = raw.get("item")
        if action in ACTIONS_WITH_ITEM:
            if item not in item_data.ITEM_KEYS:
                _fail(f"{path}item", f"{action} needs an item key (items: {', '.join(item_data.ITEM_KEYS)})")
        elif item is not None:
            _fail(f"{path}item", f"{action} takes no item")
        target = _name(raw, "target", path, names, required=False)
        actor_key, target_key = keys[actor], (keys[target] if target is not None else None)
        if target_key is not None and _takes_no_target(by_key[actor_key], action, item, gadgets):
            if target_key not in (actor_key, decided if action == "strongman_kill" else None):
                agrees = ("the mafia's target tonight" + (f" ({by_key[decided].name})" if decided else
                                                          ": no kill is decided")
                          if action == "strongman_kill" else "the actor themselves")
                _fail(f"{path}target", f"{action} takes no target, and {target!r} is not {agrees}")
            target_key = None
        actions.append(M21Action(actor=actor_key, action=action, target=target_key, item=item, seq=_seq(raw, path)))
    confiscated = _list(data, "confiscated", "", required=False)
    for j, key in enumerate(confiscated):
        if key not in item_data.ITEM_KEYS:
            _fail(f"confiscated[{j}]", f"unknown item {key!r}")
    assignment = None
    if data.get("stash_assignment") is not None:
        raw = _obj(data["stash_assignment"], "stash_assignment")
        _keys(raw, ("item", "to"), "stash_assignment.")
        if raw.get("item") not in item_data.STASH_ITEMS:
            _fail("stash_assignment.item", f"must be a stash item ({', '.join(item_data.STASH_ITEMS)})")
        assignment = (raw["item"], keys[_name(raw, "to", "stash_assignment.", names)])
    state = M21NightState(night=night, seed=seed, seats=tuple(seats), votes=tuple(votes),
                          gadget_config=gadgets, confiscated=tuple(confiscated), stash_assignment=assignment)
    return state, actions


def night_file_data(state: M21NightState, actions: list[M21Action]) -> dict:
    """The night file of ``state`` and ``actions`` (the inverse of ``parse_night_file``): players by name with their
    seat keys, votes and actions by name, in seq order. Resolving it gives the outcome of the night it describes."""
    name = {s.key: s.name for s in state.seats}
    players = []
    for s in state.seats:
        entry = {"name": s.name, "role": s.role, "alive": s.alive, "sane": s.sane, "items": list(s.items),
                 "state": dict(s.state)}
        if s.imprisoned:
            entry["imprisoned"] = True
        if s.busted_out:
            entry["busted_out"] = True
        if s.key != s.name:
            entry["seat"] = s.key
        players.append(entry)
    data = {"night": state.night, "seed": state.seed, "players": players,
            "mafia_votes": [{"voter": name[v.voter], "target": name[v.target], "seq": v.seq} for v in state.votes],
            "actions": []}
    for a in sorted(actions, key=lambda a: a.seq):
        entry = {"actor": name[a.actor], "action": a.action, "seq": a.seq}
        if a.target is not None:
            entry["target"] = name[a.target]
        if a.item:
            entry["item"] = a.item
        data["actions"].append(entry)
    data["confiscated"] = list(state.confiscated)
    if state.stash_assignment is not None:
        data["stash_assignment"] = {"item": state.stash_assignment[0], "to": name[state.stash_assignment[1]]}
    if state.gadget_config is not None:
        data["gadgets"] = {k: dict(v) for k, v in state.gadget_config.items()}
    return data
