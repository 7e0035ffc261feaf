"""Names that cannot impersonate (accounts.names; RULES.md L-STAFF-5/6: nobody may pass for the site or staff).

The issue's cases: the site's own author name, a staff name with a Cyrillic «Т», a Latin name spelt with Cyrillic
look-alikes, a right-to-left override, the role titles in both languages; refused at sign-up (display name and
username), and at a name change in the operators' admin, with a clear message. Staff and site posts carry a badge
rendered from the author's role, which no name can produce.
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.translation import override

from accounts.names import impersonation_problem, name_skeleton, skeleton
from inboxes import posting, services
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import fresh

RESERVED = "This name is reserved: it could pass for the site or for a member of staff."
LOOKALIKE = "This name looks like the name of another player."
MIXED = "This name mixes look-alike letters of different alphabets (for example a Cyrillic «а» among Latin letters)."
CONTROL = "A name may not contain invisible or text-direction control characters."
PASSWORD = "a-long-pass-phrase-42"


def test_tr39_skeletons_of_look_alikes_agree():
    assert skeleton("Т") == skeleton("T")  # Cyrillic Т, Latin T
    assert name_skeleton("Ѕаmovar") == name_skeleton("Samovar")
    assert name_skeleton("Тribun_Grakh") == name_skeleton("Tribun Grakh") == name_skeleton("tribun_grakh")
    assert name_skeleton("0bormot") == name_skeleton("Obormot")
    assert name_skeleton("Рор") == name_skeleton("Pop")  # all Cyrillic against all Latin
    assert name_skeleton("Гусь") != name_skeleton("Гуси")


@pytest.mark.parametrize("name, message", [
    ("Mafia Host", RESERVED), ("mafia_host", RESERVED), ("MafiaHost", RESERVED), ("Mafia H0st", RESERVED),
    ("Тribun_Grakh", MIXED), ("Ѕаmovar", MIXED),
    ("Tribun Grakh", LOOKALIKE), ("0bormot", LOOKALIKE), ("Samovar", "This name looks like the name of another player."),
    ("Vasya\u202eayseV", CONTROL), ("\u202eTsar", CONTROL), ("Va\u200bsya", CONTROL), ("Vasya\u3164", CONTROL),
    ("Procurator", RESERVED), ("Прокурор", RESERVED), ("Tribune Max", RESERVED), ("Трибун", RESERVED),
    ("Supreme Arbiter", RESERVED), ("Верховный Арбитр", RESERVED), ("Арбитр Соломон", RESERVED),
    ("Consigliere", RESERVED), ("Консильери", RESERVED), ("admin", RESERVED),
])
def test_names_that_could_impersonate_are_refused_with_the_reason_L_STAFF_5(demo, name, message):
    with override("en"):
        assert impersonation_problem(name) == message


@pytest.mark.parametrize("name", ["Новичок", "Игрок pl01", "Samovarov", "Tribunal", "Прокурорша", "Ivan-1"])
def test_honest_names_pass(demo, name):
    """Mixed alphabets in different words, and words that only begin like a title, are honest names."""
    assert impersonation_problem(name) is None


@pytest.mark.parametrize("display", ["Mafia Host", "Тribun_Grakh", "Ѕаmovar", "Vasya\u202eayseV", "Прокурор"])
def test_signup_refuses_an_impersonating_display_name_and_creates_no_account_L_STAFF_5(demo, client,
                                                                                       django_user_model, display):
    response = client.post("/accounts/signup/", {
        "email": "imitator@example.com", "username": "imitator", "display_name": display,
        "password1": PASSWORD, "password2": PASSWORD,
    })
    assert response.status_code == 200
    assert not django_user_model.objects.filter(username="imitator").exists()
    with override("ru"):
        expected = impersonation_problem(display) or "Это имя уже занято."
    assert expected in response.content.decode()


def test_signup_refuses_an_impersonating_username_when_it_is_the_public_name_L_STAFF_5(demo, client, django_user_model):
    for index, username in enumerate(["Mafia_Host", "Tribune", "0bormot"]):
        response = client.post("/accounts/signup/", {
            "email": f"u{index}@example.com", "username": username, "password1": PASSWORD, "password2": PASSWORD,
        })
        assert response.status_code == 200, username
    assert not django_user_model.objects.filter(email__startswith="u", email__endswith="@example.com",
                                                username__in=["Mafia_Host", "Tribune", "0bormot"]).exists()


def test_an_honest_signup_stores_the_skeleton_and_blocks_its_look_alikes(demo, client, django_user_model):
    response = client.post("/accounts/signup/", {"email": "pop@example.com", "username": "pop_player",
                                                 "display_name": "Pop", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302
    assert django_user_model.objects.get(username="pop_player").name_skeleton == name_skeleton("Pop")
    with override("en"):
        assert impersonation_problem("Рор") == LOOKALIKE  # Cyrillic Р, о, р


def test_an_operator_cannot_rename_an_account_to_an_impersonating_name(demo, django_user_model):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(demo.superuser)
    user = demo.outsider
    url = reverse("admin:accounts_user_change", args=[user.pk])
    page = client.get(url)
    assert page.status_code == 200
    data = {"username": user.username, "display_name": "Mafia Host", "is_active": "on",
            "date_joined_0": "2026-11-01", "date_joined_1": "10:00:00", "initial-date_joined_0": "2026-11-01",
            "initial-date_joined_1": "10:00:00"}
    response = client.post(url, data)
    assert response.status_code == 200
    assert RESERVED in response.content.decode()
    user.refresh_from_db()
    assert user.display_name == "Outsider"


def test_staff_and_site_posts_carry_a_badge_no_name_can_produce(demo):
    city1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    posting.do_post_message(city1, "Голосование в 18:00.", acting_user=fresh(demo.tribune1))
    services.do_post_site_message(city1, "Сообщение сайта.", acting_user=None)
    posting.do_post_message(city1, "Я тоже ведущий, честно.", acting_user=fresh(demo.honest))
    client = Client()
    client.force_login(demo.honest)
    getter = getattr(city1, "get_absolute_url", None)
    page = client.get(getter() if getter else reverse("inbox_thread", args=[city1.public_id])).content.decode()
    assert page.count('data-author="staff"') >= 1
    assert page.count('data-author="site"') >= 1
    honest_name = demo.seat("honest").name
    # The resident's post: a link to the resident's page, no badge.
    chunk = page[page.index("Я тоже ведущий, честно.") - 600:page.index("Я тоже ведущий, честно.")]
    assert honest_name in chunk and "data-author" not in chunk.split("<article")[-1]
