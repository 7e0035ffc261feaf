"""Accessibility of the main pages in a real browser: axe-core (through Playwright) finds no serious or
critical violation on the pages a visitor, a player and the Procurator use most; screenshots at phone width."""
from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth import get_user_model

from cities.models import Resident
from inboxes.models import InboxKind
from tests.e2e.game_helpers import _open_game

from .pages import Person

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
SERIOUS = {"serious", "critical"}
#: The elements whose right edge passes the given width (tag, id, class, right edge), for a failing width check.
WIDEST_ELEMENTS = """(limit) => [...document.querySelectorAll('body *')]
  .map(e => [e, e.getBoundingClientRect().right]).filter(([e, r]) => r > limit)
  .slice(0, 8).map(([e, r]) => `${e.tagName}#${e.id}.${e.className} ${Math.round(r)}`)"""


def _serious_violations(page) -> list[str]:
    """axe-core's serious and critical violations of the page as readable lines (rule, impact, targets)."""
    results = Axe().run(page)
    lines = []
    for violation in results.response["violations"]:
        if violation["impact"] in SERIOUS:
            targets = [", ".join(node["target"]) for node in violation["nodes"]][:5]
            lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    return lines


def test_main_pages_have_no_serious_accessibility_violations(lepra, screenshots):
    _open_game(lepra)
    game = lepra.game()
    resident = lepra.residents(1)[0]
    city_inbox = lepra.inbox(InboxKind.CITY, city__number=1)
    personal = lepra.inbox(InboxKind.PERSONAL, resident=resident)
    player = lepra.of(resident)
    visitor = Person(lepra.browser, lepra.stack, None, label="visitor")
    procurator = lepra.procurator
    pages = [
        (visitor, "/"), (visitor, f"/games/{game.slug}/"), (visitor, "/accounts/login/"),
        (visitor, "/accounts/signup/"),
        (player, f"/games/{game.slug}/"), (player, f"/games/{game.slug}/inboxes/"),
        (player, f"/inboxes/{city_inbox.public_id}/"), (player, f"/inboxes/{personal.public_id}/"),
        (player, f"/games/{game.slug}/nominate/"), (player, f"/games/{game.slug}/cities/1/day/"),
        (player, f"/games/{game.slug}/residents/{Resident.objects.filter(city__number=1, game=game).last().public_id}/"),
        (player, f"/games/{game.slug}/inboxes/secret/new/"), (player, "/me/mentions/"), (player, "/me/consents/"),
        (player, "/me/notifications/"), (player, "/me/notifications/settings/"),
        (procurator, "/new-game/"), (procurator, f"/games/{game.slug}/setup/"),
    ]
    found = {}
    for person, path in pages:
        person.open(path)
        lines = _serious_violations(person.page)
        if lines:
            found[f"{person.label} {path}"] = lines
    assert found == {}, "\n".join(f"{where}:\n  " + "\n  ".join(lines) for where, lines in found.items())

    # The demo's Procurator: staff of two games (the demo's and this one), Russian console.
    demo_procurator = Person(lepra.browser, lepra.stack, get_user_model().objects.get(username="procurator"),
                             label="demo procurator")
    demo_procurator.log_in_with_session()
    # At phone width nothing overflows sideways: the page is no wider than the screen (the staff console too).
    for person, path in [(player, f"/inboxes/{city_inbox.public_id}/"), (player, f"/games/{game.slug}/"),
                         (player, f"/games/{game.slug}/cities/1/day/"), (procurator, "/staff/"),
                         (demo_procurator, "/staff/")]:
        person.page.set_viewport_size(PHONE)
        person.open(path)
        width = person.page.evaluate("document.documentElement.scrollWidth")
        wide = person.page.evaluate(WIDEST_ELEMENTS, PHONE["width"])
        assert width <= PHONE["width"], f"{person.label} {path} is {width} px wide at phone width: {wide}"
    player.open(f"/inboxes/{city_inbox.public_id}/")
    screenshots.take(player.page, "phone-thread", full_page=False)
    player.open(f"/games/{game.slug}/")
    screenshots.take(player.page, "phone-game", full_page=False)
