"""A live poll that finds nothing new is answered from the shared cache (``kernel.live``): an empty 204, no query,
no page built; anything that may change the answer (a message, a change of what the reader may read, the reader's
own read marks or account) sends the next poll to the full view, which decides by the access policy (L-INBOX-20,
L-INBOX-17: a reader who lost access learns nothing, not even that something is new).

The adversary's tests: a reader whom a change does not concern gets the very answers (status, body, headers) they
would have got without it, from the same path; a dead reader gets the same answers whether or not posts arrive
after their death; and the full view's "nothing new" is the cheap path's answer byte for byte (L-STAFF-6
[interp]). Each fails if the leak returns: a version every token of the game holds (the path changes: queries), a
dead reader's token holding the inbox's version (the same), a full view answering "nothing new" otherwise."""
from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cities.models import StaffRole
from inboxes import membership_services, posting, services
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.selectors import inbox_list_for
from kernel import live
from mafia_site.checks import check_mafia_settings
from rulesets.lepra.seats import do_set_seat_flags
from rulesets.lepra.staff_kinds import StaffKind
from staff.services import do_grant_stand_in
from tests.conftest import fresh

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def shortcut(settings):
    """The shortcut on (the autouse ``_fresh_cache`` has emptied this process's cache)."""
    settings.MAFIA_LIVE_SHORTCUT = True


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """``with committed(): ...``: the block's on-commit callbacks (the versions it renews) run at its end, as
    they would at the commit of its transaction."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _city1(demo) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def _personal(demo, user) -> Inbox:
    return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.PERSONAL, resident__user=user)


def _poll_url(page: str, element: str = "live-poll") -> str:
    found = re.findall(rf'id="{element}"[^>]*hx-get="([^"]+)"', page)
    assert len(found) == 1, page[-2000:]
    return html.unescape(found[0])


def _open(client, inbox) -> str:
    return _poll_url(client.get(f"/inboxes/{inbox.public_id}/").content.decode())


def _answer(response) -> tuple:
    """What a poll's answer shows its reader: status, body, every header and cookie."""
    return (response.status_code, response.content, sorted(response.headers.items()),
            sorted((k, v.OutputString()) for k, v in response.cookies.items()))


def _poll(client, url) -> tuple[tuple, int]:
    """``_answer`` of a poll of ``url`` and the number of SQL statements it ran (0: the cheap path)."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **HX)
    return _answer(response), len(queries)


def _empty() -> tuple:
    """The one "nothing new" answer (``kernel.live.empty_answer``), as ``_answer`` shows it."""
    return _answer(live.empty_answer())


def test_an_idle_poll_is_an_empty_204_without_a_query_L_INBOX_20(demo, client, shortcut,
                                                                  django_assert_num_queries):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    url = _open(client, inbox)
    assert "&v=" in url
    with django_assert_num_queries(0):
        response = client.get(url, **HX)
    assert response.status_code == 204 and response.content == b""
    assert "private" in response["Cache-Control"] and "no-store" in response["Cache-Control"]


def test_a_new_message_sends_the_next_poll_to_the_full_view_which_shows_it_L_INBOX_20(demo, client, shortcut,
                                                                                       committed):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    url = _open(client, inbox)
    with committed():
        posting.do_post_message(inbox, "Свежая новость", acting_user=fresh(demo.mafioso))
    response = client.get(url, **HX)
    assert response.status_code == 200 and "Свежая новость" in response.content.decode()
    # The answer carries a new token, which stands until the next change.
    following = _poll_url(response.content.decode())
    assert following != url and client.get(following, **HX).status_code == 204


def test_a_message_the_reader_cannot_read_changes_nothing_for_their_poll_L_INBOX_20(demo, client, shortcut,
                                                                                      committed):
    client.force_login(demo.honest)
    url = _open(client, _city1(demo))
    mafia = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    with committed():
        posting.do_post_message(mafia, "Сегодня ночью", acting_user=fresh(demo.mafioso))
    assert client.get(url, **HX).status_code == 204


@pytest.mark.parametrize("something_new", [False, True])
def test_a_replaced_reader_gets_the_404_whether_or_not_anything_is_new_L_INBOX_17(demo, client, shortcut, committed,
                                                                                   something_new, django_user_model):
    inbox = _personal(demo, demo.honest)
    client.force_login(demo.honest)
    url = _open(client, inbox)
    assert client.get(url, **HX).status_code == 204
    newcomer = django_user_model.objects.create_user("newcomer", "n@example.com", "x-secret-123",
                                                     display_name="Smenshik")
    with committed():
        membership_services.do_replace_player(demo.seat("honest"), newcomer, acting_user=fresh(demo.procurator))
    if something_new:
        with committed():
            posting.do_post_message(inbox, "Добро пожаловать", acting_user=fresh(demo.tribune1))
    assert client.get(url, **HX).status_code == 404


def test_a_removed_member_gets_the_404_at_once_L_INBOX_17(demo, client, shortcut, committed):
    inbox = services.do_create_secret_inbox(demo.game, title="Тайна", members=[demo.seat("mafioso")],
                                            acting_user=fresh(demo.honest), now=timezone.now())
    client.force_login(demo.mafioso)
    url = _open(client, inbox)
    assert client.get(url, **HX).status_code == 204
    with committed():
        services.do_remove_member(inbox, demo.seat("mafioso"), acting_user=fresh(demo.honest))
    assert client.get(url, **HX).status_code == 404


def test_a_token_answers_only_its_own_session_and_url_L_INBOX_20(demo, client, shortcut,
                                                                  django_assert_num_queries):
    inbox = _city1(demo)
    client.force_login(demo.honest)
    url = _open(client, inbox)
    base, token = url.split("&v=")
    with django_assert_num_queries(0):
        assert _answer(client.get(url, **HX)) == _empty()
    # Another position, a token cut short, no token: the full view (its own "nothing new" here).
    assert client.get(url.replace("?after=", "?after=1"), **HX).status_code in (204, 400)
    for other in (f"{base}&v={token[:-3]}", base):
        answer, queries = _poll(client, other)
        assert answer == _empty() and queries > 0  # built in full
    # Another account's session with this token: the full view, which decides for that account.
    client.force_login(demo.mafioso)
    answer, queries = _poll(client, url)
    assert answer == _empty() and queries > 0
    client.force_login(demo.resident2)  # another city's resident: the square is not theirs
    assert client.get(url, **HX).status_code == 404
    client.logout()
    assert client.get(url, **HX).status_code == 404


def test_a_token_is_opaque_and_its_record_lives_in_the_cache_L_INBOX_20(demo, client, shortcut):
    client.force_login(demo.honest)
    url = _open(client, _city1(demo))
    token = url.split("&v=")[1]
    # 128 random bits, a new one per answer: nothing of the URL, the user or the versions can be read from it.
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token) and token != _open(client, _city1(demo)).split("&v=")[1]
    record = f"live:t:{token}"
    assert sorted(cache.get(record)) == ["h", "p", "u", "v", "x"]  # "x": the time (Unix seconds) it stands until
    cache.delete(record)  # past MAFIA_LIVE_TOKEN_SECONDS, or evicted: the full view, which writes it again
    answer, queries = _poll(client, url)
    assert answer == _empty() and queries > 0 and cache.get(record) is not None
    assert _poll(client, url) == (_empty(), 0)


def test_a_lost_version_sends_one_poll_to_the_full_view_with_the_same_answer_L_INBOX_20(demo, client, shortcut):
    client.force_login(demo.honest)
    inbox = _city1(demo)
    url = _open(client, inbox)
    cache.delete(live.inbox_key(inbox.pk))  # evicted, or the cache flushed: that version no longer stands
    answer, queries = _poll(client, url)
    assert answer == _empty() and queries > 0
    assert _poll(client, url) == (_empty(), 0)  # the full view pointed the token at the new version


def test_an_account_change_ends_what_its_tabs_were_told_L_INBOX_20(demo, client, shortcut, committed):
    client.force_login(demo.honest)
    url = _open(client, _city1(demo))
    user = fresh(demo.honest)
    user.is_active = False
    with committed():
        user.save(update_fields=["is_active"])
    assert client.get(url, **HX).status_code == 404


def test_the_unread_badge_idles_on_a_204_and_counts_a_new_readable_message_L_INBOX_20(demo, client, shortcut,
                                                                                       committed):
    client.force_login(demo.honest)
    first = client.get(f"/games/{demo.game.slug}/live/unread/", **HX)
    url = _poll_url(first.content.decode(), "unread-badge")
    before = first.context["unread"]
    assert f"?n={before}&v=" in url and _answer(client.get(url, **HX)) == _empty()
    # A message where the reader cannot read: still nothing new for them.
    mafia = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    with committed():
        posting.do_post_message(mafia, "Сегодня ночью", acting_user=fresh(demo.mafioso))
    assert _answer(client.get(url, **HX)) == _empty()
    # A message in the reader's city square: the count is built again and grows by one.
    with committed():
        posting.do_post_message(_city1(demo), "Всем привет", acting_user=fresh(demo.mafioso))
    again = client.get(url, **HX)
    assert again.status_code == 200 and again.context["unread"] == before + 1
    # The reader reads it in another tab: their read mark moved, so the badge is built again (one fewer).
    url = _poll_url(again.content.decode(), "unread-badge")
    with committed():
        client.post(f"/inboxes/{_city1(demo).public_id}/read/")
    read = client.get(url, **HX)
    left = sum(i.unread for i in inbox_list_for(fresh(demo.honest), demo.game))
    assert read.status_code == 200 and read.context["unread"] == left < before + 1


def test_without_the_shortcut_every_poll_is_built_and_carries_no_token_L_INBOX_20(demo, client, settings,
                                                                                  committed):
    settings.MAFIA_LIVE_SHORTCUT = False
    client.force_login(demo.honest)
    inbox = _city1(demo)
    url = _open(client, inbox)
    assert "v=" not in url
    assert _answer(client.get(url, **HX)) == _empty()
    with committed():
        posting.do_post_message(inbox, "Без кэша", acting_user=fresh(demo.mafioso))
    response = client.get(url, **HX)
    assert response.status_code == 200 and "Без кэша" in response.content.decode()
    assert Message.objects.filter(inbox=inbox).exists()


def test_the_shortcut_on_a_cache_of_one_process_is_refused_at_start_up_L_INBOX_20(settings):
    settings.MAFIA_LIVE_SHORTCUT = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert [e.id for e in check_mafia_settings(None)] == ["mafia.E008"]
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:6379/0"}}
    assert check_mafia_settings(None) == []


# ----------------------------------------------------------------------------------------------------------------
# The adversary: what the answers and their path tell a reader about changes that are not theirs to know
# ----------------------------------------------------------------------------------------------------------------

@pytest.fixture
def night(db, settings):
    """Night 2 of a two-city Lepra game of ten (rows), with a secret inbox of two of city 1 (an honest resident
    and a mafioso); then the shortcut on, nothing pending from the setup."""
    from tests.rulesets.lepra.night.conftest import NOW, build_night_game_rows

    settings.MAFIA_LIVE_SHORTCUT = False
    ng = build_night_game_rows("livenight", cities=2, size=10)
    ng.secret = services.do_create_secret_inbox(ng.game, title="Сговор", members=[ng.mafia[1][1]],
                                                acting_user=ng.honest[1][0].user, now=NOW - timedelta(hours=1))
    ng.now = NOW
    connection.__dict__.pop("_live_pending", None)
    settings.MAFIA_LIVE_SHORTCUT = True
    return ng


def _login(client, committed, user) -> None:
    """Log ``user`` in, its commit done (the login saves the account: its version is renewed then, not later)."""
    with committed():
        client.force_login(user)


def _square(ng, number: int = 1) -> Inbox:
    return Inbox.objects.get(game=ng.game, kind=LepraInboxKind.CITY, city__number=number, rolled_over_at__isnull=True)


def _badge(client, game) -> str:
    return _poll_url(client.get(f"/games/{game.slug}/live/unread/", **HX).content.decode(), "unread-badge")


def _death(ng):
    from tests.rulesets.lepra.night.conftest import kill

    kill(ng.honest[2][0], cause="killed", now=ng.now)


def _mafia_decision(ng):
    from rulesets.lepra.night import services as night_services

    night_services.do_submit_night_decision(ng.cities[0], ng.honest[1][2], acting_user=fresh(ng.godfather[1].user),
                                            now=ng.now)


def _commissar_check(ng):
    from rulesets.lepra.night import services as night_services

    night_services.do_check_resident(ng.mafia[1][0], acting_user=fresh(ng.commissar[1].user), now=ng.now)


def _replacement(ng):
    from tests.factories import UserFactory

    newcomer = UserFactory(username="livenight-new", email="livenight-new@example.com", display_name="Smenshik")
    membership_services.do_replace_player(ng.mafia[1][1], newcomer, acting_user=fresh(ng.procurator))


def _removal(ng):
    services.do_remove_member(ng.secret, ng.mafia[1][1], acting_user=fresh(ng.honest[1][0].user))


def _ban(ng):
    services.do_ban_member(ng.secret, ng.mafia[1][1], acting_user=fresh(ng.honest[1][0].user))


def _secret_inbox(ng):
    services.do_create_secret_inbox(ng.game, title="Ночной сговор", members=[ng.mafia[1][0]],
                                    acting_user=fresh(ng.honest[1][2].user), now=ng.now)


CHANGES = {"death at night": _death, "mafia decision": _mafia_decision, "commissar check": _commissar_check,
           "replacement": _replacement, "removal from an inbox": _removal, "ban in an inbox": _ban,
           "a secret inbox opened at night": _secret_inbox}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_that_is_not_the_readers_changes_neither_their_answers_nor_their_path_L_STAFF_6(night, client,
                                                                                                committed, change):
    """An honest resident of city 1 watching the square and their badge, through a change they may not know of
    (or not at that moment): every poll is the empty answer, from the cache (no statement), exactly as when
    nothing happens. A version every token of the game holds would send these polls to the full view."""
    ng = night
    _login(client, committed, ng.honest[1][1].user)
    thread, badge = _open(client, _square(ng)), _badge(client, ng.game)
    quiet = [_poll(client, thread), _poll(client, badge)]
    assert quiet == [(_empty(), 0), (_empty(), 0)]
    with committed():
        CHANGES[change](ng)
    assert [_poll(client, thread), _poll(client, badge)] == quiet
    # The observer's own news still reaches them: a post in their square is built in full and shown.
    with committed():
        posting.do_post_message(_square(ng), "Доброе утро", acting_user=fresh(ng.honest[1][2].user))
    response = client.get(thread, **HX)
    assert response.status_code == 200 and "Доброе утро" in response.content.decode()


@pytest.mark.parametrize("posts_after_death", [False, True])
def test_a_dead_reader_gets_the_same_answers_whether_or_not_posts_arrive_after_their_death_L_STAFF_6(
        night, client, committed, posts_after_death):
    """The secret inbox's organiser dies with its page open: their view of it stops at their death (a dated
    kind), so a post after it must change nothing in how their polls are answered, not even the path."""
    ng = night
    reader = ng.honest[1][0]
    _login(client, committed, reader.user)
    thread = _open(client, ng.secret)
    assert _poll(client, thread) == (_empty(), 0)
    with committed():
        _death_of(reader, ng)
    first, queries = _poll(client, thread)  # their seat changed: the full view, which finds nothing they may see
    assert first == _empty() and queries > 0
    if posts_after_death:
        with committed():
            posting.do_post_message(ng.secret, "Пока тебя нет", acting_user=fresh(ng.mafia[1][1].user))
    assert [_poll(client, thread) for _ in range(2)] == [(_empty(), 0)] * 2
    page = client.get(f"/inboxes/{ng.secret.public_id}/").content.decode()
    assert "Пока тебя нет" not in page
    assert _poll(client, _poll_url(page)) == (_empty(), 0)


def _death_of(resident, ng):
    from tests.rulesets.lepra.night.conftest import kill

    kill(resident, cause="killed", now=ng.now)


def test_the_full_views_nothing_new_is_the_cheap_answer_byte_for_byte_L_INBOX_20(night, client, committed):
    """Every header, cookie and byte alike: the answer does not tell which path answered it."""
    _login(client, committed, night.honest[1][1].user)
    for url in (_open(client, _square(night)), _badge(client, night.game)):
        cheap = _poll(client, url)
        cache.delete(f"live:t:{url.rsplit('v=', 1)[1]}")
        full, queries = _poll(client, url)
        assert cheap == (_empty(), 0) and full == _empty() and queries > 0


@pytest.mark.parametrize("change", ["replacement", "removal from an inbox"])
def test_a_reader_who_lost_access_gets_the_404_at_the_next_poll_L_INBOX_17(night, client, committed, change):
    ng = night
    _login(client, committed, ng.mafia[1][1].user)
    thread = _open(client, ng.secret)
    assert _poll(client, thread) == (_empty(), 0)
    with committed():
        CHANGES[change](ng)
    assert client.get(thread, **HX).status_code == 404


def test_the_end_of_the_game_changes_no_answer_that_has_nothing_new_L_ARCH_1(night, client, committed):
    """The end concerns every reader (what is disclosed after it): their next poll is built in full, and its
    answer is still the empty one when nothing new is there for them."""
    from rulesets.lepra.game_end_services import do_end_game_early

    ng = night
    _login(client, committed, ng.honest[1][1].user)
    thread = _open(client, _personal_of(ng, ng.honest[1][1]))
    assert _poll(client, thread) == (_empty(), 0)
    with committed():
        do_end_game_early(ng.refresh(), reason="Тест", acting_user=fresh(ng.procurator))
    answer, queries = _poll(client, thread)
    assert answer == _empty() and queries > 0
    assert _poll(client, thread) == (_empty(), 0)


def _personal_of(ng, resident) -> Inbox:
    return Inbox.objects.get(game=ng.game, kind=LepraInboxKind.PERSONAL, resident=resident)


def test_a_transactions_renewals_are_written_once_after_its_commit_and_not_after_a_rollback_L_INBOX_20(
        night, committed, monkeypatch):
    from django.db import transaction

    ng = night
    written = []
    monkeypatch.setattr(live, "_renew", written.append)
    banned, organiser = ng.mafia[1][1], fresh(ng.honest[1][0].user)
    with committed(), transaction.atomic():
        services.do_ban_member(ng.secret, banned, acting_user=organiser)
        services.do_unban_member(ng.secret, banned, acting_user=organiser)
        assert written == []  # nothing before the commit
    assert len(written) == 1 and written[0] == [live.reader_key(ng.game.pk, banned.user_id)]
    written.clear()
    with committed(), pytest.raises(RuntimeError), transaction.atomic():
        services.do_ban_member(ng.secret, banned, acting_user=organiser)
        raise RuntimeError("rolled back")
    assert written == []


def test_a_new_inbox_reaches_the_badges_of_its_readers_and_no_other_L_INBOX_20(night, client, committed):
    """Its members' (and the policy's other readers') versions are renewed once it is committed: their badge then
    counts its posts; an outsider's badge stays on the cheap path."""
    from django.test import Client

    ng = night
    invited, outsider = ng.mafia[1][0].user, Client()
    _login(outsider, committed, ng.honest[1][1].user)
    outsider_badge = _badge(outsider, ng.game)
    _login(client, committed, invited)
    badge = _badge(client, ng.game)
    before = client.get(badge, **HX)
    assert _answer(before) == _empty()
    with committed():
        _secret_inbox(ng)
    with committed():
        posting.do_post_message(Inbox.objects.get(game=ng.game, title="Ночной сговор"), "Тсс",
                                acting_user=fresh(ng.honest[1][2].user))
    grown = client.get(badge, **HX)
    assert grown.status_code == 200 and grown.context["unread"] == int(badge.split("n=")[1].split("&")[0]) + 1
    assert _poll(outsider, outsider_badge) == (_empty(), 0)


def test_a_change_of_a_seats_lepra_rank_renews_its_holders_polls_and_no_one_elses_L_SPIRIT_2(demo, client, shortcut,
                                                                                           committed):
    judge_client = Client()
    with committed():  # the logins' own renewals written before the pages are opened
        judge_client.force_login(demo.judge)
        client.force_login(demo.honest)
    with committed():
        judges_url, honests_url = _open(judge_client, _city1(demo)), _open(client, _city1(demo))
    assert _poll(judge_client, judges_url) == (_empty(), 0)
    assert _poll(client, honests_url) == (_empty(), 0)
    with committed():
        do_set_seat_flags(demo.seat("judge"), acting_user=None, is_judge=False)
    # The holder's next poll is built in full (the rank may change what they read and where they post) ...
    answer, queries = _poll(judge_client, judges_url)
    assert queries > 0 and answer[0] in (200, 204)
    # ... another reader's stands: same answer, same path.
    assert _poll(client, honests_url) == (_empty(), 0)


def test_a_stand_ins_token_never_stands_past_the_end_of_the_period_L_STAFF_2(demo, client, shortcut, committed):
    start = datetime(2031, 1, 1, 9, 0, tzinfo=UTC)
    end = start + timedelta(minutes=5)  # shorter than a token's lifetime (MAFIA_LIVE_TOKEN_SECONDS)
    absent = StaffRole.objects.get(game=demo.game, kind=StaffKind.TRIBUNE, city__number=1)
    stand_in = StaffRole.objects.get(game=demo.game, kind=StaffKind.TRIBUNE, city__number=2)
    square = _city1(demo)  # city 1's square, which city 2's Tribune reads only while standing in
    with time_machine.travel(start - timedelta(minutes=1), tick=False):
        with committed():
            do_grant_stand_in(absent, stand_in, start, end, acting_user=fresh(demo.procurator),
                              now=start - timedelta(minutes=1))
            client.force_login(demo.tribune2)
    with time_machine.travel(start + timedelta(minutes=1), tick=False):
        url = _open(client, square)
        assert _poll(client, url) == (_empty(), 0)  # the cheap path while the period runs
    with time_machine.travel(end + timedelta(seconds=1), tick=False):
        # Nothing was posted and nothing written: the period's end alone sends the poll to the policy's 404.
        assert client.get(url, **HX).status_code == 404
