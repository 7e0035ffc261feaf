"""The staff console's audit log in words (L-STAFF-6, DESIGN.md "Pages"): every typed kind has a sentence; a
sentence names residents, cities and inboxes by links the viewer may open and nothing outside their scope (no
database id, no "inbox=90"); the log speaks the game's language (Russian for Lepra, English for M21) and shows
every time in the game's zone with the zone's abbreviation."""
from __future__ import annotations

import re

from django.test import Client
from django.utils import timezone, translation

from cities.models import GameEvent, Resident
from cities.services import record_event
from inboxes import audit_policy, posting
from inboxes.models import Inbox
from rulesets.lepra import staff_services
from rulesets.lepra.kinds import LepraInboxKind
from kernel.events import EventKind, ScheduledKind
from kernel.rulesets import get_ruleset, registered_rulesets
from staff.audit_sentences import SENTENCES, audit_sentence, kind_label, sentence_of
from tests.conftest import fresh
from tests.pages.conftest import MARK, marked_russian  # noqa: F401 - the fixture, used by name


def _client(user, language: str = "ru") -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def test_every_typed_kind_has_a_sentence_and_every_scheduled_kind_words():
    assert [k for k in EventKind if k not in SENTENCES] == []  # the engine words its own kinds
    for key, spec in registered_rulesets().items():  # a ruleset words its own, or the engine does
        assert [k for k in spec.event_kinds if k not in spec.audit_sentences and k not in SENTENCES] == [], key
    with translation.override("en"):
        assert [k for k in ScheduledKind if not str(k.label)] == []
        assert kind_label("scheduler.voting_open") == "The site ran the opening of the voting."
    ruleset_kinds = [k for spec in registered_rulesets().values() for k in spec.event_kinds]
    for kind in list(EventKind) + ruleset_kinds + ["scheduler.voting_open", "m21.day_decided"]:
        label = kind_label(kind)
        assert "%(" not in label and "." not in label.split(" ")[0] or kind_label(kind) != kind


def test_a_ruleset_words_the_kinds_it_records_for_its_own_games_only(demo):
    lepra, m21 = get_ruleset("lepra"), get_ruleset("m21")
    assert "voting.opened" not in SENTENCES and "m21.day_decided" not in SENTENCES
    assert sentence_of(demo.game, "voting.opened") is lepra.audit_sentences["voting.opened"]
    assert sentence_of(demo.game, "m21.day_decided") is None  # never another ruleset's
    assert sentence_of(demo.game, "message.posted") is SENTENCES["message.posted"]
    assert set(lepra.audit_sentences).isdisjoint(m21.audit_sentences)
    with translation.override("en"):
        assert kind_label("m21.day_decided") == "Day … was decided (…)."
        assert kind_label("voting.opened") == "… opened the voting."


def test_a_mafia_message_is_a_sentence_with_a_link_for_the_consigliere_only_L_STAFF_4_L_STAFF_6(demo):
    mafia1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    message = posting.do_post_message(mafia1, "Tonight.", acting_user=fresh(demo.consigliere))
    event = GameEvent.objects.filter(game=demo.game, kind="message.posted", payload__message=message.pk).get()
    consigliere = audit_policy.AuditScope(fresh(demo.consigliere), demo.game)
    with translation.override("en"):
        text = audit_sentence(consigliere, event)
    link = f'<a href="/inboxes/{mafia1.public_id}/">'
    # In the game's language (Russian for Lepra), whatever language the request speaks.
    assert text.startswith(f"{demo.consigliere.public_name} отправил {link}сообщение</a> в ящик {link}")
    assert "inbox=" not in text and f"={mafia1.pk}" not in text and str(message.pk) not in re.sub(r"<[^>]+>", "", text)
    for persona in ("tribune1", "arbiter", "procurator"):
        scope = audit_policy.AuditScope(fresh(getattr(demo, persona)), demo.game)
        assert audit_sentence(scope, event) == "", persona
        assert mafia1.public_id not in audit_sentence(scope, event)


def test_the_lepra_console_log_reads_as_russian_sentences_with_times_in_moscow_L_STAFF(demo, marked_russian):  # noqa: F811
    body = _client(demo.procurator, "en").get("/staff/cities/gameevent/?all=").content.decode()
    # The sentences are in the game's language whatever the browser asks (the labels follow the browser).
    shown = re.sub(r"<script.*?</script>|<[^>]+>", " ", body, flags=re.DOTALL)  # the visible text
    assert "message.posted" not in shown and "inbox=" not in shown and "voting_open" not in shown
    rows = re.findall(r'<tr>.*?</tr>', body, re.DOTALL)
    sentences = [r for r in rows if 'class="field-sentence"' in r]
    assert sentences and all(MARK in r or re.search("[А-Яа-я]", r) for r in sentences)
    assert " MSK" in shown and "UTC" not in shown


def test_the_m21_console_log_reads_in_english_L_STAFF(db):
    from tests.rulesets.m21.day_helpers import build_game

    table = build_game(slug="m21-audit-words")
    body = _client(table.host, "ru").get("/staff/cities/gameevent/?all=").content.decode()
    shown = re.sub(r"<script.*?</script>|<[^>]+>", " ", body, flags=re.DOTALL)
    assert "dealt the roles; day 1 starts at" in shown and " GMT" in shown  # the game's zone, Europe/London
    assert "m21.roles_dealt" not in shown


def test_codes_in_a_sentence_read_as_translated_words_L_STAFF_6(demo):
    resident, other = Resident.objects.filter(game=demo.game, city__number=1).order_by("pk")[:2]
    scope = audit_policy.AuditScope(fresh(demo.procurator), demo.game)
    texts = {}
    for key, kind, payload in [
        ("speech", "voting.speech_requested", {"kind": "confrontation", "resident": resident.pk, "other": other.pk}),
        ("executed", "resident.died", {"resident": resident.pk, "cause": "executed"}),
        ("killed", "resident.died", {"resident": resident.pk, "cause": "killed"}),
        ("penalty", "resident.died", {"resident": resident.pk, "cause": "penalty"}),
        ("status", "game.status", {"status": "running", "day": 2}),
        ("unknown", "resident.died", {"resident": resident.pk, "cause": "eaten"}),
    ]:
        event = record_event(demo.game, kind, actor=None, at=timezone.now(), payload=payload)
        texts[key] = re.sub(r"<[^>]+>", "", str(audit_sentence(scope, event)))
    assert texts["speech"] == (f"Житель {resident.name} попросил слова (очная ставка) вместе с жителем "
                               f"{other.name}.")
    assert texts["executed"].endswith(f"{resident.name} погиб (казнён).")
    assert texts["killed"].endswith("(убит).") and texts["penalty"].endswith("(штраф).")
    assert "(Идёт игра)" not in texts["status"] and "Идёт игра" in texts["status"] and "running" not in texts["status"]
    assert texts["unknown"].endswith("(eaten).")


def test_an_impeachments_demand_is_named_as_the_impeachment_demand_it_is_L_IMPEACH_1(demo):
    demand = staff_services.do_demand_impeachment(demo.game, acting_user=fresh(demo.honest), now=timezone.now())
    event = GameEvent.objects.get(game=demo.game, kind="impeachment.demanded")
    scope = audit_policy.AuditScope(fresh(demo.procurator), demo.game)
    # The game's ruleset says which record a "demand" of this kind is (``audit_kind_references``).
    assert dict(scope.shown_details(event))["demand"] == f"[{demand.public_id}]"
    assert get_ruleset("lepra").audit_kind_references["impeachment.signed"] == {"demand": "impeachment"}
