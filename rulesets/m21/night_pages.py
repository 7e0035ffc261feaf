"""What a player may submit at night and what the morning says, as pure functions (RULES.md M-NIGHT-1, M-NIGHT-4,
M-MAFIA-1, M-MAFIA-2, M-ROLE, M-ROLE-1, M-ITEM-1).

``night_options(seats, me, ...)`` lists exactly the night actions a seat may submit now with their legal targets
(the night page offers nothing else, and the service checks a submission against the same list);
``parse_kill_lines`` reads the mafia thread's ``kill name`` lines; ``result_text`` words a private result for the
role inbox; ``morning_post_text`` builds the public morning post (deaths with roles, insanity revealed at death,
the reporter's headlines). No ORM, no clock.

What must never leak: ``morning_post_text`` reads only deaths, the dead's roles and sanity, and headlines; it never
names who killed, who protected or who was saved. ``result_text`` is for its addressee alone.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kernel.rulesets import get_ruleset
from voting.parsing import prose_lines

from . import items as item_data
from .flips import flip_text
from .night_data import (
    DESPERADO_BACKFIRE,
    GRENADE_BACKFIRE,
    MAFIA_KILL,
    STRONGMAN_KILL,
    USE_ITEM,
    M21Death,
    M21Result,
    Seat,
)
from .roles import (
    ANY_LIVING,
    CONFISCATED_ITEM,
    IMPRISONED,
    MAFIA,
    NIGHT,
    NO_TARGET,
    OTHER_LIVING,
    role,
    seat_state,
)


@dataclass(frozen=True)
class NightOption:
    """One action a seat may submit tonight: ``action`` key, ``label``, ``item`` (for ``use_item``), ``targets``
    the legal target names (empty for an action without a target), ``items`` the item keys to choose from
    (``deliver``, ``safecrack``), ``needs_target`` whether a target must be chosen."""

    action: str
    label: str
    item: str | None = None
    targets: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    needs_target: bool = True

    @property
    def key(self) -> str:
        """A form value naming the option: the action, or ``use_item:<item>``."""
        return f"{USE_ITEM}:{self.item}" if self.item else self.action


def target_order(name: str, partners: Iterable[str] = ()) -> tuple[bool, str]:
    """The sort key of a target in the lists a player picks from: the players by name (case-blind), a mafioso's
    own partners last (M-MAFIA-2, M-ROLE: acting on a partner is allowed but seldom meant)."""
    return name in partners, name.casefold()


def _targets(seats: Sequence[Seat], me: Seat, kind: str) -> tuple[str, ...]:
    if kind == OTHER_LIVING:
        found = [s.name for s in seats if s.living and s.name != me.name]
    elif kind == ANY_LIVING:
        found = [s.name for s in seats if s.living]
    elif kind == IMPRISONED:
        found = [s.name for s in seats if s.alive and s.imprisoned]
    else:
        return ()
    partners = {s.name for s in seats if s.alignment == MAFIA and s.name != me.name} if me.alignment == MAFIA else ()
    return tuple(sorted(found, key=lambda n: target_order(n, partners)))


def night_options(seats: Sequence[Seat], me: str, *, confiscated: Iterable[str] = (),
                  gadget_config: Mapping[str, Mapping[str, object]] | None = None) -> list[NightOption]:
    """The night actions seat ``me`` may submit now (M-NIGHT-1, M-ROLE, M-ITEM-1): their role's night actions with
    uses left (each gadget invented once, a safecrack only with something in the safe, a bust out only with someone
    imprisoned), then one ``use_item`` per night-usable item they hold. A seat not in play has none, unless busted out
    (M-NIGHT-7). The mafia's kill vote is not here: it is a ``kill name`` line of the mafia thread (M-MAFIA-1)."""
    seat = next((s for s in seats if s.name == me), None)
    if seat is None or not (seat.living or (seat.alive and seat.busted_out)):
        return []
    options = []
    state = seat_state(seat.role, seat.state)
    for spec in role(seat.role).night_actions():
        if spec.phase != NIGHT:
            continue
        if spec.counter is not None and int(state[spec.counter]) <= 0:
            continue
        if spec.key == "deliver":
            done = set(state["gadgets_delivered"])
            gadgets = tuple(g for g in item_data.GADGET_KEYS if g not in done)
            targets = _targets(seats, seat, spec.target)
            if gadgets and targets:
                options.append(NightOption(spec.key, spec.label, targets=targets, items=gadgets))
            continue
        if spec.target == CONFISCATED_ITEM:
            safe = tuple(dict.fromkeys(confiscated))
            if safe:
                options.append(NightOption(spec.key, spec.label, items=safe, needs_target=False))
            continue
        if spec.target == NO_TARGET:
            options.append(NightOption(spec.key, spec.label, needs_target=False))
            continue
        targets = _targets(seats, seat, spec.target)
        if targets:
            options.append(NightOption(spec.key, spec.label, targets=targets))
    catalogue = item_data.item_catalogue(gadget_config)
    for key in dict.fromkeys(seat.items):
        item = catalogue[key]
        if item.passive or item.phase not in (NIGHT, "any"):
            continue
        label = f"Use the {item.name.lower()}"
        if item.target == NO_TARGET:
            options.append(NightOption(USE_ITEM, label, item=key, needs_target=False))
            continue
        targets = _targets(seats, seat, item.target)
        if targets:
            options.append(NightOption(USE_ITEM, label, item=key, targets=targets))
    return options


def target_refusal(target: str | None, seats: Mapping[str, Seat] | None = None) -> str:
    """Why ``target`` (a name, possibly none or unknown) is no legal target of a night action, in words a player
    can read: a player out of play (dead, imprisoned, hiding; M-NIGHT-1 targets the living) is named as such;
    ``seats`` maps names to the night's seats (None: the reason is the generic one)."""
    seat = (seats or {}).get(target or "")
    if seat is not None and not seat.living:
        state = "dead" if not seat.alive else "imprisoned" if seat.imprisoned else "out of play"
        return f"{seat.name} is {state}: choose one of the players offered for this action."
    return "Choose one of the players offered for this action."


def check_choice(options: Sequence[NightOption], key: str, target: str | None, item: str | None,
                 seats: Mapping[str, Seat] | None = None) -> NightOption:
    """The option ``key`` when ``target`` and ``item`` are legal for it (``seats``, names to the night's seats,
    lets a refused target be explained, ``target_refusal``). Raises ``ValueError`` with a message a player can
    read otherwise."""
    option = next((o for o in options if o.key == key), None)
    if option is None:
        raise ValueError("That action is not open to you tonight.")
    if option.needs_target:
        if target not in option.targets:
            raise ValueError(target_refusal(target, seats))
    elif target:
        raise ValueError("This action takes no target.")
    if option.items:
        if item not in option.items:
            raise ValueError("Choose one of the items offered for this action.")
    elif item and item != option.item:
        raise ValueError("This action takes no item.")
    return option


_KILL_LINE = re.compile(r"^\s*(?:\*\*|__|<b>|<strong>)?\s*kill\s+(?P<name>.+?)\s*(?:\*\*|__|</b>|</strong>)?\s*$",
                        re.IGNORECASE)


def parse_kill_lines(text: str) -> list[str]:
    """The names written in ``kill name`` lines of a mafia-thread post, in order (M-MAFIA-1): one per line, any
    case, bold or not (``**kill Bob**``, ``<b>kill Bob</b>``), never inside a quote or a code block (M-VOTE-1's
    reading of a thread's commands). The last such line of a post is the post's vote."""
    names = []
    for line in prose_lines(text):
        match = _KILL_LINE.match(line)
        if match and match.group("name").strip("*_ "):
            names.append(match.group("name").strip("*_ "))
    return names


def tally_text(counts: Mapping[str, int], target: str | None, carriers: Sequence[str], tie_broken_by: str | None,
               *, living_mafia: int) -> str:
    """The live tally of the mafia thread (M-MAFIA-1): votes per target, the target the night would kill now and
    who would carry it out."""
    if not counts:
        return f"Kill vote: no votes yet ({living_mafia} mafia in play)."
    parts = ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    line = f"Kill vote ({living_mafia} mafia in play): {parts}. Tonight's kill now: {target}"
    if tie_broken_by:
        line += f" (tie broken by the {tie_broken_by})"
    if carriers:
        line += f", carried out by {carriers[0]}"
    return line + "."


_CAUSES = {
    MAFIA_KILL: "was killed in the night",
    STRONGMAN_KILL: "was bludgeoned to death in the night",
    "desperado": "was shot dead in the night",
    DESPERADO_BACKFIRE: "was found dead in the night",
    "gun": "was shot dead in the night",
    "grenade": "was blown up in the night",
    GRENADE_BACKFIRE: "was blown up in the night",
}


def death_line(death: M21Death, seat: Seat) -> str:
    """One death of the morning post: name, what happened (never by whom), role, alignment and an insane cop's
    insanity (M-NIGHT-4, M-ROLE-1)."""
    what = _CAUSES.get(death.cause, "died in the night")
    return f"**{seat.name}** {what}. {flip_text(seat.role, sane=seat.sane)}"


@dataclass(frozen=True)
class MorningPost:
    """What the M21 morning post after night ``night`` reads (the ``context`` of ``M21Ruleset.daily_post_section``):
    the night's deaths, the seats by name (roles and sanity of the dead) and the reporter's headlines."""

    night: int
    deaths: Sequence[M21Death]
    seats: Mapping[str, Seat]
    headlines: Sequence[str]


def morning_deaths_section(post: MorningPost) -> str:
    """The morning's heading and its deaths with roles (M-NIGHT-4), or that nobody died."""
    lines = [f"## Morning after night {post.night}", ""]
    if post.deaths:
        lines += [death_line(d, post.seats[d.player]) for d in post.deaths]
    else:
        lines.append("Nobody died in the night.")
    return "\n".join(lines)


def morning_herald_section(post: MorningPost) -> str:
    """The reporter's headlines (M-ROLE reporter), "" when there are none."""
    if not post.headlines:
        return ""
    return "\n".join(["", "### The Metrodipolis Herald", ""] + [f"- {h}" for h in post.headlines])


#: The M21 morning post's sections by key (``M21Ruleset.daily_post_sections`` gives their order).
MORNING_POST_SECTIONS = {"deaths": morning_deaths_section, "herald": morning_herald_section}


def morning_post_text(night: int, deaths: Sequence[M21Death], seats: Mapping[str, Seat],
                      headlines: Sequence[str]) -> str:
    """The public morning post after night ``night`` (M-NIGHT-4): deaths with roles, then the headlines, composed
    by the M21 spec's ``daily_post_text`` (its ``daily_post_sections`` in order)."""
    return get_ruleset("m21").daily_post_text(None, night + 1, MorningPost(night, deaths, seats, headlines))


def _names(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "nothing"
    return str(value)


def result_text(result: M21Result) -> str:
    """A private result worded for its addressee's role inbox (M-NIGHT-4, M-NIGHT-6)."""
    kind, target, answer = result.kind, result.target, result.answer
    catalogue = item_data.item_catalogue()
    if kind == "investigate":
        if isinstance(answer, list):
            found = ", ".join(catalogue[k].name for k in answer) if answer else "no item"
            return f"Your investigation of {target}: {found}."
        return f"Your investigation of {target}: {str(answer).upper()}."
    if kind in ("visit", "binoculars"):
        return f"You watched {target}: they {answer}."
    if kind in ("watch", "goggles"):
        return f"You watched {target}. Visitors: {_names(answer) if answer else 'nobody'}."
    if kind == "saved":
        return "Someone attacked you in the night, but you were saved."
    if kind == "desperado":
        return f"The Desperado ({target}) targeted you last night, and died for it."
    if kind == "immunity":
        return f"You killed {target}, a member of the Mafia: you are immune to gunshots today."
    if kind == "received":
        item = catalogue[answer[0]]
        return f"You received a gadget: {item.name}. {item.description}"
    if kind == "rob":
        return f"You robbed {target} and took: {', '.join(catalogue[k].name for k in answer) or 'nothing'}."
    if kind == "robbed":
        return f"Someone robbed you in the night. You lost: {', '.join(catalogue[k].name for k in answer)}."
    if kind == "safecrack":
        return f"You cracked the evidence safe and took: {catalogue[answer[0]].name}."
    if kind == "safe_robbed":
        return f"Your evidence safe was broken into. Missing: {catalogue[answer[0]].name}."
    if kind == "busted_out":
        return ("You were busted out of the penitentiary. You may send the Jailbreaker a message of up to 20 words "
                "and use one unused action.")
    if kind == "bust_out":
        return f"You busted {target} out of the penitentiary."
    if kind == "police_radio":
        heard = "; ".join(f"{h['target']}: {_names(h['answer'])}" for h in answer) or "silence"
        return f"You listened to the cops' channel: {heard}."
    return f"{kind}: {_names(answer)}"
