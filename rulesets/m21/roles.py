"""The M21 role catalogue as data (RULES.md M-ROLE, M-ROLE-1, M-MAFIA-1, M-SETUP-1).

Each ``Role`` has its key (the keys of ``manage.py resolve_night m21``), its name, its alignment, the role text of
the seed (``rules/mafia21-setup.en.txt``, quoted: all role texts are public in the setup post, M-SETUP-1), its
actions (``ActionSpec``: phase, target kind, uses per game) and the per-seat state it starts with (shots, bag uses,
once-per-game flags). ``fresh_state(role_key)`` gives a new seat's state; ``seat_state(role_key, given)`` completes a
partial one. Sanity (M-ROLE-1) is a seat fact kept beside the state (``Seat.sane`` in ``rulesets.m21.night``).

Pure data: no ORM, no I/O. The night pipeline (``rulesets.m21.night``) reads the action specs to know which step
resolves an action and which use counter it spends.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

TOWN = "town"
MAFIA = "mafia"

NIGHT = "night"
DAY = "day"
ANY_PHASE = "any"

# Target kinds of an action (what the target picker offers).
NO_TARGET = "none"            # the action names nobody (hide, close proceedings)
OTHER_LIVING = "other_living"  # a living player other than the actor: a visit (M-NIGHT-3)
ANY_LIVING = "any_living"      # a living player, the actor included
IMPRISONED = "imprisoned"      # an imprisoned player (the jailbreaker's bust out)
KILLED = "killed"              # a player killed within the last phase (the coroner's post mortem)
TIED_CANDIDATE = "tied"        # one of the tied candidates of the day vote (the judge's casting vote)
FOUND_ITEM = "found_item"      # an item the item cop found the night before
CONFISCATED_ITEM = "confiscated_item"  # an item in the evidence safe (the jailbreaker's safecrack)
TEXT = "text"                  # a message (the reporter's extra: at most 10 words)

#: Words allowed in the reporter's "Extra, Extra!" message (M-ROLE reporter).
EXTRA_MAX_WORDS = 10
#: Words a busted-out player may send the jailbreaker (M-ROLE jailbreaker).
BUST_OUT_MESSAGE_MAX_WORDS = 20
#: Minutes after the end of the day in which the judge may still cast a vote on a tie (M-ROLE judge).
CASTING_VOTE_WINDOW_MINUTES = 15


@dataclass(frozen=True)
class ActionSpec:
    """One action of a role: ``key`` (the action key of the night file), ``phase`` night/day/any, ``target`` one of
    the target kinds above, ``uses`` per game (None: once per phase, without limit), ``counter`` the per-seat state
    field spent by a use (None when unlimited), ``step`` the M-NIGHT-1 step resolving it at night (0: not resolved by
    the night pipeline), ``visits`` True when carrying it out means going out to the target (M-NIGHT-3)."""

    key: str
    phase: str
    target: str
    uses: int | None = None
    counter: str | None = None
    step: int = 0
    visits: bool = False
    label: str = ""


@dataclass(frozen=True)
class Role:
    """A role of M-ROLE: ``key``, ``name``, ``alignment`` town/mafia, ``text`` the seed's role text, ``actions``,
    ``state`` the per-seat state a fresh seat starts with (read-only mapping), ``vanilla`` True for the roles a
    vanilla cop sees as "vanilla" (M-NIGHT-6, M-NIGHT-7), ``setup_count`` as the seed lists it ("11", "0-1", "2"),
    ``summary`` one line for pickers."""

    key: str
    name: str
    alignment: str
    text: str
    summary: str
    actions: tuple[ActionSpec, ...] = ()
    state: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    vanilla: bool = False
    setup_count: str = "0-1"
    investigates: str | None = None

    @property
    def is_mafia(self) -> bool:
        return self.alignment == MAFIA

    @property
    def is_cop(self) -> bool:
        """True for the three cops (cop sanity, M-ROLE-1)."""
        return self.investigates is not None

    def action(self, key: str) -> ActionSpec | None:
        """The action spec ``key`` of this role, or None."""
        return next((a for a in self.actions if a.key == key), None)

    def night_actions(self) -> tuple[ActionSpec, ...]:
        return tuple(a for a in self.actions if a.phase in (NIGHT, ANY_PHASE))

    def day_actions(self) -> tuple[ActionSpec, ...]:
        return tuple(a for a in self.actions if a.phase in (DAY, ANY_PHASE))


_VOTE = ("During the day you make an accusation against someone; the candidate who reaches a plurality will be "
         "IMPRISONED at the end of the day.")


def _text(title: str, rest: str = "") -> str:
    head = f"You are {title}! {_VOTE}"
    return f"{head}\n\n{rest}" if rest else head


def _state(**values) -> Mapping[str, object]:
    return MappingProxyType(dict(values))


CITIZEN = Role(
    key="citizen", name="Law-abiding citizen", alignment=TOWN, vanilla=True, setup_count="11",
    summary="The day vote only.",
    text=_text("a LAW-ABIDING CITIZEN"),
)

JUDGE = Role(
    key="judge", name="Judge", alignment=TOWN,
    summary="Once per game: close proceedings, or a casting vote on a tie.",
    text=_text("the JUDGE", (
        "Once per game, you may take ONE of the following actions. Once you have used one, you may not use the "
        "other:\n\n"
        "1: Close Proceedings: During the day, at any point when a MAJORITY of players have a vote in place (thus "
        "not counting UNVOTES), you may END the day phase. The END will be processed as soon as the GM receives "
        "your order. The imprisonment vote will be processed based on the votes in place at the time you activate "
        "this power. (No player will be punished for failing to vote by this point as it ends the day early). This "
        "power *may* be used to cause the vote to end in a tie.\n\n"
        "2: Casting Vote: If the day vote is tied, you may use a CASTING VOTE to select any of the tied "
        "imprisonment candidates. Your selected candidate will be IMPRISONED. This may be a different candidate "
        "than the one you voted for during that day. You may use this power in one of two ways: (a) by sending a "
        "PM to the GMs, at any time *before* EoD, stating that in the event of a tie, you will use your casting "
        "vote on <CANDIDATE>. Or (b) within 15 minutes of EoD, where there is a tied IMPRISONMENT vote, by PMing "
        "the GMs to break the tie. If you intend to use (b) it is your own responsibility to remember to be online "
        "at EoD. The 15 minute time window for this action will be strictly applied.")),
    actions=(
        ActionSpec("close_proceedings", DAY, NO_TARGET, uses=1, counter="judge_power_left",
                   label="Close proceedings (end the day now)"),
        ActionSpec("casting_vote", DAY, TIED_CANDIDATE, uses=1, counter="judge_power_left",
                   label="Casting vote on a tie"),
    ),
    state=_state(judge_power_left=1),
)

REPORTER = Role(
    key="reporter", name="Reporter", alignment=TOWN,
    summary="Night visit: did the target go out? Once: hide. Once: a 10-word extra.",
    text=_text("the REPORTER", (
        "At night, you may choose someone to visit. You will be informed if they went out that night, or stayed "
        "at home. You will not be informed if anyone else visited them - only whether your target went out or "
        "not. If your target did go out, this will be revealed to everyone, in the newspaper headlines at the "
        "beginning of the day.\n\n"
        "ONCE per game, you may use EACH of the following powers:\n\n"
        "1. Hide! One night, instead of using your investigative ability, you may HIDE in the newsroom. That night "
        "only, whilst you are hiding, any night actions targeted on you will fail.\n\n"
        "2. Extra, Extra! Once per game, during the DAY, you may publish a message of up to 10 words. The GM will "
        "announce this message in the thread.")),
    actions=(
        ActionSpec("visit", NIGHT, OTHER_LIVING, step=1, visits=True, label="Visit (did they go out?)"),
        ActionSpec("hide", NIGHT, NO_TARGET, uses=1, counter="hide_left", step=3, label="Hide in the newsroom"),
        ActionSpec("extra", DAY, TEXT, uses=1, counter="extra_left", label="Extra, Extra! (at most 10 words)"),
    ),
    state=_state(hide_left=1, extra_left=1),
)

COP = Role(
    key="cop", name="Cop", alignment=TOWN, investigates="alignment",
    summary="Night investigation: the target's alignment.",
    text=_text("the COP", ("At night, you may choose someone to investigate. You will learn their alignment the "
                           "following day.")),
    actions=(ActionSpec("investigate", NIGHT, OTHER_LIVING, step=4, visits=True, label="Investigate"),),
)

VANILLA_COP = Role(
    key="vanilla_cop", name="Vanilla cop", alignment=TOWN, investigates="vanilla",
    summary="Night investigation: vanilla or not (the role if not).",
    text=_text("the VANILLA COP", ("At night, you may choose someone to investigate. You will learn whether or not "
                                   "they are a vanilla role, the following day.")),
    actions=(ActionSpec("investigate", NIGHT, OTHER_LIVING, step=4, visits=True, label="Investigate"),),
)

ITEM_COP = Role(
    key="item_cop", name="Item cop", alignment=TOWN, investigates="items",
    summary="Night investigation: the target's items. Once: confiscate a found item the next day.",
    text=_text("the ITEM COP", (
        "At night, you may choose someone to investigate. If that person is in possession of an item, you will "
        "find out what it is the following day.\n\n"
        "Once per game, if you find a player in possession of an item, you may CONFISCATE that item at any point "
        "during the following day phase. The item will be removed from them and put under lock and key (you do "
        "not get to use the item yourself).")),
    actions=(
        ActionSpec("investigate", NIGHT, OTHER_LIVING, step=4, visits=True, label="Investigate"),
        ActionSpec("confiscate", DAY, FOUND_ITEM, uses=1, counter="confiscate_left", label="Confiscate a found item"),
    ),
    state=_state(confiscate_left=1),
)

DESPERADO = Role(
    key="desperado", name="Desperado", alignment=TOWN,
    summary="Two night shots; shooting town kills the desperado instead.",
    text=_text("the DESPERADO", (
        "You are armed with a GUN which has two shots. Twice per game, at NIGHT, you may choose a player to shoot. "
        "However, if you choose a fellow TOWN player, you will die instead of them. If you successfully kill a "
        "member of the MAFIA team, you will be immune from gunshots for the following day phase.\n\n"
        "NOTE: If the Desperado targets a town player and dies as a result, their target is *not* automatically "
        "disclosed. However, the town player in question is informed that the Desperado targeted them.")),
    actions=(ActionSpec("shoot", NIGHT, OTHER_LIVING, uses=2, counter="shots_left", step=8, visits=True,
                        label="Shoot"),),
    state=_state(shots_left=2),
)

CORONER = Role(
    key="coroner", name="Coroner", alignment=TOWN,
    summary="Once: a post mortem (the killer's role). A medical bag with two night protections.",
    text=_text("the CORONER", (
        "Once per game, you may use EACH of the following abilities:\n\n"
        "1. Once per game you may conduct a POST MORTEM on a player who has been KILLED. You will discover the "
        "ROLE of the player who killed them. You must carry out the post mortem within one phase of their death, "
        "or the corpse will be too decomposed to yield any clues. The corpse is brought to you for examination, "
        "so this does not count as \"going out\".\n\n"
        "2. You are also in possession of a MEDICAL BAG which contains enough medicine to be used twice. Twice per "
        "game, at night, you may visit a player. That player will be protected from any night actions that would "
        "otherwise kill them. If they are saved, they will be informed of this - they will not learn your "
        "identity. If no-one attempts to kill them that night, they will not be informed of your visit - but one "
        "use of your MEDICAL BAG is still expended.")),
    actions=(
        ActionSpec("post_mortem", ANY_PHASE, KILLED, uses=1, counter="post_mortem_left", label="Post mortem"),
        ActionSpec("protect", NIGHT, OTHER_LIVING, uses=2, counter="bag_left", step=9, visits=True,
                   label="Protect (medical bag)"),
    ),
    state=_state(post_mortem_left=1, bag_left=2),
)

WATCHER = Role(
    key="watcher", name="Watcher", alignment=TOWN,
    summary="Night watch: who visits the target (never the ninja).",
    text=_text("the WATCHER", (
        "At night, you may choose a player to watch. You will learn the identity of anyone who visits them that "
        "night, with the exception of the NINJA. You will not learn what actions (if any) are performed on the "
        "target.")),
    actions=(ActionSpec("watch", NIGHT, OTHER_LIVING, step=1, visits=True, label="Watch"),),
)

INVENTOR = Role(
    key="inventor", name="Inventor", alignment=TOWN,
    summary="Each night: invent one of six single-use gadgets (each once) and deliver it.",
    text=_text("the INVENTOR", (
        "Each night, you may create a (potentially) useful gadget, and visit a player of your choice to deliver "
        "the item to them. Each item can be created only once. The six gadgets you can invent, all of which are "
        "single-use, are as follows:\n\n"
        "- Night Vision Goggles - Allow the user to see in the dark.\n\n"
        "- Hand Grenade - A deadly weapon, but risky in the hands of an inexperienced user.\n\n"
        "- Improvised Armour - Metal plates of personal protection.\n\n"
        "- Hot Air Balloon - A fun flight to whisk the passenger away from the stresses of the day.\n\n"
        "- First Aid Kit - A life-saving box of tricks.\n\n"
        "- Police Radio \u2013 A cop communication aid.\n\n"
        "(NOTE: The Inventor does not know the full in-game powers of the items they invent - as per the more "
        "traditional version of this role. They player given the item gets the full item information when they "
        "receive the item.)")),
    actions=(ActionSpec("deliver", NIGHT, OTHER_LIVING, step=5, visits=True, label="Deliver a gadget"),),
    state=_state(gadgets_delivered=()),
)

GOON = Role(
    key="goon", name="Mafia goon", alignment=MAFIA, vanilla=True, setup_count="2",
    summary="The mafia kill vote.",
    text=_text("a MAFIA GOON", ("Your Mafia partners are XXXXXXX. At night, you may communicate with them in the "
                                "Mafia QT, at XXXXXXX")),
)

GODFATHER = Role(
    key="godfather", name="Godfather", alignment=MAFIA, vanilla=True,
    summary="Investigates as innocent and vanilla; breaks kill-vote ties.",
    text=_text("the GODFATHER", (
        "If you are investigated by the cops, you will show up as INNOCENT and VANILLA. However an ITEM COP will "
        "still be able to spot any items you happen to be in possession of. While you are alive, your NK vote is "
        "strong enough to settle any ties.")),
)

NINJA = Role(
    key="ninja", name="Ninja", alignment=MAFIA,
    summary="Not seen when going out.",
    text=_text("the NINJA", "If you go out at night, you will not be seen."),
)

JAILBREAKER = Role(
    key="jailbreaker", name="Jailbreaker", alignment=MAFIA,
    summary="Once: bust out an imprisoned player, or instead steal a confiscated item.",
    text=_text("the JAILBREAKER", (
        "Once per game, at night, you may break into the state penitentiary and BUST OUT any player who has been "
        "INCARCERATED. That player will have to go into hiding and does not rejoin the game, but they may take "
        "two final actions:\n\n"
        "1. If they wish, they may give you a message of up to 20 words (via the GM)\n\n"
        "2. If they have an un-used night or day action (including an item-based action) they may trigger that "
        "action, which will then occur during the next relevant phase (that is, if it is a day action, it will "
        "happen immediately. If it is a night action, it will be processed the following night).\n\n"
        "Alternatively, INSTEAD of using your power to bust out a felon, you may use your skills to break into the "
        "police station at night, and STEAL an item which has been CONFISCATED by the item cop. The item will then "
        "be in your possession and you may use it. The ITEM COP will be notified that the item is missing from "
        "their evidence safe.")),
    actions=(
        ActionSpec("bust_out", NIGHT, IMPRISONED, uses=1, counter="jailbreak_left", step=6, visits=True,
                   label="Bust out an imprisoned player"),
        ActionSpec("safecrack", NIGHT, CONFISCATED_ITEM, uses=1, counter="jailbreak_left", step=6,
                   label="Steal a confiscated item"),
    ),
    state=_state(jailbreak_left=1),
)

HOOKER = Role(
    key="hooker", name="Hooker", alignment=MAFIA,
    summary="Each night: roleblock one player.",
    text=_text("the HOOKER", ("Each night, you may visit one player. They will have a lovely, sexy time, but this "
                              "will roleblock them for any other night activity.")),
    actions=(ActionSpec("roleblock", NIGHT, OTHER_LIVING, step=2, visits=True, label="Roleblock"),),
)

STRONGMAN = Role(
    key="strongman", name="Strongman", alignment=MAFIA,
    summary="Once: carry out the mafia kill unstoppably.",
    text=_text("the STRONGMAN", (
        "Once per game, you may carry out the nightkill and bludgeon the target to death so effectively that no "
        "medical assistance can save them. While carrying out this action, you cannot be roleblocked.")),
    actions=(ActionSpec("strongman_kill", NIGHT, NO_TARGET, uses=1, counter="strongman_left", step=8, visits=True,
                        label="Carry out tonight's kill unstoppably"),),
    state=_state(strongman_left=1),
)

THIEF = Role(
    key="thief", name="Thief", alignment=MAFIA,
    summary="Each night: take the target's items.",
    text=_text("the THIEF", ("Each night, you may target one player. If that player has an ITEM, you will gain "
                             "possession of it. You will be able to use the item as normal.")),
    actions=(ActionSpec("rob", NIGHT, OTHER_LIVING, step=7, visits=True, label="Rob"),),
)

#: Every role of M-ROLE, town first, in the seed's order.
ROLES: Mapping[str, Role] = MappingProxyType({r.key: r for r in (
    CITIZEN, JUDGE, REPORTER, COP, VANILLA_COP, ITEM_COP, DESPERADO, CORONER, WATCHER, INVENTOR,
    GOON, GODFATHER, NINJA, JAILBREAKER, HOOKER, STRONGMAN, THIEF,
)})

TOWN_POWER_ROLES: tuple[str, ...] = tuple(k for k, r in ROLES.items() if r.alignment == TOWN and k != "citizen")
MAFIA_POWER_ROLES: tuple[str, ...] = tuple(k for k, r in ROLES.items() if r.alignment == MAFIA and k != "goon")
COP_ROLES: tuple[str, ...] = tuple(k for k, r in ROLES.items() if r.is_cop)

#: The mafia's night kill vote (M-MAFIA-1): every mafioso has it, whatever their role.
MAFIA_KILL_VOTE = ActionSpec("kill", NIGHT, OTHER_LIVING, step=8, visits=True, label="Vote to kill")

#: Role flavour of the seed (shown in the setup post).
FLAVOUR_TITLE = "Prohibition Wars"

#: Words of the day vote every role has (M-ROLE: "each also has the day vote").
DAY_VOTE_TEXT = _VOTE


class UnknownRole(ValueError):
    """A role key that is not in the catalogue."""


def role(key: str) -> Role:
    """The role ``key``. Raises ``UnknownRole`` naming the known keys."""
    try:
        return ROLES[key]
    except KeyError:
        raise UnknownRole(f"unknown role {key!r}; the roles are: {', '.join(ROLES)}") from None


def fresh_state(role_key: str) -> dict[str, object]:
    """The per-seat state of a new seat of ``role_key`` (all uses left): a new dict."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in role(role_key).state.items()}


def seat_state(role_key: str, given: Mapping[str, object] | None) -> dict[str, object]:
    """``given`` completed with the fresh state of ``role_key`` for the fields it lacks. Raises ``ValueError`` for a
    field the role does not have or a negative or non-integer counter."""
    state = fresh_state(role_key)
    for name, value in (given or {}).items():
        if name not in state:
            raise ValueError(f"the {role_key} has no state field {name!r} (fields: {', '.join(state) or 'none'})")
        if isinstance(state[name], int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"state field {name!r} must be a whole number of uses left (0 or more)")
        elif isinstance(state[name], list):
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"state field {name!r} must be a list of keys")
            value = list(value)
        state[name] = value
    return state


def uses_left(role_key: str, state: Mapping[str, object], action_key: str) -> int | None:
    """Uses of ``action_key`` left in ``state`` (None: unlimited). Raises ``ValueError`` for an action the role does
    not have."""
    spec = role(role_key).action(action_key)
    if spec is None:
        raise ValueError(f"the {role_key} has no action {action_key!r}")
    if spec.counter is None:
        return None
    return int(state.get(spec.counter, 0))
