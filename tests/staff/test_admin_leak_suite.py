"""The admin leak suite (issue 7, "What must be shown"; RULES.md L-STAFF-2, L-STAFF-5, L-STAFF-6, L-INBOX-20).

For every model registered on the /staff/ site and every persona: the changelist lists exactly the objects the
access policy gives (written out here from RULES.md, not read from the admin); every other object of the game
answers its change, history and delete URLs exactly as a missing id does; search, every whitelisted filter and
the autocomplete endpoint never return an object outside the scope. A model registered later by another app with
no written expectation still gets the generic checks: the Tribune of city 2 sees nothing of city 1, accounts
without a game role see nothing. And the operators' /admin/: a Django superuser with no game role sees no
alignment, no mafia inbox, no unpublished post and cannot link an account to the Consigliere role (L-STAFF-5).
"""
from __future__ import annotations

import html
import json
import re

import pytest
from django.contrib import admin as django_admin
from django.test import Client

from cities.models import GameEvent, PublicPost, Resident, ScheduledEvent, StaffRole
from inboxes.models import Inbox, Membership, Message
from rulesets.lepra.demo import STAFF_NAMES
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra.models import ImpeachmentDemand, NoConfidenceCase
from sanctions.models import PlayBan
from staff.console import staff_admin_site
from staff.models import StaffStandIn
from kernel.public_ids import new_public_id
from tests.admin_keys import key_of, missing_key, pks_from_keys
from tests.conftest import PERSONA_NAMES
from tests.support.staff_console import _normalized, readable_inbox_ids, staff_client
from rulesets.lepra.models import CourtCase, ProxyRequest, SpeechRequest, SuicideDeclaration, VotingSession

from .conftest import NOW

STAFF_PERSONAS = ["procurator", "tribune1", "tribune2", "arbiter", "consigliere"]
NON_STAFF = [p for p in PERSONA_NAMES if p not in STAFF_PERSONAS and p != "anonymous"]


def _ids(qs) -> set[int]:
    return set(qs.values_list("pk", flat=True))


def _city_scoped(model, demo, persona, *, tribune: bool, hosts: tuple[str, ...]) -> set[int]:
    qs = model.objects.filter(game=demo.game)
    if persona in hosts:
        return _ids(qs)
    if tribune and persona in ("tribune1", "tribune2"):
        return _ids(qs.filter(city__number=int(persona[-1])))
    return set()


def _residents(demo, persona):
    qs = Resident.objects.filter(game=demo.game)
    if persona in ("tribune1", "tribune2"):
        return _ids(qs.filter(city__number=int(persona[-1])))
    return _ids(qs) if persona in ("procurator", "arbiter", "consigliere") else set()


#: "app_label.model_name" -> (demo, persona) -> the object ids the persona's changelist must list, from RULES.md:
#: inboxes by the L-INBOX table (tests/inboxes/test_policy_matrix.py), residents by L-STAFF-2, the day's requests
#: by who receives them (L-NOM-4/5/6: the city's Tribune; speech requests also the Procurator), court cases by the
#: court's hosts (L-COURT), stand-ins among all staff, impeachment demands to the Procurator (L-IMPEACH-2).
EXPECTED = {
    "cities.game": lambda demo, p: {demo.game.pk} if p in STAFF_PERSONAS else set(),
    "cities.resident": _residents,
    "inboxes.inbox": lambda demo, p: readable_inbox_ids(demo, p) if p in STAFF_PERSONAS else set(),
    # ... but never the members of a check channel (the commissar, L-INBOX-15) or of a mafia complaint (the mafia,
    # L-IMPEACH-3): staff are never their members
    "inboxes.membership": lambda demo, p: _ids(Membership.objects.filter(inbox__in=readable_inbox_ids(demo, p))
                                               .exclude(inbox__kind__in=[LepraInboxKind.CHECK, LepraInboxKind.MAFIA_COMPLAINT]))
    if p in STAFF_PERSONAS else set(),
    "inboxes.message": lambda demo, p: _ids(Message.objects.filter(inbox__in=readable_inbox_ids(demo, p)))
    if p in STAFF_PERSONAS else set(),
    "lepra.votingsession": lambda demo, p: _city_scoped(VotingSession, demo, p, tribune=True,
                                                         hosts=("procurator", "arbiter")),
    "lepra.proxyrequest": lambda demo, p: _city_scoped(ProxyRequest, demo, p, tribune=True, hosts=()),
    "lepra.suicidedeclaration": lambda demo, p: _city_scoped(SuicideDeclaration, demo, p, tribune=True, hosts=()),
    "lepra.courtcase": lambda demo, p: _city_scoped(CourtCase, demo, p, tribune=False,
                                                     hosts=("procurator", "arbiter")),
    "lepra.speechrequest": lambda demo, p: _city_scoped(SpeechRequest, demo, p, tribune=True, hosts=("procurator",)),
    "staff.staffstandin": lambda demo, p: _city_scoped(StaffStandIn, demo, p, tribune=False,
                                                       hosts=tuple(STAFF_PERSONAS)),
    "lepra.impeachmentdemand": lambda demo, p: _city_scoped(ImpeachmentDemand, demo, p, tribune=False,
                                                            hosts=("procurator",)),
    # L-IMPEACH-3: complaints of no confidence go to the Procurator; L-SANCTION-2: he records play bans.
    "lepra.noconfidencecase": lambda demo, p: _city_scoped(NoConfidenceCase, demo, p, tribune=False,
                                                               hosts=("procurator",)),
    "sanctions.playban": lambda demo, p: _ids(PlayBan.objects.filter(game=demo.game)) if p == "procurator" else set(),
}


def registered():
    """(label, model, model admin, changelist url) of every model on the /staff/ site, in a stable order."""
    rows = []
    for model, model_admin in staff_admin_site._registry.items():
        opts = model._meta
        rows.append((opts.label_lower, model, model_admin, f"/staff/{opts.app_label}/{opts.model_name}/"))
    return sorted(rows, key=lambda r: r[0])


def listed(client: Client, url: str, query: str = "") -> tuple[int, set[int]]:
    """(status, database ids of the objects the changelist at ``url`` links to, by public id or database id)."""
    response = client.get(url + "?all=" + ("&" + query if query else ""), follow=True)
    if response.status_code != 200:
        return response.status_code, set()
    model = next(m for _label, m, _admin, u in registered() if u == url)
    keys = dict.fromkeys(re.findall(r'href="' + re.escape(url) + r'([a-z0-9]+)/change/', response.content.decode()))
    return 200, set(pks_from_keys(model, keys))


def _answer(response, pk: int) -> tuple:
    """What a response tells, with the asked id blanked only where the admin echoes it (“id” in its message,
    /id/ in the redirect chain): unlike a blind "/id/" replacement, unrelated links with a small id stay."""
    chain = [(url.replace(f"/{pk}/", "/ID/"), status) for url, status in getattr(response, "redirect_chain", [])]
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())
    return response.status_code, chain, re.sub(f"[“«]{pk}[”“»]", "“ID”", body)


def _has_path(model, path: str) -> bool:
    """True when ``model`` has the relation path ``path`` (``a__b``: field a, then field b of its model)."""
    for name in path.split("__"):
        field = next((f for f in model._meta.get_fields() if f.name == name), None)
        if field is None or not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return True


def _in_game(model, demo) -> set[int]:
    """Every object of ``model`` in the demo game (by ``game``, ``inbox__game`` or the game itself)."""
    if model._meta.label_lower == "cities.game":
        return {demo.game.pk}
    for path in ("game", "inbox__game"):
        if _has_path(model, path):
            return _ids(model.objects.filter(**{path: demo.game}))
    raise AssertionError(f"{model._meta.label}: no path to its game")


def _city1_ids(model, demo) -> set[int]:
    """Objects of ``model`` in the demo game that belong to city 1 (by a ``city``, ``inbox__city`` or
    ``resident__city`` path), for the generic Tribune-of-city-2 check."""
    for path in ("city", "inbox__city", "resident__city"):
        if _has_path(model, path):
            return _ids(model.objects.filter(**{f"{path}__number": 1, f"{path}__game": demo.game}))
    return set()


def test_every_registered_model_has_rows_and_a_written_scope_or_the_generic_checks(full):
    labels = [label for label, *_ in registered()]
    # The suite covers the day's requests, the court, the console's own models: each has rows in the fixture.
    for label, model, _admin, _url in registered():
        if label in EXPECTED and label not in ("lepra.courtcase", "lepra.votingsession"):
            assert model.objects.exists(), label
    assert set(EXPECTED) <= set(labels)
    assert "cities.gameevent" in labels  # the audit log, checked against its own table in test_audit_log.py


@pytest.mark.parametrize("persona", STAFF_PERSONAS + NON_STAFF)
def test_changelists_list_exactly_the_policy_scope_and_nothing_else_answers_L_STAFF_6(full, persona):
    demo = full
    client = staff_client(getattr(demo, persona))
    for label, model, model_admin, url in registered():
        status, ids = listed(client, url)
        if persona in NON_STAFF:
            assert status == 403, (persona, label)
            continue
        if label == "cities.gameevent":
            continue
        if status == 403:  # a module the role does not have (e.g. proxies for the Arbiter) lists nothing
            ids = set()
        in_game = _in_game(model, demo)
        if label in EXPECTED:
            assert ids == EXPECTED[label](demo, persona), (persona, label)
        if persona == "tribune2":
            assert not ids & _city1_ids(model, demo), label
        hidden = sorted(in_game - ids)[-2:]  # high ids: "/1/" would also blank unrelated links
        if not hidden:
            continue
        missing = missing_key(model)
        # The answer to a missing id does not depend on the hidden object it is compared with: asked once.
        missing_answers = {suffix: _answer(client.get(f"{url}{missing}/{suffix}", follow=True), missing)
                           for suffix in ("change/", "history/", "delete/")}
        for pk in hidden:
            pk = key_of(model.objects.get(pk=pk))  # the console key of the hidden object
            for suffix, missing_answer in missing_answers.items():
                forbidden_answer = _answer(client.get(f"{url}{pk}/{suffix}", follow=True), pk)
                assert forbidden_answer == missing_answer, (persona, label, suffix)
            # Search by the hidden object's own text finds nothing outside the scope.
            term = str(model.objects.get(pk=pks_from_keys(model, [pk])[0]))[:40]
            _status, found = listed(client, url, "q=" + term)
            assert found <= ids, (persona, label, term)


@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_whitelisted_filters_with_out_of_scope_values_return_nothing_outside_the_scope(full, persona):
    demo = full
    client = staff_client(getattr(demo, persona))
    cities = {c.number: c.public_id for c in demo.game.cities.all()}
    # One inbox of each kind and city (the mafia, personal, bar, notary... ones among them).
    inboxes = list({(kind, city): pk for pk, kind, city in Inbox.objects.filter(game=demo.game).order_by("-pk")
                    .values_list("public_id", "kind", "city_id")}.values())
    values = {"city__public_id__exact": [*cities.values(), new_public_id(), "12"], "inbox": inboxes,
              "game__slug__exact": [demo.game.slug, "no-such-game", "1"],
              "inbox__game__slug__exact": [demo.game.slug, "no-such-game"]}
    for label, _model, model_admin, url in registered():
        status, scope = listed(client, url)
        if status != 200:
            continue
        for lookup in sorted(model_admin.allowed_lookups):
            for value in values.get(lookup, []):
                status, found = listed(client, url, f"{lookup}={value}")
                assert status == 200 and found <= scope, (persona, label, lookup, value)


@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_autocomplete_from_every_source_field_returns_only_the_scope(full, persona):
    demo = full
    client = staff_client(getattr(demo, persona))
    registry = dict(staff_admin_site._registry)
    scopes = {}  # target changelist -> its ids, listed once (GETs change nothing)
    checked = 0
    for source_label, source, _source_admin, _url in registered():
        for field in source._meta.get_fields():
            if not getattr(field, "many_to_one", False) or field.related_model not in registry:
                continue
            target = field.related_model
            response = client.get("/staff/autocomplete/", {"app_label": source._meta.app_label,
                                                            "model_name": source._meta.model_name,
                                                            "field_name": field.name, "term": ""})
            if response.status_code != 200:
                assert response.status_code in (403, 404), (source_label, field.name)
                continue
            checked += 1
            results = set(pks_from_keys(target, [r["id"] for r in json.loads(response.content)["results"]]))
            target_url = f"/staff/{target._meta.app_label}/{target._meta.model_name}/"
            if target_url not in scopes:
                scopes[target_url] = listed(client, target_url)[1]
            assert results <= scopes[target_url], (persona, source_label, field.name)
    assert checked >= 2


def test_the_staff_site_has_no_export_or_unscoped_page(demo):
    names = {getattr(u, "name", None) for u in staff_admin_site.get_urls()}
    assert not [n for n in names if n and "export" in n]
    # Each own page answers 404 to everyone but its owner (ids tell nothing).
    city1 = demo.seat("honest").city
    for user, url in [(demo.tribune2, f"/staff/cities/{city1.public_id}/schedule-voting/"),
                      (demo.tribune1, f"/staff/games/{demo.game.slug}/stand-in/"),
                      (demo.arbiter, f"/staff/games/{demo.game.slug}/end/"),
                      (demo.consigliere, f"/staff/games/{demo.game.slug}/stage/"),
                      # the M21 host console of a Lepra game is nobody's, its Procurator's neither
                      (demo.procurator, f"/staff/m21/{demo.game.slug}/")]:
        assert staff_client(user).get(url).status_code == 404, url


# --------------------------------------------------------------------------------------------------------------
# The operators' /admin/ (L-STAFF-5)
# --------------------------------------------------------------------------------------------------------------

SECRET_DRAFT = "DRAFT-SECRET-ALIGNMENT-MARKER"
SECRET_PAYLOAD = "PAYLOAD-SECRET-MARKER"


def admin_pages(client: Client) -> dict[str, str]:
    """url -> HTML of every /admin/ changelist, each listed object's change, history and delete page."""
    pages = {}
    for model in django_admin.site._registry:
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        response = client.get(url + "?all=")
        assert response.status_code == 200, url
        body = response.content.decode()
        pages[url] = body
        for pk in dict.fromkeys(re.findall(re.escape(url) + r'(\d+)/change/', body)):
            for suffix in ("change/", "history/", "delete/"):
                response = client.get(f"{url}{pk}/{suffix}")
                if response.status_code == 200:
                    pages[f"{url}{pk}/{suffix}"] = response.content.decode()
    return pages


def test_a_superuser_without_a_game_role_sees_no_game_secret_in_the_operators_admin_L_STAFF_5(demo):
    PublicPost.objects.create(game=demo.game, kind="daily", title="Draft", body=SECRET_DRAFT, created_at=NOW)
    ScheduledEvent.objects.create(game=demo.game, kind="voting_open", due_at=NOW, created_at=NOW,
                                  payload={"note": SECRET_PAYLOAD})
    client = staff_client(demo.superuser)
    pages = admin_pages(client)
    everything = "\n".join(pages.values())
    assert len(pages) > 20
    assert SECRET_DRAFT not in everything and SECRET_PAYLOAD not in everything
    consigliere_role = StaffRole.objects.get(game=demo.game, kind=StaffKind.CONSIGLIERE)
    # No page ties the Consigliere's account to the role: the roles list omits it, its id answers like a
    # missing one, and no filter can ask "who holds role <id>".
    assert STAFF_NAMES["consigliere"] not in pages["/admin/cities/staffrole/"]
    missing = StaffRole.objects.order_by("-pk").first().pk + 1000
    assert _normalized(client.get(f"/admin/cities/staffrole/{consigliere_role.pk}/change/", follow=True),
                       consigliere_role.pk) == \
        _normalized(client.get(f"/admin/cities/staffrole/{missing}/change/", follow=True), missing)
    for url in (f"/admin/accounts/user/?staff_roles={consigliere_role.pk}",
                "/admin/accounts/user/?staff_roles__kind=consigliere",
                "/admin/accounts/user/?seats__alignment=mafia", f"/admin/cities/game/?staff_roles={consigliere_role.pk}",
                "/admin/cities/game/?residents__alignment=mafia"):
        assert client.get(url).status_code == 400, url
    user_pages = "".join(body for url, body in pages.items()
                         if url.startswith(f"/admin/accounts/user/{consigliere_role.user_id}/"))
    # (The demo's account is named "consigliere" by its username; the role itself, "Consigliere", never shows.)
    assert user_pages and "Consigliere" not in user_pages
    # Deleting an account would list its protected seats and roles: not offered.
    assert client.get(f"/admin/accounts/user/{consigliere_role.user_id}/delete/").status_code == 403
    # No alignment, no mafia inbox, no message.
    assert "alignment" not in everything.lower()
    for inbox in Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.MAFIA):
        assert html.escape(inbox.title) not in everything
    for message in Message.objects.filter(inbox__game=demo.game, inbox__kind=LepraInboxKind.MAFIA)[:50]:
        assert html.escape(message.body) not in everything
    # The audit log (whose payloads name secrets) is not in /admin/.
    assert GameEvent not in django_admin.site._registry


def test_a_superuser_is_refused_by_the_staff_site_unless_he_holds_a_role_there_L_STAFF_5(demo):
    client = staff_client(demo.superuser)
    for url in ("/staff/", "/staff/cities/gameevent/", "/staff/cities/resident/", "/staff/lepra/impeachmentdemand/"):
        assert client.get(url, follow=True).status_code == 403, url
