"""Helpers of the staff console tests: a logged-in client of a staff member, the flashed messages of a response, the changelist URLs, what a persona reads and a changelist row normalised for comparison."""
from __future__ import annotations

import html
import re

from django.contrib.messages import get_messages
from django.test import Client
from django.utils import translation

from cities.models import City, Game, Resident
from inboxes.models import Inbox, Membership, Message
from kernel.rulesets import known_inbox_kind_choices
from rulesets.lepra import staff_services
from rulesets.lepra.models import ImpeachmentDemand
from tests.admin_keys import key_of, pks_from_keys, post_console_action
from tests.staff.conftest import NOW
from tests.support.policy_matrix import expected_access, label

CHANGELIST = {
    "inbox": "/staff/inboxes/inbox/",
    "resident": "/staff/cities/resident/",
    "membership": "/staff/inboxes/membership/",
    "message": "/staff/inboxes/message/",
}


def staff_client(user) -> Client:
    """A client whose browser asks for English, logged in as ``user`` unless anonymous. The console speaks the
    language of the viewer's games whatever the browser asks: Russian for the Lepra demo's staff."""
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    if getattr(user, "is_authenticated", False):
        client.force_login(user)
    return client


def readable_inbox_ids(demo, persona: str) -> set[int]:
    allowed, _ = expected_access(demo)[persona]
    inboxes = Inbox.objects.filter(game=demo.game).select_related("city", "resident")
    return {i.pk for i in inboxes if label(i) in allowed}


def flashed(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def nothing_found() -> str:
    """The console's answer to an action whose selection names no object the viewer may act on (out of scope, missing
    or malformed alike), as the Lepra demo's staff read it (Russian)."""
    with translation.override("ru"):
        return translation.gettext("None of the selected items was found among those you may act on. No items have "
                                   "been changed.")


def _normalized(response, pk: int) -> tuple:
    """What a response tells: status, target, page text and flashed messages, with the id blanked out."""
    def blank(text: str) -> str:  # the admin's "… with ID “5” doesn't exist" names the id asked for
        return re.sub(f"[“«]{pk}[”“»]", "“ID”", text).replace(f"/{pk}/", "/ID/")

    chain = [(blank(url), status) for url, status in getattr(response, "redirect_chain", [])]
    body = blank(response.content.decode())
    body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)
    return response.status_code, chain, body


STAFF_PERSONAS = ["procurator", "tribune1", "tribune2", "arbiter", "consigliere"]


CHANGE_LINK = {
    "inbox": re.compile(r'href="/staff/inboxes/inbox/([a-z0-9]+)/change/'),
    "resident": re.compile(r'href="/staff/cities/resident/([a-z0-9]+)/change/'),
    "membership": re.compile(r'href="/staff/inboxes/membership/([a-z0-9]+)/change/'),
    "message": re.compile(r'href="/staff/inboxes/message/([a-z0-9]+)/change/'),
}


MODELS = {"inbox": Inbox, "resident": Resident, "membership": Membership, "message": Message}


def listed_ids(client: Client, model: str, query: str = "") -> list[int]:
    """The object ids listed by the changelist of ``model`` (all rows, in order)."""
    response = client.get(CHANGELIST[model] + "?all=" + (("&" + query) if query else ""))
    assert response.status_code == 200, (model, query, response.status_code)
    keys = list(dict.fromkeys(CHANGE_LINK[model].findall(response.content.decode())))
    return pks_from_keys(MODELS[model], keys)


#: A list filter's choice by inbox kind: ``<a href="?...kind__exact=<kind>">label</a>``.
KIND_FILTER_CHOICE = re.compile(r'<a href="\?[^"]*kind__exact=([a-z_]+)">([^<]*)</a>')


def without_kind_filter_choices(page: str) -> str:
    """``page`` without the kind filter's choices, each removed only where its label is exactly the Russian name
    of its kind (a public list of every kind). Lepra names some inboxes after their kind ("Бар", "Кладбище"), so
    a title check must not count the filter's choice as the title; anywhere else the title still counts."""
    with translation.override("ru"):
        names = {value: str(label) for value, label in known_inbox_kind_choices()}

    def drop(match: re.Match) -> str:
        return "" if names.get(match.group(1)) == html.unescape(match.group(2)) else match.group(0)

    return KIND_FILTER_CHOICE.sub(drop, page)


def staff_pages_for(client: Client) -> dict[str, str]:
    """url -> HTML of every /staff/ page this client reaches: dashboard, app pages, changelists and every
    object page (and history page) linked from them (status 200 only)."""
    urls = ["/staff/", "/staff/cities/", "/staff/inboxes/", "/staff/cities/game/", "/staff/password_change/",
            *(f"/staff/games/{slug}/stage/" for slug in Game.objects.values_list("slug", flat=True)),
            *(f"/staff/games/{slug}/clock/" for slug in Game.objects.values_list("slug", flat=True)),
            # The Lepra day (issue 4 item 6): its app page, changelists and the Tribunes' schedule pages.
            "/staff/lepra/", "/staff/lepra/votingsession/?all=", "/staff/lepra/proxyrequest/?all=",
            "/staff/lepra/suicidedeclaration/?all=", "/staff/lepra/courtcase/?all=",
            *(f"/staff/cities/{key}/schedule-voting/" for key in City.objects.values_list("public_id", flat=True))]
    pages: dict[str, str] = {}
    for url in urls:
        response = client.get(url, follow=True)
        final = response.redirect_chain[-1][0] if response.redirect_chain else url
        if response.status_code == 200 and final.startswith("/staff/"):
            pages[url] = response.content.decode()
    for model, changelist in CHANGELIST.items():
        response = client.get(changelist + "?all=")
        if response.status_code != 200:
            continue
        body = response.content.decode()
        pages[changelist] = body
        for n, pk in enumerate(dict.fromkeys(CHANGE_LINK[model].findall(body))):
            for suffix in ("change/", "history/") if n < 3 else ("change/",):
                url = f"{changelist}{pk}/{suffix}"
                response = client.get(url)
                assert response.status_code == 200, url
                pages[url] = response.content.decode()
    for slug in re.findall(r'href="/staff/cities/game/([-a-zA-Z0-9_]+)/change/', pages.get("/staff/cities/game/", "")):
        pages[f"/staff/cities/game/{slug}/change/"] = client.get(f"/staff/cities/game/{slug}/change/").content.decode()
    return pages


def _opened_demand(demo) -> ImpeachmentDemand:
    residents = list(Resident.objects.filter(game=demo.game, city__number=1).exclude(user=demo.honest)
                     .select_related("user").order_by("name")[:5])
    demand = staff_services.do_demand_impeachment(demo.game, acting_user=demo.honest, now=NOW)
    for r in residents:
        staff_services.do_sign_impeachment_demand(demand, acting_user=r.user, now=NOW)
    return demand


def act(client: Client, model: str, action: str, objects, *, submit: bool = False, **extra):
    """POST ``action`` for ``objects`` (instances or ids) from the changelist of ``model``, or with ``submit`` its
    intermediate page's form (``extra``) to the action's own URL; following redirects."""
    ids = [key_of(o) if hasattr(o, "pk") else o for o in objects]
    return post_console_action(client, CHANGELIST[model], action, ids, submit=submit, **extra)
