"""Inbox services (DESIGN.md "services"): posting, banning, unbanning, adding and removing members. Each takes
the acting user, checks the rules, runs in one transaction, writes a GameEvent, and on bad input raises a clear
domain error and changes nothing (L-INBOX, L-INBOX-17, L-INBOX-18, L-INBOX-21)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.translation import override

from cities.models import GameEvent
from inboxes import posting, services
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.rendering import render_markdown
from kernel.errors import InvalidInput, NotAllowed, WrongState
from tests.conftest import fresh


def city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def counts(inbox):
    return Message.objects.filter(inbox=inbox).count(), GameEvent.objects.count()


def test_post_message_stores_author_seat_microsecond_time_html_and_an_audit_row(demo):
    inbox = city1(demo)
    now = timezone.now().replace(microsecond=123456)
    message = posting.do_post_message(inbox, "  Я **честный** житель  ", acting_user=fresh(demo.honest), now=now)
    message.refresh_from_db()
    assert message.author_resident == demo.seat("honest")
    assert message.author_name == demo.seat("honest").name
    assert message.body == "Я **честный** житель"
    assert message.body_html == "<p>Я <strong>честный</strong> житель</p>\n"
    assert message.received_at == now and message.received_at.microsecond == 123456
    event = GameEvent.objects.filter(kind="message.posted").latest("id")
    assert event.actor == demo.honest and event.payload == {"inbox": inbox.pk, "message": message.pk}


def test_staff_post_is_signed_with_the_role(demo):
    message = posting.do_post_message(city1(demo), "Голосование в 18:00.", acting_user=fresh(demo.tribune1))
    assert message.author_resident is None and message.author_staff.kind == "tribune"
    assert message.author_name == demo.tribune1.public_name


@pytest.mark.parametrize("text, error", [
    ("", "The message is empty."),
    ("   \n\t ", "The message is empty."),
])
def test_empty_message_is_refused_and_nothing_changes(demo, text, error):
    inbox = city1(demo)
    before = counts(inbox)
    with override("en"), pytest.raises(InvalidInput) as exc:
        posting.do_post_message(inbox, text, acting_user=fresh(demo.honest))
    assert str(exc.value) == error
    assert counts(inbox) == before


def test_over_long_message_is_refused_with_its_length(demo, settings):
    settings.MAFIA_MESSAGE_MAX_LENGTH = 100
    inbox = city1(demo)
    before = counts(inbox)
    with override("en"), pytest.raises(InvalidInput) as exc:
        posting.do_post_message(inbox, "x" * 101, acting_user=fresh(demo.honest))
    assert str(exc.value) == "The message is too long: 101 characters, at most 100."
    assert counts(inbox) == before


def test_banned_member_cannot_post_and_is_told_why_L_INBOX_17(demo):
    inbox = city1(demo)
    until = timezone.now() + timedelta(hours=3)
    services.do_ban_member(inbox, demo.seat("honest"), until=until, reason="оскорбление", acting_user=fresh(demo.tribune1))
    before = counts(inbox)
    with override("en"), pytest.raises(NotAllowed) as exc:
        posting.do_post_message(inbox, "Можно?", acting_user=fresh(demo.honest))
    assert str(exc.value).startswith("You are banned in this inbox until ")
    assert counts(inbox) == before


def test_killed_inbox_refuses_posts_L_INBOX(demo):
    inbox = city1(demo)
    Inbox.objects.filter(pk=inbox.pk).update(killed_at=timezone.now())
    before = counts(inbox)
    with override("en"), pytest.raises(WrongState) as exc:
        posting.do_post_message(inbox, "Эй!", acting_user=fresh(demo.honest))
    assert str(exc.value) == "This inbox is closed."
    assert counts(inbox) == before


def test_non_member_cannot_post_even_knowing_the_id(demo):
    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    before = counts(mafia2)
    with override("en"), pytest.raises(NotAllowed) as exc:
        posting.do_post_message(mafia2, "Привет, мафия!", acting_user=fresh(demo.honest))
    assert str(exc.value) == "No such inbox."
    assert counts(mafia2) == before


def test_read_only_staff_cannot_post_L_STAFF_1(demo):
    with override("en"), pytest.raises(NotAllowed) as exc:
        posting.do_post_message(city1(demo), "Прокурор здесь", acting_user=fresh(demo.procurator))
    assert str(exc.value) == "You can read this inbox but not post in it."


def test_ban_unban_remove_add_cycle_by_the_organizer_L_INBOX_18(demo):
    inbox = city1(demo)
    seat = demo.seat("honest")
    tribune = fresh(demo.tribune1)
    m = services.do_ban_member(inbox, seat, acting_user=tribune)
    assert (m.state, m.banned_until) == (MembershipState.BANNED, None)
    m = services.do_unban_member(inbox, seat, acting_user=tribune)
    assert m.state == MembershipState.MEMBER
    m = services.do_remove_member(inbox, seat, acting_user=tribune)
    assert m.state == MembershipState.REMOVED
    m = services.do_add_member(inbox, seat, acting_user=tribune)
    assert m.state == MembershipState.MEMBER
    kinds = list(GameEvent.objects.filter(kind__startswith="membership.").order_by("id").values_list("kind", flat=True))
    assert kinds[-4:] == ["membership.banned", "membership.unbanned", "membership.removed", "membership.added"]
    assert Membership.objects.filter(inbox=inbox, resident=seat).count() == 1


def test_moderation_refusals_change_nothing(demo):
    inbox = city1(demo)
    seat = demo.seat("honest")
    before = (list(Membership.objects.filter(inbox=inbox).values_list("resident", "state")), GameEvent.objects.count())
    with override("en"):
        # Another city's Tribune, a resident and the Consigliere are not moderators of city 1's inbox.
        for persona in ("tribune2", "mafioso", "consigliere", "superuser"):
            with pytest.raises(NotAllowed) as exc:
                services.do_ban_member(inbox, seat, acting_user=fresh(getattr(demo, persona)))
            assert str(exc.value) == "Only the organizer of this inbox or the Procurator of the game may change its members."
        with pytest.raises(InvalidInput) as exc:
            services.do_ban_member(inbox, seat, until=timezone.now() - timedelta(minutes=1), acting_user=fresh(demo.tribune1))
        assert str(exc.value) == "The end of the ban must be in the future."
        with pytest.raises(WrongState) as exc:
            services.do_unban_member(inbox, seat, acting_user=fresh(demo.tribune1))
        assert str(exc.value) == f"{seat.name} is not banned here."
        with pytest.raises(InvalidInput) as exc:
            services.do_add_member(inbox, seat, acting_user=fresh(demo.tribune1))
        assert str(exc.value) == f"{seat.name} is already in this inbox."
        other = demo.seat("resident2")
        with pytest.raises(InvalidInput) as exc:
            services.do_ban_member(inbox, other, acting_user=fresh(demo.tribune1))
        assert str(exc.value) == f"{other.name} is not in this inbox."
    after = (list(Membership.objects.filter(inbox=inbox).values_list("resident", "state")), GameEvent.objects.count())
    assert after == before


def test_procurator_cannot_moderate_an_inbox_he_may_not_read_L_STAFF_5(demo):
    mafia1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    with pytest.raises(NotAllowed):
        services.do_remove_member(mafia1, demo.seat("mafioso"), acting_user=fresh(demo.procurator))
    assert Membership.objects.get(inbox=mafia1, resident=demo.seat("mafioso")).state == MembershipState.MEMBER


@pytest.mark.parametrize("source, expected", [
    ("<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"),
    ("[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>\n"),
    ('<img src=x onerror="alert(1)">', "<p>&lt;img src=x onerror=\"alert(1)\"&gt;</p>\n"),
    ("[site](https://example.com)", '<p><a href="https://example.com" rel="nofollow noopener noreferrer">site</a></p>\n'),
    ("> цитата", "<blockquote>\n<p>цитата</p>\n</blockquote>\n"),
])
def test_markdown_is_rendered_and_sanitised(source, expected):
    assert render_markdown(source) == expected
    assert render_markdown(source) == expected  # the second time from the short texts' cache: the same HTML


def test_a_short_text_is_rendered_once_and_a_long_one_every_time():
    from inboxes import rendering

    rendering._render_short.cache_clear()
    for _ in range(3):
        assert render_markdown("**казнить**") == "<p><strong>казнить</strong></p>\n"
    info = rendering._render_short.cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 1, 1)
    long_text = "слово " * 20  # 120 characters: over the cached length
    assert render_markdown(long_text) == f"<p>{long_text.strip()}</p>\n"
    assert rendering._render_short.cache_info().currsize == 1
