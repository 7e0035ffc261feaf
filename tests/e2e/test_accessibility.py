"""Accessibility of every page kind in a real browser: axe-core (through Playwright) finds no serious or critical
violation on the players' and the staff's pages of both rulesets (each persona whose page differs: a visitor, players
of a Lepra game and of the Lepra demo, the demo's Procurator, Tribune, Arbiter and Consigliere, the M21 demo's
players and host, the staff consoles' pages each of them reaches from the console's front page); at phone width
(390 px) no page is wider than the screen, no table cell breaks a word in the middle and the fields are as tall as
the buttons; the keyboard finds a skip link first and lands on the new message after a post. One browser and one
live server for all the pages, each page loaded once (axe at desktop width, the phone checks after a resize)."""
from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest
import time_machine
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth import get_user_model

from cities.models import Game, Resident
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.m21.kinds import M21InboxKind
from rulesets.lepra.demo import demo_account_maker
from rulesets.m21.demo import M21_DEMO_SLUG, load_m21_demo
from rulesets.m21.models import DayStatus, M21Day
from tests.conftest import load_personas
from tests.e2e.game_helpers import _open_game

from .pages import Person, ru
from .stack import LIVE_POLL_SECONDS

WAIT_MS = (2 * LIVE_POLL_SECONDS + 5) * 1000  # two polls of an open page

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1100, "height": 760}
PHONE = {"width": 390, "height": 844}
SERIOUS = {"serious", "critical"}
#: The elements whose right edge passes the given width (tag, id, class, right edge), for a failing width check.
WIDEST_ELEMENTS = """(limit) => [...document.querySelectorAll('body *')]
  .map(e => [e, e.getBoundingClientRect().right]).filter(([e, r]) => r > limit)
  .slice(0, 8).map(([e, r]) => `${e.tagName}#${e.id}.${e.className} ${Math.round(r)}`)"""
#: The words of table cells laid out on more than one line («Номин|ант»): each word (split at white space, hyphens
#: and slashes, where a line may break) measured with a Range; a word whose boxes lie on two lines is broken.
BROKEN_WORDS = r"""() => {
  const broken = [];
  for (const cell of document.querySelectorAll('td, th')) {
    if (!cell.getClientRects().length) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/[^\s\-‐-―\/]{2,}/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom)));
        if (lines.size > 1) broken.push(`${cell.tagName}: ${m[0]}`);
      }
    }
  }
  return broken.slice(0, 10);
}"""
#: Fields and buttons of the page's main part shorter than a finger (40 px) at phone width.
SMALL_TARGETS = """() => [...document.querySelectorAll(
    'main select, main input:not([type=checkbox]):not([type=radio]):not([type=hidden]), main button, main textarea')]
  .filter(e => e.getClientRects().length && e.getBoundingClientRect().height < 40)
  .map(e => `${e.tagName}[name=${e.name}] ${Math.round(e.getBoundingClientRect().height)} px`)"""
#: Console links that are not pages to check: leaving the console, changing a password.
NOT_A_PAGE = re.compile(r"/(logout|password_change)/")


def _with_axe(person: Person) -> Person:
    """``person`` with axe-core loaded into every page their browser opens from now on (an init script: compiled
    once, where evaluating the script on each page took 0.2-0.8 s)."""
    person.context.add_init_script(script=Axe().axe_script)
    return person


def _serious_violations(page) -> list[str]:
    """axe-core's serious and critical violations of the page (axe loaded by ``_with_axe``) as readable lines
    (rule, impact, targets)."""
    response = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    lines = []
    for violation in response["violations"]:
        if violation["impact"] in SERIOUS:
            targets = [", ".join(node["target"]) for node in violation["nodes"]][:5]
            lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    return lines



def _console_pages(person: Person, seen: set[str]) -> list[str]:
    """The console pages linked from the open staff console's front page that no earlier persona's front page
    linked (the console's pages differ by persona: a Tribune's voting schedule, the Arbiter's election, the
    Procurator's event log, the M21 host's console)."""
    links = person.page.eval_on_selector_all("#content a[href^='/staff/']", "as => as.map(a => a.pathname)")
    pages = sorted({p for p in links if not NOT_A_PAGE.search(p) and p not in seen})
    seen.update(pages)
    return pages


def _inbox_of(game: Game, kind: str, user) -> Inbox:
    """An inbox of ``kind`` in ``game`` that ``user``'s seat is a member of."""
    return Inbox.objects.filter(game=game, kind=kind, memberships__resident__user=user).order_by("-pk").first()


def _check_at_phone_width(person: Person, path: str) -> list[str]:
    """What is wrong with the open page at 390 px: wider than the screen, a table cell's word broken, a field or
    a button of the site's pages shorter than 40 px."""
    page = person.page
    page.set_viewport_size(PHONE)
    problems = []
    width = page.evaluate("document.documentElement.scrollWidth")
    if width > PHONE["width"]:
        problems.append(f"{width} px wide: {page.evaluate(WIDEST_ELEMENTS, PHONE['width'])}")
    broken = page.evaluate(BROKEN_WORDS)
    if broken:
        problems.append(f"words broken inside table cells: {broken}")
    if not path.startswith("/staff/"):
        small = page.evaluate(SMALL_TARGETS)
        if small:
            problems.append(f"touch targets under 40 px: {small}")
    page.set_viewport_size(DESKTOP)
    return problems


def test_every_page_kind_has_no_serious_accessibility_violation_and_fits_a_phone(lepra, screenshots):
    _open_game(lepra)
    game = lepra.game()
    resident = lepra.residents(1)[0]
    city_inbox = lepra.inbox(LepraInboxKind.CITY, city__number=1)
    personal = lepra.inbox(LepraInboxKind.PERSONAL, resident=resident)
    player = _with_axe(lepra.of(resident))
    visitor = _with_axe(Person(lepra.browser, lepra.stack, None, label="visitor"))
    procurator = _with_axe(lepra.procurator)
    now = lepra.stack.clock.now()
    with time_machine.travel(now, tick=False):
        m21 = load_m21_demo(make_user=demo_account_maker(), rng=random.Random(2026), now=now)
    demo = load_personas()
    User = get_user_model()

    def person(user, label: str) -> Person:
        someone = _with_axe(Person(lepra.browser, lepra.stack, user, label=label))
        someone.log_in_with_session()
        lepra.people[f"a11y-{label}"] = someone  # closed with the test's people
        return someone

    pages: list[tuple[Person, str]] = [
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
    # The Lepra demo on day 2: a city's square with its talk, the day page, the mafia's inbox, the night page.
    lepra_demo = demo.game
    honest, mafioso = person(demo.honest, "demo honest"), person(demo.mafioso, "demo mafioso")
    demo_square = _inbox_of(lepra_demo, LepraInboxKind.CITY, demo.honest)
    pages += [
        (honest, f"/games/{lepra_demo.slug}/"), (honest, f"/inboxes/{demo_square.public_id}/"),
        (honest, f"/games/{lepra_demo.slug}/cities/1/day/"), (honest, f"/games/{lepra_demo.slug}/inboxes/"),
        (mafioso, f"/inboxes/{_inbox_of(lepra_demo, LepraInboxKind.MAFIA, demo.mafioso).public_id}/"),
        (mafioso, f"/games/{lepra_demo.slug}/night/"),
    ]
    # The M21 demo on day 2: the game page and thread, a role PM, the mafia's thread, the night page, the host's.
    m21_game = m21.game
    by_role = {role: User.objects.get(display_name=name) for name, role in sorted(m21.roles.items(), reverse=True)}
    citizen, cop, godfather = (person(by_role[r], f"m21 {r}") for r in ("citizen", "cop", "godfather"))
    host = person(m21.host, "m21 host")
    thread = Inbox.objects.get(game=m21_game, kind=M21InboxKind.GAME_THREAD)
    pages += [
        (visitor, f"/games/{M21_DEMO_SLUG}/m21/"), (citizen, f"/games/{M21_DEMO_SLUG}/m21/"),
        (citizen, f"/inboxes/{thread.public_id}/"),
        (cop, f"/inboxes/{_inbox_of(m21_game, M21InboxKind.ROLE_PM, cop.user).public_id}/"),
        (cop, f"/games/{M21_DEMO_SLUG}/m21/night/"),
        (godfather, f"/inboxes/{_inbox_of(m21_game, M21InboxKind.MAFIA_THREAD, godfather.user).public_id}/"),
        (host, f"/games/{M21_DEMO_SLUG}/m21/"), (host, "/new-game/m21/"),
    ]
    # The staff consoles: each persona's front page, then the pages its links reach (the Procurator's first).
    seen = {"/staff/"}
    staff = [person(User.objects.get(username="procurator"), "demo procurator")]
    staff += [person(getattr(demo, key), f"demo {key}") for key in ("tribune1", "arbiter", "consigliere")]
    staff += [host]
    pages += [(member, "/staff/") for member in staff]

    found, narrow = {}, {}
    for someone, path in pages:
        someone.open(path)
        lines = _serious_violations(someone.page)
        if lines:
            found[f"{someone.label} {path}"] = lines
        problems = _check_at_phone_width(someone, path)
        if path == "/staff/":
            pages += [(someone, linked) for linked in _console_pages(someone, seen)]
        if problems:
            narrow[f"{someone.label} {path}"] = problems
    assert len(pages) >= 60  # every page kind: 31 of players and visitors, 37 of the consoles
    assert any(path.startswith("/staff/m21/") for _member, path in pages)  # the M21 host's console
    assert found == {}, "\n".join(f"{where}:\n  " + "\n  ".join(lines) for where, lines in found.items())
    assert narrow == {}, "\n".join(f"{where}:\n  " + "\n  ".join(lines) for where, lines in narrow.items())

    # The keyboard: Tab first reaches the skip link to the post form; after a post the new message has the focus.
    player.open(f"/inboxes/{city_inbox.public_id}/")
    player.page.keyboard.press("Tab")
    skip = player.page.evaluate("[document.activeElement.className, document.activeElement.getAttribute('href')]")
    assert skip == ["skip-link", "#post-form"]
    assert player.text("a.skip-link") == ru("Skip to the post form")
    player.page.fill("#post-form textarea[name=text]", "Проверка фокуса после сообщения")
    player.page.locator("#post-form button[type=submit]").click()
    player.page.locator("article.message", has_text="Проверка фокуса после сообщения").wait_for(timeout=WAIT_MS)
    player.page.wait_for_function("document.activeElement.matches('article.message')", timeout=WAIT_MS)
    assert "Проверка фокуса после сообщения" in player.page.evaluate("document.activeElement.innerText")
    visitor.open("/")
    visitor.page.keyboard.press("Tab")
    assert visitor.page.evaluate("document.activeElement.getAttribute('href')") == "#content"

    player.page.set_viewport_size(PHONE)
    player.open(f"/inboxes/{city_inbox.public_id}/")
    screenshots.take(player.page, "phone-thread", full_page=False)
    player.open(f"/games/{game.slug}/")
    screenshots.take(player.page, "phone-game", full_page=False)

    # Night on a phone: the M21 demo's day 2 ends at its deadline; the cop's night page offers its pickers, each as
    # tall as the buttons.
    day = M21Day.objects.get(game=m21_game, status=DayStatus.OPEN)
    lepra.stack.clock.set(day.deadline + timedelta(seconds=1))
    lepra.stack.run_due_events()
    lepra.stack.wait_until(lambda: M21Day.objects.get(pk=day.pk).status != DayStatus.OPEN, "the end of day 2")
    cop.page.set_viewport_size(PHONE)
    cop.open(f"/games/{M21_DEMO_SLUG}/m21/night/")
    heights = cop.page.eval_on_selector_all("main select", "ss => ss.map(s => s.getBoundingClientRect().height)")
    button = cop.page.eval_on_selector("main form button[type=submit]", "b => b.getBoundingClientRect().height")
    assert heights and min(heights) >= 40 and min(heights) >= button - 1, (heights, button)
    screenshots.take(cop.page, "phone-night", full_page=False)
