"""Game pages and accounts: the Procurator's scheduling form (L-POST, L-STAFF-1), sign-up with a display name."""
from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from django.utils import timezone

from cities.models import PublicPost, ScheduledEvent


def test_procurator_schedules_a_post_in_the_game_time_zone_L_POST_1(demo, client):
    client.force_login(demo.procurator)
    local = (timezone.now() + timedelta(days=1)).astimezone(ZoneInfo("Europe/Moscow")).replace(second=0, microsecond=0)
    response = client.post(f"/games/{demo.game.slug}/posts/new/", {
        "title": "Объявление", "body": "Завтра **длинный день**.", "publish_at": local.strftime("%Y-%m-%dT%H:%M"),
    })
    post = PublicPost.objects.get(game=demo.game, title="Объявление")
    assert response.status_code == 302 and response["Location"] == f"/games/{demo.game.slug}/posts/{post.public_id}/"
    assert post.published_at is None and post.publish_at == local.astimezone(ZoneInfo("UTC"))
    event = ScheduledEvent.objects.get(game=demo.game, kind="publish_post", payload={"post": post.pk})
    assert event.due_at == post.publish_at and event.done_at is None
    # Unpublished: the Procurator sees it, nobody else does.
    assert client.get(f"/games/{demo.game.slug}/posts/{post.public_id}/").status_code == 200
    client.force_login(demo.honest)
    assert client.get(f"/games/{demo.game.slug}/posts/{post.public_id}/").status_code == 404
    assert "Объявление" not in client.get(f"/games/{demo.game.slug}/").content.decode()


def test_schedule_form_refuses_a_past_time_and_non_procurators(demo, client):
    before = PublicPost.objects.count()
    client.force_login(demo.procurator)
    past = (timezone.now() - timedelta(hours=1)).astimezone(ZoneInfo("Europe/Moscow"))
    response = client.post(f"/games/{demo.game.slug}/posts/new/", {
        "title": "Поздно", "body": "текст", "publish_at": past.strftime("%Y-%m-%dT%H:%M"),
    })
    assert response.status_code == 400
    assert "Время публикации должно быть в будущем." in response.content.decode()
    for persona in ("tribune1", "consigliere", "honest", "superuser"):
        client.force_login(getattr(demo, persona))
        assert client.get(f"/games/{demo.game.slug}/posts/new/").status_code == 404
    assert PublicPost.objects.count() == before


def test_signup_stores_the_display_name(db, client, django_user_model):
    response = client.post("/accounts/signup/", {
        "email": "new@example.com", "username": "newplayer", "display_name": "Новичок",
        "password1": "a-long-pass-phrase-42", "password2": "a-long-pass-phrase-42",
    })
    assert response.status_code == 302
    user = django_user_model.objects.get(username="newplayer")
    assert user.display_name == "Новичок" and user.public_name == "Новичок"
    assert not user.is_staff and not user.is_superuser


def test_login_with_username_and_password(demo, client):
    response = client.post("/accounts/login/", {"login": "procurator", "password": "mafia-demo-2026"})
    assert response.status_code == 302
    assert client.get(f"/games/{demo.game.slug}/inboxes/").status_code == 200


def test_password_reset_sends_a_mail(demo, client, mailoutbox):
    response = client.post("/accounts/password/reset/", {"email": "c1r01@demo.mafia.invalid"})
    assert response.status_code == 302
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["c1r01@demo.mafia.invalid"]
