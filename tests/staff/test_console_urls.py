"""The staff console names a game by its slug and a city, a voting session and every listed object by its opaque
public id: no path, link, list filter or action checkbox of the console carries the database id of a game object
(DESIGN.md "The access policy": ids a user can see are opaque; a sequential id counts the objects made before it,
in every game, L-INBOX-20). The old integer forms, unknown and malformed keys answer the site's 404 page on the
console's own pages, the admin's "doesn't exist" on object pages and the 400 of a refused lookup on filters;
never a 500."""
from __future__ import annotations

import html
import re
from collections import Counter
from urllib.parse import parse_qsl, quote, urljoin, urlsplit

import pytest
import time_machine
from django.utils import translation

from cities.models import City, Resident
from kernel.public_ids import new_public_id
from staff.console import staff_admin_site
from tests.admin_keys import action_url, pks_from_keys
from tests.rulesets.m21.day_helpers import build_game
from tests.support.large_ids import large_ids_in, move_to_large_ids
from tests.support.staff_console import STAFF_PERSONAS, flashed, nothing_found, staff_client
from rulesets.lepra.models import JudgeElection

#: persona -> the console's own pages it may open, "{game}" being the game's key and "{city}" the city's.
OWN_PAGES = {
    "procurator": ["games/{game}/clock/", "games/{game}/stage/",
                   "games/{game}/stand-in/", "games/{game}/end/", "games/{game}/play-ban/"],
    "arbiter": ["games/{game}/schedule-election/", "games/{game}/court-procedure/"],
    "tribune1": ["cities/{city}/schedule-voting/"],
}
CASES = [(persona, page) for persona, pages in OWN_PAGES.items() for page in pages]


def _is_404_page(response) -> bool:
    return response.status_code == 404 and "404.html" in [t.name for t in response.templates]


@pytest.mark.parametrize("persona, page", CASES)
def test_each_console_page_opens_by_slug_or_public_id_and_any_other_key_is_the_404_page(demo, persona, page):
    moved = move_to_large_ids(demo.game)  # database ids no other number of the site shares
    city = City.objects.get(game__slug=demo.game.slug, number=1)
    client = staff_client(getattr(demo, persona))
    assert client.get("/staff/" + page.format(game=demo.game.slug, city=city.public_id)).status_code == 200
    other_keys = [  # the database ids, unknown keys of the right shape, malformed keys
        (str(moved["game"]), str(moved["city1"])), ("no-such-game", new_public_id()),
        ("%C2%B2", city.public_id.upper()), ("x" * 61, city.public_id + "a")]
    for game_key, city_key in other_keys:
        url = "/staff/" + page.format(game=game_key, city=city_key)
        assert _is_404_page(client.get(url)), url
        assert _is_404_page(client.post(url, {"reason": "x", "title": "x"})), url


def test_the_games_page_names_the_game_by_its_slug_and_its_database_id_is_a_missing_object(demo):
    game_id = move_to_large_ids(demo.game)["game"]
    client = staff_client(demo.procurator)
    listing = client.get("/staff/cities/game/").content.decode()
    assert f'href="/staff/cities/game/{demo.game.slug}/change/' in listing
    assert str(game_id) not in listing
    page = client.get(f"/staff/cities/game/{demo.game.slug}/change/")
    assert page.status_code == 200 and demo.game.title in page.content.decode()
    assert f'href="/staff/cities/game/{demo.game.slug}/history/"' in page.content.decode()
    assert client.get(f"/staff/cities/game/{demo.game.slug}/history/").status_code == 200
    for key in (str(game_id), "no-such-game", "%C2%B2"):
        missing = client.get(f"/staff/cities/game/{key}/change/", follow=True)
        assert missing.redirect_chain == [("/staff/", 302)] and len(flashed(missing)) == 1, key


def test_a_citys_object_page_and_actions_take_its_public_id_and_refuse_its_database_id_in_words(demo):
    """A city's row of the judges list (the ``CityJudge`` proxy of ``City``): its object page and the Arbiter's
    actions name it by its public id; its database id, an unknown and a malformed key are a missing object, named as
    such, and an action on them changes nothing and says so."""
    moved = move_to_large_ids(demo.game)
    city = City.objects.get(pk=moved["city1"])
    client, judges = staff_client(demo.arbiter), "/staff/lepra/cityjudge/"
    assert client.get(f"{judges}{city.public_id}/change/").status_code == 200
    listing = client.get(judges).content.decode()
    assert f'value="{city.public_id}"' in listing and str(city.pk) not in listing
    for key in (str(city.pk), new_public_id(), "\u00b2", "x" * 61):
        missing = client.get(f"{judges}{quote(key)}/change/", follow=True)
        assert missing.redirect_chain == [("/staff/", 302)], key
        assert flashed(missing) == [f"судья города с ID “{key}“ не существует. Возможно оно было удалено?"], key
        from_list = client.post(judges, {"action": "schedule_judge_election", "_selected_action": [key]}, follow=True)
        submitted = client.post(action_url(judges, "schedule_judge_election"), {
            "_selected_action": [key], "opens_at": "2026-11-19T16:00", "closes_at": "2026-11-19T20:00"}, follow=True)
        for answer in (from_list, submitted):
            assert answer.redirect_chain == [(judges, 302)] and flashed(answer) == [nothing_found()], key
    assert not JudgeElection.objects.filter(city=city).exists()


def test_a_residents_object_page_links_its_game_by_slug(demo):
    resident = demo.seat("honest")
    page = staff_client(demo.procurator).get(f"/staff/cities/resident/{resident.public_id}/change/").content.decode()
    assert f'href="/staff/cities/game/{demo.game.slug}/change/"' in page


def refused_filter() -> str:
    """The 400 page's words for a filter a list does not have, as the Lepra demo's staff read them (Russian)."""
    with translation.override("ru"):
        return translation.gettext(
            "This list has no such filter. Use the filters its page offers: the staff console names a game by its "
            "slug and a city by its public id, never by a database id.")


def _listed_residents(client, query: str) -> set[int]:
    response = client.get("/staff/cities/resident/?all=&" + query)
    assert response.status_code == 200, query
    keys = dict.fromkeys(re.findall(r'href="/staff/cities/resident/([a-z0-9]+)/change/', response.content.decode()))
    return set(pks_from_keys(Resident, keys))


def test_list_filters_narrow_by_game_slug_and_city_public_id_and_refuse_database_ids(demo):
    client = staff_client(demo.procurator)
    city2 = City.objects.get(game=demo.game, number=2)
    residents = "/staff/cities/resident/"
    everyone = set(Resident.objects.filter(game=demo.game).values_list("pk", flat=True))
    assert _listed_residents(client, f"game__slug__exact={demo.game.slug}") == everyone
    assert _listed_residents(client, f"city__public_id__exact={city2.public_id}") == set(
        Resident.objects.filter(city=city2).values_list("pk", flat=True))
    for query in ("game__slug__exact=no-such-game", f"city__public_id__exact={new_public_id()}",
                  f"city__public_id__exact={city2.pk}"):
        assert _listed_residents(client, query) == set(), query
    # The filter's choices are the keys themselves.
    sidebar = client.get(residents).content.decode()
    assert f'href="?city__public_id__exact={city2.public_id}"' in sidebar
    assert f'href="?game__slug__exact={demo.game.slug}"' in sidebar
    # The old forms are a refused lookup on every changelist, whatever the value.
    checked, refusal = 0, refused_filter()
    assert refusal.startswith("У этого списка нет такого фильтра")
    for model in staff_admin_site._registry:
        url = f"/staff/{model._meta.app_label}/{model._meta.model_name}/"
        if client.get(url).status_code != 200:  # a list the Procurator does not have
            continue
        checked += 1
        for lookup in ("game__id__exact", "city__id__exact", "inbox__game__id__exact"):
            refused = client.get(f"{url}?{lookup}={demo.game.pk}")
            assert refused.status_code == 400, (url, lookup)
            assert refusal in html.unescape(refused.content.decode()), (url, lookup)
    assert checked >= 10


# --------------------------------------------------------------------------------------------------------------
# The crawl: every console page a staff member reaches from the dashboard names no database id
# --------------------------------------------------------------------------------------------------------------

LINK = re.compile(r'(?:href|action)="([^"]*)"')
#: What a crawl follows: links (a form's action is a POST-only URL of its own).
HREF = re.compile(r'href="([^"]*)"')
SELECTED = re.compile(r'name="_selected_action" value="([^"]*)"')
OBJECT_PAGE = re.compile(r"^(/staff/[a-z0-9_]+/[a-z0-9_]+/)[^/]+/(?:change|history)/$")
#: Pages a crawl does not open: leaving the console, and the admin's own account pages.
NOT_OPENED = ("/staff/logout/", "/staff/login/", "/staff/password_change/")


def database_ids_in(body: str) -> list[str]:
    """The links, filters and action checkboxes of ``body`` (a console page) that carry a database id: a digits-only
    segment of a /staff/ path (a day number after ``daily-post/`` aside: days are public facts of the game), a
    ``__id__exact``/``_id`` parameter or a digits-only game or city parameter, a digits-only selected object."""
    found = ["__id__exact"] if "__id__exact" in body else []
    for raw in LINK.findall(body):
        link = urlsplit(html.unescape(raw))
        if link.path.startswith("/staff/") and re.search(r"/\d+/", re.sub(r"/daily-post/\d+/", "/", link.path)):
            found.append(raw)
        if link.path.startswith("/staff/") or not link.path:
            for key, value in parse_qsl(link.query):
                names_database_id = any(part == "id" or (part.endswith("_id") and part != "public_id")
                                        for part in key.split("__"))
                if names_database_id or (re.search("game|city", key) and value.isdigit()):
                    found.append(raw)
    found += [value for value in SELECTED.findall(body) if value.isdigit()]
    return found


def crawl(client, *, per_model: int = 3) -> dict[str, str]:
    """url -> HTML of every /staff/ page reachable from the dashboard by links, not by forms (each path once, with the first
    query seen; at most ``per_model`` object pages of each model). Every page answers 200."""
    pages: dict[str, str] = {}
    seen: set[str] = set()
    opened_per_model: Counter = Counter()
    queue = ["/staff/"]
    while queue:
        url = queue.pop(0)
        response = client.get(url)
        assert response.status_code == 200, url
        pages[url] = body = response.content.decode()
        for raw in HREF.findall(body):
            target = urljoin(url, html.unescape(raw))
            path = urlsplit(target).path
            if not path.startswith("/staff/") or path in seen or path in NOT_OPENED or path.endswith("/delete/"):
                continue
            seen.add(path)
            model = OBJECT_PAGE.match(path)
            if model is not None:
                opened_per_model[model.group(1)] += 1
                if opened_per_model[model.group(1)] > per_model:
                    continue
            queue.append(target)
    return pages


#: persona -> console pages its crawl must reach (so that the crawl cannot pass by reaching nothing).
MUST_REACH = {
    "procurator": ["/staff/games/demo/clock/", "/staff/games/demo/stage/",
                   "/staff/games/demo/stand-in/", "/staff/games/demo/end/", "/staff/games/demo/play-ban/",
                   "/staff/cities/game/demo/change/", "/staff/cities/resident/", "/staff/sanctions/playban/",
                   "/staff/lepra/noconfidencecase/", "/staff/staff/staffstandin/", "/staff/cities/gameevent/"],
    "tribune1": ["/staff/cities/{city1}/schedule-voting/", "/staff/lepra/proxyrequest/",
                 "/staff/lepra/suicidedeclaration/", "/staff/inboxes/membership/"],
    "tribune2": ["/staff/cities/{city2}/schedule-voting/"],
    "arbiter": ["/staff/games/demo/schedule-election/", "/staff/games/demo/court-procedure/",
                "/staff/lepra/cityjudge/", "/staff/lepra/courtcase/"],
    "consigliere": ["/staff/inboxes/inbox/", "/staff/inboxes/message/"],
}


@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_no_console_page_a_staff_member_reaches_names_a_database_id_L_INBOX_20(full, persona):
    """Checked twice: no link, filter or checkbox has the shape of a database id, and the ids of the game and its
    cities (moved to numbers no page shows by chance) appear nowhere, in a form's options, a data attribute or a
    text either."""
    demo = full
    assert demo.game.slug == "demo"
    moved = move_to_large_ids(demo.game)
    cities = {f"city{c.number}": c.public_id for c in City.objects.filter(game__slug="demo")}
    pages = crawl(staff_client(getattr(demo, persona)))
    reached = {urlsplit(url).path for url in pages}
    for path in MUST_REACH[persona]:
        assert path.format(**cities) in reached, (persona, path)
    assert any(OBJECT_PAGE.match(path) for path in reached), persona
    for url, body in pages.items():
        assert database_ids_in(body) == [], (persona, url)
        assert large_ids_in(url + "\n" + body, moved) == [], (persona, url)


@pytest.mark.django_db
def test_no_page_of_the_m21_hosts_console_names_a_database_id_of_the_game():
    """The M21 host and co-host's crawl (their console page, its forms, the lists of their game) the same way."""
    table = build_game()
    moved = move_to_large_ids(table.game)
    assert set(moved) == {"game"}  # an M21 game has no city: its seats and inboxes are in none
    with time_machine.travel(table.tick(), tick=False):
        for user in (table.host, table.cohost):
            pages = crawl(staff_client(user))
            assert {f"/staff/m21/{table.game.slug}/", "/staff/cities/game/m21-test/change/"} <= set(pages)
            assert any(path.startswith("/staff/cities/resident/") and "/change/" in path for path in pages)
            for url, body in pages.items():
                assert database_ids_in(body) == [], url
                assert large_ids_in(url + "\n" + body, moved) == [], url
            client = staff_client(user)
            for key in (str(moved["game"]), "no-such-game", "%C2%B2", "x" * 61):
                assert _is_404_page(client.get(f"/staff/m21/{key}/")), key
                assert _is_404_page(client.post(f"/staff/m21/{key}/extend/", {"extend-hours": "2"})), key


def test_the_crawls_check_finds_database_ids(demo):
    """The check of the crawl above is no assert that cannot fail: each old form is found."""
    for old in ('<a href="/staff/games/12/clock/">', '<a href="?game__id__exact=3">', '<a href="?city=4">',
                '<form action="/staff/cities/5/schedule-voting/">', '<a href="/staff/lepra/votingsession/7/change/">',
                '<input type="checkbox" name="_selected_action" value="8" class="action-select">',
                '<a href="/staff/cities/resident/?_changelist_filters=city__id__exact%3D9">'):
        assert database_ids_in(old) != [], old
    assert database_ids_in('<a href="/staff/games/demo/daily-post/2/">'
                           '<a href="/staff/cities/resident/?city__public_id__exact=abcdefghjkmn&day=2">') == []
    # The search for the moved ids finds them where they are shown: the operators' /admin/ names objects by id.
    moved = move_to_large_ids(demo.game)
    operator = staff_client(demo.superuser)
    games = operator.get("/admin/cities/game/").content.decode()
    assert f'/admin/cities/game/{moved["game"]}/change/' in games and large_ids_in(games, moved) != []
    cities = operator.get(f"/admin/cities/city/?game__id__exact={moved['game']}").content.decode()
    assert all(f'/admin/cities/city/{moved[f"city{n}"]}/change/' in cities for n in (1, 2, 3))
    assert len(large_ids_in("/9100401/ ?city=9100402. x9100403 9100404y 91004045", moved)) == 2
