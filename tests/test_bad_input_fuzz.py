"""Malformed ids and values never give a 500: a fuzz walk over every URL pattern of the site and every form field
of every POST form a persona is shown (DESIGN.md "Standards": bad input gets a clear message and changes nothing).

The walk iterates the URL resolver, so a new page is fuzzed without touching this file. Each path parameter is
replaced in turn by each malformed value (the others kept valid) and requested as several personas; each page a
persona can open is requested again with every query parameter the site reads set to each malformed value; and
each POST form found on those pages (each submit button a separate submission) is posted once per field and
malformed value, the other fields keeping the values the page offered. No response may be a 500; a malformed
path parameter is a 404 (or the login redirect / 403 of a page the persona may not open at all).
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import quote, urlencode, urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from cities.models import City, PublicPost
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.m21.kinds import M21InboxKind

#: Values a client can send in place of an id: non-numeric, fractional, negative, beyond a bigint, non-ASCII
#: digits (a superscript two, an Arabic-Indic three), a NUL byte alone and after digits, empty, an id-shaped
#: string of another kind and a public id of the right shape that names nothing.
MALFORMED = ["abc", "1.5", "-1", "99999999999999999999999", "\u00b2", "\u0663", "\x00", "1\x00", "", "n1",
             "abcdefghjkmn"]

#: Query parameters the site's pages read (archive filters and search, pagination, the admin's changelist).
QUERY_PARAMS = ["q", "page", "city", "kind", "format", "next", "o", "p", "day", "inbox", "all"]

#: The malformed values a form field or a query parameter gets (a NUL byte is refused before any view by the
#: middleware, checked once per page; the path walk uses every value of ``MALFORMED``).
FIELD_VALUES = ["abc", "99999999999999999999999", "\u00b2", "\u0663", "1.5", "abcdefghjkmn", "\x00"]
QUERY_VALUES = ["99999999999999999999999", "\u0663", "abc", "\x00"]

#: Who walks which part of the site: the site's pages as a visitor, a resident, a mafioso, a judge, a Tribune and
#: the Procurator; the staff console as each staff role; the operators' admin as the site's superuser.
SITE_PERSONAS = ["anonymous", "honest", "mafioso", "judge", "tribune1", "procurator"]
STAFF_PERSONAS = ["tribune1", "arbiter", "procurator", "consigliere"]


def _walk(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern)


def _routes() -> list[str]:
    return list(_walk(get_resolver().url_patterns))


_PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")
_REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?:\[[^\]]*\]|[^()])*\)")


def _valid_values(demo) -> dict[str, str]:
    """A valid value for each path parameter name the site uses, in the demo game."""
    city1 = City.objects.get(game=demo.game, number=1)
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city=city1, rolled_over_at__isnull=True)
    post = PublicPost.objects.filter(game=demo.game, published_at__isnull=False).order_by("pk").first()
    return {
        "slug": demo.game.slug, "step": "offer-commissar", "number": "1", "game_id": str(demo.game.pk),
        "city_id": str(city1.pk), "day": "2", "inbox_id": _inbox_ref(inbox), "position": "1",
        "post_id": post.public_id, "resident_id": _resident_ref(demo.seat("honest")),
        "offer_id": "x", "object_id": "1", "app_label": "inboxes", "url": "x", "key": "x", "uidb36": "x",
        "id": "1",
    }


def _inbox_ref(inbox) -> str:
    return inbox.public_id


def _resident_ref(resident) -> str:
    return resident.public_id


def _fill(route: str, values: dict[str, str]) -> str:
    route = route.lstrip("^").rstrip("$")
    route = _PARAM.sub(lambda m: quote(values.get(m["name"], "1"), safe=""), route)
    route = _REGEX_GROUP.sub(lambda m: quote(values.get(m["name"], "1"), safe=""), route)
    route = route.replace("^", "").replace("$", "")
    return "/" + route


def _params(route: str) -> list[str]:
    return [m["name"] for m in _PARAM.finditer(route)] + [m["name"] for m in _REGEX_GROUP.finditer(route)]


def _personas_for(route: str, few: bool = False) -> list[str]:
    """Who requests ``route``; ``few``: one persona per kind of access (for the costlier path walk)."""
    if route.startswith("admin/"):
        return ["superuser"]
    if route.startswith("staff/"):
        return ["procurator"] if few else STAFF_PERSONAS
    if route.startswith("accounts/"):
        return ["anonymous"] if few else ["anonymous", "honest"]
    return ["anonymous", "honest"] if few else SITE_PERSONAS


def _client(demo, persona: str) -> Client:
    client = Client(raise_request_exception=False)
    user = getattr(demo, persona)
    if getattr(user, "is_authenticated", False):
        client.force_login(user)
    return client


class _Forms(HTMLParser):
    """The POST forms of a page: (action, fields [(name, value)], submit buttons [(name, value)], and the other
    URLs its buttons post to with ``formaction``)."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self._form = None
        self._select = None
        self._textarea = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._form = {"action": a.get("action") or "", "method": (a.get("method") or "get").lower(),
                          "fields": [], "buttons": []} if True else None
            self.forms.append(self._form)
        elif self._form is None:
            return
        elif tag == "input" and a.get("name"):
            kind = (a.get("type") or "text").lower()
            if kind in ("submit", "image"):
                self._form["buttons"].append((a["name"], a.get("value") or ""))
            elif kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._form["fields"].append((a["name"], a.get("value") or "on"))
                else:
                    self._form.setdefault("unchecked", []).append((a["name"], a.get("value") or "on"))
            else:
                self._form["fields"].append((a["name"], a.get("value") or ""))
        elif tag == "button" and (a.get("type") or "submit") == "submit":
            if a.get("formaction"):
                self._form.setdefault("formactions", []).append(a["formaction"])
            if a.get("name"):
                self._form["buttons"].append((a["name"], a.get("value") or ""))
        elif tag == "select" and a.get("name"):
            self._select = [a["name"], None]
        elif tag == "option" and self._select is not None and self._select[1] is None:
            self._select[1] = a.get("value") or ""
        elif tag == "textarea" and a.get("name"):
            self._form["fields"].append((a["name"], "text"))

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "select" and self._select is not None and self._form is not None:
            self._form["fields"].append((self._select[0], self._select[1] or ""))
            self._select = None


def _post_forms(html: str) -> list[dict]:
    parser = _Forms()
    parser.feed(html)
    return [f for f in parser.forms if f["method"] == "post"]


def _five_hundreds(responses) -> list[str]:
    return [label for label, status in responses if status >= 500]


@pytest.fixture
def valid(demo):
    return _valid_values(demo)


def _path_cases(routes, valid):
    for route in routes:
        for name in _params(route):
            for bad in MALFORMED:
                if name == "slug" and route.startswith("games/"):
                    pass
                yield route, name, bad, _fill(route, {**valid, name: bad})


#: The parts of the site by route prefix (each walked by its own test, so that the walk runs on both workers).
PARTS = {"operators": ("admin/",), "staff-console": ("staff/",), "accounts": ("accounts/",), "site": ()}


def _routes_of(part: str) -> list[str]:
    """The URL patterns of ``part`` (``PARTS``; "site": every pattern of no other part)."""
    others = tuple(prefix for prefixes in PARTS.values() for prefix in prefixes)
    return [r for r in _routes() if (r.startswith(PARTS[part]) if PARTS[part] else not r.startswith(others))]


def test_the_parts_cover_every_url_pattern():
    assert sorted(r for part in PARTS for r in _routes_of(part)) == sorted(_routes())
    assert all(_routes_of(part) for part in PARTS)


@pytest.mark.parametrize("part", list(PARTS))
def test_malformed_path_parameters_give_404_never_500(demo, valid, part):
    """Every URL pattern, each path parameter malformed in turn, as each persona of its part of the site: never a
    500; a 404 unless the persona may not open the page at all (login redirect, 403, 405 for a POST-only page)."""
    failures, wrong = [], []
    clients = {}
    for route, name, bad, url in _path_cases(_routes_of(part), valid):
        for persona in _personas_for(route, few=True):
            client = clients.setdefault(persona, _client(demo, persona))
            response = client.get(url)
            if response.status_code >= 500:
                failures.append(f"{persona} GET {url!r}: {response.status_code}")
            elif response.status_code not in (404, 400, 302, 403, 405):
                wrong.append(f"{persona} GET {url!r} ({name}={bad!r}): {response.status_code}")
    assert not failures, "\n".join(failures)
    assert not wrong, "\n".join(wrong)


def _reachable_pages(demo, valid, personas):
    """(persona, url) of every page without a malformed part that ``persona`` opens with a 200."""
    pages = []
    for route in _routes():
        if "(?P<url>" in route:
            continue
        url = _fill(route, valid)
        for persona in _personas_for(route):
            if persona in personas:
                pages.append((persona, url))
    return pages


#: Every persona that walks some part of the site (``_personas_for``), each walked by its own test.
WALKERS = list(dict.fromkeys([*SITE_PERSONAS, *STAFF_PERSONAS, "superuser"]))


@pytest.mark.parametrize("persona", WALKERS)
def test_malformed_query_and_form_values_never_give_500(demo, valid, persona):
    """Every page ``persona`` opens, with each query parameter the site reads set to each malformed value, and
    every POST form on it posted once per field and malformed value (each submit button separately): zero 500s."""
    failures = []
    seen_forms = set()
    for _persona, url in _reachable_pages(demo, valid, [persona]):
        client = _client(demo, persona)  # a fresh session per page, whatever the posts before did to it
        for bad in QUERY_VALUES:
            response = client.get(url + "?" + urlencode({p: bad for p in QUERY_PARAMS}))
            if response.status_code >= 500:
                failures.append(f"{persona} GET {url}?…={bad!r}: {response.status_code}")
        response = client.get(url)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        posts = [(form, action) for form in _post_forms(response.content.decode())
                 for action in [form["action"], *form.get("formactions", [])]]
        for form, action in posts:
            target = urljoin(url, action) if action else url
            if urlsplit(target).netloc or target.startswith(("/accounts/logout", "/staff/logout")):
                continue
            buttons = form["buttons"] or [None]
            for button in buttons:
                key = (persona, urlsplit(target).path, tuple(n for n, _ in form["fields"]), button)
                if key in seen_forms:
                    continue
                seen_forms.add(key)
                base = list(form["fields"]) + ([button] if button else [])
                names = {n for n, _ in form["fields"] if n != "csrfmiddlewaretoken"}
                names |= {n for n, _ in form.get("unchecked", [])}
                for name in sorted(names):
                    for bad in FIELD_VALUES:
                        data = [(n, v) for n, v in base if n != name] + [(name, bad)]
                        posted = {}
                        for n, v in data:
                            posted.setdefault(n, []).append(v)
                        response = client.post(target, posted)
                        if response.status_code >= 500:
                            print("500:", persona, target, name, repr(bad), button, flush=True)
                            failures.append(f"{persona} POST {target} {name}={bad!r} button={button}: "
                                            f"{response.status_code}")
    assert not failures, "\n".join(failures)


# --------------------------------------------------------------------------------------------------------------
# The cases found by hand, each with its exact answer
# --------------------------------------------------------------------------------------------------------------

BAD_IDS = ["\u00b2", "\u0663", "99999999999999999999999", "1.5", "abc", "-1", "abcdefghjkmn"]


@pytest.mark.parametrize("persona, action, field", [
    ("tribune1", "accept_proxy", "proxy"), ("tribune1", "confirm_suicide", "declaration"),
    ("procurator", "decide_execution", "resident"), ("honest", "propose_candidate", "candidate"),
    ("honest", "confirm_removal_demand", "demand"),
])
def test_day_page_fields_with_bad_ids_are_the_404_of_a_missing_object_and_change_nothing(demo, persona, action, field):
    """A malformed, huge, non-ASCII or unknown id, and the database id of a real object (never accepted: pages name
    objects by public id), are the one 404 of ``inboxes.access`` (L-INBOX-20)."""
    from cities.models import GameEvent

    client = _client(demo, persona)
    url = reverse(action, args=[demo.game.slug, 1])
    events = GameEvent.objects.count()
    hidden = field in ("proxy", "declaration", "demand")  # a button's hidden id: empty is a bad id too
    for bad in [*BAD_IDS, str(demo.seat("honest").pk), *([""] if hidden else [])]:
        response = client.post(url, {field: bad})
        assert response.status_code == 404, (field, bad)
    assert GameEvent.objects.count() == events


def test_nominate_other_and_a_nul_in_the_note_are_a_400(demo):
    from rulesets.lepra.models import SpeechRequest

    client = _client(demo, "honest")
    for bad in BAD_IDS:
        response = client.post(reverse("request_confrontation", args=[demo.game.slug]), {"other": bad, "note": "x"})
        assert response.status_code == 400, bad
    before = SpeechRequest.objects.count()  # (a NUL cannot even be sent to PostgreSQL in a query)
    response = client.post(reverse("request_last_word", args=[demo.game.slug]), {"note": "a\x00b"})
    assert response.status_code == 400
    assert "Нулевые символы недопустимы." in response.content.decode()
    assert SpeechRequest.objects.count() == before


def test_archive_search_with_a_nul_is_a_400_for_everyone(demo):
    for persona in ("anonymous", "honest"):
        response = _client(demo, persona).get(f"/games/{demo.game.slug}/archive/search/?q=%00")
        assert response.status_code == 400
        assert "Нулевые символы недопустимы." in response.content.decode()


def test_setup_offer_commissar_with_a_non_ascii_city_is_a_400(demo):
    client = _client(demo, "procurator")
    for bad in BAD_IDS:
        response = client.post(f"/games/{demo.game.slug}/setup/offer-commissar/", {"city": bad})
        assert response.status_code in (400, 409), bad


def test_huge_and_malformed_inbox_ids_are_404_on_every_inbox_url(demo):
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    client = _client(demo, "honest")
    for bad in ("99999999999999999999999", str(inbox.pk), "\u0663", "abc"):
        assert client.get(f"/inboxes/{bad}/").status_code == 404
        assert client.post(f"/inboxes/{bad}/leave/").status_code == 404
        assert client.get(f"/inboxes/{bad}/n1/edit/").status_code == 404
    assert client.get(f"/inboxes/{inbox.public_id}/n99999999999999999999999/edit/").status_code == 404
    assert client.get(f"/inboxes/{inbox.public_id}/n999999999999999999/edit/").status_code == 404
    for bad in ("99999999999999999999999", "\u00b2", "abc", ""):
        assert client.post(reverse("archive_give_consent"), {"inbox": bad}).status_code == 404
        assert client.post(reverse("archive_revoke_consent"), {"inbox": bad}).status_code == 404



def test_a_nul_in_a_post_is_refused_in_the_players_language_and_to_an_open_page_as_a_post_refusal(db):
    """An M21 player (English pages) gets the refusal in English; the open page's htmx post gets it as its other
    refusals come (200, ``X-Post-Refused``, the reason for the feedback area) so that the typed text stays."""
    from django.test import Client

    from inboxes.models import Inbox, Message
    from tests.rulesets.m21.day_helpers import build_game

    table = build_game(slug="m21-nul")
    thread = Inbox.objects.get(game=table.game, kind=M21InboxKind.GAME_THREAD)
    client = Client()
    client.force_login(table.users["Alice"])
    url = f"/inboxes/{thread.public_id}/"
    before = Message.objects.filter(inbox=thread).count()
    page = client.post(url, {"text": "a\x00b"})
    assert page.status_code == 400 and "Null characters are not allowed." in page.content.decode()
    live = client.post(url, {"text": "a\x00b"}, HTTP_HX_REQUEST="true")
    assert live.status_code == 200 and live["X-Post-Refused"] == "400"
    assert live.content.decode() == ('<p class="error post-error" role="alert" id="post-error">'
                                     'Null characters are not allowed.</p>')
    assert Message.objects.filter(inbox=thread).count() == before
