"""The demo Lepra game of ``make run`` (issue 2): 3 cities x 20 residents, full staff, roles drawn as in
L-ASSIGN / L-COMM, on the morning of day 2 (judges elected, godfathers chosen, no deaths yet), with posts in
every kind of inbox it creates.

All demo accounts share ``DEMO_PASSWORD``; loading is refused unless ``settings.MAFIA_ALLOW_DEMO`` is on, which
only the development and test settings do (production sets it off and ``mafia_site.checks`` rejects it there).
"""
from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from inboxes.models import Inbox, InboxKind
from inboxes.services import do_open_game_inboxes, do_post_message
from roles.services import do_answer_commissar_offer, do_name_mafia_numbers, do_offer_commissar, do_start_mafia_draw

from .models import Alignment, City, Game, GameStatus, PostKind, Resident, StaffKind
from .services import (
    do_add_city, do_appoint_staff, do_close_signups, do_create_game, do_create_public_post, do_move_signup,
    do_publish_city_lists, do_publish_recruitment_post, do_schedule_public_post, do_set_game_status,
    do_set_resident_flags, do_sign_up, record_event,
)

DEMO_SLUG = "demo"
DEMO_PASSWORD = "mafia-demo-2026"
CITY_NAMES = ["Малиновка", "Простоквашино", "Гадюкино"]
RESIDENTS_PER_CITY = 20

#: Residents' nicknames: 60, none a substring of another (the leak tests search pages for them).
RESIDENT_NAMES = [
    "Avrora", "Baltazar", "Cheshir", "Dobrynya", "Elbrus", "Fagot", "Gulliver", "Harlampiy", "Izumrud", "Jaguar",
    "Kolobok", "Lukomorye", "Matroskin", "Nautilus", "Obormot", "Pechkin", "Quasimodo", "Rasputin", "Samovar",
    "Tamerlan", "Ulysses", "Vasilisa", "Wolfram", "Xerxes", "Yaroslavna", "Zhuravl", "Abrikos", "Buratino",
    "Chebur", "Drakula", "Enot", "Filin", "Gorynych", "Hottabych", "Ivolga", "Jasmin", "Karabas", "Leshiy",
    "Medvezhonok", "Neznayka", "Ovsyanka", "Pinguin", "Quokka", "Rusalka", "Sinica", "Tushkan", "Udav",
    "Vinni", "Wombat", "Xylofon", "Yozhik", "Zmey", "Alkonost", "Bagira", "Cyclop", "Delfin", "Ermak",
    "Flamingo", "Grifon", "Homyak",
]
STAFF_NAMES = {
    "procurator": "Prokuror_Vyshinsky",
    "tribune1": "Tribun_Grakh",
    "tribune2": "Tribun_Drusus",
    "tribune3": "Tribun_Saturnin",
    "arbiter": "Arbitr_Solomon",
    "consigliere": "Konsilyeri_Tessio",
}


@dataclass
class DemoGame:
    """What ``load_demo_game`` built: the game and the accounts by persona, for the console and the tests."""

    game: Game
    staff: dict[str, object] = field(default_factory=dict)  # username -> User
    residents: list[Resident] = field(default_factory=list)
    salt: str = ""
    lists: dict[str, list[str]] = field(default_factory=dict)
    numbers: dict[str, list[int]] = field(default_factory=dict)


def resident_username(city_number: int, index: int) -> str:
    """The demo login of resident ``index`` (1-based) of city ``city_number``: ``c1r01`` ... ``c3r20``."""
    return f"c{city_number}r{index:02d}"


def _make_user(username: str, display_name: str, password_hash: str):
    User = get_user_model()
    user = User.objects.create(username=username, email=f"{username}@demo.mafia.invalid",
                               password=password_hash, display_name=display_name)
    EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
    return user


def demo_exists() -> bool:
    """True when the demo game is already loaded."""
    return Game.objects.filter(slug=DEMO_SLUG).exists()


@transaction.atomic
def load_demo_game(rng: random.Random | None = None, now: datetime | None = None) -> DemoGame:
    """Build the demo game (see the module docstring) through the same services a real Procurator uses:
    recruitment, sign-ups, cities formed by hand, staff, published lists, the mafia draw (commitment first, then
    numbers drawn by the site), commissar offers (honest candidates accept, a mafioso declines), the standing
    inboxes. Returns the DemoGame.

    ``rng`` drives every draw (default ``secrets.SystemRandom()``, as a real game; tests pass a seeded
    ``random.Random``). ``now`` is the aware UTC time of the morning of day 2 (default: the current time).
    Raises ``ImproperlyConfigured`` when ``MAFIA_ALLOW_DEMO`` is off and ``ValueError`` when it exists already.
    """
    if not settings.MAFIA_ALLOW_DEMO:
        raise ImproperlyConfigured("The demo game cannot be loaded with these settings (MAFIA_ALLOW_DEMO is off).")
    if demo_exists():
        raise ValueError("the demo game is already loaded")
    rng = rng or secrets.SystemRandom()
    now = now or timezone.now()
    t = now - timedelta(days=3)  # recruitment three days ago; each step a minute later than the one before

    def tick() -> datetime:
        nonlocal t
        t += timedelta(minutes=1)
        return t

    demo = DemoGame(game=None)  # type: ignore[arg-type]
    password_hash = make_password(DEMO_PASSWORD)  # hashed once: 66 accounts share it
    for username, display in STAFF_NAMES.items():
        demo.staff[username] = _make_user(username, display, password_hash)
    procurator = demo.staff["procurator"]
    game = do_create_game(title="Лепра: демонстрационная партия", slug=DEMO_SLUG, acting_user=procurator, now=tick())
    do_publish_recruitment_post(
        game, acting_user=procurator, now=tick(), title="Набор в демонстрационную партию",
        body="Три города по двадцать жителей. В каждом городе четверо мафиози и комиссар; судей выбирают в первый день.",
    )
    players = []
    for city_number in range(1, len(CITY_NAMES) + 1):
        for i in range(1, RESIDENTS_PER_CITY + 1):
            name = RESIDENT_NAMES[(city_number - 1) * RESIDENTS_PER_CITY + i - 1]
            user = _make_user(resident_username(city_number, i), name, password_hash)
            players.append((city_number, do_sign_up(game, acting_user=user, now=tick())))
    game = do_close_signups(game, acting_user=procurator, now=tick())
    cities: list[City] = [do_add_city(game, name=name, acting_user=procurator, now=tick()) for name in CITY_NAMES]
    for city_number, signup in players:  # formed by hand, so that c1r01..c1r20 live in city 1
        demo.residents.append(do_move_signup(signup, cities[city_number - 1], acting_user=procurator, now=t))
    for n, city in enumerate(cities, start=1):
        do_appoint_staff(game, demo.staff[f"tribune{n}"], StaffKind.TRIBUNE, city=city, acting_user=procurator, now=tick())
    do_appoint_staff(game, demo.staff["arbiter"], StaffKind.ARBITER, acting_user=procurator, now=tick())
    do_appoint_staff(game, demo.staff["consigliere"], StaffKind.CONSIGLIERE, acting_user=procurator, now=tick())
    do_publish_city_lists(game, acting_user=procurator, now=tick())

    # L-ASSIGN: the commitment is published, then the site draws the numbers for the Procurator.
    mafia_draw = do_start_mafia_draw(game, acting_user=procurator, rng=rng, now=tick())
    mafia_draw = do_name_mafia_numbers(game, None, acting_user=procurator, rng=rng, now=tick())
    demo.lists, demo.salt = mafia_draw.lists, mafia_draw.salt
    demo.numbers = {str(k): v for k, v in mafia_draw.numbers.items()}
    bar = Inbox.objects.get(game=game, kind=InboxKind.BAR)
    do_post_message(bar, "Все мафиози подтвердили свои роли.", acting_user=demo.staff["consigliere"], now=tick())

    # L-COMM: up to three offers per city; honest candidates accept, a mafioso must decline.
    for city in cities:
        for _ in range(3):
            offer = do_offer_commissar(city, acting_user=procurator, rng=rng, now=tick())
            candidate = offer.candidate
            accept = candidate.alignment == Alignment.HONEST
            do_answer_commissar_offer(offer, accept=accept, acting_user=candidate.user, now=tick(),
                                      reason="" if accept else "Некогда, работа.")
            if accept:
                break

    # Day 1 elections are over (L-DAY-5): one judge per city; night 1: the godfathers (L-NIGHT-3).
    by_city = {c.number: list(Resident.objects.filter(city=c).order_by("pk")) for c in cities}
    judges = []
    for c in cities:
        judge = rng.choice([r for r in by_city[c.number] if not r.is_commissar])
        judges.append(do_set_resident_flags(judge, is_judge=True, acting_user=None, now=tick()))
        mafia = [r for r in by_city[c.number] if r.alignment == Alignment.MAFIA]
        do_set_resident_flags(rng.choice(mafia), is_godfather=True, acting_user=None, now=t)
    do_open_game_inboxes(game, acting_user=procurator, now=tick())
    game = do_set_game_status(game, GameStatus.RUNNING, day_number=2, acting_user=procurator, now=tick())
    demo.game = game
    demo.residents = list(Resident.objects.filter(game=game).select_related("user", "city").order_by("pk"))
    by_city = {c.number: [r for r in demo.residents if r.city_id == c.pk] for c in cities}
    commissars = [r for r in demo.residents if r.is_commissar]
    inboxes: dict[str, Inbox] = {}
    for inbox in Inbox.objects.filter(game=game).select_related("city", "resident"):
        if inbox.kind in (InboxKind.CITY, InboxKind.MAFIA):
            inboxes[f"{inbox.kind}{inbox.city.number}"] = inbox
        elif inbox.kind == InboxKind.PERSONAL:
            inboxes[f"personal:{inbox.resident.name}"] = inbox
        elif inbox.kind != InboxKind.SECRET:
            inboxes[inbox.kind] = inbox

    # Activity in every inbox, spread over the last day.
    t = now - timedelta(hours=20)
    step = timedelta(minutes=7)

    def say(key: str, user, text: str) -> None:
        nonlocal t
        t += step
        do_post_message(inboxes[key], text, acting_user=user, now=t)

    say("office", procurator, "День второй начинается в 10:00 по Москве. Трибуны, объявите время голосования.")
    for c in cities:
        say("office", demo.staff[f"tribune{c.number}"], f"{c.name}: голосование с 18:00 до 22:00.")
    say("office", demo.staff["arbiter"], "Суд сформирован, судьи всех трёх городов на месте.")
    lines = [
        "Доброе утро, соседи! Кто что думает?", "Подозрительно тихо было ночью.",
        "Предлагаю присмотреться к тем, кто молчал в первый день.", "Я за судью, он честный человек.",
        "А я бы не торопился с выводами.", "Кто-нибудь заметил, как странно голосовали на выборах?",
    ]
    for c in cities:
        rs = by_city[c.number]
        for i, line in enumerate(lines):
            say(f"city{c.number}", rs[(i * 3) % len(rs)].user, line)
        say(f"city{c.number}", demo.staff[f"tribune{c.number}"],
            "Выдвижения принимаются в личных ящиках до 18:00. Голосование с 18:00 до 22:00.")
        mafia = [r for r in rs if r.alignment == Alignment.MAFIA]
        say(f"mafia{c.number}", demo.staff["consigliere"],
            f"Мафия города {c.name}, это ваш штаб. Крёстный отец избран, со второй ночи можно убивать.")
        for i, m in enumerate(mafia):
            say(f"mafia{c.number}", m.user, f"Тайный план мафии города {c.number}: пункт {i + 1}.")
        for r in rs[:3]:
            say(f"personal:{r.name}", r.user, "Прошу учесть: завтра меня не будет, проголосуйте за меня, если можно.")
            say(f"personal:{r.name}", demo.staff[f"tribune{c.number}"], "Принято. Напишите, за кого голосовать.")
    for com in commissars:
        say("police", com.user, "Комиссар на связи. Со второй ночи начинаем проверки.")
    say("police", procurator, "Участок открыт. Напоминаю: о проверках ни слова в городе.")
    for j in judges:
        say("court", j.user, "Судья на месте.")
    say("court", demo.staff["arbiter"], "Суд открыт. Результаты голосований поступят вечером.")
    say("cemetery", procurator, "Кладбище пока пусто. Пусть так и остаётся подольше.")
    say("bar", demo.staff["consigliere"], "Ночь прошла спокойно: первая ночь без убийств.")

    do_create_public_post(
        game, kind=PostKind.DAILY, title="День 2", acting_user=procurator, now=now - timedelta(hours=1),
        body=(
            "Первая ночь прошла тихо: мафия выбрала крёстных отцов, никто не погиб.\n\n"
            "## Судьи\n\n" + "\n".join(f"- {j.city.name}: {j.name}" for j in judges) +
            "\n\nСегодня первые выдвижения и первые казни."
        ),
    )
    do_schedule_public_post(
        game, title="Напоминание", acting_user=procurator, now=now, publish_at=now + timedelta(minutes=2),
        body="Через несколько часов закрываются выдвижения. Не забудьте выдвинуть кандидата в личном ящике.",
    )
    record_event(game, "demo.loaded", actor=None, at=now, payload={})
    return demo
