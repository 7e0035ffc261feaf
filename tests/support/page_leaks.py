"""Helpers of the page leak suites: a logged-in client per persona, the pages a persona can open and the facts each may know."""
from __future__ import annotations

import re

from django.test import Client

from cities.models import PublicPost, Resident
from inboxes.models import Inbox
from rulesets.lepra import seats

FACT = re.compile(r'<(?:dd|li)[^>]*data-fact="([^"]+)"')


def pages_for(demo, client: Client) -> dict[str, str]:
    """url -> HTML of every page this client can open in the demo game (status 200 only)."""
    game = demo.game
    urls = [f"/games/{game.slug}/", f"/games/{game.slug}/inboxes/", "/", "/admin/"]
    urls += [f"/games/{game.slug}/residents/{pk}/" for pk in Resident.objects.filter(game=game).values_list("public_id", flat=True)]
    urls += [f"/games/{game.slug}/posts/{pk}/" for pk in PublicPost.objects.filter(game=game).values_list("public_id", flat=True)]
    urls += [f"/inboxes/{pk}/" for pk in Inbox.objects.filter(game=game).values_list("public_id", flat=True)]
    # The setup pages, the numbers page, the draw verification page and every commissar offer page.
    from rulesets.lepra.models import CommissarOffer

    urls += [f"/games/{game.slug}/setup/", f"/games/{game.slug}/setup/numbers/", f"/games/{game.slug}/draw/"]
    urls += [f"/games/{game.slug}/offers/{pk}/" for pk in CommissarOffer.objects.filter(game=game).values_list("public_id", flat=True)]
    pages = {}
    for url in urls:
        response = client.get(url, follow=True)
        final = response.redirect_chain[-1][0] if response.redirect_chain else url
        # A page that sends the visitor to log in is not a page he opened (the login form is all he sees).
        if response.status_code == 200 and not final.startswith("/accounts/login/"):
            pages[url] = response.content.decode()
    return pages


def client_for(user) -> Client:
    client = Client()
    if getattr(user, "is_authenticated", False):
        client.force_login(user)
    return client


def facts_by_resident(pages: dict[str, str], demo) -> set[tuple[str, str]]:
    """{(resident name, fact)} shown on resident pages."""
    names = dict(Resident.objects.filter(game=demo.game).values_list("public_id", "name"))
    found = set()
    for url, text in pages.items():
        m = re.fullmatch(rf"/games/{demo.game.slug}/residents/([a-z0-9]+)/", url)
        if m:
            found |= {(names[m.group(1)], fact) for fact in FACT.findall(text)}
        elif FACT.findall(text):
            found |= {("<page " + url + ">", fact) for fact in FACT.findall(text) if not fact.startswith("staff:")}
    return found


def expected_facts(demo, persona: str) -> set[tuple[str, str]]:
    """The knowledge matrix L-STAFF-6 for the demo personas, written out."""
    residents = list(Resident.objects.filter(game=demo.game).select_related("city"))
    mafia = {r.name for r in residents if r.alignment == "mafia"}
    commissars = {r.name for r in residents if seats.is_commissar(r)}
    godfathers = {r.name for r in residents if seats.is_godfather(r)}
    user = getattr(demo, persona)
    seat = Resident.objects.filter(game=demo.game, user=user).first() if getattr(user, "is_authenticated", False) else None
    facts: set[tuple[str, str]] = set()
    if persona == "consigliere":
        facts |= {(r.name, f"alignment:{r.alignment}") for r in residents}
        facts |= {(n, "godfather") for n in godfathers}
    if persona == "procurator":
        facts |= {(n, "commissar") for n in commissars}
    if persona in ("tribune1", "tribune2"):
        city = int(persona[-1])
        facts |= {(r.name, "commissar") for r in residents if seats.is_commissar(r) and r.city.number == city}
    if seat is not None:
        facts.add((seat.name, f"alignment:{seat.alignment}"))
        if seats.is_commissar(seat):
            facts |= {(n, "commissar") for n in commissars}
        if seat.alignment == "mafia":
            facts |= {(r.name, "alignment:mafia") for r in residents if r.name in mafia and r.city_id == seat.city_id}
            facts |= {(r.name, "godfather") for r in residents if seats.is_godfather(r) and r.city_id == seat.city_id}
    return facts
