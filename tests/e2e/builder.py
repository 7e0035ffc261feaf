"""A Lepra game built through the browser (issue 9): the Procurator's pages, the players' sign-ups, the staff
console. Each step is a method that drives the pages as a person would and checks the page it lands on; the test
reads the database only to know which account holds which seat, and to check results.

The setup is proven in the browser by ``test_setup_flow.py``; the game test starts from ``set_up_with_services``
and plays on in the browser: ``start_clock`` (the Procurator's clock page), ``elect_judges`` (day 1: the Arbiter's
console, proposals on the day page, «Он - Ганди!» in precincts, the beat opening and closing the elections) and
``elect_godfathers`` (night 1 on the night page); the later phases are steps of the test itself. Each step moves
the game clock with ``self.stack.clock.set(...)`` and waits for the beat with ``self.stack.wait_until`` (or runs
``self.stack.run_due_events()``), drives pages through ``Person`` and the staff console through
``pages.run_admin_action``, and saves pictures with ``self.screenshots.take(page, name)``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model

from cities import recruitment_services
from cities import services as city_services
from cities.models import Alignment, City, Game, GameStatus, Resident
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import CommissarOffer, MafiaDraw
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra import seats
from rulesets.lepra.setup import services as role_services

from .pages import Person, ru, run_admin_action, squash

PASSWORD = "e2e-Secret-2027!"
CITY_NAMES = ["Лисичкино", "Кукуево", "Бобровка"]
CITY_SIZE = 8
#: The players' names (display names, so resident names): Cyrillic, none a substring of another.
PLAYER_NAMES = ["Акула", "Барсук", "Волк", "Гусь", "Дятел", "Енот", "Жаворонок", "Зубр", "Ибис", "Йети", "Кот",
                "Лось", "Медведь", "Нерпа", "Окунь", "Пингвин", "Рысь", "Сова", "Тюлень", "Удав", "Филин", "Хорёк",
                "Цапля", "Чайка"]
STAFF_NAMES = {"procurator": "Прокурор_Ирина", "tribune1": "Трибун_Гай", "tribune2": "Трибун_Марк",
               "tribune3": "Трибун_Луций", "arbiter": "Арбитр_Соломон", "consigliere": "Консильери_Тессио"}
#: The player who creates their account on the sign-up page (the others' accounts are made by the test).
SIGNUP_PLAYER = 0

def wall(moment: datetime, zone: str = "Europe/Moscow") -> str:
    """``moment`` as a datetime-local field takes it, in the game's zone."""
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M")


def staff_username(key: str) -> str:
    """The account name of a staff member by key of ``STAFF_NAMES``."""
    return f"staff-{key}"


assert all(a == b or a not in b for a in PLAYER_NAMES for b in PLAYER_NAMES), "a name inside another"
assert len(PLAYER_NAMES) == len(CITY_NAMES) * CITY_SIZE


@dataclass
class BrowserGame:
    """One Lepra game and its people, each in their own browser context."""

    stack: object
    browser: object
    screenshots: object
    slug: str = "lepra-spring"
    title: str = "Лепра: весенняя партия"
    users: dict[str, object] = field(default_factory=dict)  # username -> User
    people: dict[str, Person] = field(default_factory=dict)  # username -> Person (opened lazily)

    # People ----------------------------------------------------------------------------------------------------

    def person(self, username: str, *, form_login: bool = False) -> Person:
        """The browser of account ``username``, logged in (through the login form when ``form_login``)."""
        if username not in self.people:
            person = Person(self.browser, self.stack, self.users[username])
            if form_login:
                person.log_in(PASSWORD)
            else:
                person.log_in_with_session()
            self.people[username] = person
        return self.people[username]

    def of(self, resident: Resident) -> Person:
        """The browser of the player holding ``resident``'s seat."""
        return self.person(resident.user.username)

    def staff(self, key: str, *, form_login: bool = False) -> Person:
        """The browser of a staff member by key of ``STAFF_NAMES`` (``"tribune1"``, ``"arbiter"``, ...)."""
        return self.person(staff_username(key), form_login=form_login)

    @property
    def procurator(self) -> Person:
        """The Procurator's browser, logged in through the login form."""
        return self.staff("procurator", form_login=True)

    def player_usernames(self) -> list[str]:
        return [f"player{i:02d}" for i in range(1, len(PLAYER_NAMES) + 1)]

    def game(self) -> Game:
        return Game.objects.get(slug=self.slug)

    def city(self, number: int) -> City:
        return City.objects.get(game__slug=self.slug, number=number)

    def residents(self, number: int) -> list[Resident]:
        """The residents of city ``number`` by name."""
        return list(Resident.objects.filter(city=self.city(number)).select_related("user", "city").order_by("name"))

    def inbox(self, kind: str, **filters) -> Inbox:
        """The latest inbox of ``kind`` matching ``filters`` (a city inbox is renewed every day, L-INBOX-1)."""
        inbox = Inbox.objects.filter(game__slug=self.slug, kind=kind, **filters).order_by("-pk").first()
        assert inbox is not None, f"no {kind} inbox with {filters}"
        return inbox

    def close(self) -> None:
        for person in self.people.values():
            person.close()

    # Accounts --------------------------------------------------------------------------------------------------

    def create_accounts(self) -> None:
        """The staff's and the players' accounts; player 1 signs up on the site's sign-up page."""
        make = get_user_model().objects.create_user
        for key, display_name in STAFF_NAMES.items():
            username = staff_username(key)
            self.users[username] = make(username, f"{username}@e2e.invalid", PASSWORD, display_name=display_name)
        for i, (username, name) in enumerate(zip(self.player_usernames(), PLAYER_NAMES, strict=True)):
            if i == SIGNUP_PLAYER:
                self.sign_up_for_an_account(username, name)
            else:
                self.users[username] = make(username, f"{username}@e2e.invalid", PASSWORD, display_name=name)

    def sign_up_for_an_account(self, username: str, display_name: str) -> Person:
        """A newcomer creates an account on /accounts/signup/ (django-allauth) and lands logged in."""
        person = Person(self.browser, self.stack, None, label=username)
        person.open("/accounts/signup/")
        for name, value in (("email", f"{username}@e2e.invalid"), ("username", username), ("password1", PASSWORD),
                            ("password2", PASSWORD), ("display_name", display_name)):
            person.page.fill(f"main form [name={name}]", value)
        person.submit("main form button[type=submit]")
        assert person.text("header .who") == display_name
        user = get_user_model().objects.get(username=username)
        person.user = user
        self.users[username] = user
        self.people[username] = person
        return person

    # The Procurator's setup ------------------------------------------------------------------------------------

    def setup_url(self, step: str = "") -> str:
        return f"/games/{self.slug}/setup/" + (f"{step}/" if step else "")

    def create_game(self) -> None:
        """The Procurator logs in, opens "New game" from the home page, creates the game and publishes the
        recruitment post (L-STAFF-1, L-POST-1)."""
        proc = self.procurator
        proc.open("/")
        proc.follow("main a[href='/new-game/']")
        proc.page.fill("#id_title", self.title)
        proc.page.fill("#id_slug", self.slug)
        proc.page.fill("#id_rules_text", "Классическая Лепра: три города по восемь жителей, двое мафиози в каждом.")
        proc.page.fill("#id_time_zone", "Europe/Moscow")
        proc.page.fill("#id_city_size", str(CITY_SIZE))
        proc.submit("main form button[type=submit]")
        assert proc.page.url.endswith(self.setup_url())
        proc.submit(f"form[action='{self.setup_url('recruitment-post')}'] button")
        assert self.title in proc.text("#step-post")

    def players_sign_up(self) -> None:
        """Every player opens the game page and clicks "Sign up to play"; the page then says they are signed up."""
        for username in self.player_usernames():
            person = self.person(username)
            person.open(f"/games/{self.slug}/")
            person.submit("form.signup button[type=submit]")
            assert ru("You are signed up.") in person.flash(), person.flash()
            assert person.page.locator("form.signup").get_attribute("action") == f"/games/{self.slug}/signup/withdraw/"

    def form_cities(self) -> None:
        """The Procurator closes the sign-ups and forms the cities at random, named (L-CITY)."""
        proc = self.procurator
        proc.open(self.setup_url())
        proc.submit(f"form[action='{self.setup_url('close-signups')}'] button")
        proc.page.fill("textarea[name=names]", "\n".join(CITY_NAMES))
        proc.submit(f"form[action='{self.setup_url('form-cities')}'] button")

    def appoint_staff(self) -> None:
        """The Procurator appoints a Tribune per city, the Arbiter and the Consigliere by account name."""
        proc = self.procurator
        form = f"form[action='{self.setup_url('appoint')}']"
        for kind, key, city in ([("tribune", f"tribune{n}", name) for n, name in enumerate(CITY_NAMES, 1)]
                                + [("arbiter", "arbiter", None), ("consigliere", "consigliere", None)]):
            proc.page.select_option(f"{form} select[name=kind]", kind)
            proc.page.fill(f"{form} input[name=username]", staff_username(key))
            proc.page.select_option(f"{form} select[name=city]", label=city or "—")
            proc.submit(f"{form} button")

    def publish_lists_and_draw(self) -> None:
        """The Procurator publishes the city lists, starts the mafia draw (the commitment is published first,
        L-ASSIGN-3) and lets the site draw the numbers."""
        proc = self.procurator
        proc.submit(f"form[action='{self.setup_url('publish-lists')}'] button")
        proc.submit(f"form[action='{self.setup_url('start-draw')}'] button")
        proc.submit(f"form[action='{self.setup_url('site-numbers')}'] button")

    def commissar_offers(self) -> list[CommissarOffer]:
        """Per city, the Procurator makes offers until an honest candidate accepts (L-COMM): each candidate opens
        their offer page; a mafioso has no "accept" button and declines. Returns the offers."""
        proc = self.procurator
        for number in range(1, len(CITY_NAMES) + 1):
            while True:
                proc.open(self.setup_url())
                button = proc.page.locator(f"tr[data-city='{number}'] form button")
                if button.count() == 0:
                    break
                proc.submit(f"tr[data-city='{number}'] form button")
                offer = (CommissarOffer.objects.filter(city__game__slug=self.slug, city__number=number)
                         .order_by("-number").select_related("candidate__user").first())
                candidate = self.of(offer.candidate)
                candidate.open(f"/games/{self.slug}/offers/{offer.public_id}/")
                accept = candidate.page.locator("main form input[name=answer][value=accept]")
                if offer.candidate.alignment == Alignment.MAFIA:
                    assert accept.count() == 0  # L-COMM-1: a mafioso cannot accept
                    candidate.submit("main form.stacked button[type=submit]")
                    assert ru("You declined.") in candidate.text()
                else:
                    candidate.submit("main form:has(input[value=accept]) button")
                    assert ru("You accepted: you are the commissar.") in candidate.text()
                    break
        return list(CommissarOffer.objects.filter(city__game__slug=self.slug).select_related("candidate", "city")
                    .order_by("city__number", "number"))

    def set_up_in_the_browser(self) -> None:
        """Everything from the accounts to the commissars, in the browser."""
        self.create_accounts()
        self.create_game()
        self.players_sign_up()
        self.form_cities()
        self.appoint_staff()
        self.publish_lists_and_draw()
        self.commissar_offers()

    def set_up_with_services(self, *, seed: int = 20270301) -> None:
        """The same setup as ``set_up_in_the_browser`` through the services, in a second (seeded draws): for the
        tests of later phases, once the browser path is proven by ``test_setup_flow.py``."""
        rng = random.Random(seed)
        clock = self.stack.clock
        make = get_user_model().objects.create_user
        for key, display_name in STAFF_NAMES.items():
            username = staff_username(key)
            self.users[username] = make(username, f"{username}@e2e.invalid", PASSWORD, display_name=display_name)
        for username, name in zip(self.player_usernames(), PLAYER_NAMES, strict=True):
            self.users[username] = make(username, f"{username}@e2e.invalid", PASSWORD, display_name=name)
        proc = self.users[staff_username("procurator")]
        game = city_services.do_create_game(title=self.title, slug=self.slug, acting_user=proc, city_size=CITY_SIZE,
                                            time_zone="Europe/Moscow", rules_text="Классическая Лепра.",
                                            now=clock.now())
        recruitment_services.do_publish_recruitment_post(game, acting_user=proc, now=clock.now())
        for username in self.player_usernames():
            recruitment_services.do_sign_up(game, acting_user=self.users[username], now=clock.now())
        recruitment_services.do_close_signups(game, acting_user=proc, now=clock.now())
        cities = recruitment_services.do_form_cities(game, acting_user=proc, names=CITY_NAMES, rng=rng, now=clock.now())
        for number, city in enumerate(cities, 1):
            city_services.do_appoint_staff(game, self.users[staff_username(f"tribune{number}")], StaffKind.TRIBUNE,
                                           city=city, acting_user=proc, now=clock.now())
        for kind in (StaffKind.ARBITER, StaffKind.CONSIGLIERE):
            city_services.do_appoint_staff(game, self.users[staff_username(kind)], kind, acting_user=proc,
                                           now=clock.now())
        recruitment_services.do_publish_city_lists(game, acting_user=proc, now=clock.now())
        role_services.do_start_mafia_draw(game, acting_user=proc, rng=rng, now=clock.now())
        role_services.do_name_mafia_numbers(game, None, acting_user=proc, rng=rng, now=clock.now())
        for city in cities:
            while True:
                offer = role_services.do_offer_commissar(city, acting_user=proc, rng=rng, now=clock.now())
                honest = offer.candidate.alignment == Alignment.HONEST
                role_services.do_answer_commissar_offer(offer, accept=honest, acting_user=offer.candidate.user,
                                                        now=clock.now())
                if honest:
                    break

    # Day 1 and night 1 in the browser ---------------------------------------------------------------------------

    def wait_for_day(self, day: int) -> Game:
        """Wait until the beat has started game day ``day`` (``day_start``); returns the game."""
        return self.stack.wait_until(lambda: (g := self.game()).day_number >= day and g.status == GameStatus.RUNNING
                                     and g, f"the beat to start day {day}")

    def wait_for_night(self, night: int) -> None:
        """Wait until the beat has started night ``night`` (the ``night_start`` event closed day ``night``)."""
        from cities.models import GameDay
        self.stack.wait_until(lambda: GameDay.objects.filter(game__slug=self.slug, number=night,
                                                             ended_at__isnull=False).exists(),
                              f"the beat to start night {night}")

    def start_clock(self, first_day_starts_at: datetime) -> None:
        """The Procurator starts the game clock on its staff page (L-DAY-1): day 1 at ``first_day_starts_at``."""
        proc = self.procurator
        proc.open(f"/staff/games/{self.game().slug}/clock/")
        proc.page.fill("form[action$='/clock/start/'] input[name=first_day_starts_at]",
                       wall(first_day_starts_at))
        proc.submit("form[action$='/clock/start/'] input[type=submit]")
        assert proc.flash() == [ru("The plan is changed and the pending events are rescheduled.")], proc.flash()

    def elect_judges(self, day_start: datetime) -> dict[int, Resident]:
        """Day 1 (L-DAY-4, L-JUDGE-3..5): the Arbiter schedules each city's election from the staff console
        (16:30-20:30, announced 6 hours ahead); residents propose candidates on their city's day page; the beat opens the precincts;
        «Он - Ганди!» and «Он - Гитлер!» are posted in precincts in the browser; the beat closes the elections.
        The judge of each city is its first honest resident by name who is not the commissar. Returns the
        judges by city number."""
        from rulesets.lepra.models import JudgeElection

        clock = self.stack.clock
        opens, closes = clock.at(day_start, 16, 30), clock.at(day_start, 20, 30)
        arbiter = self.staff("arbiter", form_login=True)
        for number in range(1, len(CITY_NAMES) + 1):
            city = self.city(number)
            messages = run_admin_action(arbiter, "/staff/lepra/cityjudge/", city.name, "schedule_judge_election",
                                        {"opens_at": wall(opens), "closes_at": wall(closes)})
            assert messages == [ru("The judge election of %(city)s is scheduled from %(opens)s to %(closes)s "
                                   "(%(tz)s).", city=city.name, opens=wall(opens).replace("T", " "),
                                   closes=wall(closes).replace("T", " "), tz="Europe/Moscow")], messages
        chosen, rivals = {}, {}
        for number in range(1, len(CITY_NAMES) + 1):
            residents = self.residents(number)
            judge = next(r for r in residents if r.alignment == Alignment.HONEST and not seats.is_commissar(r))
            rival = next(r for r in residents if r.alignment == Alignment.MAFIA)
            chosen[number], rivals[number] = judge, rival
            proposers = [r for r in residents if r.pk not in (judge.pk, rival.pk)]
            for proposer, candidate in ((proposers[0], judge), (proposers[1], rival)):
                person = self.of(proposer)
                person.open(f"/games/{self.slug}/cities/{number}/day/")
                person.page.select_option("form.propose-form select[name=candidate]", candidate.public_id)
                person.submit("form.propose-form button[type=submit]")
                assert ru("Your candidate") + ": " + candidate.name in person.text("section.judges")
        clock.set(opens + timedelta(seconds=1))
        self.stack.wait_until(lambda: JudgeElection.objects.filter(game__slug=self.slug, day=1,
                                                                   opened_at__isnull=False).count() == 3,
                              "the beat to open the judge elections")
        for number in range(1, len(CITY_NAMES) + 1):
            judge, rival = chosen[number], rivals[number]
            voters = [r for r in self.residents(number) if r.pk not in (judge.pk, rival.pk)]
            ballots = [(voters[2], judge, "Он - Ганди!"), (voters[3], judge, "Он - Ганди!"),
                       (voters[4], rival, "Он - Гитлер!")]
            for voter, candidate, text in ballots:
                person = self.of(voter)
                precinct = Inbox.objects.get(game__slug=self.slug, kind=LepraInboxKind.PRECINCT, resident=candidate)
                person.open(f"/inboxes/{precinct.public_id}/")
                person.post_in_thread(text)
            reader = self.of(voters[2])
            reader.open(f"/games/{self.slug}/cities/{number}/day/")
            scores = {}
            for row in reader.page.locator("table.precincts tbody tr").all():
                cells = [squash(c) for c in row.locator("td").all_inner_texts()]
                scores[cells[0]] = (int(cells[1]), int(cells[2]), int(cells[3]))
            # Every ballot posted in the browser is counted (L-JUDGE-4): score = pros - cons.
            assert scores == {judge.name: (2, 0, 2), rival.name: (0, 1, -1)}, scores
            if number == 1:
                self.screenshots.take(reader.page, "precinct-scores")
        clock.set(closes + timedelta(seconds=1))
        self.stack.wait_until(lambda: JudgeElection.objects.filter(game__slug=self.slug, day=1,
                                                                   closed_at__isnull=False).count() == 3,
                              "the beat to close the judge elections")
        for number, judge in chosen.items():
            judge.refresh_from_db()
            assert seats.is_judge(judge), f"{judge.name} was not elected in city {number}"
            reader = self.of(rivals[number])
            reader.open(f"/games/{self.slug}/cities/{number}/day/")
            assert reader.text("section.judges .sitting-judge") == f"{ru('Sitting judge')}: {judge.name}"
        return chosen

    def elect_godfathers(self) -> dict[int, Resident]:
        """Night 1 (L-NIGHT-3): the Consigliere opens each city's godfather election on the night page; the city's
        mafia vote there for their first member by name; the Consigliere closes it. Returns the godfathers."""
        consigliere = self.staff("consigliere")
        godfathers = {}
        for number in range(1, len(CITY_NAMES) + 1):
            panel = f"section.night-city[data-city='{number}']"
            consigliere.open(f"/games/{self.slug}/night/")
            consigliere.submit(f"{panel} form.open-election button")
            mafia = [r for r in self.residents(number) if r.alignment == Alignment.MAFIA]
            for mafioso in mafia:
                person = self.of(mafioso)
                person.open(f"/games/{self.slug}/night/")
                assert person.page.locator("section.night-city").count() == 1  # their own city only
                person.page.select_option(f"{panel} form.vote-godfather select[name=target]",
                                          mafia[0].public_id)
                person.submit(f"{panel} form.vote-godfather button")
            consigliere.open(f"/games/{self.slug}/night/")
            consigliere.submit(f"{panel} form.close-election button")
            assert consigliere.text(f"{panel} [data-fact=godfather]") == mafia[0].name
            godfathers[number] = mafia[0]
        return godfathers

    # Checks shared by the tests ----------------------------------------------------------------------------------

    def mafia_draw(self) -> MafiaDraw:
        return MafiaDraw.objects.get(game__slug=self.slug)


def city_heading_counts(person: Person) -> dict[str, int]:
    """City name -> the count in its heading on the Procurator's setup page ("Name (8)")."""
    counts = {}
    for heading in person.texts("#step-cities h3"):
        name, _, count = heading.rpartition(" (")
        counts[name] = int(count.rstrip(")"))
    return counts
