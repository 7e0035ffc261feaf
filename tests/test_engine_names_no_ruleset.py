"""The engine names no ruleset (DESIGN.md "Rulesets and layers"): no template or engine module branches on a
ruleset's key or cites a ruleset's rule ID; what differs comes from what each ruleset declares (its page sections,
its texts, its links, its inbox kinds, its console tools, the rule IDs its refusals cite), and a name no
registered ruleset declares is a loud error, never a silent "no"."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import translation

from archive.models import Notification, NotificationKind
from archive.notifications import notification_text
from cities.models import HOST_STAFF_KIND, Alignment, Game, LifeStatus, Resident, StaffRole
from cities.resident_services import do_set_resident_flags
from inboxes.membership_services import do_kill_resident
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.m21.kinds import M21InboxKind
from kernel.errors import InvalidInput, NotAllowed
from kernel.rulesets import (
    RulesetSpec,
    get_ruleset,
    inbox_kind_label,
    known_console_tools,
    known_inbox_kind_choices,
    known_inbox_kind_roles,
    known_inbox_kinds,
    known_page_sections,
    known_rule_keys,
    known_text_keys,
    registered_rulesets,
    rule_id,
    ruleset_choices,
)
from rulesets.m21.service_common import site_message, thread_of
from tests.rulesets.m21.day_helpers import build_game

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ("kernel", "accounts", "cities", "inboxes", "voting", "roles", "archive", "staff", "sanctions", "mafia_site")
#: A comparison with a ruleset's key: ``ruleset == "m21"``, ``!= 'lepra'``, ``"m21" == game.ruleset``...
KEY_COMPARISON = re.compile(r"""(ruleset\s*[!=]=\s*["'](m21|lepra)["'])|(["'](m21|lepra)["']\s*[!=]=\s*\S*ruleset)""")


#: A rule ID of RULES.md (``L-DAY-1``, ``M-VOTE-8``) or a family of them (``L-INBOX``, ``M-SETUP``).
RULE_ID = re.compile(r"\b[LM]-[A-Z]{2,}\b")
#: A refusal's rule key in engine code: ``rule_id(game, "key")``, ``check_procurator(..., rule="key")`` (or its default) or
#: ``check_site_or_procurator(game, user, "key")``.
RULE_KEY = re.compile(r'rule_id\([\w.]+, "(\w+)"\)|check_procurator\(.*rule(?:: str)? ?= ?"(\w+)"'
                      r'|check_site_or_procurator\(.*, "(\w+)"\)')


def _files(suffixes: tuple[str, ...]):
    for top in (*ENGINE, "templates"):
        for path in (ROOT / top).rglob("*"):
            if path.suffix in suffixes and "migrations" not in path.parts:
                yield path


def test_no_template_or_engine_module_compares_a_ruleset_key():
    found = [f"{path.relative_to(ROOT)}:{n}" for path in _files((".html", ".py", ".txt"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if KEY_COMPARISON.search(line)]
    assert not found, f"branches on a ruleset's key (declare it in the ruleset instead): {found}"


def test_no_template_or_engine_module_cites_a_rule_id():
    found = [f"{path.relative_to(ROOT)}:{n}" for path in _files((".html", ".py", ".txt"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if RULE_ID.search(line)]
    assert not found, f"cites a rule ID (cite it where the ruleset declares the behaviour instead): {found}"


def test_every_rule_key_the_engine_names_is_mapped_by_a_ruleset_to_its_own_rule_ids():
    used = {key for path in _files((".py",)) for match in RULE_KEY.finditer(path.read_text(encoding="utf-8"))
            for key in match.groups() if key}
    assert "procurator_only" in used and "city_formation" in used
    assert used == known_rule_keys()  # every key named is mapped somewhere, and no ruleset maps a key nobody names
    assert {key: spec.rule_ids.get("procurator_only") for key, spec in registered_rulesets().items()} == {
        "lepra": "L-STAFF-1", "m21": "M-SETUP-4"}
    for key, prefix in (("lepra", "L-"), ("m21", "M-")):
        assert all(rule.startswith(prefix) for rule in registered_rulesets()[key].rule_ids.values())


def test_a_refusal_cites_the_rule_of_the_games_own_ruleset_and_none_of_anothers():
    lepra, m21 = SimpleNamespace(ruleset="lepra"), SimpleNamespace(ruleset="m21")
    assert (rule_id(lepra, "procurator_only"), rule_id(m21, "procurator_only")) == ("L-STAFF-1", "M-SETUP-4")
    assert (rule_id(lepra, "city_staff"), rule_id(m21, "city_staff")) == ("L-STAFF-2", None)
    assert rule_id("lepra", "city_size") == "L-CITY-2"
    assert (get_ruleset("lepra").rule_id("city_size"), get_ruleset("m21").rule_id("city_size")) == ("L-CITY-2", None)
    assert rule_id(SimpleNamespace(ruleset="toy-unregistered"), "city_size") is None
    for ask in (lambda: rule_id(m21, "procurator_onyl"), lambda: get_ruleset("lepra").rule_id("procurator_onyl"),
                lambda: rule_id("toy-unregistered", "procurator_onyl")):
        with pytest.raises(ValueError, match="rule key 'procurator_onyl'"):
            ask()


@pytest.mark.django_db
def test_the_shared_services_refusals_cite_the_rule_of_the_games_own_ruleset(demo):
    with translation.override("en"), pytest.raises(NotAllowed) as by_hand:
        do_set_resident_flags(demo.seat("honest"), alignment=Alignment.MAFIA, acting_user=demo.procurator)
    assert (str(by_hand.value), by_hand.value.rule) == (
        "Roles are set by the site's draws and elections, not by hand.", "L-ASSIGN-3")
    table = build_game(slug="m21-rules")
    for game, rule in ((demo.game, "L-DEATH-1"), (table.game, "")):  # M21 speaks of no such rule
        seat = Resident.objects.filter(game=game, status=LifeStatus.ALIVE).order_by("pk").first()
        with translation.override("en"), pytest.raises(InvalidInput) as cause:
            do_kill_resident(seat, "lightning", acting_user=None)
        assert (str(cause.value), cause.value.rule) == ("Unknown cause of death: lightning.", rule)


def test_the_closed_sets_are_what_the_registered_rulesets_declare():
    specs = registered_rulesets()
    assert set(specs) >= {"lepra", "m21"}
    assert [key for key, _name in ruleset_choices()] == list(specs)
    assert set(known_console_tools()) == set().union(*(s.console_tools for s in specs.values()))
    assert known_page_sections() == frozenset().union(*(s.page_sections for s in specs.values()))
    assert known_text_keys() == frozenset().union(*(s.texts for s in specs.values()))
    assert known_inbox_kinds() <= {value for value, _label in known_inbox_kind_choices()}
    lepra, m21 = get_ruleset("lepra"), get_ruleset("m21")
    assert lepra.provides_console_tool("court") and not m21.provides_console_tool("court")
    assert lepra.has_page_section("cities") and not m21.has_page_section("cities")
    assert lepra.has_cities and not m21.has_cities and not RulesetSpec.has_cities  # declared, never inherited
    assert not lepra.has_inbox_kind(M21InboxKind.GAME_THREAD) and not m21.has_inbox_kind(LepraInboxKind.VOTING)
    for ask in (lambda: m21.provides_console_tool("cort"), lambda: m21.has_page_section("citys"),
                lambda: m21.text("no_such_text")):
        with pytest.raises(ValueError, match="no registered ruleset"):
            ask()


@pytest.mark.django_db
def test_the_game_field_takes_its_choices_from_the_registry_and_refuses_another_key():

    field = Game._meta.get_field("ruleset")
    assert list(field.choices) == ruleset_choices()
    game = Game(title="T", slug="t-registry", ruleset="toy-unregistered")
    with pytest.raises(ValidationError, match="ruleset"):
        game.full_clean(exclude=["day_start"])
    assert Game(title="T", slug="t-default").ruleset == "lepra"  # settings.MAFIA_DEFAULT_RULESET


@pytest.mark.django_db
def test_the_game_page_shows_the_rulesets_links_roster_and_host_title_M_SETUP_4(demo):
    table = build_game(slug="m21-page", start_day=False)
    client = Client()
    client.force_login(table.host)
    body = client.get(reverse("game_detail", args=[table.game.slug])).content.decode()
    assert f'href="{reverse("m21_game", args=[table.game.slug])}"' in body
    assert f'href="{reverse("m21_setup", args=[table.game.slug])}"' in body
    assert f'data-fact="staff:{HOST_STAFF_KIND}">Host: ' in body and "<h2>Players</h2>" in body
    lepra = Client().get(reverse("game_detail", args=[demo.game.slug])).content.decode()
    assert "ruleset-links" not in lepra and f'data-fact="staff:{HOST_STAFF_KIND}">Прокурор: ' in lepra
    assert "<h2>Города</h2>" in lepra


@pytest.mark.django_db
def test_the_new_game_page_offers_every_registered_ruleset(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user("creator", "c@example.com", "x-secret-123"))
    body = client.get(reverse("new_game")).content.decode()
    assert f'href="{reverse("m21_new_game")}" lang="en">M21 (English, one game thread, power roles)</a>' in body


@pytest.mark.django_db
def test_an_m21_role_pm_notification_is_no_night_result_in_its_words_M_NIGHT_1():
    table = build_game(slug="m21-notify")
    pm = thread_of(table.game, M21InboxKind.ROLE_PM)
    message = site_message(pm, "Your action is recorded.", table.tick())
    notification = Notification(user=table.users["Alice"], game=table.game, kind=NotificationKind.NIGHT_RESULT,
                                message=message, created_at=table.now)
    with translation.override("en"):
        text = notification_text(notification, "Europe/London")
    assert text == f"{table.game.title}: news from the hosts in your role PM “{pm.title}”."
    assert "night result" not in text


@pytest.mark.django_db
def test_which_inboxes_notify_their_readers_is_the_rulesets_word_M_SETUP_3():
    from archive.notifications import message_audience
    from inboxes.models import Message

    table = build_game(slug="m21-audience")
    alice = Resident.objects.get(game=table.game, name="Alice")
    pm = Inbox.objects.get(game=table.game, kind=M21InboxKind.ROLE_PM, resident=alice)
    result = site_message(pm, "Your action is recorded.", table.tick())
    square = site_message(thread_of(table.game), "The day goes on.", table.tick())
    messages = list(Message.objects.filter(pk__in=[result.pk, square.pk]).select_related("inbox", "inbox__game"))
    told = {(uid, kind, m.pk) for uid, kind, m in message_audience(messages)}
    assert (table.users["Alice"].pk, NotificationKind.NIGHT_RESULT, result.pk) in told
    assert not [t for t in told if t[2] == square.pk]  # the game thread tells only those it mentions
    assert get_ruleset("m21").night_result_inbox_kinds <= get_ruleset("m21").reader_notified_inbox_kinds


#: A ruleset's name, as a word or the start of a word, an identifier or a string: "Lepra", "M21", ``lepra_setup``,
#: ``"m21.day_decided"``, ``rulesets/m21``, ``m21/_receipt.html``, ``LepraKeyword``, ``parse_lepra_execution``.
RULESET_NAME = re.compile(r"(?<![a-z0-9])(lepra|m21)", re.IGNORECASE)
#: The settings' configuration of the hosted rulesets: their apps in ``INSTALLED_APPS`` and the default ruleset.
SETTINGS_LINE = re.compile(r'^\s*"rulesets\.\w+",\s*$|^MAFIA_DEFAULT_RULESET\s*=')
#: Where the engine still names a ruleset while a move of its own takes it out: the parsers and tallies that
#: ``voting/`` keeps for one ruleset, the docstrings of the inbox and staff kinds' vocabularies (path, text).
NAMED_UNTIL_MOVED = (("inboxes/models.py", "M21's are the game thread"),)


def _names_a_ruleset(path: Path, line: str) -> bool:
    relative = path.relative_to(ROOT).as_posix()
    if relative.startswith("mafia_site/settings/") and SETTINGS_LINE.search(line):
        return False
    if any(relative.startswith(prefix) and text in line for prefix, text in NAMED_UNTIL_MOVED):
        return False
    return bool(RULESET_NAME.search(line))


def test_no_engine_module_or_shared_template_names_a_ruleset():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}"
             for top in (*ENGINE, "templates") for path in sorted((ROOT / top).rglob("*"))
             if path.is_file() and path.suffix in (".py", ".html", ".txt", ".js", ".css")
             and "migrations" not in path.parts
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _names_a_ruleset(path, line)]
    assert not found, ("the engine names a ruleset (declare it on the ruleset's RulesetSpec, or word it neutrally):\n"
                       + "\n".join(found))


#: The names of Lepra's seat ranks (``rulesets.lepra.models.LepraSeat``): its rows, read through ``rulesets.lepra.seats``.
LEPRA_SEAT_NAMES = re.compile(r"\b(is_commissar|is_judge|is_godfather|is_spirit|godfather_since|godfather_until|"
                              r"commissar_since|lepra_seat)\b")
#: The engine apps of the neutral seat: they ask the game's ruleset (``RulesetSpec`` seat hooks), never its ranks.
SEAT_NEUTRAL = ("kernel", "accounts", "cities", "inboxes", "voting", "roles", "archive", "staff", "sanctions",
                "templates")


#: A ruleset's inbox kinds class (``LepraInboxKind``, ``M21InboxKind``) or the engine's old shared one.
INBOX_KIND_CLASS = re.compile(r"\b(Lepra|M21)?InboxKind\b")


def test_no_engine_module_names_a_rulesets_inbox_kind():
    found = [f"{path.relative_to(ROOT)}:{n}" for path in _files((".py",))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if INBOX_KIND_CLASS.search(line)]
    assert not found, ("the engine names a ruleset's inbox kind (declare a per-ruleset table in policy_grants or a "
                       f"role in inbox_kind_roles instead): {found}")


@pytest.mark.django_db
def inbox_kind_comparison(values) -> re.Pattern:
    """A comparison of an inbox kind with one of ``values`` written as a string literal: ``inbox.kind == "mafia"``,
    ``"personal" != kind``, ``kind="personal"`` (a filter, a ``Q``, a constraint), ``kind__in=["city", ...]``,
    ``kind in ("mafia", ...)``, ``{% if inbox.kind in "mafia personal" %}``."""
    alt = "|".join(re.escape(value) for value in sorted(values, key=len, reverse=True))
    return re.compile(
        rf"""kind\w*\s*(?:==|!=|=)\s*["'](?:{alt})["']"""
        rf"""|["'](?:{alt})["']\s*(?:==|!=)\s*[\w.]*kind\b"""
        rf"""|kind\w*\s*(?:=|in|not\s+in)\s*[\[({{][^\])}}]*["'](?:{alt})["']"""
        rf"""|kind\s+(?:not\s+)?in\s+["'][^"']*\b(?:{alt})\b""")


def test_no_engine_module_or_shared_template_compares_a_kind_with_a_rulesets_inbox_kind():
    values = {value for value, _label in known_inbox_kind_choices()}
    assert {"mafia", "personal", "game_thread", "role_pm"} <= values
    comparison = inbox_kind_comparison(values)
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}" for path in _files((".html", ".py", ".txt"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if comparison.search(line)]
    assert not found, ("the engine compares a kind with a ruleset's inbox kind (ask the ruleset: a hook on its "
                       "RulesetSpec, a policy_grants table or a role in inbox_kind_roles; its own rules on the "
                       "shared tables go in its migrations):\n" + "\n".join(found))
    for line in ('{% if inbox.kind == "mafia" and game.status == "running" %}', "if 'role_pm' != inbox.kind:",
                 'condition=Q(kind="personal", rolled_over_at__isnull=True)', 'kind__in=["city", "mafia"]',
                 "if inbox.kind in ('office', 'game_thread'):", '{% if inbox.kind in "mafia complaint" %}'):
        assert comparison.search(line), line
    for line in ('kind="voting_open"', 'kind="membership.removed"', 'data-kind="{{ inbox.kind }}"',
                 'if event.kind == "resident.died":', 'TimelineItem(kind="message")', 'kind=kind'):
        assert not comparison.search(line), line


def test_the_inbox_kind_field_takes_its_choices_from_the_rulesets_and_each_labels_its_own():
    from inboxes.checks import check_inbox_kinds_fit

    field = Inbox._meta.get_field("kind")
    assert list(field.choices) == known_inbox_kind_choices()
    assert field.deconstruct()[3]["choices"] is known_inbox_kind_choices  # a callable: no migration per new kind
    values = [value for value, _label in known_inbox_kind_choices()]
    assert len(values) == len(set(values)) and {"secret", "game_thread", "office"} <= set(values)
    lepra, m21 = get_ruleset("lepra"), get_ruleset("m21")
    assert set(lepra.inbox_kinds) <= set(lepra.inbox_kind_labels) and set(m21.inbox_kinds) <= set(m21.inbox_kind_labels)
    with translation.override("en"):
        assert (inbox_kind_label("game_thread", "m21"), inbox_kind_label("secret", "lepra")) == ("Game thread", "Secret")
        assert inbox_kind_label("no_such_kind", "lepra") == "no_such_kind"
    assert check_inbox_kinds_fit() == []
    with pytest.raises(ValidationError):
        Inbox(kind="no_such_kind").clean_fields(exclude=[f.name for f in Inbox._meta.fields if f.name != "kind"])


def test_a_kind_too_long_for_the_column_or_undefined_by_its_ruleset_is_refused(monkeypatch):
    import kernel.rulesets
    from inboxes.checks import check_inbox_kinds_fit
    from kernel.rulesets import RulesetSpec, register_ruleset

    monkeypatch.setattr(kernel.rulesets, "_REGISTRY", dict(kernel.rulesets._REGISTRY))

    class Wordy(RulesetSpec):
        key = "wordy"
        inbox_kind_choices = (("a_very_long_kind", "Long"),)
        inbox_kinds = frozenset({"a_very_long_kind"})

    class Sloppy(RulesetSpec):
        key = "sloppy"
        inbox_kinds = frozenset({"undefined"})

    register_ruleset(Wordy())
    assert [e.id for e in check_inbox_kinds_fit()] == ["inboxes.E001"]
    with pytest.raises(ValueError, match="does not define"):
        register_ruleset(Sloppy())


def test_the_shared_services_ask_for_a_kind_by_its_role_and_a_role_nobody_maps_is_loud():
    lepra, m21 = get_ruleset("lepra"), get_ruleset("m21")
    assert (lepra.inbox_kind_for("secret"), m21.inbox_kind_for("secret")) == ("secret", None)
    assert (lepra.opened_secret_kind(), m21.opened_secret_kind()) == ("secret", None)
    assert lepra.inbox_kind_for("city_square") == "city" and "stage" in known_inbox_kind_roles()
    with pytest.raises(ValueError, match="unknown inbox kind role 'sekret'"):
        m21.inbox_kind_for("sekret")


def test_no_engine_app_or_shared_template_names_a_lepra_rank():
    found = [f"{path.relative_to(ROOT)}:{n}" for top in SEAT_NEUTRAL for path in (ROOT / top).rglob("*")
             if path.suffix in (".py", ".html", ".txt") and "migrations" not in path.parts
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if LEPRA_SEAT_NAMES.search(line)]
    assert not found, f"the engine names a Lepra rank (ask the ruleset's seat hooks instead): {found}"


#: A ruleset's staff kind named in engine code: ``StaffKind`` (each ruleset's own enum), or one of Lepra's or M21's
#: staff kind values where a staff kind is meant (compared with a role's kind, asked of ``holds_role``, a rule key, a
#: choice). The engine knows the host (``cities.staff_kinds.HOST_STAFF_KIND``) and reads the rest from the rulesets.
RULESET_STAFF_KIND = re.compile(
    r"""\bStaffKind\b"""
    r"""|kind\w*\s*(==|!=|=|in)\s*[(\[{]?\s*["'](tribune|arbiter|consigliere|cohost)["']"""
    r"""|holds_role\([^)]*["'](tribune|arbiter|consigliere|cohost)["']"""
    r"""|rule(_id\([^)]*|=)["'](tribune|arbiter|consigliere|cohost)["']"""
    r"""|\(["'](tribune|arbiter|consigliere|cohost)["'],\s*_\(""")


def test_no_engine_module_or_shared_template_names_a_rulesets_staff_kind():
    found = [f"{path.relative_to(ROOT)}:{n}" for path in _files((".html", ".py", ".txt", ".svg"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if RULESET_STAFF_KIND.search(line)]
    assert not found, f"the engine names a ruleset's staff kind (declare it in the ruleset's staff tables): {found}"
    assert RULESET_STAFF_KIND.search('if role.kind == "tribune":') and RULESET_STAFF_KIND.search(
        'holds_role(user, game, "consigliere")') and not RULESET_STAFF_KIND.search('payload={"tribune": role.pk}')


def test_staff_kinds_and_their_labels_come_from_the_rulesets():
    from cities.staff_kinds import staff_kind_choices, staff_kind_label, staff_kind_problems

    field = StaffRole._meta.get_field("kind")
    # A callable: a ruleset's new kind needs no migration (the migration names the function, never the kinds).
    assert field.deconstruct()[3]["choices"] is staff_kind_choices and list(field.choices) == staff_kind_choices()
    values = [value for value, _label in staff_kind_choices()]
    assert values[:5] == ["procurator", "tribune", "arbiter", "consigliere", "cohost"]
    assert HOST_STAFF_KIND == "procurator" and staff_kind_problems() == []
    with translation.override("en"):
        assert (staff_kind_label("lepra", HOST_STAFF_KIND), staff_kind_label("m21", HOST_STAFF_KIND)) == (
            "Procurator", "Host")
        assert (staff_kind_label("lepra", "tribune"), staff_kind_label("m21", "cohost")) == ("Tribune", "Co-host")
    with translation.override("ru"):
        assert staff_kind_label("lepra", "arbiter") == "Верховный Арбитр"
    assert "tribune" not in get_ruleset("m21").staff_kinds and "cohost" not in get_ruleset("lepra").staff_kinds


def test_no_notification_field_points_at_a_rulesets_model():
    rulesets = set(registered_rulesets())
    pointed = {field.name: field.related_model._meta.app_label for field in Notification._meta.get_fields()
               if field.related_model is not None}
    assert pointed["record_type"] == "contenttypes"
    assert not {name: app for name, app in pointed.items() if app in rulesets}


def test_a_ruleset_that_tells_no_records_allows_none_words_none_and_links_none():
    spec = RulesetSpec()
    told = SimpleNamespace(record=object(), game=None)
    assert (spec.record_still_allowed(object(), object()), spec.record_notification_text(told),
            spec.record_notification_url(told), spec.record_notification_querysets()) == (False, "", "", [])
    m21 = type(get_ruleset("m21"))
    assert [getattr(m21, hook) is getattr(RulesetSpec, hook) for hook in (
        "record_still_allowed", "record_notification_text", "record_notification_url",
        "record_notification_querysets")] == [True] * 4


def staff_kind_words() -> frozenset[str]:
    """The words of the staff kinds the registered rulesets declare, but the host's (``HOST_STAFF_KIND``, the
    engine's own kind): each kind's value and each word of its English label, letters only ("tribune", "supreme",
    "arbiter", "consigliere", "cohost")."""
    words = set()
    with translation.override("en"):
        for spec in registered_rulesets().values():
            for kind, label in spec.staff_kinds.items():
                if kind != HOST_STAFF_KIND:
                    words |= {re.sub(r"[^a-z]", "", word) for word in (kind, *str(label).lower().split())}
    return frozenset(word for word in words if len(word) >= 3)


def identifier_parts(name: str) -> list[str]:
    """The words of an identifier, lower case: ``TribuneStandIn`` -> tribune, stand, in; ``AUDIT_CITY_TRIBUNE``
    -> audit, city, tribune."""
    return [part.lower() for part in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)]


def test_no_engine_identifier_names_a_rulesets_staff_kind():
    """No name in the engine's Python code (a class, a function, a variable, an attribute, outside migrations) has a
    word of a ruleset's staff kind: ``TribuneStandIn``, ``tribune_scope``. Strings and comments are not names (a
    docstring may say "a Tribune, say"); the engine's host kind is its own."""
    words = staff_kind_words()
    assert {"tribune", "arbiter", "consigliere", "cohost"} <= words
    assert "procurator" not in words and "host" not in words
    found = set()
    for path in _files((".py",)):
        relative = path.relative_to(ROOT).as_posix()
        for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if (token.type == tokenize.NAME
                    and any(part.startswith(word) for part in identifier_parts(token.string) for word in words)):
                found.add(f"{relative}:{token.start[0]}: {token.string}")
    assert not found, ("an engine name has a word of a ruleset's staff kind (name the mechanism: a city's staff role, "
                       "a stand-in, the court's staff):\n" + "\n".join(sorted(found)))
    assert identifier_parts("TribuneStandIn") == ["tribune", "stand", "in"]
    assert identifier_parts("AUDIT_CITY_TRIBUNE") == ["audit", "city", "tribune"]
    assert identifier_parts("do_grant_stand_in") == ["do", "grant", "stand", "in"]


def test_the_engine_declares_only_the_event_and_scheduled_kinds_its_own_modules_record_and_plan():
    """``kernel.events`` types the kinds the engine's own services record and plan; a kind only a ruleset's services
    record is the ruleset's (``RulesetSpec.event_kinds``, ``scheduled_event_kinds``), in its own package."""
    from kernel.events import STORED_ONLY_EVENT_KINDS, EventKind, ScheduledKind
    from tests.support.recorded_kinds import planned_scheduled_kinds, recorded_event_kinds

    recorded, planned = recorded_event_kinds(ENGINE), planned_scheduled_kinds(ENGINE)
    assert {"resident.died", "inbox.rolled_over", "scheduler.post_published", "play_ban.ended"} <= set(recorded)
    assert {kind.value for kind in EventKind} - set(recorded) == set(STORED_ONLY_EVENT_KINDS)
    assert {kind.value for kind in ScheduledKind} - set(planned) == set()
    everywhere, planned_everywhere = recorded_event_kinds(), planned_scheduled_kinds()
    for key, spec in registered_rulesets().items():
        package = f"rulesets/{key}/"
        own = {kind.value for kind in spec.event_kinds}
        assert {k for k in own if not any(p.startswith(package) for p in everywhere.get(k, ()))} == set(), key
        assert own.isdisjoint(recorded), key  # a kind the engine records is the engine's
        scheduled = {kind.value for kind in spec.scheduled_event_kinds}
        assert {k for k in scheduled if not any(p.startswith(package) for p in planned_everywhere.get(k, ()))} \
            == set(), key
        assert scheduled.isdisjoint(planned), key


def test_no_engine_module_or_shared_template_names_a_rulesets_event_kind():
    """The engine words, shows and scopes a ruleset's event kinds through their declarations and the ruleset's hooks
    (``event_kinds``, ``timeline_line``, ``audit_sentences``, ``audit_kind_references``): no engine module names one
    as a literal, nor a family of kinds only rulesets record (``"impeachment."``)."""
    from kernel.events import EventKind

    engine_families = {kind.value.split(".")[0] for kind in EventKind}
    kinds = {kind.value for spec in registered_rulesets().values() for kind in spec.event_kinds}
    families = {kind.split(".")[0] for kind in kinds} - engine_families
    named = re.compile(r"""["'](?:%s)["']|["'](?:%s)\.["']""" % (
        "|".join(re.escape(k) for k in sorted(kinds)), "|".join(re.escape(f) for f in sorted(families))))
    assert {"voting", "court", "impeachment"} <= families and "resident" not in families
    found = [f"{path.relative_to(ROOT)}:{n}" for path in _files((".py", ".html", ".txt"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if named.search(line)]
    assert not found, f"the engine names a ruleset's event kind (declare it, or add a hook): {found}"
