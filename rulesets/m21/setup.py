"""M21 setups as pure functions (RULES.md M-SETUP-1, M-ROLE-1): legal setups, the site's draw of one, cop sanity,
the provable deal of the roles and the public setup post. No ORM, no clock, no I/O.

A setup is a count per role key of ``rulesets.m21.roles.ROLES``: each town and mafia power role 0 or 1, citizens
and goons fill up (M-SETUP-1). ``check_setup`` is the one legality check behind the host's table and the site's
draw. Randomness comes from the caller: production passes ``roles.draw.system_rng()`` (``secrets.SystemRandom``),
tests pass ``random.Random(seed)``.

The deal is provable in the manner of the Lepra mafia draw (L-ASSIGN-3, ``roles.draw``): the site deals the deck to
the players, publishes the SHA-256 commitment of the deal (role key -> player names, with the insane cop if any)
and a secret salt *before* anyone sees a role, and publishes the deal and the salt after the game, so that anyone
can check with ``verify_deal`` that the deal was fixed at the start.
"""
from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

from roles.draw import commitment, new_salt, verify_commitment

from .roles import CITIZEN, COP_ROLES, GOON, MAFIA, MAFIA_POWER_ROLES, ROLES, TOWN, TOWN_POWER_ROLES

#: The seed's default game (M-SETUP-1): 20 players, 15 town (4 power roles, 11 citizens), 5 mafia (3 power, 2 goons).
DEFAULT_PLAYERS = 20
#: The smallest game the site sets up: 3 town and 1 mafia (the mafia must be fewer than half, M-WIN-1).
MIN_PLAYERS = 4
#: The largest: every power role and as many citizens and goons as wanted, within reason for one thread.
MAX_PLAYERS = 60

#: The key of the insane cop in a deal's commitment lists (never a role key).
INSANE_KEY = "insane_cop"


class SetupError(ValueError):
    """A setup that M-SETUP-1 does not allow; the message says why, in words a host can act on."""


@dataclass(frozen=True)
class M21Setup:
    """A legal setup (build it with ``check_setup``): ``counts`` role key -> number of seats (roles with 0 left
    out), in the catalogue's order; ``cop_insanity`` the probability (0..1) that one cop is insane (M-ROLE-1)."""

    counts: Mapping[str, int]
    cop_insanity: Fraction = Fraction(0)

    @property
    def players(self) -> int:
        return sum(self.counts.values())

    @property
    def mafia(self) -> int:
        return sum(n for key, n in self.counts.items() if ROLES[key].alignment == MAFIA)

    @property
    def town(self) -> int:
        return self.players - self.mafia

    @property
    def cops(self) -> tuple[str, ...]:
        """The cop roles of the setup (M-ROLE-1), in catalogue order."""
        return tuple(key for key in self.counts if key in COP_ROLES)

    def deck(self) -> list[str]:
        """One role key per seat, in catalogue order (the order the deal shuffles)."""
        return [key for key, n in self.counts.items() for _ in range(n)]

    def as_dict(self) -> dict:
        """JSON-ready: ``{"counts": {"citizen": 11, ...}, "cop_insanity": "1/4"}``."""
        return {"counts": dict(self.counts), "cop_insanity": str(self.cop_insanity)}

    @classmethod
    def from_dict(cls, data: Mapping) -> M21Setup:
        """The inverse of ``as_dict``, checked again. Raises ``SetupError``."""
        try:
            return check_setup(data["counts"], cop_insanity=data.get("cop_insanity", 0))
        except (KeyError, TypeError) as error:
            raise SetupError(f"not a setup: {error!r}") from error


def _probability(value) -> Fraction:
    try:
        probability = Fraction(str(value)) if not isinstance(value, Fraction) else value
    except (ValueError, ZeroDivisionError):
        raise SetupError(f"The chance of an insane cop must be a number between 0 and 1, not {value!r}.") from None
    if not 0 <= probability <= 1:
        raise SetupError("The chance of an insane cop must be between 0 and 1 (0% to 100%).")
    return probability


def check_setup(counts: Mapping[str, int], *, players: int | None = None, cop_insanity=0) -> M21Setup:
    """The setup of ``counts`` (role key -> seats) if M-SETUP-1 allows it, else ``SetupError`` saying why.

    Legal: known role keys; each town power role and each mafia power role 0 or 1; citizens and goons 0 or more;
    at least one town and one mafia seat; the mafia fewer than half of the seats (else they would have won before
    the first day, M-WIN-1); ``MIN_PLAYERS``..``MAX_PLAYERS`` seats, exactly ``players`` when given.
    ``cop_insanity`` is a probability (a number, a Fraction or a string such as ``"1/4"`` or ``"0.25"``).
    """
    unknown = sorted(key for key in counts if key not in ROLES)
    if unknown:
        raise SetupError(f"Unknown role(s): {', '.join(unknown)}.")
    clean: dict[str, int] = {}
    for key in ROLES:  # catalogue order
        value = counts.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SetupError(f"{ROLES[key].name}: the number of seats must be a whole number, 0 or more.")
        if key in TOWN_POWER_ROLES or key in MAFIA_POWER_ROLES:
            if value > 1:
                raise SetupError(f"{ROLES[key].name}: a power role is in the game at most once (0-1).")
        if value:
            clean[key] = value
    setup = M21Setup(counts=MappingProxyType(clean), cop_insanity=_probability(cop_insanity))
    if setup.mafia == 0:
        raise SetupError("The setup needs at least one mafia seat (a goon or a mafia power role).")
    if setup.town == 0:
        raise SetupError("The setup needs at least one town seat.")
    if 2 * setup.mafia >= setup.players:
        raise SetupError(f"The mafia ({setup.mafia}) must be fewer than half of the {setup.players} players, or "
                         f"they have won before the first day.")
    if not MIN_PLAYERS <= setup.players <= MAX_PLAYERS:
        raise SetupError(f"A game has {MIN_PLAYERS} to {MAX_PLAYERS} players; this setup has {setup.players}.")
    if players is not None and setup.players != players:
        raise SetupError(f"The setup has {setup.players} seats but {players} players signed up: the numbers must "
                         f"match.")
    return setup


@dataclass(frozen=True)
class SetupShape:
    """How many seats of each kind a drawn setup has: town power roles, citizens, mafia power roles, goons."""

    town_power: int
    citizens: int
    mafia_power: int
    goons: int


def default_shape(players: int) -> SetupShape:
    """The seed's proportions (M-SETUP-1, 20 players: 4 + 11 town, 3 + 2 mafia) for ``players``: mafia a quarter
    (rounded down, at least 1), town power roles a fifth, mafia power roles three fifths of the mafia, within the
    catalogue's lists. Raises ``SetupError`` outside ``MIN_PLAYERS``..``MAX_PLAYERS``."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise SetupError(f"A game has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}.")
    mafia = max(1, players // 4)
    mafia_power = min(len(MAFIA_POWER_ROLES), (mafia * 3 + 2) // 5)
    town = players - mafia
    town_power = min(len(TOWN_POWER_ROLES), players // 5)
    return SetupShape(town_power=town_power, citizens=town - town_power, mafia_power=mafia_power,
                      goons=mafia - mafia_power)


def draw_setup(players: int, rng: random.Random, *, shape: SetupShape | None = None, cop_insanity=0,
               exclude: Iterable[str] = ()) -> M21Setup:
    """"Let the site draw" (M-SETUP-1): a legal setup for ``players`` with the power roles drawn at random from the
    town and mafia lists (without ``exclude``), in ``shape`` (default ``default_shape``). Raises ``SetupError``
    when the shape does not add up to ``players`` or asks for more power roles than the lists offer."""
    shape = shape or default_shape(players)
    if shape.town_power + shape.citizens + shape.mafia_power + shape.goons != players:
        raise SetupError(f"The shape adds up to {shape.town_power + shape.citizens + shape.mafia_power + shape.goons} "
                         f"seats, not {players}.")
    excluded = set(exclude)
    town_pool = [key for key in TOWN_POWER_ROLES if key not in excluded]
    mafia_pool = [key for key in MAFIA_POWER_ROLES if key not in excluded]
    if shape.town_power > len(town_pool) or shape.mafia_power > len(mafia_pool):
        raise SetupError("There are not enough power roles to draw from for this shape.")
    counts = {CITIZEN.key: shape.citizens, GOON.key: shape.goons}
    counts.update(dict.fromkeys(rng.sample(town_pool, shape.town_power), 1))
    counts.update(dict.fromkeys(rng.sample(mafia_pool, shape.mafia_power), 1))
    return check_setup(counts, players=players, cop_insanity=cop_insanity)


def draw_insane_cop(setup: M21Setup, rng: random.Random) -> str | None:
    """Cop sanity (M-ROLE-1): with probability ``setup.cop_insanity`` one of the setup's cops, drawn at random, is
    insane. Returns its role key, or None (every cop sane, or no cop in the setup)."""
    cops = setup.cops
    if not cops or setup.cop_insanity == 0:
        return None
    roll = Fraction(rng.randrange(1_000_000), 1_000_000)
    if roll >= setup.cop_insanity:
        return None
    return cops[rng.randrange(len(cops))]


@dataclass(frozen=True)
class Deal:
    """The roles dealt: ``roles`` player name -> role key, ``insane`` the name of the insane cop (or None),
    ``salt`` the secret salt and ``commitment`` the SHA-256 hex published before the deal (module docstring)."""

    roles: Mapping[str, str]
    insane: str | None
    salt: str
    commitment: str = field(default="")

    def lists(self) -> dict[str, list[str]]:
        """What the commitment hashes: role key -> sorted player names, plus ``INSANE_KEY`` -> [name] if any."""
        return deal_lists(self.roles, self.insane)


def deal_lists(roles: Mapping[str, str], insane: str | None) -> dict[str, list[str]]:
    """The commitment's lists of a deal (see ``Deal.lists``)."""
    lists: dict[str, list[str]] = {}
    for name, key in roles.items():
        lists.setdefault(key, []).append(name)
    result = {key: sorted(names) for key, names in sorted(lists.items())}
    if insane is not None:
        result[INSANE_KEY] = [insane]
    return result


def deal_roles(setup: M21Setup, players: Sequence[str], rng: random.Random) -> Deal:
    """Deal ``setup``'s deck to ``players`` (distinct names, as many as the setup's seats) with ``rng``, draw cop
    sanity (M-ROLE-1) and commit to the result. Raises ``SetupError`` when the numbers do not match."""
    if len(set(players)) != len(players):
        raise SetupError("Every player must be named once.")
    if len(players) != setup.players:
        raise SetupError(f"The setup has {setup.players} seats but there are {len(players)} players.")
    deck = setup.deck()
    rng.shuffle(deck)
    roles = dict(zip(players, deck, strict=True))
    insane_role = draw_insane_cop(setup, rng)
    insane = next((name for name, key in roles.items() if key == insane_role), None) if insane_role else None
    salt = new_salt(rng)
    return Deal(roles=MappingProxyType(roles), insane=insane, salt=salt,
                commitment=commitment(deal_lists(roles, insane), salt))


def verify_deal(roles: Mapping[str, str], insane: str | None, salt: str, published: str) -> bool:
    """True when the deal (player -> role key, the insane cop) and ``salt`` give the ``published`` commitment."""
    return verify_commitment(deal_lists(roles, insane), salt, published)


# ----------------------------------------------------------------------------------------------------------------
# The setup post (M-SETUP-1: all role texts are public)
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PostRules:
    """What the setup post says of the day: the phase lengths in hours, the phase shift (wall clock in the game's
    zone, e.g. "22:00 Europe/London"), the first day's planned start and end as the clock has them (written in the
    game's zone; empty when not known), whether self-votes and No Lynch are allowed (M-VOTE-1, M-VOTE-7)."""

    day_hours: int = 48
    night_hours: int = 24
    phase_shift: str = "22:00 Europe/London"
    first_day: str = ""
    self_votes_allowed: bool = True
    no_lynch_allowed: bool = True


def setup_post_text(setup: M21Setup, rules: PostRules = PostRules()) -> str:
    """The public setup post as Markdown (M-SETUP-1): the setup table, the rules of the day (vote syntax, hammer,
    must-vote, deadlines, M-VOTE-1..9, M-SETUP-2/3), cop sanity (M-ROLE-1) and every role text of the setup.
    Deadlines are named by the phase shift here; pages show each planned time in the viewer's zone beside it.
    The mafia's partners are never in it: each mafioso's role PM names them."""
    town = [(key, n) for key, n in setup.counts.items() if ROLES[key].alignment == TOWN]
    mafia = [(key, n) for key, n in setup.counts.items() if ROLES[key].alignment == MAFIA]

    def table(rows: list[tuple[str, int]]) -> list[str]:
        return ["| Role | Seats |", "| --- | --- |", *[f"| {ROLES[key].name} | {n} |" for key, n in rows]]

    lines = [
        f"## The setup: {setup.players} players",
        "",
        f"**Town ({setup.town})**",
        "",
        *table(town),
        "",
        f"**Mafia ({setup.mafia})**",
        "",
        *table(mafia),
        "",
        "## How the day works",
        "",
        "- **Vote** with a line `##VOTE name` in a post in the game thread. The name may be shortened or misspelt "
        "as long as it matches exactly one living player; otherwise the vote is refused and the candidates are "
        "listed under your post." + (" `##VOTE No Lynch` is a valid vote." if rules.no_lynch_allowed else "")
        + " `##UNVOTE` removes your vote; a new `##VOTE` replaces it." + ("" if rules.self_votes_allowed
                                                                          else " Self-votes are not allowed."),
        "- **`##END`** marks that you want the day to end now (you need a vote in place); `##UNEND` clears the "
        "mark. Changing your vote keeps the mark. Several commands in one post apply in the order written.",
        "- **Hammer:** the day ends at once when more than half of the living players are marked END and vote "
        "for the same target. Majority is floor(n/2) + 1 of n living players; the vote count above the thread "
        "shows how many each target still needs (L-n).",
        "- **End of day:** at the deadline the target with the most votes is imprisoned. No Lynch can win "
        "(nobody is imprisoned), and a tie imprisons nobody unless the Judge casts a vote.",
        "- **Must vote:** everyone must have a vote in place at the end of the day, vote at least once and post "
        "at least twice each day. The host is told who did not (ending the day on an unvote is allowed but "
        "listed).",
        "- The imprisoned and the dead can no longer post in the game thread. Votes on a player who dies during "
        "the day are void and their voters are told. Once the hammer falls, later posts carry no votes.",
        f"- **Deadlines:** days last {rules.day_hours} hours and nights {rules.night_hours} hours; phases shift "
        f"at {rules.phase_shift}: every phase ends at the phase shift nearest to its nominal end (on a tie, the "
        "later one), also after a hammer. The host may extend a phase. The page shows each deadline in your time "
        "zone." + (f" {rules.first_day}" if rules.first_day else ""),
        "- Spectators and eliminated players talk in the spectators' thread; players may not read it.",
        "",
    ]
    if setup.cops:
        percent = float(setup.cop_insanity * 100)
        lines += ["## Cop sanity", "",
                  (f"With a chance of {percent:g}% one of the cops is insane and gets the opposite result (an "
                   f"insane item cop reports a random possible item on a target with none). Sanity is revealed "
                   f"at death." if setup.cop_insanity else "Every cop is sane."), ""]
    lines += ["## The role texts", ""]
    for key in setup.counts:
        role = ROLES[key]
        lines += [f"### {role.name} ({role.alignment})", "", role.text, ""]
    return "\n".join(lines).rstrip() + "\n"


def role_pm_text(role_key: str, *, partners: Sequence[tuple[str, str]] = (), mafia_thread: str = "the mafia thread",
                 insane: bool = False) -> str:
    """The role PM of one seat (M-SETUP-1, M-ROLE): the role text, and for the mafia their partners as
    ``(name, role name)`` pairs and where they talk at night. ``insane`` is never told to the player (M-ROLE-1:
    revealed at death); the argument exists so that callers cannot forget the question: it must be False here.
    Raises ``ValueError`` for an unknown role or ``insane=True``."""
    if insane:
        raise ValueError("a cop's sanity is never told to the player (M-ROLE-1)")
    role = ROLES.get(role_key)
    if role is None:
        raise ValueError(f"unknown role {role_key!r}")
    if role.alignment != MAFIA:
        return role.text
    named = ", ".join(f"{name} ({role_name})" for name, role_name in partners) or "none: you are alone"
    text = role.text.replace("Your Mafia partners are XXXXXXX.", f"Your Mafia partners are {named}.")
    text = text.replace("in the Mafia QT, at XXXXXXX", f"in {mafia_thread}")
    if "Your Mafia partners are" not in text:
        text += f"\n\nYour Mafia partners are {named}. At night you talk with them in {mafia_thread}."
    return text
