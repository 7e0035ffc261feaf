"""Fixes from a newcomer's attack on the walking skeleton: side channels, input edge cases, headers.
(L-INBOX-20: nothing on a page may reveal activity in an inbox the viewer cannot read.)"""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.http import Http404
from django.utils import timezone
from django.utils.translation import override

from cities.forms import SchedulePostForm
from cities.selectors import post_get
from cities.services import do_schedule_public_post
from inboxes import posting
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.rendering import render_markdown
from kernel.errors import InvalidInput
from kernel.public_ids import new_public_id
from tests.conftest import fresh


def test_thread_anchors_are_positions_not_global_message_ids_L_INBOX_20(demo, client):
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    client.force_login(demo.honest)
    page = client.get(f"/inboxes/{inbox.public_id}/").content.decode()
    total = Message.objects.filter(inbox=inbox).count()
    assert re.findall(r'<article class="message[^"]*" id="([^"]+)"', page) == [f"n{i}" for i in range(1, total + 1)]
    assert re.findall(r'id="m\d+"', page) == []


def test_images_become_links_so_no_remote_image_loads_for_readers():
    html = render_markdown("![кот](https://tracker.example/p.png)")
    assert html == '<p><a href="https://tracker.example/p.png" rel="nofollow noopener noreferrer">кот</a></p>\n'
    assert "<img" not in html


@pytest.mark.parametrize("text", ["\u200b", "\u200b \u00a0\u200d", "\ufeff\n\t", "\u2800", "\u3164 \u3164",
                                  "\u0301", "\u200b\u0301\u20dd", "\uffa0\u115f\u1160"])
def test_invisible_only_message_is_empty(demo, text):
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    before = Message.objects.filter(inbox=inbox).count()
    with override("en"), pytest.raises(InvalidInput) as exc:
        posting.do_post_message(inbox, text, acting_user=fresh(demo.honest))
    assert str(exc.value) == "The message is empty."
    assert Message.objects.filter(inbox=inbox).count() == before


@pytest.mark.parametrize("value, error", [
    ("2026-12-01T10:00+05:00", "Enter a date and time as YYYY-MM-DD HH:MM."),
    ("2026-12-01T10:00:30", "Enter a date and time as YYYY-MM-DD HH:MM."),
    ("tomorrow", "Enter a date and time as YYYY-MM-DD HH:MM."),
    ("2027-03-28T01:30", "This time does not exist in Europe/London (the clocks skip it)."),
    ("2027-10-31T01:30", "This time happens twice in Europe/London (the clocks go back); choose another."),
])
def test_schedule_form_refuses_offsets_and_clock_change_times_L_DAY_1(value, error):
    with override("en"):
        form = SchedulePostForm({"title": "t", "body": "b", "publish_at": value}, time_zone="Europe/London")
        assert form.is_valid() is False
        assert form.errors["publish_at"] == [error]


def test_schedule_form_reads_wall_clock_in_the_game_zone_L_DAY_1():
    form = SchedulePostForm({"title": "t", "body": "b", "publish_at": "2026-12-01T10:00"}, time_zone="Europe/Moscow")
    assert form.is_valid()
    assert form.cleaned_data["publish_at"].isoformat() == "2026-12-01T07:00:00+00:00"


def test_schedule_form_year_one_is_a_400_not_a_crash(demo, client):
    client.force_login(demo.procurator)
    response = client.post(f"/games/{demo.game.slug}/posts/new/", {"title": "t", "body": "b", "publish_at": "0001-01-01T00:00"})
    assert response.status_code == 400


def test_posts_cannot_be_scheduled_more_than_a_year_ahead(demo):
    now = timezone.now()
    with override("en"), pytest.raises(InvalidInput) as exc:
        do_schedule_public_post(demo.game, title="t", body="b", publish_at=now + timedelta(days=367),
                                acting_user=fresh(demo.procurator), now=now)
    assert str(exc.value) == "The publication time must be within 366 days."


def test_an_unpublished_post_is_the_same_404_as_a_missing_one(demo):
    post = do_schedule_public_post(demo.game, title="Секрет", body="b", publish_at=timezone.now() + timedelta(hours=1),
                                   acting_user=fresh(demo.procurator))
    messages = []
    for post_id in (post.public_id, new_public_id()):
        with pytest.raises(Http404) as exc:
            post_get(fresh(demo.honest), demo.game, post_id)
        messages.append(str(exc.value))
    assert messages == ["No such post.", "No such post."]


def test_display_names_are_unique_and_cannot_copy_a_staff_name(demo, client, django_user_model):
    for display in ("Tribun_Grakh", "tribun_grakh", "procurator"):
        response = client.post("/accounts/signup/", {
            "email": f"x{len(display)}@example.com", "username": f"imitator{len(display)}", "display_name": display,
            "password1": "a-long-pass-phrase-42", "password2": "a-long-pass-phrase-42",
        })
        assert response.status_code == 200
        assert "Это имя уже занято." in response.content.decode()
    assert not django_user_model.objects.filter(username__startswith="imitator").exists()


def test_pages_send_a_content_security_policy(demo, client):
    response = client.get(f"/games/{demo.game.slug}/")
    assert response["Content-Security-Policy"].startswith("default-src 'self'; img-src 'self';")


def test_head_and_garbage_page_numbers_are_handled(demo, client):
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    client.force_login(demo.honest)
    assert client.head(f"/inboxes/{inbox.public_id}/").status_code == 200
    for page in ("abc", "0", "-1", "last", "999"):
        response = client.get(f"/inboxes/{inbox.public_id}/?page={page}")
        assert response.status_code == 200
        assert response.context["page"].number == response.context["page"].paginator.num_pages


def test_forbidden_and_missing_inbox_ids_cost_the_same_queries(demo):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from inboxes import policies

    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    counts = []
    for inbox_id in (mafia2.public_id, new_public_id()):
        user = fresh(demo.honest)
        with CaptureQueriesContext(connection) as ctx, pytest.raises(Http404):
            policies.access_inbox_by_id(user, inbox_id)
        counts.append(len(ctx.captured_queries))
    # the seats with the roles, the inbox (with whether the viewer spectates its game and their seat's membership)
    assert counts[0] == counts[1] == 2


def test_the_audit_log_never_names_whom_a_secret_flag_was_set_on_L_STAFF_6(demo):
    from cities.models import GameEvent

    secret_rows = GameEvent.objects.filter(game=demo.game, kind="resident.flags").exclude(payload__flags=["is_judge"])
    assert secret_rows.count() == 12 + 3 + 3  # mafia, commissars, godfathers of the demo
    assert all("resident" not in row.payload for row in secret_rows)
    judge_rows = GameEvent.objects.filter(game=demo.game, kind="resident.flags", payload__flags=["is_judge"])
    assert judge_rows.count() == 3 and all("resident" in row.payload for row in judge_rows)


def _setup_game(django_user_model, slug="hard"):
    from cities.services import do_add_city, do_create_game

    proc = django_user_model.objects.create_user(f"{slug}-proc", f"{slug}p@example.com", "x-secret-123")
    game = do_create_game(title="Hard", slug=slug, acting_user=proc)
    cities = [do_add_city(game, name=n, acting_user=fresh(proc)) for n in ("Север", "Юг")]
    return game, proc, cities


def test_nobody_holds_two_staff_roles_the_procurator_cannot_become_consigliere_L_STAFF_5(db, django_user_model):
    from cities.models import StaffRole
    from cities.services import do_appoint_staff
    from kernel.errors import NotAllowed as NA

    game, proc, (north, south) = _setup_game(django_user_model)
    other = django_user_model.objects.create_user("hard-trib", "ht@example.com", "x-secret-123")
    do_appoint_staff(game, other, "tribune", city=north, acting_user=fresh(proc))
    with override("en"):
        with pytest.raises(NA) as exc:
            do_appoint_staff(game, proc, "consigliere", acting_user=fresh(proc))
        assert str(exc.value) == f"{proc.public_name} already holds a staff role in this game: Procurator."
        with pytest.raises(NA) as exc:
            do_appoint_staff(game, other, "tribune", city=south, acting_user=fresh(proc))
        assert str(exc.value) == f"{other.public_name} already holds a staff role in this game: Tribune."
        with pytest.raises(NA):
            do_appoint_staff(game, other, "consigliere", acting_user=fresh(proc))
    assert sorted(StaffRole.objects.filter(game=game).values_list("kind", flat=True)) == ["procurator", "tribune"]


def test_city_names_are_unique_in_a_game_L_CITY_1(db, django_user_model):
    from cities.services import do_add_city

    game, proc, _ = _setup_game(django_user_model, slug="names")
    with override("en"), pytest.raises(InvalidInput) as exc:
        do_add_city(game, name="  север ", acting_user=fresh(proc))
    assert str(exc.value) == "The game already has a city named север."
    assert game.cities.count() == 2


def test_commissar_offer_titles_do_not_count_the_offers_L_STAFF_6(demo):
    from rulesets.lepra.models import CommissarOffer

    titles = set(CommissarOffer.objects.filter(game=demo.game).values_list("inbox__title", flat=True))
    assert titles and all(re.fullmatch(r"[^()]+\([^(),\d]+\)", t) for t in titles), titles
    assert not any(ch.isdigit() for t in titles for ch in t)


def test_display_names_are_compared_after_collapsing_white_space_and_width(db, client, django_user_model):
    django_user_model.objects.create_user("real", "real@example.com", "x-secret-123", display_name="Игрок pl01")
    for index, lookalike in enumerate(["Игрок  pl01 ", " игрок pl01", "Игрок ｐｌ０１"]):
        response = client.post("/accounts/signup/", {
            "email": f"fake{index}@example.com", "username": f"fake{index}", "display_name": lookalike,
            "password1": "a-long-pass-phrase-42", "password2": "a-long-pass-phrase-42",
        })
        assert response.status_code == 200, lookalike
    assert not django_user_model.objects.filter(username__startswith="fake").exists()
