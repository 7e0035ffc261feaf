"""Opaque public ids (L-INBOX-20: nothing shown may count what the viewer cannot read; DESIGN.md "The access
policy": ids a user can see are opaque).

Crawled as each persona: the site's pages, the staff console (changelists, object pages, the audit log) and the
JSON export. No URL, form value, export or audit payload carries the sequential database id of an inbox, a
message, a resident or a request; public ids are random tokens, and a forbidden and a missing one are the same 404.
"""
from __future__ import annotations

import json
import re

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import FieldDoesNotExist

from cities.models import GameEvent, Resident
from inboxes import audit_policy, policies
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.public_ids import PUBLIC_ID_REGEX, PublicIdField, is_public_id, new_public_id
from tests.conftest import fresh
from tests.support.page_leaks import client_for
from tests.support.staff_console import staff_client

#: Site URLs whose path names an inbox, a resident, a post or an offer by a database id.
NUMERIC_OBJECT_URL = re.compile(r'/(?:inboxes|residents|posts|offers|archive/open)/\d+/')
#: Staff console URLs of objects with a public id (or of a game, named by its slug), by a database id: object pages,
#: the console's own pages of a game, a city or a voting session, and list filters by a game's or a city's id.
NUMERIC_CONSOLE_URL = re.compile(
    r'/staff/(?:inboxes/(?:inbox|message|membership)|cities/(?:game|resident|gameevent)|voting/(?:votingsession|'
    r'proxyrequest|suicidedeclaration|courtcase|speechrequest|removaldemand|cityjudge|judgeelection)|'
    r'staff/(?:impeachmentdemand|staffstandin)|sanctions/(?:playban|noconfidencecase)|games|cities|votings|m21)/\d+/'
    r'|__id__exact=')
#: Form fields that name an inbox, a message or a resident (a city is named by its number, a public fact).
OBJECT_FIELDS = ("inbox", "inboxes", "message", "members", "candidate", "choice", "resident", "proxy", "declaration",
                 "demand", "other", "nominee", "target", "voter", "speakers")
_FIELDS = "|".join(OBJECT_FIELDS)
NUMERIC_OBJECT_VALUE = re.compile(rf'name="(?:{_FIELDS})"[^>]*value="\d+"')
NUMERIC_OPTION = re.compile(rf'<select name="(?:{_FIELDS})"[^>]*>(?:(?!</select>).)*?<option value="\d+"', re.DOTALL)
#: The audit log's details naming an object by a number.
NUMERIC_REFERENCE = re.compile(r'\b(?:inbox|inboxes|message|resident|proxy|declaration|demand|session|case|offer|post|'
                               r'request|nominee|candidate|predecessor|successor|created)=\d')

SITE_PERSONAS = ["anonymous", "honest", "mafioso", "commissar", "judge", "tribune1", "procurator", "consigliere"]
STAFF_PERSONAS = ["tribune1", "arbiter", "procurator", "consigliere"]


def _numeric_ids(pages: dict[str, str]) -> list[str]:
    found = []
    for url, body in pages.items():
        for pattern in (NUMERIC_OBJECT_URL, NUMERIC_CONSOLE_URL, NUMERIC_OBJECT_VALUE, NUMERIC_OPTION):
            found += [f"{url}: {m.group(0)[:80]}" for m in pattern.finditer(url + "\n" + body)]
    return found


def test_public_ids_are_random_tokens_of_the_documented_shape():
    ids = {new_public_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(is_public_id(i) and re.fullmatch(PUBLIC_ID_REGEX, i) and not i.isdigit() for i in ids)
    assert not any(is_public_id(v) for v in ("12", "abc", None, 12, "A" * 12, "ab cdefghjkmn"))


def test_every_character_of_a_public_id_ranges_over_its_whole_alphabet():
    """An id is one random number written in the ids' alphabets: every position, the last ones included, takes
    every character of its alphabet (a number too small for the id would leave its last characters fixed). With
    4,000 ids a character missing by chance at one position has a probability below 1e-50."""
    from kernel.public_ids import _FIRST, _REST

    ids = [new_public_id() for _ in range(4000)]
    assert {i[0] for i in ids} == set(_FIRST)
    for position in range(1, 12):
        assert {i[position] for i in ids} == set(_REST), position
    assert len(set(ids)) == 4000


def test_every_object_has_a_unique_public_id_after_the_migrations_L_INBOX_20(demo):
    """The migrations hold no backfill: every row of a model with a ``public_id`` gets one from the model when it is
    created (the demo game is built through the services)."""
    for model in (Inbox, Message, Resident):
        values = list(model.objects.values_list("public_id", flat=True))
        assert values and all(is_public_id(v) for v in values), model
        assert len(set(values)) == len(values), model
    with_public_ids = [m for m in django_apps.get_models() if isinstance(_public_id_field(m), PublicIdField)]
    assert len(with_public_ids) >= 13
    assert [m.__name__ for m in with_public_ids if m.objects.filter(public_id__isnull=True).exists()] == []


def _public_id_field(model):
    try:
        return model._meta.get_field("public_id")
    except FieldDoesNotExist:
        return None


@pytest.mark.parametrize("persona", SITE_PERSONAS)
def test_no_site_page_shows_a_sequential_id_of_an_inbox_message_or_resident_L_INBOX_20(demo, demo_pages, persona):
    pages = demo_pages.site(persona)
    client = client_for(getattr(demo, persona))
    for path in ("inboxes/", "nominate/", "night/", "cities/1/day/", "cities/2/day/", "inboxes/secret/new/"):
        response = client.get(f"/games/{demo.game.slug}/{path}")
        if response.status_code == 200:
            pages[path] = response.content.decode()
    response = client.get("/me/consents/")
    if response.status_code == 200:
        pages["/me/consents/"] = response.content.decode()
    assert len(pages) >= 5
    assert _numeric_ids(pages) == []
    threads = [u for u in pages if re.fullmatch(r"/inboxes/[a-z0-9]+/", u)]
    if persona != "anonymous":
        assert threads, persona  # the crawl did open inboxes, by their public ids


@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_no_staff_console_page_shows_a_sequential_id_and_the_audit_log_names_no_id_L_INBOX_20(demo, demo_pages,
                                                                                              persona):
    pages = demo_pages.staff(persona)
    client = staff_client(getattr(demo, persona))
    audit = client.get("/staff/cities/gameevent/?all=").content.decode()
    pages["/staff/cities/gameevent/"] = audit
    assert _numeric_ids(pages) == []
    assert NUMERIC_REFERENCE.findall(audit) == []
    # The audit log does show the events of the viewer's scope, with public ids of what they may read.
    scope = audit_policy.AuditScope(fresh(getattr(demo, persona)), demo.game)
    shown = [e for e in GameEvent.objects.filter(game=demo.game) if scope.can_see(e)]
    assert shown
    readable = Inbox.objects.filter(pk__in=scope.readable_inbox_ids()).first()
    if readable is not None:
        created = GameEvent.objects.filter(game=demo.game, kind="inbox.created", payload__inbox=readable.pk).first()
        if created is not None and scope.can_see(created):
            assert f"[{readable.public_id}]" in dict(scope.shown_details(created))["inbox"]


def test_audit_details_replace_every_id_and_show_nothing_outside_the_scope_L_INBOX_20(demo):
    mafia1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    city1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    message = Message.objects.filter(inbox=mafia1).first()
    seat = demo.seat("honest")
    event = GameEvent(game=demo.game, kind="voting.opened", at=message.received_at,
                      payload={"inboxes": [mafia1.pk, city1.pk], "message": message.pk, "resident": seat.pk,
                               "day": 2, "mystery": 77})
    scope = audit_policy.AuditScope(fresh(demo.tribune1), demo.game)
    assert scope.shown_details(event) == [
        ("day", "2"), ("inboxes", f"—, {city1.title} [{city1.public_id}]"), ("message", "—"), ("mystery", "…"),
        ("resident", seat.name)]
    consigliere = audit_policy.AuditScope(fresh(demo.consigliere), demo.game)
    assert dict(consigliere.shown_details(event))["message"] == f"[{message.public_id}]"


def test_the_json_export_names_inboxes_by_public_id_L_ARCH_3(demo):
    from archive.export import export_for

    data = json.loads(json.dumps(export_for(fresh(demo.honest), demo.game)))
    readable = set(policies.readable_inboxes(fresh(demo.honest), demo.game).values_list("public_id", flat=True))
    assert {i["id"] for i in data["inboxes"]} == readable and readable


def test_a_database_id_a_forbidden_and_a_missing_public_id_are_the_same_404_L_INBOX_17(demo):
    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    own = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    client = client_for(demo.honest)
    bodies = []
    for ref in (mafia2.public_id, new_public_id(), str(own.pk), str(mafia2.pk)):
        response = client.get(f"/inboxes/{ref}/")
        assert response.status_code == 404, ref
        # The page differs only by its per-request CSRF token and the address asked for.
        body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())
        bodies.append(body.replace(ref, "REF"))
    assert len(set(bodies)) == 1
    assert client.get(f"/inboxes/{own.public_id}/").status_code == 200
