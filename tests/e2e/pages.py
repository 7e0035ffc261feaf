"""Page helpers of the browser tests: a person in their own browser context, the staff console's actions, and
screenshots. Elements are found by URL, form action, field name or CSS class (the stable parts of the
templates); texts are compared in the game's language through gettext (``ru``), so the tests read like the
pages and pass before and after the Russian catalogue is filled in.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import time_machine
from django.conf import settings
from django.test import Client
from django.utils import translation

VIEWPORT = {"width": 1100, "height": 760}


def ru(msgid: str, **params) -> str:
    """``msgid`` as a Lepra page shows it (Russian), formatted with ``params``."""
    with translation.override("ru"):
        text = translation.gettext(msgid)
    return text % params if params else text


def squash(text: str) -> str:
    """``text`` with runs of white space made one space (what a person reads)."""
    return re.sub(r"\s+", " ", text).strip()


class Screenshots:
    """Saves PNG screenshots of pages under one folder; ``saved`` lists the files of this run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.saved: list[Path] = []

    def take(self, page, name: str, *, full_page: bool = True) -> Path:
        """Screenshot of ``page`` as ``<name>.png`` (the whole page unless ``full_page`` is False)."""
        path = self.folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        self.saved.append(path)
        return path


@dataclass
class Response:
    status: int
    url: str


class Person:
    """One person (an account) in their own browser context, with their own cookies.

    ``open`` loads a path and checks the HTTP status; ``submit`` clicks a submit button and checks the status of
    the page it leads to (after redirects). Both return a ``Response``; the page is ``self.page``.
    """

    def __init__(self, browser, stack, user, *, label: str = "") -> None:
        self.stack = stack
        self.user = user
        self.label = label or user.username
        self.context = browser.new_context(base_url=stack.base_url, viewport=VIEWPORT, locale="ru-RU")
        self.context.set_default_timeout(20_000)
        self.page = self.context.new_page()

    # Logging in ------------------------------------------------------------------------------------------------

    def log_in(self, password: str) -> None:
        """Log in through the site's login form (django-allauth), as a person would."""
        self.open("/accounts/login/")
        self.page.fill("input[name=login]", self.user.username)
        self.page.fill("input[name=password]", password)
        self.submit("main form button[type=submit]")
        assert self.page.url.rstrip("/") == self.stack.base_url, f"{self.label}: login ended at {self.page.url}"
        assert squash(self.page.locator("header .who").inner_text()) == self.user.public_name

    def log_in_with_session(self) -> None:
        """Log in without the form: a session minted at the game time (``Client.force_login``) set as the
        browser's cookie. For the crowd of players, so that the form's rate limit (30 logins a minute per
        address) is not what the test measures; ``log_in`` proves the form."""
        with time_machine.travel(self.stack.clock.now(), tick=False):
            client = Client()
            client.force_login(self.user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        self.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value,
                                   "url": self.stack.base_url, "httpOnly": True}])

    # Navigation ------------------------------------------------------------------------------------------------

    def open(self, path: str, status: int = 200) -> Response:
        """Load ``path``; assert the response's status."""
        response = self.page.goto(path)
        assert response is not None
        assert response.status == status, f"{self.label} GET {path}: {response.status}\n{self.text('main')[:2000]}"
        return Response(response.status, self.page.url)

    def submit(self, selector: str, status: int = 200) -> Response:
        """Click the submit button ``selector`` and wait for the page it leads to; assert its status."""
        with self.page.expect_navigation() as navigation:
            self.page.locator(selector).click()
        response = navigation.value
        assert response is not None
        assert response.status == status, (f"{self.label} submit {selector} -> {self.page.url}: {response.status}\n"
                                           f"{self.text('main')[:2000]}")
        return Response(response.status, self.page.url)

    def post_in_thread(self, text: str, status: int = 200) -> None:
        """Post ``text`` through the open thread's form as the browser does it (htmx: no page load) and assert
        the outcome: ``status`` 200 for an accepted post (the page is then reloaded, so that it shows the post and
        the tally), else the refusal's status, which the page shows in place (``.post-error``) with the text kept."""
        self.page.fill("form.post-form textarea[name=text]", text)
        with self.page.expect_response(lambda r: r.request.method == "POST" and "/inboxes/" in r.url) as info:
            self.page.locator("form.post-form button[type=submit]").click()
        response = info.value
        refused = response.headers.get("x-post-refused")
        got = int(refused) if refused else response.status
        got = 200 if got in (302, 303) else got  # an older page posts without htmx: redirected after the post
        if got != 200:
            self.page.locator(".post-error").first.wait_for()
        assert got == status, f"{self.label} post {text!r} in {self.page.url}: {got}\n{self.text('main')[:2000]}"
        if got == 200:
            self.page.wait_for_load_state()
            self.page.reload()

    def follow(self, selector: str, status: int = 200) -> Response:
        """Click the link ``selector`` and wait for the page."""
        return self.submit(selector, status)

    # Reading ---------------------------------------------------------------------------------------------------

    def text(self, selector: str = "main") -> str:
        """The visible text of the first element matching ``selector``, white space squashed ("" if none)."""
        locator = self.page.locator(selector)
        return squash(locator.first.inner_text()) if locator.count() else ""

    def texts(self, selector: str) -> list[str]:
        """The visible texts of every element matching ``selector``."""
        return [squash(t) for t in self.page.locator(selector).all_inner_texts()]

    def links(self, selector: str = "main a") -> dict[str, str]:
        """Link text -> href of the links matching ``selector``."""
        return {squash(a.inner_text()): a.get_attribute("href") for a in self.page.locator(selector).all()}

    def flash(self) -> list[str]:
        """The messages of the page (site pages and the staff console)."""
        return self.texts("ul.flash li, ul.messagelist li")

    def close(self) -> None:
        self.context.close()


# --------------------------------------------------------------------------------------------------------------
# The staff console (/staff/)
# --------------------------------------------------------------------------------------------------------------

def run_admin_action(person: Person, changelist: str, row_text: str, action: str,
                     form: dict[str, str] | None = None) -> list[str]:
    """In the staff console, tick the row of ``changelist`` whose text contains ``row_text``, run ``action``
    and, for an action with an intermediate page, fill ``form`` (field name -> value) and apply it. Returns the
    console's messages."""
    person.open(changelist)
    rows = person.page.locator("#result_list tbody tr", has_text=row_text)
    assert rows.count() == 1, f"{person.label}: {rows.count()} rows with {row_text!r} in {changelist}"
    rows.first.locator("input.action-select").check()
    person.page.select_option("select[name=action]", action)
    person.submit("#changelist-form button[name=index]")
    if person.page.locator("form.confirm-form").count():  # an irreversible action: the confirmation step
        person.submit("form.confirm-form button[type=submit]")
    if form is not None:
        for name, value in form.items():
            person.page.fill(f"form [name={name}]", value)
        person.submit("form input[type=submit].default")
    return person.flash()
