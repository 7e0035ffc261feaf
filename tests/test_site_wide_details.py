"""Site-wide details a player meets: e-mails link to this site, the CSRF failure page speaks the site's words,
the favicon, flash messages announced to screen readers."""
from __future__ import annotations

import pytest
import time_machine
from django.contrib.sites.models import Site
from django.core import mail
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_sites_framework_names_this_site_not_example_com(settings):
    site = Site.objects.get_current()
    assert (site.domain, site.name) == (settings.MAFIA_SITE_DOMAIN, settings.MAFIA_SITE_NAME)
    assert site.domain != "example.com"


def test_sign_up_confirmation_mail_links_to_this_site(client, settings):
    mail.outbox.clear()
    response = client.post("/accounts/signup/", {
        "email": "fresh@example.org", "username": "freshplayer", "display_name": "Свежий Игрок",
        "password1": "a-long-Secret-2026", "password2": "a-long-Secret-2026"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    body = mail.outbox[0].body
    assert "/accounts/confirm-email/" in body and settings.MAFIA_SITE_DOMAIN in body
    assert "example.com" not in body


def test_csrf_failure_is_our_page_in_the_visitors_language():
    client = Client(enforce_csrf_checks=True, HTTP_ACCEPT_LANGUAGE="ru")
    response = client.post("/accounts/login/", {"login": "x", "password": "y"})
    assert response.status_code == 403
    page = response.content.decode()
    assert "Форма устарела" in page and "Ничего не изменилось." in page
    assert "favicon.svg" in page


def test_pages_have_a_favicon_and_announce_flash_messages(demo, client):
    from tests.rulesets.lepra.day.day_helpers import MORNING, city1_day

    client.force_login(city1_day(demo).plain[4].user)
    with time_machine.travel(MORNING, tick=False):
        response = client.post(reverse("declare_suicide", args=[demo.game.slug]), {"confirmed": "yes"}, follow=True)
    page = response.content.decode()
    assert '<ul class="flash" role="status" aria-live="polite"><li class="success">' in page
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    from django.contrib.staticfiles import finders

    assert finders.find("favicon.svg") is not None


def test_no_template_holds_a_hand_written_select_every_picker_is_a_django_form_field():
    """DESIGN.md "Pages": Django forms for every input (legal choices only, errors inside the form, a label for every
    control): a ``<select`` written by hand in a template is a picker no form validates."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    templates = [p for p in root.rglob("*.html")
                 if not any(part in {".venv", "node_modules", "staticfiles", "var"} for part in p.parts)]
    assert templates  # the search sees the templates
    offenders = sorted(str(p.relative_to(root)) for p in templates if "<select" in p.read_text().lower())
    assert offenders == []
