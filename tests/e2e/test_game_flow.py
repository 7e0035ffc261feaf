"""A whole Lepra game in a real browser (issue 9; RULES.md L-DAY, L-JUDGE, L-NIGHT, L-NOM, L-VOTE, L-COURT,
L-POST-2, L-WIN-3, L-ARCH, L-INBOX-4), every phase moved by the Celery beat on the game clock the test sets:
day 1: the Procurator starts the clock in the staff console, the Arbiter schedules the judge elections there,
residents propose candidates, «Он - Ганди!» / «Он - Гитлер!» are posted in precincts and counted, the beat opens and
closes the elections; night 1: the Consigliere opens the godfather elections on the night page and the mafia vote;
day 2: nominations in personal inboxes, voting scheduled and run by the Tribunes from the staff console and by the
beat, «казнить» / «не казнить» posted in voting inboxes and counted in the tally shown, the Supreme Court confirming,
and the mafia inbox of another city out of a player's reach; night 2: a home kill, a touring kill and a commissar
check on the night page; day 3: the daily post, read by a logged-out spectator, names the executed with alignment
and the night's victims; then the Procurator ends the game and the spectator reads the archive."""
from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta

import pytest
from django.urls import reverse

from cities.models import Alignment, GameEvent, LifeStatus, Resident, ScheduledEvent
from inboxes.models import Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.models import VotingSession

from .pages import Person, ru, run_admin_action

# xdist_group: all tests that start processes run on one worker, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("processes")]

SESSIONS = "/staff/lepra/votingsession/"


def inbox_url(inbox) -> str:
    return reverse("inbox_thread", args=[inbox.public_id])


def wall(moment, zone="Europe/Moscow") -> str:
    """``moment`` as a datetime-local field takes it, in the game's zone."""
    from zoneinfo import ZoneInfo
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M")


def open_from_my_inboxes(person: Person, slug: str, inbox) -> None:
    """Open ``inbox`` by its link on the person's "My inboxes" page (asserting it is listed there)."""
    person.open(f"/games/{slug}/inboxes/")
    person.follow(f"main table.inboxes a[href='{inbox_url(inbox)}']")


def post(person: Person, inbox, text: str, status: int = 200) -> None:
    """Post ``text`` in ``inbox`` through its form."""
    person.open(inbox_url(inbox))
    person.post_in_thread(text, status=status)


def tally(person: Person) -> list[tuple[str, int, str, str]]:
    """The tally shown on the page: (nominee, votes, voters, changed their mind) per row, in ranking order."""
    rows = []
    for row in person.page.locator(".tally-box table.tally tbody tr").all():
        cells = [c.strip() for c in row.locator("td").all_inner_texts()]
        rows.append((cells[0], int(cells[1]), cells[2], cells[3]))
    return rows


def test_a_lepra_game_from_day_1_to_the_archive_in_the_browser_L_JUDGE_4_L_NOM_1_L_VOTE_2_L_COURT_3_L_NIGHT(
        lepra, screenshots):
    stack, clock = lepra.stack, lepra.stack.clock
    clock.set(clock.next_day_at(9))
    lepra.set_up_with_services()
    # --- Day 1: the clock started from the staff console; judges elected in precincts (L-DAY-1, L-JUDGE) ------
    day_one = clock.at(clock.now(), 10)
    lepra.start_clock(day_one)
    clock.set(day_one + timedelta(seconds=1))
    lepra.wait_for_day(1)
    judges = lepra.elect_judges(day_one)
    # --- Night 1: godfathers elected on the night page (L-NIGHT-3) ---------------------------------------------
    clock.set(clock.at(day_one + timedelta(days=1), 0) + timedelta(seconds=1))
    lepra.wait_for_night(1)
    godfathers = lepra.elect_godfathers()
    morning = clock.at(day_one + timedelta(days=1), 10)
    clock.set(morning + timedelta(seconds=1))
    lepra.wait_for_day(2)
    slug = lepra.slug
    city1, city2 = lepra.city(1), lepra.city(2)
    plain1 = [r for r in lepra.residents(1) if not seats.is_judge(r)]
    a, b, voter1, voter2, voter3, voter4 = plain1[:6]
    plain2 = [r for r in lepra.residents(2) if not seats.is_judge(r)]
    c = plain2[0]

    # --- 10:00 Nominations in the personal inboxes (L-NOM-1) ----------------------------------------------------
    for nominator, nominee in ((voter1, a), (voter2, b), (voter3, a), (plain2[1], c)):
        person = lepra.of(nominator)
        open_from_my_inboxes(person, slug, lepra.inbox(LepraInboxKind.PERSONAL, resident=nominator))
        person.follow("main a.nominate-link")
        person.page.select_option("form.nominate-form select[name=nominee]", nominee.public_id)
        person.submit("form.nominate-form button:not([formaction])")
        assert person.text(".my-nomination") == f"{ru('Your nomination today')}: {nominee.name}"
    # A second nomination the same day is refused with the reason (L-NOM-1).
    person = lepra.of(voter1)
    person.page.select_option("form.nominate-form select[name=nominee]", b.public_id)
    person.submit("form.nominate-form button:not([formaction])", status=400)
    assert person.text("main .error") == ru("You have already nominated %(name)s today.", name=a.name)
    open_from_my_inboxes(person, slug, lepra.inbox(LepraInboxKind.PERSONAL, resident=voter1))
    screenshots.take(person.page, "personal-inbox")

    # --- 10:30 The Tribunes schedule voting: city 1 from the staff console, city 2 on its day page (L-DAY-3) -----
    clock.set(clock.at(morning, 10, 30))
    tribune1 = lepra.staff("tribune1", form_login=True)
    tribune1.open("/staff/")
    screenshots.take(tribune1.page, "tribune-dashboard")
    tribune1.follow(f"a[href='/staff/cities/{city1.public_id}/schedule-voting/']")
    tribune1.page.fill("input[name=opens_at]", wall(clock.at(morning, 18)))
    tribune1.page.fill("input[name=closes_at]", wall(clock.at(morning, 23)))
    tribune1.submit("input[type=submit].default")
    assert tribune1.flash() == [ru("Voting in %(city)s is scheduled from %(opens)s to %(closes)s (%(tz)s).",
                                   city=city1.name, opens=wall(clock.at(morning, 18)).replace("T", " "),
                                   closes=wall(clock.at(morning, 23)).replace("T", " "), tz="Europe/Moscow")]
    tribune2 = lepra.staff("tribune2")
    tribune2.open(f"/games/{slug}/cities/2/day/")
    tribune2.page.fill("form.schedule-form input[name=opens_at]", wall(clock.at(morning, 17)))
    tribune2.page.fill("form.schedule-form input[name=closes_at]", wall(clock.at(morning, 22)))
    tribune2.submit("form.schedule-form button[type=submit]")
    assert tribune2.flash() == [ru("Done.")]
    session1 = VotingSession.objects.get(city=city1, day=2)
    session2 = VotingSession.objects.get(city=city2, day=2)
    assert (session1.opens_at, session1.closes_at) == (clock.at(morning, 18), clock.at(morning, 23))
    assert (session2.opens_at, session2.closes_at) == (clock.at(morning, 17), clock.at(morning, 22))

    # --- 12:00 Tribune 1 opens voting now from the staff console (L-VOTE-1) -----------------------------------
    clock.set(clock.at(morning, 12))
    assert run_admin_action(tribune1, SESSIONS, city1.name, "open_voting") == [
        ru("Voting in %(city)s is open.", city=city1.name)]
    inbox_a = lepra.inbox(LepraInboxKind.VOTING, resident=a)
    inbox_b = lepra.inbox(LepraInboxKind.VOTING, resident=b)

    # --- Votes posted in the browser are counted; a repeated vote and flood are refused (L-VOTE-2/3/4) ----------
    post(lepra.of(voter1), inbox_a, "казнить")
    post(lepra.of(voter2), inbox_a, "Казнить!")
    post(lepra.of(voter3), inbox_a, "казнить")
    post(lepra.of(voter2), inbox_a, "не казнить")
    post(lepra.of(voter2), inbox_b, "казнить")
    post(lepra.of(voter4), inbox_b, "казнить")
    post(lepra.of(voter4), inbox_b, "не казнить")
    voter1_page = lepra.of(voter1)
    post(voter1_page, inbox_a, "казнить", status=400)
    assert voter1_page.text("main .error") == ru("You already vote here: this vote does not count again.")
    post(voter1_page, inbox_a, "Он точно мафия", status=400)
    assert voter1_page.text("main .error") == ru("Only «казнить» or «не казнить» can be posted here.")
    expected = [(a.name, 2, f"{voter1.name}, {voter3.name}", voter2.name),
                (b.name, 1, voter2.name, voter4.name)]
    open_from_my_inboxes(voter1_page, slug, inbox_a)
    assert tally(voter1_page) == expected
    assert voter1_page.text(".tally-box .leader") == f"{ru('Leader')}: {a.name}"
    screenshots.take(voter1_page.page, "voting-inbox-tally")
    # Every reader sees the same tally, the Tribune too; nothing was counted twice.
    tribune1.open(f"/games/{slug}/cities/1/day/")
    assert tally(tribune1) == expected
    assert Message.objects.filter(inbox=inbox_a).count() == 4

    # --- The mafia inbox of another city: absent from the lists and the 404 page (L-INBOX-4, L-STAFF-6) --------
    consigliere = lepra.staff("consigliere")
    secret = "План на ночь: начинаем с крайнего дома."
    mafia = {n: lepra.inbox(LepraInboxKind.MAFIA, city=lepra.city(n)) for n in (1, 2, 3)}
    post(consigliere, mafia[2], secret)
    mafioso1 = next(r for r in lepra.residents(1) if r.alignment == Alignment.MAFIA)
    honest1 = next(r for r in plain1 if r.alignment == Alignment.HONEST)
    for resident, own in ((mafioso1, mafia[1]), (honest1, None)):
        person = lepra.of(resident)
        person.open(f"/games/{slug}/inboxes/")
        listed = {href for href in person.links("main table.inboxes a").values()}
        assert listed >= {inbox_url(lepra.inbox(LepraInboxKind.PERSONAL, resident=resident))}
        assert {inbox_url(m) for m in mafia.values()} & listed == ({inbox_url(own)} if own else set())
        for m in mafia.values():
            if m != own:
                person.open(inbox_url(m), status=404)
                assert person.text("main h1") == ru("Not found")
                assert secret not in person.text("main") and m.title not in person.text("main")
    screenshots.take(lepra.of(honest1).page, "mafia-inbox-404", full_page=False)
    lepra.of(mafioso1).open(inbox_url(mafia[1]))
    lepra.of(mafioso1).open(inbox_url(mafia[2]), status=404)

    # --- 13:00 Tribune 1 closes voting from the staff console; the result is posted (L-VOTE-6) ------------------
    clock.set(clock.at(morning, 13))
    assert run_admin_action(tribune1, SESSIONS, city1.name, "close_voting") == [
        ru("Voting in %(city)s is closed.", city=city1.name)]
    screenshots.take(tribune1.page, "tribune-voting-sessions", full_page=False)
    city_inbox1 = lepra.inbox(LepraInboxKind.CITY, city=city1)
    voter1_page.open(inbox_url(city_inbox1))
    assert ru("Leader: %(leader)s.", leader=a.name) in voter1_page.text("main section.thread")
    voter1_page.open(inbox_url(inbox_a))  # killed at the close: readable, no form to post
    assert voter1_page.page.locator("form.post-form").count() == 0
    assert tally(voter1_page) == expected  # the result, as it stood at the close

    # --- The Arbiter puts the result before the court; two of three judges confirm (L-COURT-1..3) --------------
    arbiter = lepra.staff("arbiter", form_login=True)
    deadline = clock.at(morning, 15)
    assert run_admin_action(arbiter, SESSIONS, city1.name, "put_before_court", {"deadline": wall(deadline)}) == [
        ru("The result of %(city)s is before the court until %(time)s (%(tz)s).", city=city1.name,
           time=wall(deadline).replace("T", " "), tz="Europe/Moscow")]
    for number in (1, 2):
        judge = lepra.of(judges[number])
        judge.open(f"/games/{slug}/cities/1/day/")
        judge.page.check(f"form.court-vote input[name=choice][value='{a.public_id}']")
        judge.submit("form.court-vote button")
        judge.submit("form.confirm-form button[type=submit]")  # a judge's vote is final: the second step
    voter1_page.open(f"/games/{slug}/cities/1/day/")
    assert voter1_page.text(".decision") == f"{ru('Executed')}: {a.name} ({ru('Supreme Court')})"
    screenshots.take(voter1_page.page, "city-day-court")
    a.refresh_from_db()
    assert a.status == LifeStatus.DEAD
    voter1_page.open(inbox_url(city_inbox1))
    assert ru("The Supreme Court sentenced %(name)s. The daily post announces their side.", name=a.name) in voter1_page.text(
        "main section.thread")
    screenshots.take(voter1_page.page, "city-inbox")

    # --- 17:00 The Celery beat opens city 2's voting on the game clock; 22:00 it closes it (L-DAY-3) -------------
    ticks_before = len(stack.worker_dispatches())
    clock.set(clock.at(morning, 17) + timedelta(seconds=1))
    stack.wait_until(lambda: VotingSession.objects.get(pk=session2.pk).opened_at, "the beat to open city 2's voting")
    opened = GameEvent.objects.get(game=lepra.game(), kind="voting.opened", payload__session=session2.pk)
    assert opened.actor_id is None and opened.at >= session2.opens_at  # the site, at the due time
    # Run by the Celery worker (its log says the tick ran an event once the task has returned), not by the test.
    stack.wait_until(lambda: sum(stack.worker_dispatches()[ticks_before:]) >= 1, "the worker to log the tick")
    inbox_c = lepra.inbox(LepraInboxKind.VOTING, resident=c)
    voter_c = plain2[2]
    post(lepra.of(voter_c), inbox_c, "казнить")
    assert tally(lepra.of(voter_c)) == [(c.name, 1, voter_c.name, "")]
    clock.set(clock.at(morning, 22) + timedelta(seconds=1))
    output = stack.run_due_events()  # what is due now, without waiting for the next tick (the beat may win)
    assert re.fullmatch(r"Ran \d due event\(s\)\.\n", output), output
    stack.wait_until(lambda: VotingSession.objects.get(pk=session2.pk).closed_at, "city 2's voting to close")
    # The beat and the command raced over the same events: each ran exactly once, none failed (DESIGN "The clock").
    game = lepra.game()
    stack.wait_until(lambda: not ScheduledEvent.objects.filter(game=game, due_at__lte=clock.now(), done_at=None,
                                                               cancelled_at=None).exists(), "every due event to run")
    runs = Counter(GameEvent.objects.filter(game=game, kind__startswith="scheduler.", payload__event__isnull=False)
                   .values_list("kind", "payload__event"))
    done = ScheduledEvent.objects.filter(game=game, done_at__isnull=False)
    assert runs == Counter({(f"scheduler.{e.kind}", e.pk): 1 for e in done}), runs
    assert {e.kind for e in done} >= {"voting_open", "voting_close", "court_deadline", "election_open",
                                      "election_close", "day_start", "night_start", "night_end"}
    closed = VotingSession.objects.get(pk=session2.pk)
    assert closed.closes_at == clock.at(morning, 22) and closed.result["leader"] == str(c.pk)
    resident2 = lepra.of(voter_c)
    resident2.open(inbox_url(lepra.inbox(LepraInboxKind.CITY, city=city2)))
    assert ru("Leader: %(leader)s.", leader=c.name) in resident2.text("main section.thread")

    # The game page after the day: the executed of city 1 is marked, the day's posts are there.
    resident2.open(f"/games/{slug}/")
    executed = resident2.page.locator("aside ol.residents li", has_text=a.name)
    assert "alive" not in (executed.get_attribute("class") or "")
    screenshots.take(resident2.page, "game-page")
    assert Resident.objects.get(pk=c.pk).status == LifeStatus.ALIVE  # city 2's leader awaits the court

    # --- Night 2: a home kill, a touring kill and a commissar check on the night page (L-NIGHT) ----------------
    from rulesets.lepra.night.services import touring_city_for
    night_two = clock.at(morning + timedelta(days=1), 0) + timedelta(seconds=1)
    clock.set(night_two)
    lepra.wait_for_night(2)
    game = lepra.game()
    touring = touring_city_for(game, 2)
    assert touring is not None
    alive = {n: [r for r in lepra.residents(n) if r.status == LifeStatus.ALIVE and not seats.is_judge(r)
                 and r.alignment == Alignment.HONEST and not seats.is_commissar(r)] for n in (1, 2, 3)}
    home = 3 if touring.number != 3 else 2
    victim = alive[home][-1]
    away = next(n for n in (1, 2, 3) if n not in (touring.number, home))
    toured = alive[away][-1]
    night_url = f"/games/{slug}/night/"
    boss = lepra.of(godfathers[home])
    boss.open(night_url)
    panel = f"section.night-city[data-city='{home}']"
    boss.page.select_option(f"{panel} form.decide-kill select[name=target]", victim.public_id)
    boss.submit(f"{panel} form.decide-kill button")
    assert f"{ru('Kill')}: {victim.name}" in boss.text(panel)
    tourer = lepra.of(godfathers[touring.number])
    tourer.open(night_url)
    panel = f"section.night-city[data-city='{touring.number}']"
    tourer.page.select_option(f"{panel} form.decide-touring select[name=target]", toured.public_id)
    tourer.submit(f"{panel} form.decide-touring button")
    assert f"{ru('Touring')}: {toured.name}" in tourer.text(panel)
    screenshots.take(tourer.page, "night-page")
    commissar = next(r for n in (1, 2, 3) for r in lepra.residents(n) if seats.is_commissar(r)
                     and r.status == LifeStatus.ALIVE)
    suspect = godfathers[commissar.city.number]
    checker = lepra.of(commissar)
    checker.open(night_url)
    checker.page.select_option("section.checks form select[name=target]", suspect.public_id)
    checker.submit("section.checks form button")
    assert checker.texts("section.checks ul li") == [
        f"{ru('Night %(night)s: %(name)s', night=2, name=suspect.name)} — {ru('mafia')}"]

    # --- Morning of day 3: night end, the daily post drafted and published by the beat (L-NIGHT, L-POST-2) -----
    # The beat reaches the night's end first: the site drafts the post there, and the day start publishes it once
    # the Procurator's edit window (game.daily_post_edit_minutes) has passed since the draft.
    from cities.models import GameDay, PostKind, PublicPost
    night_two_plan = GameDay.objects.get(game=game, number=2)
    day_three = clock.at(morning + timedelta(days=1), 10)
    assert night_two_plan.night_ends_at + timedelta(minutes=game.daily_post_edit_minutes) <= day_three
    clock.set(night_two_plan.night_ends_at + timedelta(seconds=1))
    stack.wait_until(lambda: GameDay.objects.filter(game=game, number=3, post__isnull=False).exists(),
                     "the draft of the daily post of day 3")
    clock.set(day_three + timedelta(seconds=1))
    lepra.wait_for_day(3)
    post3 = stack.wait_until(lambda: PublicPost.objects.filter(game=game, kind=PostKind.DAILY,
                                                               published_at__isnull=False,
                                                               title=ru("Day %(day)d", day=3)).first(),
                             "the daily post of day 3")
    for resident in (victim, toured):
        resident.refresh_from_db()
        assert resident.status == LifeStatus.DEAD, resident.name
    spectator = Person(lepra.browser, stack, None, label="spectator")
    lepra.people["spectator"] = spectator
    spectator.open(f"/games/{slug}/")
    spectator.follow(f"main a[href='/games/{slug}/posts/{post3.public_id}/']")
    daily = spectator.text("main")

    def side_of(r):
        return ru("commissar") if seats.is_commissar(r) else ru("mafioso" if r.alignment == Alignment.MAFIA else "honest")

    # The execution of day 2 with the alignment (L-DEATH-2) and both night victims, the touring one marked.
    assert ru("Executed: %(name)s (%(side)s).", name=a.name, side=side_of(a)) in daily, daily
    assert f"{victim.name} ({victim.city.name}): {side_of(victim)}" in daily, daily
    assert (f"{toured.name} ({toured.city.name}): {side_of(toured)}; "
            + ru("killed by the touring mafia of %(city)s", city=touring.name)) in daily, daily
    screenshots.take(spectator.page, "daily-post")

    # --- The Procurator ends the game early (L-WIN-3); a logged-out spectator reads the archive (L-ARCH) -------
    proc = lepra.procurator
    proc.open(f"/games/{slug}/end/")
    proc.page.fill("main form [name=reason]", "Конец весенней партии: проверка архива.")
    proc.submit("main form button[type=submit]")
    proc.submit("main form.confirm-form button[type=submit]")  # the second step: the game cannot be resumed
    stack.wait_until(lambda: lepra.game().status == "finished", "the game to end")
    spectator.open(f"/games/{slug}/archive/")
    assert lepra.title in spectator.text("main")
    spectator.open(f"/games/{slug}/archive/timeline/")
    timeline = spectator.text("main")
    assert a.name in timeline and victim.name in timeline and toured.name in timeline, timeline[:3000]
    screenshots.take(spectator.page, "archive-timeline", full_page=False)
    spectator.open(f"/games/{slug}/archive/votes/")
    assert a.name in spectator.text("main")
    screenshots.take(spectator.page, "archive-vote-chart")
