"""A whole M21 game in a real browser (RULES.md Part 2), every phase moved by the Celery beat on the game clock the
test sets (``stack.GameClock``): the host creates the game and sets it up on the M21 pages (M-SETUP-1/4), ten
players sign up on the game page, the roles are dealt (the role PM); day 1 ends by the hammer of ``##VOTE``/``##END``
posts in the game thread (M-VOTE-1..3); night 1 the mafia vote a kill with ``kill name`` lines in their thread
(M-MAFIA-1), the cop investigates, the hooker blocks, the coroner protects on the night page (M-NIGHT-1); day 2
shows the morning post and the private results (M-NIGHT-4), the count on the game page, and ends at its deadline
with a tie that the Judge's casting vote decides (M-VOTE-4, M-ROLE judge); night 2's kill, day 3's hammer, and the
town wins (M-WIN-1); every deadline falls on the 22:00 phase shift, also the night after the hammer (M-SETUP-2); the
hammer's post flips the imprisoned (M-VOTE-6); a logged-out visitor follows the public game thread during the game
(M-SETUP-6); a logged-out spectator checks the deal on the game page and reads the archive: roles, the
vote history, the receipts, every night's trace (L-ARCH-1..3).

Setup (10): Judge, Cop, Coroner, 4 citizens; Godfather, Hooker, goon. The deal is the site's (random): the test reads
who holds which seat from the database and plays the same game whatever the deal.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model

from cities.models import GameStatus, LifeStatus, PublicPost, Resident, ScheduledEvent
from inboxes.models import Inbox, Message
from rulesets.m21.kinds import M21InboxKind
from rulesets.m21.models import DayStatus, M21Day, M21PostReceipt, M21Seat
from rulesets.m21.night_models import M21Night

from .pages import Person, squash

# xdist_group: all tests that start processes run on one worker, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("processes")]

PASSWORD = "e2e-Secret-2027!"
LONDON = ZoneInfo("Europe/London")
SLUG, TITLE = "m21-prohibition", "Prohibition Wars"
PLAYERS = ["Ada", "Basil", "Clara", "Dorian", "Edith", "Felix", "Greta", "Hugo", "Iris", "Jonah"]
SETUP = {"judge": 1, "cop": 1, "coroner": 1, "citizen": 4, "godfather": 1, "hooker": 1, "goon": 1}


def wall(moment: datetime) -> str:
    """``moment`` as the deal form's datetime-local field takes it, in London."""
    return moment.astimezone(LONDON).strftime("%Y-%m-%dT%H:%M")


class M21Table:
    """The M21 game of the test and its people, each in their own browser context."""

    def __init__(self, stack, browser, screenshots):
        self.stack, self.browser, self.screenshots = stack, browser, screenshots
        self.people: dict[str, Person] = {}
        make = get_user_model().objects.create_user
        self.host_user = make("m21-host", "m21-host@e2e.invalid", PASSWORD, display_name="Host_Morgan")
        self.users = {name: make(f"m21-{name.lower()}", f"{name.lower()}@e2e.invalid", PASSWORD, display_name=name)
                      for name in PLAYERS}
        self.host = Person(browser, stack, self.host_user)
        self.host.log_in(PASSWORD)

    def of(self, name: str) -> Person:
        if name not in self.people:
            person = Person(self.browser, self.stack, self.users[name])
            person.log_in_with_session()
            self.people[name] = person
        return self.people[name]

    def role(self, key: str) -> str:
        return M21Seat.objects.get(resident__game__slug=SLUG, role=key).resident.name

    def roles(self, key: str) -> list[str]:
        return sorted(M21Seat.objects.filter(resident__game__slug=SLUG, role=key).values_list("resident__name",
                                                                                              flat=True))

    def thread(self, kind: str = M21InboxKind.GAME_THREAD) -> Inbox:
        return Inbox.objects.get(game__slug=SLUG, kind=kind)

    def post(self, name: str, text: str, kind: str = M21InboxKind.GAME_THREAD) -> Person:
        """``name`` opens the thread of ``kind`` and posts ``text`` through its form."""
        person = self.of(name)
        person.open(f"/inboxes/{self.thread(kind).public_id}/")
        person.post_in_thread(text)
        return person

    def due(self, condition, what: str):
        """Wait for the beat to run what ``condition`` waits for; on a machine too loaded for the beat's
        one-second ticks (they expire in the broker), run ``manage.py run_due_events`` once, the same dispatch at
        the same game time, and wait again. Returns the condition's value."""
        try:
            return self.stack.wait_until(condition, what, timeout=20)
        except pytest.fail.Exception:
            self.stack.run_due_events()
            return self.stack.wait_until(condition, f"{what} (after run_due_events: {self.stack.dispatch_runs[-1]})")

    def day(self, number: int) -> M21Day | None:
        return M21Day.objects.filter(game__slug=SLUG, number=number).first()

    def wait_for_day(self, number: int) -> M21Day:
        return self.due(lambda: self.day(number), f"the beat to start day {number}")

    def wait_for_night(self, number: int) -> None:
        self.due(lambda: ScheduledEvent.objects.filter(
            game__slug=SLUG, kind="m21_night_end", payload__night=number).exists(), f"night {number} to start")

    def night_end(self, number: int) -> datetime:
        return ScheduledEvent.objects.get(game__slug=SLUG, kind="m21_night_end", payload__night=number).due_at

    def act(self, name: str, option: str, target: str) -> Person:
        """``name`` submits ``option`` on ``target`` on the night page; the page lists it as standing."""
        person = self.of(name)
        person.open(f"/games/{SLUG}/m21/night/")
        person.page.select_option("section.night-actions form.action-form select[name=option]", option)
        person.page.select_option("section.night-actions form.action-form select[name=target]", target)
        person.submit("section.night-actions form.action-form button[type=submit]")
        assert target in person.text("ul.standing li[data-standing='role']"), person.text("main")
        return person

    def role_pm_text(self, name: str) -> str:
        person = self.of(name)
        pm = M21Seat.objects.get(resident__game__slug=SLUG, resident__name=name).role_pm
        person.open(f"/inboxes/{pm.public_id}/")
        return person.text("main")

    def count_rows(self, person: Person) -> dict[str, tuple[int, str, set[str]]]:
        """The vote count on the game page: target -> (votes, L-n, the voters)."""
        rows = {}
        for row in person.page.locator("table.vote-count tbody tr").all():
            cells = [squash(c) for c in row.locator("td").all_inner_texts()]
            if len(cells) == 4:
                rows[cells[0]] = (int(cells[1]), cells[2], set(cells[3].split(", ")))
        return rows

    def close(self) -> None:
        for person in [self.host, *self.people.values()]:
            person.close()


@pytest.fixture
def m21(stack, browser, screenshots, transactional_db):
    from tests.e2e.conftest import CLOCK_START

    ScheduledEvent.objects.filter(done_at__isnull=True, cancelled_at__isnull=True).update(cancelled_at=CLOCK_START)
    table = M21Table(stack, browser, screenshots)
    yield table
    table.close()


def test_an_m21_game_from_sign_up_to_victory_in_the_browser_M_VOTE_3_M_MAFIA_1_M_NIGHT_1_M_ROLE_M_WIN_1(
        m21, screenshots):
    stack, clock, host = m21.stack, m21.stack.clock, m21.host
    morning = clock.next_day_at(9, zone="Europe/London")
    clock.set(morning)
    day1 = datetime(morning.year, morning.month, morning.day, 22, 0, tzinfo=LONDON).astimezone(UTC)

    # --- Setup: the host creates the game; ten players sign up on the game page (M-SETUP-1/4) ------------------
    host.open("/new-game/m21/")
    host.page.fill("#id_title", TITLE)
    host.page.fill("#id_slug", SLUG)
    host.submit("main form button[type=submit]")
    assert host.page.url.endswith(f"/games/{SLUG}/m21/setup/")
    for name in PLAYERS:
        person = m21.of(name)
        person.open(f"/games/{SLUG}/")
        person.submit("form.signup button[type=submit]")
        assert person.page.locator("form.signup").get_attribute("action").endswith("/signup/withdraw/")
    host.open(f"/games/{SLUG}/m21/setup/")
    assert host.texts("main section ol li") == PLAYERS
    host.submit(f"form[action='/games/{SLUG}/m21/setup/close-signups/'] button")
    for key, count in SETUP.items():
        host.page.fill(f"#id_role_{key}", str(count))
    host.submit(f"form[action='/games/{SLUG}/m21/setup/table/'] button")
    assert host.flash() == ["The setup is saved."], host.flash()
    host.page.fill("#id_first_day_starts_at", wall(day1))
    host.submit(f"form[action='/games/{SLUG}/m21/setup/deal/'] button")
    assert host.flash() == ["The roles are dealt; the setup post is published."], host.flash()
    judge, cop, coroner = m21.role("judge"), m21.role("cop"), m21.role("coroner")
    godfather, hooker, goon = m21.role("godfather"), m21.role("hooker"), m21.role("goon")
    citizen_a, citizen_b, citizen_c, citizen_d = m21.roles("citizen")

    # Each player's role PM names their role; the mafia's names their partners (M-SETUP-1).
    assert "Your role: Cop" in m21.role_pm_text(cop)
    screenshots.take(m21.of(cop).page, "m21-role-pm")
    hooker_pm = m21.role_pm_text(hooker)
    assert "Your role: Hooker" in hooker_pm and godfather in hooker_pm and goon in hooker_pm

    # --- Day 1: six ##VOTE/##END posts on the goon: the sixth is the hammer of ten living (M-VOTE-3) -------------
    clock.set(day1 + timedelta(seconds=1))
    day = m21.wait_for_day(1)
    voters = [cop, coroner, citizen_a, citizen_b, citizen_c, judge]
    m21.post(godfather, f"I think it is {citizen_d}.\n##VOTE {citizen_d}")
    m21.post(citizen_d, "##END")  # refused: no vote in place (M-VOTE-7)
    refused = Message.objects.filter(inbox=m21.thread(), author_resident__name=citizen_d).latest("received_at")
    assert refused.m21_receipt.lines[0]["accepted"] is False
    for name in voters[:5]:
        m21.post(name, f"##VOTE {goon.lower()[:3]}\n##END")  # an abbreviation in any case (M-VOTE-1)
    player = m21.of(judge)
    player.open(f"/games/{SLUG}/m21/")
    assert m21.count_rows(player) == {goon: (5, "L-1", {f"{n} (END)" for n in voters[:5]}), citizen_d: (1, "L-5", {godfather})}
    # The thread's tools: the quote link puts a post in the box as a quote, which carries no command (M-VOTE-1);
    # ISO shows one player's posts with their receipts.
    quoter = m21.of(citizen_d)
    quoter.open(f"/inboxes/{m21.thread().public_id}/")
    quoter.page.locator("article", has_text=f"I think it is {citizen_d}.").locator("a.quote-link").click()
    quoted = quoter.page.input_value("form.post-form textarea[name=text]")
    assert quoted.startswith(f"> **{godfather}** wrote:") and f"> ##VOTE {citizen_d}" in quoted, quoted
    quoter.post_in_thread(quoted + "Not me, surely.")
    reply = Message.objects.filter(inbox=m21.thread(), author_resident__name=citizen_d).latest("received_at")
    assert not M21PostReceipt.objects.filter(message=reply).exists()
    player.open(f"/games/{SLUG}/m21/iso/")
    player.page.get_by_label(godfather, exact=True).check()
    player.page.get_by_role("button", name="Show their posts").click()
    assert f"I think it is {citizen_d}." in player.text("main") and f"{godfather} votes {citizen_d}." in player.text("main")
    assert "Not me, surely." not in player.text("main")
    last = m21.post(judge, f"Enough.\n##VOTE {goon}\n##END")
    day.refresh_from_db()
    assert (day.status, day.how, day.imprisoned.name) == (DayStatus.DECIDED, "end_hammer", goon)
    goon_role = "Mafia goon"
    assert f"**{goon} is imprisoned.** They were the {goon_role} (Mafia)." in Message.objects.filter(
        inbox=m21.thread(), body__startswith="**Day 1 is over:** the hammer fell.").get().body
    assert f"{goon} is imprisoned. They were the {goon_role} (Mafia)." in last.text("main")  # the flip (M-VOTE-6)
    # The phase shift (M-SETUP-2): the hammer fell seconds after 22:00; the night ends at the next 22:00 London,
    # not 24 h after the hammer, and the game thread says so.
    night1_end = datetime.combine((day1 + timedelta(days=1)).astimezone(LONDON).date(), day1.astimezone(LONDON).time(),
                                  tzinfo=LONDON).astimezone(UTC)
    assert m21.night_end(1) == night1_end
    # A logged-out visitor follows the public game thread during the game (M-SETUP-6): the hammer and the flip,
    # no post form, and nothing else of the game opens.
    visitor = Person(m21.browser, stack, None, label="visitor")
    visitor.open(f"/games/{SLUG}/m21/")
    visitor.follow(f"main a[href='/inboxes/{m21.thread().public_id}/']")
    assert f"{goon} is imprisoned. They were the {goon_role} (Mafia)." in visitor.text("main")
    assert visitor.page.locator("form.post-form").count() == 0
    visitor.open(f"/inboxes/{m21.thread(M21InboxKind.MAFIA_THREAD).public_id}/", status=404)
    visitor.close()
    # The imprisoned can no longer post in the game thread (M-VOTE-6).
    prisoner = m21.of(goon)
    prisoner.open(f"/inboxes/{m21.thread().public_id}/")
    assert prisoner.page.locator("form.post-form").count() == 0

    # --- Night 1: the mafia's kill vote in their thread; cop, hooker, coroner on the night page (M-NIGHT-1) ------
    m21.wait_for_night(1)
    mafia_page = m21.post(godfather, f"Let us go for {citizen_a}.\nkill {citizen_a}", M21InboxKind.MAFIA_THREAD)
    m21.post(hooker, f"**kill {citizen_a.lower()}**", M21InboxKind.MAFIA_THREAD)
    mafia_page.open(f"/inboxes/{m21.thread(M21InboxKind.MAFIA_THREAD).public_id}/")
    assert f"{hooker} votes to kill {citizen_a}." in mafia_page.text("main")
    m21.act(hooker, "roleblock", judge)
    m21.act(coroner, "protect", citizen_a)
    cop_page = m21.act(cop, "investigate", hooker)
    screenshots.take(cop_page.page, "m21-night-page")
    # Nobody else sees a submission: the cop's night page shows no mafia tally, the judge's none of the actions.
    assert cop_page.page.locator("section.mafia-night").count() == 0
    judge_page = m21.of(judge)
    judge_page.open(f"/games/{SLUG}/m21/night/")
    assert hooker not in judge_page.text("section.night-actions")

    # --- Day 2: the morning post and the private results (M-NIGHT-4) -------------------------------------------
    clock.set(m21.night_end(1) + timedelta(seconds=1))
    day = m21.wait_for_day(2)
    assert day.deadline.astimezone(LONDON).strftime("%H:%M") == "22:00"  # on the phase shift (M-SETUP-2)
    night = M21Night.objects.get(game__slug=SLUG, number=1)
    assert night.outcome["deaths"] == [] and night.outcome["saved"] == [citizen_a]
    assert any(e["event"] == "roleblocked" and e["target"] == judge
               for s in night.outcome["steps"] for e in s["events"])
    morning_post = PublicPost.objects.get(game__slug=SLUG, title="Morning after night 1")
    reader = m21.of(citizen_c)
    reader.open(f"/games/{SLUG}/posts/{morning_post.public_id}/")
    assert "Nobody died in the night." in reader.text("main")
    assert f"Night 1. Your investigation of {hooker}: GUILTY." in m21.role_pm_text(cop)
    assert "Night 1. Someone attacked you in the night, but you were saved." in m21.role_pm_text(citizen_a)
    assert "Night 1." not in m21.role_pm_text(citizen_b)

    # Day 2's votes: 3 on the hooker, 3 on a citizen; the judge and a citizen do not vote (M-VOTE-4, M-VOTE-5).
    for name, target in ((cop, hooker), (coroner, hooker), (citizen_a, hooker),
                         (godfather, citizen_b), (hooker, citizen_b), (citizen_c, citizen_b)):
        m21.post(name, f"##VOTE {target}")
    m21.post(citizen_d, "I am not sure yet.")
    viewer = m21.of(citizen_d)
    viewer.open(f"/games/{SLUG}/m21/")
    assert m21.count_rows(viewer) == {hooker: (3, "L-2", {cop, coroner, citizen_a}),
                                      citizen_b: (3, "L-2", {godfather, hooker, citizen_c})}
    assert "Not voting" in viewer.text("#vote-count")
    screenshots.take(viewer.page, "m21-game-count")

    # --- The deadline: a tie; the Judge's casting vote on the game page decides it (M-ROLE judge) ---------------
    clock.set(day.deadline + timedelta(seconds=1))
    m21.due(lambda: M21Day.objects.get(pk=day.pk).status == DayStatus.AWAITING_CASTING_VOTE,
            "the deadline to close day 2 with a tie")
    judge_page.open(f"/games/{SLUG}/m21/")
    assert "tied: waiting for the Judge" in judge_page.text("#vote-count")
    judge_page.page.select_option("section.judge-controls select[name=target]", label=hooker)
    judge_page.submit("section.judge-controls form[action$='/judge/cast/'] button")
    day.refresh_from_db()
    assert (day.status, day.how, day.imprisoned.name) == (DayStatus.DECIDED, "deadline", hooker)
    assert "The Judge's casting vote decided the tie." in Message.objects.filter(
        inbox=m21.thread(), body__startswith="**Day 2 is over:** the deadline passed.").get().body

    # --- Night 2: the godfather's kill; day 3's morning post names the dead with their role ---------------------
    m21.wait_for_night(2)
    m21.post(godfather, f"kill {citizen_b}", M21InboxKind.MAFIA_THREAD)
    clock.set(m21.night_end(2) + timedelta(seconds=1))
    m21.wait_for_day(3)
    assert Resident.objects.get(game__slug=SLUG, name=citizen_b).status == LifeStatus.DEAD
    morning_post = PublicPost.objects.get(game__slug=SLUG, title="Morning after night 2")
    reader.open(f"/games/{SLUG}/posts/{morning_post.public_id}/")
    assert citizen_b in reader.text("main") and "Law-abiding citizen" in reader.text("main")
    screenshots.take(reader.page, "m21-morning-post")

    # --- Day 3: four of six living hammer the godfather; the town wins (M-VOTE-3, M-WIN-1) ----------------------
    for name in (cop, coroner, citizen_c, citizen_d):
        m21.post(name, f"##VOTE {godfather}\n##END")
    stack.wait_until(lambda: m21.day(3).status == DayStatus.DECIDED, "the hammer to decide day 3")
    game = stack.wait_until(lambda: (g := Resident.objects.get(game__slug=SLUG, name=godfather).game)
                            .status == GameStatus.FINISHED and g, "the game to end")
    assert game.status == GameStatus.FINISHED
    end = Message.objects.get(inbox=m21.thread(), body__startswith="**The game is over: the town wins.**").body
    assert f"- {godfather}: Godfather" in end and f"- {cop}: Cop" in end

    # --- After the game: a logged-out spectator checks the deal and reads the archive (L-ARCH-1..3, M-SETUP-1) ---
    spectator = Person(m21.browser, stack, None, label="spectator")
    spectator.open(f"/games/{SLUG}/m21/")
    assert "The deal checks out" in spectator.text("section.m21-deal")
    spectator.open(f"/games/{SLUG}/archive/")
    section = "section.ruleset-section[data-section='{}']".format
    cast = {row.get_attribute("data-player"): squash(row.locator("td").nth(2).inner_text())
            for row in spectator.page.locator(f"{section('cast')} table.m21-cast tr[data-player]").all()}
    assert cast == {name: {"judge": "Judge", "cop": "Cop", "coroner": "Coroner", "citizen": "Law-abiding citizen",
                           "godfather": "Godfather", "hooker": "Hooker", "goon": "Mafia goon"}[
                               M21Seat.objects.get(resident__game__slug=SLUG, resident__name=name).role]
                    for name in PLAYERS}
    # The vote history: day 2's final count (3 : 3) and the Judge's decision; day 1's hammer.
    day2 = f"{section('votes')} section.m21-vote-day[data-day='2']"
    assert {row.get_attribute("data-target"): row.get_attribute("data-count")
            for row in spectator.page.locator(f"{day2} tr[data-target]").all()} == {hooker: "3", citizen_b: "3"}
    assert hooker in spectator.text(f"{day2} .m21-day-result")
    assert goon in spectator.text(f"{section('votes')} section.m21-vote-day[data-day='1'] .m21-day-result")
    # The game thread's receipts: the refused ##END of day 1 is listed with its reason.
    assert spectator.page.locator(f"{section('receipts')} section.m21-receipts[data-day='1'] .refused").count() >= 1
    # Night 1's trace: the block, the protection that saved the mafia's target, the cop's result.
    night1 = f"{section('nights')} section.m21-night[data-night='1']"
    assert f"Saved: {citizen_a}." in spectator.text(night1)
    assert f"{hooker} → {judge}" in spectator.texts(f"{night1} ul.visits li")
    assert f"{coroner} → {citizen_a}" in spectator.texts(f"{night1} ul.visits li")
    assert "guilty" in spectator.text(f"{night1} table.results")
    assert spectator.page.locator(f"{section('nights')} section.m21-night[data-night='2'] "
                                  f".death[data-player='{citizen_b}']").count() == 1
    assert spectator.page.locator(f"{section('deal')} .deal-verified").get_attribute("data-verified") == "yes"
    spectator.page.locator(f"{section('votes')} section.m21-vote-day[data-day='2']").scroll_into_view_if_needed()
    screenshots.take(spectator.page, "m21-archive", full_page=False)
    spectator.close()
