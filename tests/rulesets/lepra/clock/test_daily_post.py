"""The daily post (issue 6 item 4; RULES.md L-POST-2, L-DEATH-2, L-WIN-1, L-INBOX-16).

A small Moscow game (two cities of five) runs on its clock from day 1 (1 March 2027, 10:00 MSK). On day 2 city 1
has no nominees and the Procurator names the executed (L-VOTE-7); city 2 votes and the court's deadline passes
(L-COURT-4). The test-only night kills the first honest resident of city 1 on night 2. The post of day 3 is
asserted line by line, in the game's language.
"""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client
from django.utils import translation

from cities.models import Alignment, City, GameDay, GameEvent, LifeStatus, PostKind, PublicPost, Resident
from inboxes.knowledge import visible_alignment
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from kernel.errors import NotAllowed, WrongState
from rulesets.lepra import seats
from rulesets.lepra.clock.services import (
    do_append_to_daily_post,
    do_draft_daily_post,
    do_edit_daily_post,
    do_set_daily_post_text,
)
from rulesets.lepra.court.services import do_put_before_court
from rulesets.lepra.day.services import do_decide_execution, do_nominate, do_schedule_voting
from tests.cities.clock_helpers import advance, clocked_game, night_handler, victim_of
from tests.setup_factory import in_game_language as t

pytestmark = pytest.mark.django_db


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


DAY2, DAY3 = utc(2027, 3, 2, 7), utc(2027, 3, 3, 7)


@pytest.fixture
def built():
    with night_handler():
        yield clocked_game("post-game")


def side(game, r: Resident) -> str:
    if seats.is_commissar(r):
        return t(game, "commissar")
    return t(game, "mafioso") if r.alignment == Alignment.MAFIA else t(game, "honest")


def score_lines(game) -> list[str]:
    lines, total = [], [0, 0, 0, 0]
    for city in City.objects.filter(game=game).order_by("number"):
        rs = list(Resident.objects.filter(city=city))
        counts = [sum(1 for r in rs if (r.status == LifeStatus.ALIVE) == alive and (r.alignment == Alignment.MAFIA)
                      == mafia) for alive, mafia in ((True, False), (True, True), (False, False), (False, True))]
        total = [a + b for a, b in zip(total, counts, strict=True)]
        lines.append((city.name, counts))
    lines.append((t(game, "All cities"), total))
    return [t(game, "- %(city)s: living %(honest)d honest, %(mafia)d mafia; dead %(dead_honest)d honest, "
                    "%(dead_mafia)d mafia", city=name, honest=c[0], mafia=c[1], dead_honest=c[2], dead_mafia=c[3])
            for name, c in lines]


def play_day_2(built):
    """Day 2: city 1 awaits the Procurator, who names the executed; city 2 votes, the court's deadline passes.
    Returns (executed in city 1, nominees A and B of city 2, voters of A, the one who changed their mind)."""
    game = built.game
    advance(game, DAY2)
    city1, city2 = City.objects.filter(game=game).order_by("number")
    living1 = list(Resident.objects.filter(city=city1, status=LifeStatus.ALIVE).order_by("name"))
    executed1 = living1[-1]
    do_decide_execution(city1, executed1, acting_user=built.procurator, now=utc(2027, 3, 2, 9))
    r2 = list(Resident.objects.filter(city=city2, status=LifeStatus.ALIVE).select_related("user").order_by("name"))
    a, b, v1, v2, v3 = r2
    do_nominate(a, acting_user=v1.user, now=utc(2027, 3, 2, 8))
    do_nominate(b, acting_user=v2.user, now=utc(2027, 3, 2, 8, 1))
    session = do_schedule_voting(city2, utc(2027, 3, 2, 15), utc(2027, 3, 2, 19), acting_user=built.staff["tribune2"],
                                 now=utc(2027, 3, 2, 8, 5))
    advance(game, utc(2027, 3, 2, 15))
    inbox_a = Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=a)
    inbox_b = Inbox.objects.get(kind=LepraInboxKind.VOTING, resident=b)
    do_post_message(inbox_a, "казнить", acting_user=v1.user, now=utc(2027, 3, 2, 16))
    do_post_message(inbox_a, "казнить", acting_user=v2.user, now=utc(2027, 3, 2, 16, 1))
    do_post_message(inbox_b, "казнить", acting_user=v3.user, now=utc(2027, 3, 2, 16, 2))
    do_post_message(inbox_b, "не казнить", acting_user=v3.user, now=utc(2027, 3, 2, 16, 3))
    advance(game, utc(2027, 3, 2, 19))
    session.refresh_from_db()
    do_put_before_court(session, utc(2027, 3, 2, 20), acting_user=built.staff["arbiter"], now=utc(2027, 3, 2, 19, 5))
    return executed1, a, b, [v1, v2], v3


def test_day_2_post_tells_of_a_quiet_first_night_and_is_published_once_at_day_start_L_POST_2(built):
    game = built.game
    advance(game, DAY2)
    plan = GameDay.objects.get(game=game, number=2)
    post = plan.post
    assert post.kind == PostKind.DAILY and post.published_at == DAY2 and post.created_at == utc(2027, 3, 2, 6)
    assert post.author is None and post.title == t(game, "Day %(day)d", day=2)
    assert post.body.splitlines()[:3] == [f"## {t(game, 'Night %(night)d', night=1)}", "",
                                          t(game, "Nobody was killed tonight.")]
    assert GameEvent.objects.filter(game=game, kind="scheduler.post_published", payload__post=post.pk).count() == 1
    assert PublicPost.objects.filter(game=game, kind=PostKind.DAILY).count() == 1
    # Public to everyone, logged in or not (L-INBOX-16).
    response = Client().get(f"/games/{game.slug}/")
    assert response.status_code == 200 and post.title in response.content.decode()


def test_day_3_post_lists_victims_results_judges_and_score_L_POST_2_L_DEATH_2(built):
    game = built.game
    executed1, a, b, voters_a, changed = play_day_2(built)
    victim = victim_of(game, 2)
    advance(game, DAY3)
    executed1.refresh_from_db()
    a.refresh_from_db()
    victim.refresh_from_db()
    assert victim.status == LifeStatus.DEAD and a.status == LifeStatus.DEAD
    city1, city2 = City.objects.filter(game=game).order_by("number")
    post = GameDay.objects.get(game=game, number=3).post
    assert post.published_at == DAY3
    expected = [
        f"## {t(game, 'Night %(night)d', night=2)}", "",
        t(game, "- %(name)s (%(city)s): %(side)s", name=victim.name, city=city1.name, side=side(game, victim)), "",
        f"## {t(game, 'Results of day %(day)d', day=2)}", "",
        f"### {city1.name}", "", t(game, "No execution voting was held."), "",
        t(game, "Nobody was voted for; the Procurator named the executed."),
        t(game, "Executed: %(name)s (%(side)s).", name=executed1.name, side=side(game, executed1)), "",
        f"### {city2.name}", "",
        t(game, "- %(name)s: %(count)d (%(voters)s)", name=a.name, count=2,
          voters=", ".join(v.name for v in voters_a)),
        t(game, "- %(name)s: %(count)d (%(voters)s)", name=b.name, count=0, voters="—") + "; "
        + t(game, "changed their mind: %(names)s", names=changed.name), "",
        t(game, "The Supreme Court did not decide; the leader of the vote was executed: %(name)s.", name=a.name), "",
        t(game, "Executed: %(name)s (%(side)s).", name=a.name, side=side(game, a)), "",
        f"## {t(game, 'Judges')}", "",
        t(game, "- %(city)s: %(judge)s", city=city1.name, judge=t(game, "no judge")),
        t(game, "- %(city)s: %(judge)s", city=city2.name, judge=t(game, "no judge")), "",
        f"## {t(game, 'Score')}", "",
        *score_lines(game),
    ]
    assert post.body.splitlines() == expected
    # The dead named by the post have their alignment announced from its publication (L-DEATH-2).
    assert set(GameDay.objects.get(game=game, number=3).announced) == {executed1.pk, a.pk, victim.pk}
    victim.refresh_from_db()
    assert victim.alignment_announced
    assert visible_alignment(built.players[0], victim) == victim.alignment


def test_victims_alignment_is_not_announced_before_the_post_is_published_L_DEATH_2(built):
    game = built.game
    play_day_2(built)
    victim = victim_of(game, 2)
    advance(game, utc(2027, 3, 3, 6))  # night 2 resolved and the post drafted, not yet published
    victim.refresh_from_db()
    assert victim.status == LifeStatus.DEAD and not victim.alignment_announced
    post = GameDay.objects.get(game=game, number=3).post
    assert post.published_at is None
    assert post.pk not in [p.pk for p in PublicPost.objects.filter(game=game, published_at__isnull=False)]
    city1 = City.objects.get(game=game, number=1)
    victim_line = f"{victim.name} ({city1.name}): {side(game, victim)}"
    assert victim_line in post.body
    # Neither anonymous visitors nor residents nor other staff read the draft; the Procurator does.
    for user in (None, built.players[0], built.staff["tribune1"], built.staff["consigliere"]):
        client = Client()
        if user is not None:
            client.force_login(user)
        assert victim_line not in client.get(f"/games/{game.slug}/").content.decode()
        assert client.get(f"/games/{game.slug}/posts/{post.public_id}/").status_code == 404
    for user in (built.players[0], built.staff["tribune1"], built.procurator):
        assert visible_alignment(user, victim) is None  # not announced yet (L-DEATH-2, L-STAFF-6)
    procurator = Client()
    procurator.force_login(built.procurator)
    assert procurator.get(f"/games/{game.slug}/posts/{post.public_id}/").status_code == 200


def test_procurator_edits_the_draft_before_and_appends_after_publication_L_POST_2(built):
    game = built.game
    advance(game, DAY2)
    do_set_daily_post_text(game, 3, "Конкурс стихов: итоги завтра.", acting_user=built.procurator,
                           now=utc(2027, 3, 2, 12))
    advance(game, utc(2027, 3, 3, 6))
    post = GameDay.objects.get(game=game, number=3).post
    assert post.body.endswith("\n\nКонкурс стихов: итоги завтра.")
    with pytest.raises(WrongState):
        do_set_daily_post_text(game, 3, "late", acting_user=built.procurator, now=utc(2027, 3, 3, 6, 10))
    with pytest.raises(NotAllowed):
        do_edit_daily_post(post, title="x", body="y", acting_user=built.staff["tribune1"], now=utc(2027, 3, 3, 6, 10))
    do_edit_daily_post(post, title="День третий", body=post.body + "\n\nПравка прокурора.",
                       acting_user=built.procurator, now=utc(2027, 3, 3, 6, 20))
    with translation.override("en"), pytest.raises(WrongState) as refused:
        do_append_to_daily_post(post, "too early", acting_user=built.procurator, now=utc(2027, 3, 3, 6, 30))
    assert str(refused.value) == "The daily post is not published yet: edit the draft instead."
    # A second draft run (a duplicated event) keeps the Procurator's edits.
    assert do_draft_daily_post(game, 3, acting_user=None, now=utc(2027, 3, 3, 6, 40)).title == "День третий"
    advance(game, DAY3)
    post.refresh_from_db()
    assert post.published_at == DAY3 and post.title == "День третий"
    assert post.body.endswith("Правка прокурора.")
    with translation.override("en"), pytest.raises(WrongState):
        do_edit_daily_post(post, title="x", body="y", acting_user=built.procurator, now=utc(2027, 3, 3, 8))
    do_append_to_daily_post(post, "Дополнение: поздравляем победителей.", acting_user=built.procurator,
                            now=utc(2027, 3, 3, 9))
    post.refresh_from_db()
    heading = t(game, "Added at %(time)s", time="2027-03-03 12:00 MSK")
    assert post.body.endswith(f"Правка прокурора.\n\n---\n\n*{heading}*\n\nДополнение: поздравляем победителей.")
    assert "Дополнение" in post.body_html
    assert [e.kind for e in GameEvent.objects.filter(game=game, kind__startswith="daily_post.").order_by("id")] == [
        "daily_post.drafted", "daily_post.text_set", "daily_post.drafted", "daily_post.edited",
        "daily_post.appended"]


def test_procurator_clock_and_daily_post_pages_work_and_refuse_others_L_POST_2(built):
    game = built.game
    advance(game, utc(2027, 3, 3, 6))
    client = Client()
    client.force_login(built.procurator)
    page = client.get(f"/staff/games/{game.slug}/clock/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "day_start" in body and "2027-03-03 10:00" in body
    response = client.post(f"/staff/games/{game.slug}/daily-post/3/edit/",
                           {"title": "Утро", "body": "Текст поста."})
    assert response.status_code == 302
    assert GameDay.objects.get(game=game, number=3).post.title == "Утро"
    response = client.post(f"/staff/games/{game.slug}/clock/day-start/", {"day_start": "11:00"})
    assert response.status_code == 302
    assert GameDay.objects.get(game=game, number=3).starts_at == utc(2027, 3, 3, 8)
    # The pages name the game by its slug: its database id, like an unknown slug, is the 404 of a missing page.
    for key in (str(game.pk), "no-such-game"):
        for url in (f"/staff/games/{key}/clock/", f"/staff/games/{key}/daily-post/3/"):
            assert client.get(url).status_code == 404, url
    assert f'href="/staff/games/{game.slug}/daily-post/3/"' in client.get(
        f"/staff/games/{game.slug}/clock/").content.decode()
    # Other staff of the game get the 404 of a missing page; a player is no staff and is sent to log in.
    for user, status in ((built.staff["tribune1"], 404), (built.staff["consigliere"], 404), (built.players[0], 302)):
        other = Client()
        other.force_login(user)
        for url in (f"/staff/games/{game.slug}/clock/", f"/staff/games/{game.slug}/daily-post/3/"):
            response = other.get(url)
            assert response.status_code == status, (user, url)
            if status == 302:
                assert response["Location"].startswith("/staff/login/")


def test_each_form_of_the_clock_and_daily_post_pages_posts_to_its_own_url_L_POST_2(built):
    """No field of those pages names the form: each posts to its own URL (POST only; the pages take no POST); a
    malformed form is its 400 and a form the post no longer takes (the draft exists: no free text) a 409, both
    changing nothing; another staff member's POST is the 404 of a missing page."""
    game = built.game
    advance(game, utc(2027, 3, 3, 6))
    client = Client()
    client.force_login(built.procurator)
    clock, post = f"/staff/games/{game.slug}/clock/", f"/staff/games/{game.slug}/daily-post/3/"
    page = client.get(clock).content.decode() + client.get(post).content.decode()
    assert 'name="form"' not in page
    assert f'action="{clock}day-start/"' in page and f'action="{post}edit/"' in page
    for url in (f"{clock}day-start/", f"{clock}long-day/", f"{clock}shorten/", f"{clock}edit-window/",
                f"{clock}start/", f"{clock}retry/", f"{post}text/", f"{post}edit/", f"{post}append/",
                f"{post}publish/"):
        assert client.get(url).status_code == 405, url
    assert client.post(clock, {"day_start": "11:00"}).status_code == 405
    assert client.post(post, {"title": "x", "body": "y"}).status_code == 405
    events = GameEvent.objects.filter(game=game).count()
    starts = GameDay.objects.get(game=game, number=3).starts_at
    bad = client.post(f"{clock}day-start/", {"day_start": "25:99"})
    assert bad.status_code == 400 and 'class="errorlist' in bad.content.decode()
    stale = client.post(f"{post}text/", {"free_text": "too late"})
    assert stale.status_code == 409
    assert t(game, "This form is out of date: reload the page.") in stale.content.decode()
    tribune = Client()
    tribune.force_login(built.staff["tribune1"])
    assert tribune.post(f"{clock}day-start/", {"day_start": "11:00"}).status_code == 404
    assert tribune.post(f"{post}edit/", {"title": "x", "body": "y"}).status_code == 404
    assert GameDay.objects.get(game=game, number=3).starts_at == starts
    assert GameEvent.objects.filter(game=game).count() == events


def test_touring_victims_and_spirits_are_named_as_such_in_the_post_L_NIGHT_4_L_SPIRIT_2():
    from cities import scheduler
    from cities.services import record_event
    from inboxes.membership_services import do_kill_resident
    from inboxes.models import DeathCause

    picked = {}

    def touring_night(event, now):
        game = event.game
        city1, city2 = City.objects.filter(game=game).order_by("number")
        toured = Resident.objects.filter(seats.rank_q("is_judge", False) & seats.rank_q("is_commissar", False), city=city2,
                                         alignment=Alignment.HONEST).order_by("name").first()
        spirit = Resident.objects.filter(seats.rank_q("is_judge", False) & seats.rank_q("is_commissar", False), city=city1,
                                         alignment=Alignment.HONEST).order_by("name").first()
        do_kill_resident(toured, DeathCause.KILLED, acting_user=None, now=now)
        do_kill_resident(spirit, DeathCause.KILLED, acting_user=None, spirit=True, now=now)
        picked.update(toured=toured, spirit=spirit, city1=city1, city2=city2)
        record_event(game, "night.resolved", actor=None, at=now, payload={"night": event.payload["night"], "deaths": [
            {"resident": toured.pk, "city": city2.pk, "cause": "killed", "touring": True, "by_city": city1.pk},
            {"resident": spirit.pk, "city": city1.pk, "cause": "killed", "touring": False, "by_city": city1.pk}]})
        return "resolved"

    with night_handler(touring_night):
        built = clocked_game("touring-game")
        game = built.game
        advance(game, DAY2)
        assert scheduler.HANDLERS["night_end"] is touring_night
    toured, spirit, city1, city2 = picked["toured"], picked["spirit"], picked["city1"], picked["city2"]
    body = GameDay.objects.get(game=game, number=2).post.body.splitlines()
    assert body[:4] == [
        f"## {t(game, 'Night %(night)d', night=1)}", "",
        t(game, "- %(name)s (%(city)s): %(side)s", name=toured.name, city=city2.name, side=t(game, "honest"))
        + "; " + t(game, "killed by the touring mafia of %(city)s", city=city1.name),
        t(game, "- %(name)s (%(city)s): %(side)s", name=spirit.name, city=city1.name, side=t(game, "honest"))
        + "; " + t(game, "a spirit today"),
    ]
