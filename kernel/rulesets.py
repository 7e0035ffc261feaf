"""The ruleset interface and registry (DESIGN.md "Rulesets and layers"): what differs between hosted games.

A ruleset is a package (``rulesets/lepra``, ``rulesets/m21``) that subclasses ``RulesetSpec``, fills in what it
provides and calls ``register_ruleset(TheSpec())`` when Django loads it. The engine (scheduler, inboxes, policy,
tallies, night pipeline, archive) is shared and asks ``ruleset_of(game)`` whenever a rule differs; it never
imports a ruleset package. A game whose ``ruleset`` key is not registered is refused at creation
(``cities.services.do_create_game``) and by ``ruleset_of``.

How a ruleset package registers itself
--------------------------------------
Make the package a Django app listed in ``INSTALLED_APPS`` (e.g. ``"rulesets.m21"`` with ``label = "m21"``) and
register the spec in its ``AppConfig.ready``::

    # rulesets/m21/apps.py
    class M21Config(AppConfig):
        name = "rulesets.m21"
        label = "m21"

        def ready(self):
            from kernel.rulesets import register_ruleset   # ready() runs once the models are loaded
            from . import hooks, handlers                  # noqa: F401  (register the post hooks and handlers)
            from .ruleset import M21Ruleset
            register_ruleset(M21Ruleset())

As a fallback the kernel app also imports a module named ``ruleset`` of every installed app (Django's
``autodiscover_modules``), so a package whose ``ruleset.py`` calls ``register_ruleset`` at import time is
registered too. Registering the same key twice with the same class is a no-op; with another class it is an error.

What a spec declares, and where the shared engine asks for it
-------------------------------------------------------------
Plain attributes (override as class attributes):

- ``key``: the ``Game.ruleset`` value ("lepra", "m21"); ``name``: a lazily translated label for staff pages.
- ``language``: the UI language code of the game's pages ("ru" for Lepra, "en" for M21); ``Game.language``.
- ``default_time_zone``: the IANA zone a new game gets when its creator names none (L-DAY-1 for Lepra).
- ``phase_plan``: a ``PhasePlan`` with the defaults of the day/night clock (day start wall-clock time, ...).
- ``staff_kinds``: the ``StaffKind`` values a game of this ruleset may appoint.
- ``standing_inbox_kinds``: the ``InboxKind`` values of the inboxes the ruleset keeps open for the whole game
  (a Lepra city's inbox and mafia inbox, an M21 game thread); ``create_standing_inboxes`` makes them.
- ``post_hook_kinds``: the inbox kinds whose messages the ruleset turns into game actions. The hooks themselves
  are registered in ``inboxes.hooks`` with ``@post_hook(kind)`` (the scheduler's handler table is the model):
  ``inboxes.posting.do_post_message`` calls the hook of the inbox's kind inside its transaction.
- ``scheduler_kinds``: the ``ScheduledEvent`` kinds the ruleset handles; the handlers are registered with
  ``cities.scheduler.handler(kind)`` by the package when it loads.
- ``policy_grants``: the policy's grant and disclosure tables (a mapping the access policy reads; keys are
  documented next to the policy function that reads each).
- ``night_steps``: the ordered ``roles.night.NightStep`` instances ``roles.night.resolve_night`` walks.
- ``first_action_night``: the first night on which night actions count (Lepra: 2, L-DAY-5; M21: 1).
- ``daily_post_sections`` / ``archive_sections``: ordered section keys of the morning post and the archive page;
  ``daily_post_text`` composes the morning post from the first (every ruleset's post builder goes through it).
- ``console_tools``: the names of the staff console's ruleset-specific tools (``CONSOLE_TOOLS``) the ruleset
  provides; the console shows, and accepts, a tool for a game only when ``provides_console_tool(name)``.

Methods (override; the default raises ``NotProvidedByRuleset`` naming the ruleset and the part):

- ``create_standing_inboxes(game, *, now)``: make the standing inboxes when the game starts.
- ``night_state(game, night)``: build the ``roles.night.NightState`` the steps read.
- ``apply_night_outcome(game, outcome, *, night, now)``: apply a ``NightOutcome`` in the caller's transaction.
- ``after_day_death(game, *, now)``: what follows a death by day (re-elections, the victory check).
- ``check_victory(game)``: the winning side's key, or None while the game goes on.
- ``daily_post_section(game, day, key, context)``: the text of one section of the morning post (``context`` is
  what the ruleset's post builder gathered once for the whole post); ``daily_post_text(game, day, context)`` joins them;
  ``archive_section(game, key, viewer=...)``: one ``ArchiveSection`` of the game's archive page as ``viewer`` may
  see it, or None (``archive.selectors.ruleset_sections_for`` asks for every key of ``archive_sections``).

A ruleset may also bring a demo game for ``manage.py load_demo`` (development only): ``has_demo = True`` and
``demo_exists()``, ``load_demo(make_user=..., rng=..., now=...)`` (built through the ruleset's services; the command
passes ``make_user(username, display_name) -> User``, which creates the demo accounts with the demo password) and
``demo_logins(url) -> [lines]`` (what the command prints). Lepra's demo is ``rulesets.lepra.demo``, loaded first.

Every method is called inside the service's ``transaction.atomic`` (explicit registries, not signals: the
aftermath of a death runs in order, in one transaction). Methods take ``now`` from the caller and never read the
clock themselves.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import time
from typing import Any, ClassVar

from django.utils.translation import gettext as _

from .errors import NotProvidedByRuleset, UnknownRuleset

#: The staff console's tools that belong to one ruleset's rules, by name (``RulesetSpec.console_tools``). Pages,
#: actions, dashboard links and lines not named here are every ruleset's (residents, inboxes, messages, audit).
CONSOLE_TOOLS = frozenset({
    "clock",            # the day/night schedule page, the daily post page, rescheduling a missed voting
    "stage",            # opening a stage inbox
    "record_death",     # recording a death from the residents' list
    "replace_player",   # handing a seat to another account from the residents' list
    "penalty_ban",      # the Arbiter's penalty ban
    "voting",           # voting sessions, proxies, suicides, speech requests, voting times
    "court",            # court cases
    "judges",           # city judges, judge elections, removal demands, election times
    "stand_ins",        # Tribune stand-ins
    "impeachment",      # impeachment demands
    "end_game_early",   # ending the game early with a reason
    "no_confidence",    # complaints of no confidence
    "play_bans",        # play bans
    "commissar_offers", # the commissar offers awaiting an answer (a dashboard line)
})


@dataclass(frozen=True)
class ArchiveSection:
    """One section of a game's archive page, made by its ruleset: ``key`` (of ``archive_sections``), a ``title``
    and ``html``, safe HTML the ruleset rendered from its own templates (every value escaped there)."""

    key: str
    title: str
    html: str


@dataclass(frozen=True)
class PhasePlan:
    """Defaults of a ruleset's day/night clock. ``day_start``: wall-clock start of a day in the game's zone
    (L-DAY-1); ``extra``: further ruleset-specific defaults (names documented by the ruleset)."""

    day_start: time = time(10, 0)
    extra: Mapping[str, Any] = field(default_factory=dict)


#: The sections of the shared game pages that only some rulesets have (``RulesetSpec.page_sections``): a page or
#: part of a page of a section the game's ruleset lacks is not shown (a page answers 404).
PAGE_SECTIONS = frozenset({
    "cities",         # the cities' day pages, nominations, the per-city score and cast of the archive's front
    "touring",        # the touring rotation and the Lepra night page (L-NIGHT)
    "lepra_setup",    # the Procurator's setup pages, mafia numbers, commissar offers, scheduled posts
    "mafia_draw",     # the verification of the mafia draw (L-ASSIGN-3)
    "lepra_staff",    # impeachment, the mafia's role acknowledgement, complaints of no confidence
})
#: The texts of shared pages and services each ruleset words in its own terms (``RulesetSpec.texts``).
TEXT_KEYS = frozenset({
    "dead_may_not_post",      # the refusal of a post by a dead player where the living read
    "imprisoned_may_not_post",  # the refusal of a post by an imprisoned player where the living read
    "archive_log_in_to_open",  # the archive's invitation to log in and open the inboxes open on request
    "procurator_title",  # the title of the game's Procurator beside their posts (an M21 game's Host, M-SETUP-4)
})


class RulesetSpec:
    """What a ruleset is: subclass it in the ruleset's package, override what differs, register an instance.

    The attributes below are the defaults; the methods raise ``NotProvidedByRuleset`` until a ruleset provides
    them, so that the engine never silently runs another ruleset's rules. See the module docstring for where the
    engine asks for each part.
    """

    #: The ``Game.ruleset`` value.
    key: ClassVar[str] = ""
    #: A label for staff pages (a lazily translated string is fine).
    name: ClassVar[Any] = ""
    #: The UI language code of the game's pages.
    language: ClassVar[str] = "en"
    #: The IANA time zone of a new game whose creator names none.
    default_time_zone: ClassVar[str] = "UTC"
    #: Defaults of the day/night clock.
    phase_plan: ClassVar[PhasePlan] = PhasePlan()
    #: The staff kinds (``cities.models.StaffKind`` values) a game of this ruleset may appoint.
    staff_kinds: ClassVar[tuple[str, ...]] = ()
    #: The inbox kinds the ruleset keeps open for the whole game.
    standing_inbox_kinds: ClassVar[tuple[str, ...]] = ()
    #: The inbox kinds whose messages run a post hook (registered in ``inboxes.hooks``).
    post_hook_kinds: ClassVar[tuple[str, ...]] = ()
    #: The scheduled-event kinds the ruleset handles (handlers registered in ``cities.scheduler``).
    scheduler_kinds: ClassVar[tuple[str, ...]] = ()
    #: The policy's grant and disclosure tables, read by ``inboxes.policies``.
    policy_grants: ClassVar[Mapping[str, Any]] = {}
    #: The sections of the shared pages (keys of ``PAGE_SECTIONS``) the ruleset's games have.
    page_sections: ClassVar[frozenset[str]] = frozenset()
    #: The ruleset's wording of the shared texts (keys of ``TEXT_KEYS``; values may be lazily translated).
    texts: ClassVar[Mapping[str, Any]] = {}
    #: The ordered night pipeline (``roles.night.NightStep`` instances).
    night_steps: ClassVar[Sequence[Any]] = ()
    #: The first night whose actions count.
    first_action_night: ClassVar[int] = 1
    #: Ordered section keys of the morning (daily) post.
    daily_post_sections: ClassVar[tuple[str, ...]] = ()
    #: Ordered section keys of the archive page.
    archive_sections: ClassVar[tuple[str, ...]] = ()

    #: The staff console's tools (names of ``CONSOLE_TOOLS``) the ruleset provides.
    console_tools: ClassVar[frozenset[str]] = frozenset()

    #: Whether the ruleset brings a demo game (``load_demo`` and friends).
    has_demo: ClassVar[bool] = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key!r}>"

    def provides_console_tool(self, name: str) -> bool:
        """True when the staff console's tool ``name`` (of ``CONSOLE_TOOLS``) is part of this ruleset's rules.
        Raises ``ValueError`` for a name not in ``CONSOLE_TOOLS`` (a typo would hide a tool silently)."""
        if name not in CONSOLE_TOOLS:
            raise ValueError(f"unknown console tool {name!r}")
        return name in self.console_tools

    def missing_console_tool(self, label: str) -> NotProvidedByRuleset:
        """The refusal of a console tool this ruleset does not provide; ``label`` is the tool's translated name."""
        return self._missing(label)

    def _missing(self, part: str) -> NotProvidedByRuleset:
        return NotProvidedByRuleset(_("The %(ruleset)s ruleset does not provide %(part)s.")
                                    % {"ruleset": self.key or type(self).__name__, "part": part})

    def create_standing_inboxes(self, game, *, now) -> list:
        """Create the game's standing inboxes (``standing_inbox_kinds``) in the caller's transaction; returns them.
        Raises ``NotProvidedByRuleset`` by default."""
        raise self._missing("standing inboxes")

    def night_state(self, game, night: int):
        """The ``roles.night.NightState`` of ``game`` at the end of ``night`` (before resolution)."""
        raise self._missing("a night state builder")

    def apply_night_outcome(self, game, outcome, *, night: int, acting_user=None, now) -> None:
        """Apply a ``roles.night.NightOutcome`` (deaths, private results, public lines) in the caller's
        transaction, writing the audit rows."""
        raise self._missing("an outcome applier")

    def after_day_death(self, game, *, now) -> str | None:
        """The aftermath of a death by day (an execution, a suicide, a penalty), run in the caller's transaction
        after the death is recorded: re-elections, the victory check. Returns the winning side's key or None."""
        raise self._missing(_("the aftermath of a death"))

    def check_victory(self, game) -> str | None:
        """The winning side's key when the game is won, else None (read-only; the service ends the game)."""
        raise self._missing("a victory check")

    def daily_post_section(self, game, day: int, key: str, context) -> str:
        """The Markdown of one section (a key of ``daily_post_sections``) of the morning post of ``day``, from
        ``context`` (what the ruleset's post builder gathered once: its type is the ruleset's own); "" when the
        section has nothing to say. Raises ``NotProvidedByRuleset`` by default."""
        raise self._missing(_("the daily post section %(key)s") % {"key": key})

    def daily_post_text(self, game, day: int, context) -> str:
        """The Markdown of the morning post of ``day``: ``daily_post_section`` of each key of
        ``daily_post_sections`` in order, the empty ones left out, joined by newlines (a section starts with the
        blank line it wants before it). Raises ``NotProvidedByRuleset`` when the ruleset declares no section."""
        if not self.daily_post_sections:
            raise self._missing(_("a daily post"))
        sections = (self.daily_post_section(game, day, key, context) for key in self.daily_post_sections)
        return "\n".join(text for text in sections if text)

    def archive_section(self, game, key: str, *, viewer) -> ArchiveSection | None:
        """One section (a key of ``archive_sections``) of the game's archive page as ``viewer`` (a user, possibly
        anonymous) may see it, or None when nothing of it is theirs to see (the ruleset asks the access policy)."""
        raise self._missing(_("the archive section %(key)s") % {"key": key})

    def demo_exists(self) -> bool:
        """True when the ruleset's demo game is loaded (False by default: no demo)."""
        return False

    def load_demo(self, *, make_user, rng, now) -> None:
        """Build the ruleset's demo game through its services (``make_user(username, display_name) -> User`` makes
        each demo account; ``rng`` drives every draw; ``now``, aware UTC, is the demo's present). Raises
        ``NotProvidedByRuleset`` by default."""
        raise self._missing("a demo game")

    def demo_logins(self, url: str) -> list[str]:
        """The lines ``manage.py load_demo`` prints about the demo game's personas (logins, and on purpose their
        roles), with ``url`` the site's address; [] when there is no demo."""
        return []

    def has_page_section(self, key: str) -> bool:
        """True when the ruleset's games have the shared page section ``key`` (of ``PAGE_SECTIONS``). Raises
        ``ValueError`` for any other key (a typo would hide a section silently)."""
        if key not in PAGE_SECTIONS:
            raise ValueError(f"unknown page section {key!r}")
        return key in self.page_sections

    def text(self, key: str) -> str:
        """The ruleset's wording of the shared text ``key`` (of ``TEXT_KEYS``) in the active language. Raises
        ``ValueError`` for an unknown key and ``NotProvidedByRuleset`` when the ruleset has no wording for it."""
        if key not in TEXT_KEYS:
            raise ValueError(f"unknown text {key!r}")
        if key not in self.texts:
            raise self._missing(_("the text %(key)s") % {"key": key})
        return str(self.texts[key])


_REGISTRY: dict[str, RulesetSpec] = {}


def register_ruleset(spec: RulesetSpec) -> RulesetSpec:
    """Register ``spec`` under ``spec.key``; returns it. Idempotent for the same class (Django may run ``ready``
    twice in tests); raises ``ValueError`` for an empty key or a key taken by another class."""
    if not spec.key:
        raise ValueError(f"{type(spec).__name__} has no key")
    known = _REGISTRY.get(spec.key)
    if known is not None and type(known) is not type(spec):
        raise ValueError(f"ruleset {spec.key!r} is already registered by {type(known).__name__}")
    if known is None:
        _REGISTRY[spec.key] = spec
    return _REGISTRY[spec.key]


def get_ruleset(key: str) -> RulesetSpec:
    """The registered spec of ``key``. Raises ``UnknownRuleset`` (an ``InvalidInput``) for any other key."""
    try:
        return _REGISTRY[key]
    except (KeyError, TypeError):
        raise UnknownRuleset(_("Unknown ruleset: %(r)s.") % {"r": key}) from None


def ruleset_of(game) -> RulesetSpec:
    """The spec of ``game`` (anything with a ``ruleset`` key). Raises ``UnknownRuleset`` when it is not
    registered: an engine never falls back to another ruleset's rules."""
    return get_ruleset(game.ruleset)


def registered_rulesets() -> dict[str, RulesetSpec]:
    """The registered specs by key (a copy), in registration order."""
    return dict(_REGISTRY)
