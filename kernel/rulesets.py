"""The ruleset interface and registry (DESIGN.md "Rulesets and layers"): what differs between hosted games.

A ruleset is a package (``rulesets/<name>``) that subclasses ``RulesetSpec``, fills in what it
provides and calls ``register_ruleset(TheSpec())`` when Django loads it. The engine (scheduler, inboxes, policy,
tallies, night pipeline, archive) is shared and asks ``ruleset_of(game)`` whenever a rule differs; it never
imports a ruleset package. A game whose ``ruleset`` key is not registered is refused at creation
(``cities.services.do_create_game``) and by ``ruleset_of``.

How a ruleset package registers itself
--------------------------------------
Make the package a Django app listed in ``INSTALLED_APPS`` (e.g. ``"rulesets.dice"`` with ``label = "dice"``, a
toy ruleset) and register the spec in its ``AppConfig.ready``::

    # rulesets/dice/apps.py
    class DiceConfig(AppConfig):
        name = "rulesets.dice"
        label = "dice"

        def ready(self):
            from kernel.rulesets import register_ruleset   # ready() runs once the models are loaded
            from . import hooks, handlers                  # noqa: F401  (register the post hooks and handlers)
            from .ruleset import DiceRuleset
            register_ruleset(DiceRuleset())

As a fallback the kernel app also imports a module named ``ruleset`` of every installed app (Django's
``autodiscover_modules``), so a package whose ``ruleset.py`` calls ``register_ruleset`` at import time is
registered too. Registering the same key twice with the same class is a no-op; with another class it is an error.

What a spec declares, and where the shared engine asks for it
-------------------------------------------------------------
Plain attributes (override as class attributes):

- ``key``: the ``Game.ruleset`` value (the ruleset's app label); ``name``: a lazily translated label for staff pages.
- ``language``: the UI language code of the game's pages ("ru", "en"...); ``Game.language``.
- ``default_time_zone``: the IANA zone a new game gets when its creator names none.
- ``phase_plan``: a ``PhasePlan`` with the defaults of the day/night clock (day start wall-clock time, ...).
- ``has_cities``: whether the ruleset's games are played in cities (``cities.models.City``). A seat of such a
  game is in one of its cities; a seat of any other game is in none (``Resident.city`` None, checked by the
  seating services), and the engine shows or groups by city (a console column, a "name · city" label, a score by
  city) only where the game's ruleset has cities.
- ``staff_kinds``: the staff kinds of the ruleset's games (value -> lazily translated label): the game's host
  (``cities.staff_kinds.HOST_STAFF_KIND``, "procurator", labelled as the ruleset names its host) and the ruleset's
  own kinds; their powers are its ``policy_grants`` (``"staff"`` and the tables of ``cities.staff_kinds``).
- ``standing_inbox_kinds``: the inbox kinds of the inboxes the ruleset keeps open for the whole game
  (a city's inbox and mafia inbox, a game thread); ``create_standing_inboxes`` makes them.
- ``inbox_kind_choices``: the ruleset's own inbox kinds, (value, lazily translated label) pairs (the
  ``choices`` of a ``TextChoices`` in the ruleset's package, its ``kinds.py``): the choices of ``Inbox.kind`` are
  every registered ruleset's (``known_inbox_kind_choices``, a callable: a new kind needs no migration of the
  engine), and the engine names a kind by its ruleset's label (``inbox_kind_label``). The engine names no
  ruleset's kind.
- ``inbox_kinds``: every inbox kind that exists in the ruleset's games, each one of its ``inbox_kind_choices``
  (``inboxes.services`` refuses to create any other, the pages offer none); ``self_opened_inbox_kinds``: those a
  player or staff member opens on their own (secret inboxes; none in a ruleset that allows no private channel).
  ``inbox_kind_roles``: which of its kinds plays a part the shared services name by a neutral role ("secret": the
  inboxes ``inboxes.services.do_create_secret_inbox`` opens, "stage", "city_square", ...), asked through
  ``inbox_kind_for(role)`` (None: the ruleset has none; a role no ruleset maps is a ``ValueError``).
- ``reader_notified_inbox_kinds`` / ``night_result_inbox_kinds``: which inboxes notify every reader of a new
  message, and where a message of the site is a night result (worded by ``wording("notification_night_result")``).
- ``inbox_kind_order``: the order of inbox kinds in "my inboxes" (``inboxes.selectors.inbox_list_for``) and in
  the engine's lists of kinds (a refusal naming the kinds a rule allows); kinds it does not name come after.
- ``post_hook_kinds``: the inbox kinds whose messages the ruleset turns into game actions. The hooks themselves
  are registered in ``inboxes.hooks`` with ``@post_hook(kind)`` (the scheduler's handler table is the model):
  ``inboxes.posting.do_post_message`` calls the hook of the inbox's kind inside its transaction; the hook names
  the ruleset's templates the thread page renders its box, its head and its receipts with.
- ``scheduler_kinds``: the ``ScheduledEvent`` kinds the ruleset handles; the handlers are registered with
  ``cities.scheduler.handler(kind)`` by the package when it loads.
- ``policy_grants``: the policy's grant and disclosure tables, read for the ruleset's games only (a mapping:
  ``"staff"`` {staff kind: ``inboxes.policies.StaffGrant`` tuple}, ``"conditional_staff"``, ``"spectators"``,
  ``"public_after_game"``, ``"open_on_request_after_game"``, ``"hosts_know_alignments"``, ``"seat_states"``
  {state: ``inboxes.policies.SeatStateGrant``}; each documented next to the policy function that reads it), the
  staff tables of ``cities.staff_kinds.STAFF_TABLES`` (``"city_staff_kinds"``, ``"court_staff_kinds"``,
  ``"secret_staff_kinds"``, ``"night_staff_kinds"``, ``"cohost_staff_kinds"``), and the per-kind
  tables of ``inboxes.policy_tables.KIND_TABLES`` (``"consent_after_game"``, ``"secret_organizers"``,
  ``"penalty_ban_kinds"``, ``"secret_member_kinds"``, ``"dated_kinds"``, ``"vote_only_kinds"``,
  ``"dead_post_kinds"``, ``"imprisoned_post_kinds"``, ``"no_rollover_kinds"``, ``"rollover_keeps_dead_kinds"``,
  ``"immutable_kinds"``, ``"unnamed_author_kinds"``, ``"night_page_kinds"``, ``"nomination_link_kinds"``,
  ``"leavable_kinds"``, ``"organized_kinds"``, ``"draw_record_kinds"``, ``"complaint_page_kinds"``: sets of inbox kinds, staff kinds for the organizers; documented in that module and read
  through ``policy_tables.kinds_of(game, table)``; one not declared is empty): a ruleset inherits no other's
  grants, disclosures or tables.
- ``night_steps``: the ordered ``roles.night.NightStep`` instances ``roles.night.resolve_night`` walks.
- ``first_action_night``: the first night on which night actions count (1 or 2, say).
- ``daily_post_sections`` / ``archive_sections`` / ``votes_page_sections``: ordered section keys of the morning
  post, the archive page and the archive's votes page;
  ``daily_post_text`` composes the morning post from the first (every ruleset's post builder goes through it).
- ``audit_sentences``: the audit log's sentence of each event kind the ruleset's own services record
  (``staff.audit_sentences`` reads them for its games, the engine words only its own kinds), with
  ``audit_payload_codes`` / ``audit_kind_codes`` (payload codes shown in words); ``event_kinds``: the typed
  kinds its own services record (a subclass of ``kernel.events.DeclaredEventKind`` in its package: each kind's
  audience in the audit log and its line on the archive's timeline), and ``event_families``: the audience of the
  kinds it records by prefix (both read by ``kernel.events.event_audience``); ``scheduled_event_kinds``: the typed
  ``ScheduledEvent`` kinds its own services plan (a subclass of ``kernel.events.DeclaredScheduledKind``: the
  audience of each one's ``scheduler.<kind>`` row and its label, ``kernel.events.scheduled_label``).
- ``console_tools``: the staff console's ruleset-specific tools the ruleset provides (name -> label); the console
  shows, and accepts, a tool for a game only when ``provides_console_tool(name)``.
- ``rule_ids``: the IDs of the ruleset's own rules that the engine's refusals cite (``RuleViolation.rule``): the
  engine names the rule a refusal enforces by a neutral key ("procurator_only", "city_formation", ...) and asks
  ``rule_id(game, key)`` (or ``spec.rule_id(key)``); a key the ruleset does not map gives no rule ID, never
  another ruleset's, and a key no registered ruleset maps is a loud ``ValueError`` (``known_rule_keys``).
- ``page_sections`` / ``texts``: the sections of the shared pages the ruleset's games have and its wording of the
  shared texts. What every registered ruleset declares is the known set (``known_console_tools``,
  ``known_page_sections``, ``known_text_keys``, ``known_inbox_kinds``): the engine asking for a name no ruleset
  declares is a loud ``ValueError`` (a typo), not a silent "no". ``wording(key, default)`` lets a ruleset word an
  engine text its own way (a notification about a role PM); ``winner_sentence(side)`` is the archive's line
  (texts ``won_<side>`` and ``no_winner``).
- ``audit_reference_models`` / ``audit_city_references``: the ruleset's own records that the audit log names by
  public id (``inboxes.audit_policy``) and those whose city decides a city's audience; ``audit_kind_references``:
  the payload keys that name another kind of record in some of its event kinds.
- ``new_game_url_name`` / ``summary``: the page that creates a game of the ruleset, offered on the "new game" page;
  ``urls_module``: the ruleset's URLconf, included by the project's; ``game_page_links(game, is_staff=...)``: the
  links the shared game page shows to the ruleset's own pages; ``game_page_notes(game)``: public notes of the
  ruleset's own shown there (safe HTML); ``thread_links(viewer, inbox, can_moderate=...)``: the links a thread page
  shows to the ruleset's own pages, as (URL, text, CSS class).

Methods (override; the default raises ``NotProvidedByRuleset`` naming the ruleset and the part):

- ``create_standing_inboxes(game, *, now)``: make the standing inboxes when the game starts.
- ``night_state(game, night)``: build the ``roles.night.NightState`` the steps read.
- ``apply_night_outcome(game, outcome, *, night, now)``: apply a ``NightOutcome`` in the caller's transaction.
- ``after_day_death(game, *, now)``: what follows a death by day (re-elections, the victory check).
- ``after_death_memberships(game, residents, *, cause, spirit_of, now)`` with ``own_death_memberships = True``: what
  a death does to the seat's inboxes, asked by the shared death service (which by itself changes none).
- The seat hooks (each with a neutral default: no rank, no position, no state): ``seat_state_relations`` (the related
  names of the ruleset's one-to-one seat rows, selected with the seats: ``seat_state_relations()``), ``seat_roles``
  (``SeatRole``: a secret rank and who may learn it, decided by ``inboxes.knowledge.knows_seat_role``) with
  ``holds_seat_role`` and its query form ``seat_role_q``, ``seat_knows_alignment``, ``public_seat_roles``,
  ``seat_state`` / ``end_seat_state`` (with ``policy_grants["seat_states"]``), ``standing_members`` and its query
  form ``standing_members_q``, ``death_facts`` and ``after_deaths`` (asked by the shared death service).
- ``record_notifications(since=, now=, live_statuses=)``: the notifications of the ruleset's own records
  (``archive.services.do_collect_notifications``), each pointing at its record (``Notification.record``), which
  the ruleset words (``record_notification_text``), links (``record_notification_url``), reads in bulk
  (``record_notification_querysets``) and shows only while ``record_still_allowed``; ``timeline_records(game)``: its records that the archive's
  timeline names (``archive.selectors``) and ``timeline_line``: the timeline's line of an event of a kind it
  declares with a ``timeline`` (``event_kinds``); ``attention_items`` / ``self_told_inbox_ids`` (what a seat must answer,
  the inboxes whose site messages the ruleset tells itself), ``draw_record_q`` / ``is_draw_record`` (a draw's
  record, disclosed after the game) and ``recorded_winner`` (the archive's winner). Nothing by default (but an
  event of a declared timeline kind: after the game, as its ``timeline`` word).
- ``check_victory(game)``: the winning side's key, or None while the game goes on; ``winner_among(game,
  residents)``: the same over seats a caller read (the archive's fallback; by default ``check_victory``).
- ``daily_post_section(game, day, key, context)``: the text of one section of the morning post (``context`` is
  what the ruleset's post builder gathered once for the whole post); ``daily_post_text(game, day, context)`` joins them;
  ``archive_section(game, key, viewer=...)``: one ``ArchiveSection`` of the game's archive page as ``viewer`` may
  see it, or None (``archive.selectors.ruleset_sections_for`` asks for every key of ``archive_sections``).

A ruleset may also bring a demo game for ``manage.py load_demo`` (development only): ``has_demo = True`` and
``demo_exists()``, ``load_demo(make_user=..., rng=..., now=...)`` (built through the ruleset's services; the command
passes ``make_user(username, display_name) -> User``, which creates the demo accounts with the demo password) and
``demo_logins(url) -> [lines]`` (what the command prints). The command, kept by one ruleset, loads its own demo
first, then every other registered ruleset's that has one.

Every method is called inside the service's ``transaction.atomic`` (explicit registries, not signals: the
aftermath of a death runs in order, in one transaction). Methods take ``now`` from the caller and never read the
clock themselves.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _

from .errors import NotProvidedByRuleset, UnknownRuleset
from .ruleset_parts import ArchiveSection, PhasePlan, SeatRole


def seat_state_relations() -> tuple[str, ...]:
    """The related names on ``Resident`` that every registered ruleset keeps its seat state in
    (``RulesetSpec.seat_state_relations``), in registration order: what a read of seats that the policy or a page
    will ask the ruleset about selects (``select_related``), so that the questions cost no query."""
    names: list[str] = []
    for spec in _REGISTRY.values():
        names.extend(name for name in spec.seat_state_relations if name not in names)
    return tuple(names)


def known_console_tools() -> dict[str, Any]:
    """Every staff console tool some registered ruleset provides (``RulesetSpec.console_tools``): name -> the
    label a refusal names it by (the first registration's). Pages, actions, dashboard links and lines of no tool
    are every ruleset's (residents, inboxes, messages, audit)."""
    tools: dict[str, Any] = {}
    for spec in _REGISTRY.values():
        for name, label in spec.console_tools.items():
            tools.setdefault(name, label)
    return tools


def known_page_sections() -> frozenset[str]:
    """Every section of the shared game pages some registered ruleset has (``RulesetSpec.page_sections``)."""
    return frozenset().union(*(spec.page_sections for spec in _REGISTRY.values()))


def known_text_keys() -> frozenset[str]:
    """Every shared text some registered ruleset words (``RulesetSpec.texts``)."""
    return frozenset().union(*(spec.texts.keys() for spec in _REGISTRY.values()))


def known_rule_keys() -> frozenset[str]:
    """Every neutral rule key some registered ruleset maps to a rule ID (``RulesetSpec.rule_ids``)."""
    return frozenset().union(*(spec.rule_ids.keys() for spec in _REGISTRY.values()))


def registry_version() -> tuple[int, int]:
    """A value that changes whenever a ruleset is registered (or the registry is swapped, as a test does): what a
    table joined from every ruleset's declarations is cached by (``kernel.events``)."""
    return id(_REGISTRY), len(_REGISTRY)


def known_inbox_kinds() -> frozenset[str]:
    """Every inbox kind that exists in the games of some registered ruleset (``RulesetSpec.inbox_kinds``)."""
    return frozenset().union(*(spec.inbox_kinds for spec in _REGISTRY.values()))


def known_inbox_kind_roles() -> frozenset[str]:
    """Every neutral role some registered ruleset gives one of its inbox kinds (``RulesetSpec.inbox_kind_roles``)."""
    return frozenset().union(*(spec.inbox_kind_roles.keys() for spec in _REGISTRY.values()))


def known_inbox_kind_choices() -> list[tuple[str, Any]]:
    """(value, label) of every inbox kind some registered ruleset defines (``RulesetSpec.inbox_kind_choices``), in
    registration order, each value once with the first registration's label: the choices of ``Inbox.kind`` (a
    callable, so a ruleset's new kind needs no migration)."""
    choices: dict[str, Any] = {}
    for spec in _REGISTRY.values():
        for value, label in spec.inbox_kind_choices:
            choices.setdefault(value, label)
    return list(choices.items())


def inbox_kind_label(kind: str, game=None) -> str:
    """The label of the inbox kind ``kind`` in the active language: the ruleset of ``game``'s (anything with a
    ``ruleset`` key, or the key) when it defines the kind, else the first registered ruleset's that does, else the
    value itself."""
    spec = _REGISTRY.get(game if isinstance(game, str) else getattr(game, "ruleset", None))
    if spec is not None and kind in spec.inbox_kind_labels:
        return str(spec.inbox_kind_labels[kind])
    return str(dict(known_inbox_kind_choices()).get(kind, kind))


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
    #: Whether the ruleset's games have cities: a seat is in one exactly when they do (see the module text).
    has_cities: ClassVar[bool] = False
    #: The staff kinds of the ruleset's games, value -> lazily translated label: the host ("procurator") and the
    #: ruleset's own kinds (``StaffRole.kind`` takes its choices from every ruleset's).
    staff_kinds: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: The inbox kinds the ruleset keeps open for the whole game.
    standing_inbox_kinds: ClassVar[tuple[str, ...]] = ()
    #: The ruleset's own inbox kinds: (value, lazily translated label) pairs, as a ``TextChoices``' ``choices``
    #: defined in the ruleset's package. A value fits ``Inbox.kind`` (12 characters; a system check says so).
    inbox_kind_choices: ClassVar[Sequence[tuple[str, Any]]] = ()
    #: Every inbox kind (of ``inbox_kind_choices``) that exists in the ruleset's games: the engine
    #: creates no inbox of another kind in them and its pages offer none.
    inbox_kinds: ClassVar[frozenset[str]] = frozenset()
    #: The kinds of ``inbox_kinds`` that a player or a staff member opens on their own (secret inboxes, say);
    #: the others are opened by the ruleset's own services only.
    self_opened_inbox_kinds: ClassVar[frozenset[str]] = frozenset()
    #: The kinds (of ``inbox_kind_choices``) that play a part the shared services name by a neutral role: role ->
    #: kind (``inbox_kind_for``). A role the ruleset does not map is a part its games do not have.
    inbox_kind_roles: ClassVar[Mapping[str, str]] = {}
    #: The inbox kinds whose new messages notify every reader ("new messages in your inboxes"); in the others a
    #: message notifies only those it mentions. ``night_result_inbox_kinds``: those where a message of the site is a
    #: night result for its readers (worded by the ruleset: ``wording("notification_night_result", ...)``).
    reader_notified_inbox_kinds: ClassVar[frozenset[str]] = frozenset()
    night_result_inbox_kinds: ClassVar[frozenset[str]] = frozenset()
    #: The order of the inbox kinds in a player's "my inboxes", what a player opens most first; the kinds it does
    #: not name follow them all, by city and id as the named ones are within a kind.
    inbox_kind_order: ClassVar[tuple[str, ...]] = ()
    #: The inbox kinds whose messages run a post hook (registered in ``inboxes.hooks``).
    post_hook_kinds: ClassVar[tuple[str, ...]] = ()
    #: The scheduled-event kinds the ruleset handles (handlers registered in ``cities.scheduler``).
    scheduler_kinds: ClassVar[tuple[str, ...]] = ()
    #: The policy's grant and disclosure tables, read by ``inboxes.policies``.
    policy_grants: ClassVar[Mapping[str, Any]] = {}
    #: The sections of the shared pages the ruleset's games have (a page or a part of a page of a section the
    #: game's ruleset lacks is not shown; a page answers 404). Names are the ruleset's (``known_page_sections``).
    page_sections: ClassVar[frozenset[str]] = frozenset()
    #: The ruleset's wording of the shared texts the engine shows (key -> text; values may be lazily translated):
    #: e.g. ``dead_may_not_post``, ``imprisoned_may_not_post``, ``archive_log_in_to_open``, ``procurator_title``,
    #: ``complaint_page_posting`` (where the members of a ``complaint_page_kinds`` inbox write; ``%(city)s``).
    texts: ClassVar[Mapping[str, Any]] = {}
    #: The IDs of the ruleset's own rules that the engine's refusals cite: neutral key -> rule ID (``rule_id``).
    rule_ids: ClassVar[Mapping[str, str]] = {}
    #: The audit log's sentences of the event kinds the ruleset's own services record (``GameEvent.kind`` -> a
    #: lazily translated sentence whose blanks name payload keys, ``%(resident)s``..., and ``%(actor)s``), read by
    #: ``staff.audit_sentences`` for the ruleset's games: the engine words only the kinds it records itself.
    audit_sentences: ClassVar[Mapping[str, Any]] = {}
    #: Payload codes the ruleset's audit sentences show in words: payload key -> a Django choices enum whose label
    #: words the stored code (``audit_payload_codes``); ``audit_kind_codes``: event kind -> the choices of that
    #: event's payload key "kind" (elsewhere "kind" names a scheduled event).
    audit_payload_codes: ClassVar[Mapping[str, Any]] = {}
    audit_kind_codes: ClassVar[Mapping[str, Any]] = {}
    #: The typed ``GameEvent`` kinds the ruleset's own services record: the members of a subclass of
    #: ``kernel.events.DeclaredEventKind`` in its package (each with its audit audience and timeline line), read by
    #: ``kernel.events`` after the engine's ``EventKind``. A kind the engine declares is the engine's.
    event_kinds: ClassVar[Sequence[Any]] = ()
    #: Who among the staff browses the event kinds the ruleset records without typing each one:
    #: (kind prefix, ``kernel.events.Audience``) pairs, read by ``kernel.events.event_audience`` after the typed
    #: kinds.
    event_families: ClassVar[tuple[tuple[str, Any], ...]] = ()
    #: The typed ``ScheduledEvent`` kinds the ruleset's own services plan: the members of a subclass of
    #: ``kernel.events.DeclaredScheduledKind`` (the audience of each one's ``scheduler.<kind>`` row, its label).
    scheduled_event_kinds: ClassVar[Sequence[Any]] = ()
    #: The ordered night pipeline (``roles.night.NightStep`` instances).
    night_steps: ClassVar[Sequence[Any]] = ()
    #: The first night whose actions count.
    first_action_night: ClassVar[int] = 1
    #: Ordered section keys of the morning (daily) post.
    daily_post_sections: ClassVar[tuple[str, ...]] = ()
    #: Ordered section keys of the archive page.
    archive_sections: ClassVar[tuple[str, ...]] = ()
    #: Ordered section keys (``archive_section``) the shared votes page shows: the ruleset's day votes.
    votes_page_sections: ClassVar[tuple[str, ...]] = ()

    #: The staff console's tools that belong to the ruleset's rules: name -> the label a refusal names it by (a
    #: lazily translated string). The console shows, and accepts, a tool for a game only when its ruleset has it.
    console_tools: ClassVar[Mapping[str, Any]] = {}

    #: The URL name of the page that creates a game of this ruleset ("" when there is none); the "new game" page
    #: offers every registered ruleset's. ``summary``: a short description beside its name there.
    new_game_url_name: ClassVar[str] = ""
    #: The URL name (one ``slug`` argument) the creator of a game is sent to once it is made: by default its page.
    after_create_url_name: ClassVar[str] = "game_detail"
    #: The dotted path of the ruleset's URLconf ("" when it has no pages of its own), included by the project's.
    urls_module: ClassVar[str] = ""
    summary: ClassVar[Any] = ""

    #: True when the ruleset says what a death does to the seat's memberships (``after_death_memberships``); else the
    #: shared death service changes none (the seat's state alone decides what it may still do).
    own_death_memberships: ClassVar[bool] = False
    #: Whether the ruleset brings a demo game (``load_demo`` and friends).
    has_demo: ClassVar[bool] = False

    #: Whether the game page lists the signed-up players by name before the deal (a forum sign-up thread does).
    public_signups: ClassVar[bool] = False

    #: The deadlines (``ScheduledEvent`` kinds) whose approach is told to those they concern, with the ruleset's
    #: wording: ``%(game)s`` (the title), ``%(when)s`` (the time in the reader's zone) and ``%(zone)s``.
    reminder_texts: ClassVar[Mapping[str, Any]] = {}

    def reminder_audience(self, event) -> list:
        """The users (active or not; the caller filters) whom the approaching deadline ``event`` (a kind of
        ``reminder_texts``) concerns, each one able to read where it happens. Read-only; nobody by default."""
        return []

    def record_notifications(self, *, since, now, live_statuses) -> list[tuple[int, str, dict]]:
        """The notifications of the ruleset's own records written in (``since``, ``now``] in games of
        ``live_statuses``, for ``archive.services.do_collect_notifications``: ``(user id, NotificationKind value,
        source fields of the Notification row)`` each, the audience the policy allows now. Read-only; none by
        default."""
        del since, now, live_statuses
        return []

    def record_notification_querysets(self) -> list:
        """The querysets (one per record model of ``record_notifications``, with what the hooks below read
        selected) through which the engine prefetches the records of many notifications at once. None by default."""
        return []

    def record_still_allowed(self, user, record) -> bool:
        """Whether ``user`` (active) may still be told of ``record``, one of the ruleset's records a notification
        of theirs points at (``archive.notifications.still_allowed``). Read-only; never by default: a ruleset that
        tells no records allows none."""
        del user, record
        return False

    def record_notification_text(self, notification) -> str:
        """What ``notification`` of one of the ruleset's records says (in the active language), with the game's
        title. Only asked of a notification ``record_still_allowed`` lets through; "" by default."""
        del notification
        return ""

    def record_notification_url(self, notification) -> str:
        """Where ``notification`` of one of the ruleset's records leads (a site path); "" by default (the engine
        then links the game)."""
        del notification
        return ""

    def attention_items(self, user, game, seat) -> list[tuple[str, str]]:
        """What ``seat`` (``user``'s seat in ``game``, or None) must answer now besides the deadlines, as
        ``(text, url)``, first on the "needs your attention" list (``archive.notifications.attention_for``): a
        commissar offer, say. Read-only; nothing by default."""
        del user, game, seat
        return []

    def self_told_inbox_ids(self, inbox_ids) -> set[int]:
        """Of ``inbox_ids``, the inboxes whose site messages the ruleset tells through its own notification (a
        commissar offer's inbox, say: the offer is told as an offer), left out of the message notifications
        (``archive.notifications.message_audience``). None by default."""
        del inbox_ids
        return set()

    def draw_record_q(self):
        """``Q`` over Inbox: the inboxes that are the record of a draw of the ruleset's games (a mafia draw's
        notary, say), disclosed after the game when of a ``draw_record_kinds`` kind (``inboxes.policies``). None by
        default."""
        from django.db.models import Q

        return Q(pk__in=[])

    def is_draw_record(self, inbox) -> bool:
        """The bool form of ``draw_record_q``. False by default."""
        return False

    def recorded_winner(self, game) -> str | None:
        """The winning side the ruleset recorded when ``game`` ended ("" for a game ended without a winner), or
        None when it recorded none (``archive.selectors.winner_of``). None by default."""
        return None

    def timeline_records(self, game) -> dict[str, dict[int, Any]]:
        """The ruleset's records that ``game``'s public events name, for the archive's timeline
        (``archive.selectors``): {payload key kind ("sessions", "cases"): {id: record with its ``city``}}. Read
        once per page; none by default."""
        return {}

    def timeline_line(self, event, shown: str, *, viewer, residents: Mapping[int, Any], cities: Mapping[int, Any],
                      finished: bool, related: Mapping[str, Any]) -> tuple[str, Any] | None:
        """The archive timeline's line of ``event``, a ``GameEvent`` of a kind the ruleset declares with a timeline
        line ``shown`` (``event_kinds``: ``DeclaredEventKind.timeline``), as ``viewer`` reads it:
        ``(text in the active language, the City it is announced in or None)``, or None when it is not shown
        (not yet, or the record it names is gone). ``residents`` / ``cities``: the game's seats and cities by id;
        ``related``: the ruleset's ``timeline_records``; ``finished``: the game is over (``archive.selectors``).
        By default the event is shown after the game only, as ``shown``, in the city its payload names."""
        del viewer, residents
        if not finished:
            return None
        payload = event.payload if isinstance(event.payload, dict) else {}
        city = cities.get(payload.get("city")) if isinstance(payload.get("city"), int) else None
        return shown, city

    #: The audit log's references to the ruleset's own records (``inboxes.audit_policy``): the reference kind of a
    #: payload key (``AUDIT_REFERENCES``: "session", "proxy"...) -> the model's label ("app_label.Model"), a model with
    #: ``game`` and ``public_id``, shown by its public id.
    audit_reference_models: ClassVar[Mapping[str, str]] = {}
    #: Of those, the reference kinds whose record's ``city`` is the city an event naming it is about (for the audit
    #: audiences of one city's hosts).
    audit_city_references: ClassVar[tuple[str, ...]] = ()
    #: The payload keys that name another kind of record in some event kinds than ``AUDIT_REFERENCES`` says: event
    #: kind -> {payload key: reference kind} (a "demand" of one kind of event is a record of another model).
    audit_kind_references: ClassVar[Mapping[str, Mapping[str, str]]] = {}

    def site_message_notice(self, kind: str, body: str) -> str | None:
        """The ruleset's wording of the notification (of ``kind``, a ``NotificationKind`` value) of a message from
        the site whose text is ``body``, with ``%(game)s`` and ``%(inbox)s``; None for the engine's own wording
        (the default)."""
        del kind, body  # the engine's wording for every message

    #: The inbox kinds anyone reads while the game runs, logged in or not, as a forum thread is read
    #: (``public_while_running``); posting stays with the members.
    public_while_running_kinds: ClassVar[tuple[str, ...]] = ()

    def public_while_running(self, game) -> bool:
        """Whether ``game``'s settings keep ``public_while_running_kinds`` public (a host may make them
        members-only); the instance form of ``public_while_running_q``. True by default."""
        return True

    def public_while_running_q(self):
        """``Q`` over Inbox: the query form of ``public_while_running`` (of the inbox's game). All by default."""
        from django.db.models import Q

        return Q()

    #: The inbox kinds in which an out-of-play seat's membership counts only once the seat is out for good
    #: (``seats_held_back``): the access policy asks about these kinds alone.
    held_back_kinds: ClassVar[tuple[str, ...]] = ()

    def seats_held_back(self, game) -> frozenset[int]:
        """Ids of ``game``'s seats (``Resident``) that are out of play (not alive) but may still come back, so
        that their memberships in ``held_back_kinds`` neither read nor post now; the policy computes access from
        it (``inboxes.policies``), never a stored flag. Read-only; none by default."""
        return frozenset()

    #: The related names on ``Resident`` of the ruleset's own per-seat rows (a one-to-one model of its package):
    #: the engine selects them with the seats it asks the hooks below about (``seat_state_relations()``).
    seat_state_relations: ClassVar[tuple[str, ...]] = ()
    #: The secret ranks of the ruleset's seats and who may learn them (``SeatRole``), in the order pages list them.
    seat_roles: ClassVar[tuple[SeatRole, ...]] = ()

    def holds_seat_role(self, resident, key: str, moment=None) -> bool:
        """True when ``resident`` held the rank ``key`` (of ``seat_roles``) at ``moment`` (aware UTC; None: now).
        The instance form of ``seat_role_q``. Read-only; False by default (no ranks)."""
        return False

    def seat_role_q(self, key: str):
        """``Q`` over Resident: the seats that hold the rank ``key`` now (the query form of ``holds_seat_role``
        with ``moment`` None). Selects nothing by default."""
        from django.db.models import Q

        return Q(pk__in=[])

    def seat_knows_alignment(self, seat, resident) -> bool:
        """True when ``seat`` (the viewer's Resident) knows the alignment of ``resident`` by a rule of the
        ruleset beyond the shared rows of the knowledge matrix (a commissar who checked the resident, say).
        Asked by ``inboxes.knowledge.visible_alignment`` only; False by default."""
        return False

    def public_seat_roles(self, resident) -> list[tuple[str, Any]]:
        """The public positions of ``resident`` that pages show to everyone, as (key, label) pairs (a
        sitting judge, a spirit of the day). Read-only, no query once ``seat_state_relations`` are selected;
        [] by default."""
        return []

    def seat_state(self, seat) -> str | None:
        """The name of the special state of ``seat`` (a Resident out of play) that its ruleset's
        ``policy_grants["seat_states"]`` gives posting rights of its own ("spirit", say), or None
        (the default): the policy then applies its rules for the dead or the imprisoned."""
        return None

    def end_seat_state(self, seat, *, now) -> None:
        """End the special state (``seat_state``) of ``seat``, which goes to the cemetery (a spirit laid to
        rest at the end of its day), in the caller's transaction; the shared service moves its
        memberships. Raises ``NotProvidedByRuleset`` by default (no such states)."""
        raise self._missing(_("the end of a seat's state"))

    def standing_members(self, game, kind: str, residents) -> list | None:
        """The members of ``game``'s standing inbox of ``kind`` among ``residents`` (its seats, in order), when
        the ruleset decides them (the cemetery, the police station, the court, say); None (the default) for the
        engine's own choice (the dead in a cemetery, nobody elsewhere). The instance form of
        ``standing_members_q``."""
        return None

    def standing_members_q(self, kind: str):
        """``Q`` over Resident: the members of a new standing inbox of ``kind`` among a game's seats, or None (the
        default) for the engine's choice; the query form of ``standing_members``."""
        return None

    def death_facts(self, game, residents) -> dict[int, dict]:
        """Facts about ``residents`` before they die that the shared death service adds to each ``resident.died``
        audit row (``{"judge": True}``, say), by resident id. {} by default."""
        return {}

    def after_deaths(self, game, residents, *, spirit_of: Mapping[int, bool], cause: str, acting_user,
                     now) -> None:
        """What deaths do to the ruleset's own seat state (spirits, the judge's seat and the court, say),
        in the shared death service's transaction, after the deaths (``status`` dead,
        ``died_at`` = ``now``) and their memberships and audit rows are written. ``spirit_of``: resident id ->
        whether the death makes a spirit. Nothing by default."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key!r}>"

    def provides_console_tool(self, name: str) -> bool:
        """True when the staff console's tool ``name`` is part of this ruleset's rules. Raises ``ValueError`` for
        a name no registered ruleset provides (``known_console_tools``: a typo would hide a tool silently)."""
        if name not in self.console_tools and name not in known_console_tools():
            raise ValueError(f"unknown console tool {name!r}: no registered ruleset provides it")
        return name in self.console_tools

    def missing_console_tool(self, name: str) -> NotProvidedByRuleset:
        """The refusal of the console tool ``name``, which this ruleset does not provide, naming the tool by the
        label of the ruleset that does (``known_console_tools``)."""
        return self._missing(str(known_console_tools().get(name, name)))

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

    def after_death_memberships(self, game, residents, *, cause: str, spirit_of: Mapping[int, bool],
                                now) -> Mapping[int, list[int]] | None:
        """What the deaths of ``residents`` (already dead, ``died_at`` = ``now``) do to their memberships and seat
        flags, in the shared death service's transaction (``inboxes.membership_services.do_kill_residents``);
        called only when ``own_death_memberships``. ``cause`` a ``DeathCause`` value; ``spirit_of``: resident id ->
        whether the death makes a spirit. Returns the ids of the inboxes the deaths killed by resident id (recorded
        on ``resident.died``), or None for none."""
        raise self._missing(_("the memberships after a death"))

    def after_day_death(self, game, *, now) -> str | None:
        """The aftermath of a death by day (an execution, a suicide, a penalty), run in the caller's transaction
        after the death is recorded: re-elections, the victory check. Returns the winning side's key or None."""
        raise self._missing(_("the aftermath of a death"))

    def check_victory(self, game) -> str | None:
        """The winning side's key when the game is won, else None (read-only; the service ends the game)."""
        raise self._missing("a victory check")

    def winner_among(self, game, residents) -> str | None:
        """The winning side of ``game`` over ``residents`` (its seats as a caller read them, each with
        ``alignment`` and ``status``), or None: what the archive shows for a game that recorded no result. The
        default asks ``check_victory(game)``."""
        return self.check_victory(game)

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
        """One section (a key of ``archive_sections`` or ``votes_page_sections``) of the game's archive pages as ``viewer`` (a user, possibly
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

    def wording(self, key: str, default: Any) -> str:
        """The ruleset's own wording of ``key`` when it has one (``texts``), else ``default``: for the engine's
        texts a ruleset may word in its own terms (a notification about a role PM is no "night result")."""
        return str(self.texts.get(key, default))

    def winner_sentence(self, winner: str) -> str:
        """How the archive says the game ended: the ruleset's text ``won_<winner>`` (``winner`` a side key its
        ``check_victory`` returns), ``no_winner`` for "". Raises ``NotProvidedByRuleset`` when it has none."""
        key = f"won_{winner}" if winner else "no_winner"
        if key not in self.texts:
            raise self._missing(_("the text %(key)s") % {"key": key})
        return str(self.texts[key])

    def game_page_links(self, game, *, is_staff: bool) -> list[tuple[str, str]]:
        """The links the shared game page shows for this ruleset's pages of ``game`` as (label, URL), the staff's
        (``is_staff``: the viewer holds a staff role in the game) included; [] by default."""
        return []

    def game_page_notes(self, game) -> list:
        """Public notes the shared game page shows for ``game`` under its links, each safe HTML the ruleset
        rendered from its own templates (every value escaped there); [] by default."""
        return []

    def thread_links(self, viewer, inbox, *, can_moderate: bool) -> list[tuple[str, str, str]]:
        """The links the shared thread page of ``inbox`` (read by ``viewer``: the caller checked) shows above its
        messages to the ruleset's own pages, as (URL, text, CSS class); ``can_moderate`` is whether ``viewer``
        moderates the inbox. [] by default."""
        return []

    @property
    def inbox_kind_labels(self) -> dict[str, Any]:
        """The ruleset's inbox kinds: value -> label (``inbox_kind_choices``), in its order."""
        return dict(self.inbox_kind_choices)

    def has_inbox_kind(self, kind: str) -> bool:
        """True when inboxes of ``kind`` (a value of ``inbox_kind_choices``) exist in this ruleset's games."""
        return kind in self.inbox_kinds

    def lets_open_inbox_kind(self, kind: str) -> bool:
        """True when a player or a staff member of this ruleset's games may open an inbox of ``kind`` on their own
        (whom exactly the access policy and the kind's service decide)."""
        return kind in self.self_opened_inbox_kinds and kind in self.inbox_kinds

    def inbox_kind_for(self, role: str) -> str | None:
        """The kind of this ruleset's inboxes that play the neutral part ``role`` (``inbox_kind_roles``), or None
        when its games have none. Raises ``ValueError`` for a role no registered ruleset maps
        (``known_inbox_kind_roles``: a typo would hide an inbox silently)."""
        if role not in self.inbox_kind_roles and role not in known_inbox_kind_roles():
            raise ValueError(f"unknown inbox kind role {role!r}: no registered ruleset maps it")
        return self.inbox_kind_roles.get(role)

    def opened_secret_kind(self) -> str | None:
        """The kind of the "secret" role when players and staff of this ruleset's games may open such inboxes
        (``lets_open_inbox_kind``), else None: the game has no secret inboxes."""
        kind = self.inbox_kind_for("secret")
        return kind if kind and self.lets_open_inbox_kind(kind) else None

    def has_page_section(self, key: str) -> bool:
        """True when the ruleset's games have the shared page section ``key``. Raises ``ValueError`` for a key no
        registered ruleset has (``known_page_sections``: a typo would hide a section silently)."""
        if key not in self.page_sections and key not in known_page_sections():
            raise ValueError(f"unknown page section {key!r}: no registered ruleset has it")
        return key in self.page_sections

    def rule_id(self, key: str) -> str | None:
        """The ID of this ruleset's rule that a refusal of the neutral rule key ``key`` cites, or None when the
        ruleset maps none (its rules do not speak of it). Raises ``ValueError`` for a key no registered ruleset
        maps (``known_rule_keys``: a typo would drop the citation silently)."""
        if key not in self.rule_ids and key not in known_rule_keys():
            raise ValueError(f"no ruleset maps the rule key {key!r}")
        return self.rule_ids.get(key)

    def text(self, key: str) -> str:
        """The ruleset's wording of the shared text ``key`` in the active language. Raises ``ValueError`` for a key
        no registered ruleset words (``known_text_keys``) and ``NotProvidedByRuleset`` when this ruleset has no
        wording for it."""
        if key not in self.texts and key not in known_text_keys():
            raise ValueError(f"unknown text {key!r}: no registered ruleset words it")
        if key not in self.texts:
            raise self._missing(_("the text %(key)s") % {"key": key})
        return str(self.texts[key])


_REGISTRY: dict[str, RulesetSpec] = {}


def register_ruleset(spec: RulesetSpec) -> RulesetSpec:
    """Register ``spec`` under ``spec.key``; returns it. Idempotent for the same class (Django may run ``ready``
    twice in tests); raises ``ValueError`` for an empty key or a key taken by another class."""
    if not spec.key:
        raise ValueError(f"{type(spec).__name__} has no key")
    undefined = sorted((set(spec.inbox_kinds) | set(spec.inbox_kind_roles.values())) - set(spec.inbox_kind_labels))
    if undefined:
        raise ValueError(f"{type(spec).__name__} uses inbox kinds it does not define (inbox_kind_choices): {undefined}")
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


def ruleset_choices() -> list[tuple[str, Any]]:
    """(key, name) of every registered ruleset, in registration order: the choices of ``Game.ruleset`` and of the
    forms that pick a ruleset (a callable, so a new ruleset needs no migration)."""
    return [(key, spec.name) for key, spec in _REGISTRY.items()]


def default_ruleset_key() -> str:
    """The ruleset of a game created without naming one: ``settings.MAFIA_DEFAULT_RULESET``. Raises
    ``ImproperlyConfigured`` when that ruleset is not registered."""
    key = settings.MAFIA_DEFAULT_RULESET
    if key not in _REGISTRY:
        raise ImproperlyConfigured(f"MAFIA_DEFAULT_RULESET {key!r} is not a registered ruleset")
    return key


def registered_rulesets() -> dict[str, RulesetSpec]:
    """The registered specs by key (a copy), in registration order."""
    return dict(_REGISTRY)


def rule_id(game, key: str) -> str | None:
    """The rule ID the ruleset of ``game`` (anything with a ``ruleset`` key, or the key itself) gives the neutral
    rule key ``key`` (``RulesetSpec.rule_id``), or None when it gives none or is not registered (the refusal is
    raised all the same). Raises ``ValueError`` when no registered ruleset maps ``key``."""
    spec = _REGISTRY.get(game if isinstance(game, str) else getattr(game, "ruleset", None))
    if spec is None:
        if key not in known_rule_keys():
            raise ValueError(f"no ruleset maps the rule key {key!r}")
        return None
    return spec.rule_id(key)
