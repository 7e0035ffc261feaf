"""Live pages (htmx): an open thread asks for what is new, posting needs no reload, the top bar counts unread.
Every answer is decided by the access policy at request time (L-INBOX-20, L-STAFF-6)."""
from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from inboxes import posting, services
from inboxes.models import Inbox, Message, ReadMark
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import fresh

HX = {"HTTP_HX_REQUEST": "true"}


def _city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def _poll_after(html: str) -> int:
    found = re.findall(r'id="live-poll"[^>]*hx-get="[^"?]*\?after=(\d+)(?:&amp;v=[^"]*)?"', html)
    assert len(found) == 1, html[-2000:]
    return int(found[0])


def test_open_thread_page_polls_from_its_last_position_and_gets_only_new_messages_L_INBOX_20(demo, client):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    client.post(f"/inboxes/{inbox.public_id}/read/")
    total = Message.objects.filter(inbox=inbox).count()
    page = client.get(f"/inboxes/{inbox.public_id}/").content.decode()
    assert _poll_after(page) == total
    live = client.get(f"/inboxes/{inbox.public_id}/live/?after={total}", **HX)
    assert (live.status_code, live.content) == (204, b"")  # nothing new: the page keeps its poll
    posting.do_post_message(inbox, "Свежая новость", acting_user=fresh(demo.mafioso))
    posting.do_post_message(inbox, "И ещё одна", acting_user=fresh(demo.mafioso))
    live = client.get(f"/inboxes/{inbox.public_id}/live/?after={total}", **HX).content.decode()
    assert re.findall(r'<article class="message[^"]*" id="n(\d+)"', live) == [str(total + 1), str(total + 2)]
    assert "Свежая новость" in live and "И ещё одна" in live
    assert _poll_after(live) == total + 2
    # Shown live with nothing unread before them: they are read now.
    rows = {i.pk: i.unread for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]}
    assert rows[inbox.pk] == 0


def test_live_poll_does_not_mark_read_across_an_unread_gap_L_INBOX_20(demo, client):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    client.post(f"/inboxes/{inbox.public_id}/read/")
    mark = ReadMark.objects.get(user=demo.honest, inbox=inbox).last_read_at
    total = Message.objects.filter(inbox=inbox).count()
    for i in range(3):
        posting.do_post_message(inbox, f"n{i}", acting_user=fresh(demo.mafioso))
    # A page that claims to have shown two more than were read skips them: nothing is marked.
    live = client.get(f"/inboxes/{inbox.public_id}/live/?after={total + 2}", **HX)
    assert live.status_code == 200 and "<p>n2</p>" in live.content.decode()
    assert ReadMark.objects.get(user=demo.honest, inbox=inbox).last_read_at == mark


def test_live_poll_answers_the_policy_of_now_a_removed_reader_gets_the_missing_404_L_INBOX_13(demo, client):
    honest, other = demo.seat("honest"), demo.seat("resident2")
    inbox = services.do_create_secret_inbox(demo.game, title="Заговор", members=[other, honest],
                                            acting_user=fresh(demo.honest))
    client.force_login(demo.resident2)
    assert client.get(f"/inboxes/{inbox.public_id}/live/?after=0", **HX).status_code == 204  # nothing yet
    services.do_leave_secret_inbox(inbox, acting_user=fresh(demo.resident2))
    posting.do_post_message(inbox, "Без него", acting_user=fresh(demo.honest))
    gone = client.get(f"/inboxes/{inbox.public_id}/live/?after=0", **HX)
    missing = client.get("/inboxes/99999999/live/?after=0", **HX)
    assert (gone.status_code, missing.status_code) == (404, 404)
    assert "Без него" not in gone.content.decode()
    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    assert client.get(f"/inboxes/{mafia2.public_id}/live/?after=0", **HX).status_code == 404
    client.logout()
    assert client.get(f"/inboxes/{_city1(demo).public_id}/live/?after=0", **HX).status_code == 404


def test_malformed_live_position_is_400(demo, client):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    for bad in ("", "x", "-1", "1.5", "²", "9" * 12):
        response = client.get(f"/inboxes/{inbox.public_id}/live/", {"after": bad}, **HX)
        assert response.status_code == 400, bad


def test_htmx_post_needs_no_reload_and_a_refusal_keeps_the_text_L_INBOX_17(demo, client):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    before = Message.objects.filter(inbox=inbox).count()
    ok = client.post(f"/inboxes/{inbox.public_id}/", {"text": "Без перезагрузки"}, **HX)
    assert ok.status_code == 200 and ok["HX-Trigger"] == "thread-refresh"
    # The only content: a fresh idempotency key for the form's next post, swapped out of band.
    assert re.fullmatch(rb'<input type="hidden" name="idempotency_key" value="[A-Za-z0-9_-]{22}" '
                        rb'id="id_idempotency_key" hx-swap-oob="true">', ok.content)
    assert Message.objects.filter(inbox=inbox).count() == before + 1
    refused = client.post(f"/inboxes/{inbox.public_id}/", {"text": "   "}, **HX)
    assert refused.status_code == 200 and refused["X-Post-Refused"] == "400"
    assert "Сообщение пустое." in refused.content.decode()
    services.do_ban_member(inbox, demo.seat("honest"), acting_user=fresh(demo.tribune1))
    banned = client.post(f"/inboxes/{inbox.public_id}/", {"text": "Пустите!"}, **HX)
    assert banned["X-Post-Refused"] == "403" and "Вы забанены в этом ящике." in banned.content.decode()
    assert Message.objects.filter(inbox=inbox).count() == before + 1


def test_unread_badge_counts_what_the_policy_lets_the_viewer_read_L_INBOX_20(demo, client):
    inbox = _city1(demo)
    url = f"/games/{demo.game.slug}/live/unread/"
    assert 'class="unread"' not in client.get(url, **HX).content.decode()  # anonymous: nothing
    client.force_login(demo.honest)
    for i in client.get(f"/games/{demo.game.slug}/inboxes/").context["active"]:
        client.post(f"/inboxes/{i.public_id}/read/")
    assert 'class="unread"' not in client.get(url, **HX).content.decode()
    posting.do_post_message(inbox, "Раз", acting_user=fresh(demo.mafioso))
    posting.do_post_message(inbox, "Два", acting_user=fresh(demo.mafioso))
    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    posting.do_post_message(mafia2, "Тайна", acting_user=fresh(mafia2.memberships.first().resident.user))
    badge = client.get(url, **HX).content.decode()
    assert re.search(r'<span class="unread"[^>]*>2</span>', badge), badge
    client.get(f"/inboxes/{inbox.public_id}/")
    assert 'class="unread"' not in client.get(url, **HX).content.decode()


def test_voting_inbox_poll_refreshes_the_tally_out_of_band_L_VOTE_4(demo, client):
    from datetime import timedelta

    import time_machine

    from tests.rulesets.lepra.day.day_helpers import OPENS, city1_day, nominate_and_open

    day = city1_day(demo)
    nominate_and_open(demo, day, [day.plain[0]])
    voting = day.inbox_of(day.plain[0])
    client.force_login(day.plain[3].user)
    with time_machine.travel(OPENS + timedelta(minutes=1), tick=False):
        after = Message.objects.filter(inbox=voting).count()
        posting.do_post_message(voting, "казнить", acting_user=fresh(day.plain[5].user))
        live = client.get(f"/inboxes/{voting.public_id}/live/?after={after}", **HX).content.decode()
    assert 'id="tally-slot" hx-swap-oob="true"' in live
    assert day.plain[5].name in live.split('id="tally-slot"')[1]


def test_live_poll_costs_the_same_with_10_and_2000_messages(demo, client):
    from tests.inboxes.inbox_helpers import _fill

    seat = demo.seat("honest")
    inbox = _city1(demo)
    client.force_login(demo.honest)

    def cost(after: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/inboxes/{inbox.public_id}/live/?after={after}", **HX).status_code == 200
        return len(ctx.captured_queries)

    _fill(inbox, seat, 10)
    small = cost(8)
    _fill(inbox, seat, 2000)
    large = cost(1998)
    assert small == large


def test_live_poll_deletes_the_empty_thread_notice_only_when_the_thread_was_empty_L_INBOX_20(demo, client):
    """The out-of-band delete of the "No messages yet." line is sent only to a page that had it (``after=0``); a
    page with messages has no such element, and htmx reports an error for every delete aimed at a missing one."""
    inbox = _city1(demo)
    client.force_login(demo.honest)
    total = Message.objects.filter(inbox=inbox).count()
    assert total > 0
    posting.do_post_message(inbox, "Ещё одно", acting_user=fresh(demo.mafioso))
    live = client.get(f"/inboxes/{inbox.public_id}/live/?after={total}", **HX).content.decode()
    assert "<p>Ещё одно</p>" in live and 'id="no-messages"' not in live
    from_empty = client.get(f"/inboxes/{inbox.public_id}/live/?after=0", **HX).content.decode()
    assert from_empty.count('<p id="no-messages" hx-swap-oob="delete"></p>') == 1
