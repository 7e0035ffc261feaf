"""The M21 items as data (RULES.md M-ITEM-1, M-MAFIA-2, M-NIGHT-7).

An item has an owner (a seat's item list), a number of uses, the phases it can be used in, and an effect. The
mafia's stash holds the gun, the binoculars and the whiskey (M-MAFIA-2); the inventor's six gadgets have effects
the host configures per game (M-ITEM-1): ``gadget_effects(config)`` merges a game's configuration over the
[interp] defaults and refuses an impossible one with a message naming the gadget and field.

Pure data: no ORM, no I/O.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from .roles import ANY_LIVING, ANY_PHASE, NIGHT, NO_TARGET, OTHER_LIVING

STASH = "stash"
GADGET = "gadget"

# Effects an item may have (the night step that resolves each is in ``EFFECT_STEPS``).
WATCH = "watch"            # visitor names of the target, the ninja excepted (as the watcher)
WENT_OUT = "went_out"      # did the target go out? (as the reporter, without headlines)
ROLEBLOCK = "roleblock"    # the target's later night actions fail
KILL = "kill"              # a pending kill on the target (step 8); ``self_death_chance`` may also kill the user
PROTECT = "protect"        # a protection (step 9, as the coroner's bag)
ARMOUR = "armour"          # the holder survives one pending non-strongman kill (step 9)
AWAY = "away"              # the holder is away all night: actions on them fail, they cannot act
RADIO = "radio"            # the holder reads the cops' channel for one night: every investigation result of it

#: M-NIGHT-1 step of each effect used at night (M-NIGHT-7: a night gun fires at step 8; a balloon's holder is away
#: from the start of the night, before step 1 resolves).
EFFECT_STEPS: Mapping[str, int] = MappingProxyType({
    WATCH: 1, WENT_OUT: 1, AWAY: 1, ROLEBLOCK: 2, RADIO: 4, KILL: 8, PROTECT: 9, ARMOUR: 9,
})
EFFECT_TARGETS: Mapping[str, str] = MappingProxyType({
    WATCH: OTHER_LIVING, WENT_OUT: OTHER_LIVING, ROLEBLOCK: OTHER_LIVING, KILL: OTHER_LIVING,
    PROTECT: ANY_LIVING, ARMOUR: NO_TARGET, AWAY: NO_TARGET, RADIO: NO_TARGET,
})


@dataclass(frozen=True)
class Item:
    """An item kind: ``key`` (the item key of the night file), ``name``, ``source`` stash/gadget, ``uses`` per item
    (None: every night without limit), ``phase`` night or any (day or night), ``effect``, ``target`` kind,
    ``self_death_chance`` the probability (0..1) that using it also kills the user, ``passive`` True when it works
    without being used (the armour by default), ``description`` the text its holder receives."""

    key: str
    name: str
    source: str
    uses: int | None
    phase: str
    effect: str
    description: str
    self_death_chance: float = 0.0
    passive: bool = False

    @property
    def target(self) -> str:
        return EFFECT_TARGETS[self.effect]

    @property
    def step(self) -> int:
        return EFFECT_STEPS[self.effect]

    @property
    def visits(self) -> bool:
        """Using it means going out to another player (M-NIGHT-3)."""
        return self.target == OTHER_LIVING


GUN = Item("gun", "Gun", STASH, 1, ANY_PHASE, KILL,
           "A one-shot GUN which may be used night or day, once obtained.")
BINOCULARS = Item("binoculars", "Binoculars", STASH, None, NIGHT, WENT_OUT,
                  "A set of BINOCULARS which may be used, each night after being obtained, to spy on one player. "
                  "You will learn if that player went out, or stayed at home.")
WHISKEY = Item("whiskey", "Whiskey", STASH, 1, NIGHT, ROLEBLOCK,
               "A bottle of WHISKEY. This may be used once, at night, to target one player. That player will get "
               "DRUNK and lose any night actions for that night.")

#: The stash items (M-MAFIA-2), in the seed's order.
STASH_ITEMS: Mapping[str, Item] = MappingProxyType({i.key: i for i in (GUN, BINOCULARS, WHISKEY)})

#: The six gadgets with their [interp] default effects (M-ITEM-1), in the seed's order.
DEFAULT_GADGETS: Mapping[str, Item] = MappingProxyType({i.key: i for i in (
    Item("goggles", "Night vision goggles", GADGET, 1, NIGHT, WATCH,
         "Night Vision Goggles - Allow the user to see in the dark. Once, at night, watch one player: you learn "
         "who visits them (the ninja is never seen)."),
    Item("grenade", "Hand grenade", GADGET, 1, NIGHT, KILL,
         "Hand Grenade - A deadly weapon, but risky in the hands of an inexperienced user. Once, at night, kill one "
         "player; there is an even chance that it kills you too.", self_death_chance=0.5),
    Item("armour", "Improvised armour", GADGET, 1, NIGHT, ARMOUR,
         "Improvised Armour - Metal plates of personal protection. You survive one attempt to kill you at night "
         "(not the strongman's).", passive=True),
    Item("balloon", "Hot-air balloon", GADGET, 1, NIGHT, AWAY,
         "Hot Air Balloon - A fun flight to whisk the passenger away from the stresses of the day. Once, you are "
         "away for one night: actions on you fail and you cannot act."),
    Item("first_aid_kit", "First-aid kit", GADGET, 1, NIGHT, PROTECT,
         "First Aid Kit - A life-saving box of tricks. Once, at night, protect one player (yourself too) from "
         "being killed (not by the strongman)."),
    Item("police_radio", "Police radio", GADGET, 1, NIGHT, RADIO,
         "Police Radio - A cop communication aid. Once, at night, you hear the cops' channel: the result of every "
         "investigation of that night."),
)})

GADGET_KEYS: tuple[str, ...] = tuple(DEFAULT_GADGETS)
ITEM_KEYS: tuple[str, ...] = tuple(STASH_ITEMS) + GADGET_KEYS

#: Effects a host may give a gadget (M-ITEM-1: "their powers are the host's").
CONFIGURABLE_EFFECTS: tuple[str, ...] = (WATCH, WENT_OUT, ROLEBLOCK, KILL, PROTECT, ARMOUR, AWAY, RADIO)


class ItemConfigError(ValueError):
    """An impossible gadget configuration; the message names the gadget and the field."""


def gadget_effects(config: Mapping[str, Mapping[str, object]] | None = None) -> dict[str, Item]:
    """The gadgets of a game: the defaults with ``config`` applied, ``{gadget key: {"effect": str,
    "self_death_chance": float 0..1, "passive": bool, "description": str}}`` (every field optional). Returns
    ``{gadget key: Item}``. Raises ``ItemConfigError`` for an unknown gadget, field or effect, a chance outside
    0..1, or ``passive`` on an effect other than armour (M-ITEM-1)."""
    gadgets = dict(DEFAULT_GADGETS)
    if config is None:
        return gadgets
    if not isinstance(config, Mapping):
        raise ItemConfigError("the gadget configuration must map gadget keys to settings")
    for key, settings in config.items():
        if key not in gadgets:
            raise ItemConfigError(f"unknown gadget {key!r}; the gadgets are: {', '.join(GADGET_KEYS)}")
        if not isinstance(settings, Mapping):
            raise ItemConfigError(f"gadget {key!r}: the settings must be an object")
        item = gadgets[key]
        changes: dict[str, object] = {}
        for name, value in settings.items():
            if name == "effect":
                if value not in CONFIGURABLE_EFFECTS:
                    raise ItemConfigError(f"gadget {key!r}: effect must be one of {', '.join(CONFIGURABLE_EFFECTS)}")
                changes["effect"] = value
            elif name == "self_death_chance":
                if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                    raise ItemConfigError(f"gadget {key!r}: self_death_chance must be a number from 0 to 1")
                changes["self_death_chance"] = float(value)
            elif name == "passive":
                if not isinstance(value, bool):
                    raise ItemConfigError(f"gadget {key!r}: passive must be true or false")
                changes["passive"] = value
            elif name == "description":
                if not isinstance(value, str) or not value.strip():
                    raise ItemConfigError(f"gadget {key!r}: description must be a non-empty text")
                changes["description"] = value
            else:
                raise ItemConfigError(f"gadget {key!r}: unknown setting {name!r} "
                                      "(settings: effect, self_death_chance, passive, description)")
        item = replace(item, **changes)
        if item.passive and item.effect != ARMOUR:
            raise ItemConfigError(f"gadget {key!r}: only an armour effect can be passive")
        if item.self_death_chance and item.effect != KILL:
            raise ItemConfigError(f"gadget {key!r}: self_death_chance needs the kill effect")
        gadgets[key] = item
    return gadgets


def item_catalogue(config: Mapping[str, Mapping[str, object]] | None = None) -> dict[str, Item]:
    """Every item of a game, ``{key: Item}``: the stash items and the configured gadgets (see ``gadget_effects``)."""
    return {**STASH_ITEMS, **gadget_effects(config)}


class UnknownItem(ValueError):
    """An item key that is not in the catalogue."""


def check_item_key(key: object) -> str:
    """``key`` when it is an item key; raises ``UnknownItem`` naming the known keys otherwise."""
    if key not in ITEM_KEYS:
        raise UnknownItem(f"unknown item {key!r}; the items are: {', '.join(ITEM_KEYS)}")
    return key  # type: ignore[return-value]
