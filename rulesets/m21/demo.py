"""The M21 demo game of ``make run`` (``manage.py load_demo``; RULES.md Part 2): 20 players with the seed's default
shape (a cop, a coroner, a reporter, a Judge and 11 citizens; a godfather, a hooker, a ninja and 2 goons), a host
and a co-host, played through the real services and the game clock into the middle of day 2: day 1 talks and
hammers a goon, night 1 the mafia vote a kill in their thread, assign the gun, the cop investigates the hooker,
the reporter watches her, the hooker blocks the coroner; the clock resolves the night (a death, private results,
the reporter's headline, the morning post) and starts day 2, where a vote count is in progress (3 on the hooker,
2 on a citizen, 1 No Lynch) and the co-host has posted it.

Day 2 starts at the last full hour at least an hour before ``now`` (in Europe/London), so that it started between
one and two hours before ``now`` whatever the hour of ``make run``; the night after day 1's hammer lasts its 24 hours
(M-SETUP-2), so day 1 started 24 hours and the length of its talk before day 2. Development only: ``manage.py load_demo`` refuses unless ``settings.MAFIA_ALLOW_DEMO``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from cities.models import Game
from cities.recruitment_services import do_close_signups, do_sign_up
from cities.scheduler import advance_clock
from inboxes.models import Inbox
from rulesets.m21.kinds import M21InboxKind
from inboxes.posting import do_post_message

from . import night_services, services
from .models import M21Seat
from .roles import MAFIA, ROLES

M21_DEMO_SLUG = "m21-demo"
M21_DEMO_ZONE = "Europe/London"
#: The default setup of 20 (M-SETUP-1): 4 town power roles and 11 citizens, 3 mafia power roles and 2 goons.
M21_DEMO_SETUP = {"citizen": 11, "judge": 1, "reporter": 1, "cop": 1, "coroner": 1,
                  "goon": 2, "godfather": 1, "hooker": 1, "ninja": 1}
HOST = ("m21host", "Mabel Quill")
COHOST = ("m21cohost", "Rupert Vane")
PLAYER_NAMES = ["Archibald", "Beatrix", "Cornelius", "Delphine", "Ezekiel", "Florence", "Gideon", "Harriet",
                "Ignatius", "Josephine", "Lysander", "Marigold", "Nathaniel", "Ophelia", "Percival", "Rosalind",
                "Sebastian", "Theodora", "Wilfred", "Yvaine"]

DAY_ONE_TALK = ["Morning all! Day one, so let's keep it civil and vote early.",
                "Lurkers are the mafia's best friends. Post twice, vote once, at least.",
                "I have a feeling about the quiet ones. Nothing solid yet.",
                "Reminder: ##END only counts if you are voting someone."]
#: Minutes from the start of day 1 to its hammer: the talk at 7-minute steps, then eleven votes at 5-minute steps.
DAY_ONE_MINUTES = 7 * len(DAY_ONE_TALK) + 5 * 11
DAY_TWO_TALK = ["So we lost someone in the night. Read the morning post, folks.",
                "The headline says somebody went out last night. That's a lead.",
                "I'm not convinced yet. Count first, then we decide."]


def demo_username(index: int) -> str:
    """The login of demo player ``index`` (1-based): ``m21p01`` ... ``m21p20``."""
    return f"m21p{index:02d}"


@dataclass
class M21Demo:
    """What ``load_m21_demo`` built: the game, the host and co-host, the players by login, name -> role key."""

    game: Game
    host: object
    cohost: object
    players: dict[str, object] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)


def demo_exists() -> bool:
    """True when the M21 demo game is loaded."""
    return Game.objects.filter(slug=M21_DEMO_SLUG).exists()


def demo_phase_shift(now: datetime) -> datetime:
    """The demo's day-2 start (aware UTC): the last full hour at least an hour before ``now`` in the demo's zone."""
    local = (now - timedelta(hours=1)).astimezone(ZoneInfo(M21_DEMO_ZONE))
    return local.replace(minute=0, second=0, microsecond=0).astimezone(ZoneInfo("UTC"))


@transaction.atomic
def load_m21_demo(*, make_user, rng: random.Random, now: datetime) -> M21Demo:
    """Build the M21 demo (see the module docstring) through the services a host and players use; returns it.
    ``make_user(username, display_name) -> User`` makes each account; ``rng`` deals the roles and seeds the night;
    ``now`` is the demo's present (aware UTC). Raises ``ImproperlyConfigured`` when ``MAFIA_ALLOW_DEMO`` is off and
    ``ValueError`` when it is loaded already."""
    if not settings.MAFIA_ALLOW_DEMO:
        raise ImproperlyConfigured("The demo game cannot be loaded with these settings (MAFIA_ALLOW_DEMO is off).")
    if demo_exists():
        raise ValueError("the M21 demo game is already loaded")
    day2 = demo_phase_shift(now)
    shift = day2.astimezone(ZoneInfo(M21_DEMO_ZONE)).time()
    day1 = day2 - timedelta(hours=24, minutes=DAY_ONE_MINUTES)
    t = day1 - timedelta(days=1)

    def tick(minutes: float = 1) -> datetime:
        nonlocal t
        t += timedelta(minutes=minutes)
        return t

    host, cohost = make_user(*HOST), make_user(*COHOST)
    game = services.do_create_m21_game(title="M21 demo: Prohibition Wars", slug=M21_DEMO_SLUG, acting_user=host,
                                       time_zone=M21_DEMO_ZONE, phase_shift=shift, now=tick())
    services.do_add_cohost(game, cohost, acting_user=host, now=tick())
    demo = M21Demo(game=game, host=host, cohost=cohost)
    for index, name in enumerate(PLAYER_NAMES, start=1):
        user = make_user(demo_username(index), name)
        demo.players[user.username] = user
        do_sign_up(game, acting_user=user, now=tick())
    game = do_close_signups(game, acting_user=host, now=tick())
    services.do_choose_m21_setup(game, M21_DEMO_SETUP, acting_user=host, now=tick())
    demo.roles = services.do_deal_m21_roles(game, first_day_starts_at=day1, acting_user=host, rng=rng, now=tick())
    game = Game.objects.get(pk=game.pk)  # running now
    users = {user.public_name: user for user in demo.players.values()}
    by_role: dict[str, list[str]] = {}
    for name in PLAYER_NAMES:
        by_role.setdefault(demo.roles[name], []).append(name)
    one = {role: names[0] for role, names in by_role.items()}
    citizens, goons = by_role["citizen"], by_role["goon"]

    # Day 1 (M-VOTE): talk, then eleven town players vote a goon with ##END: the hammer falls (M-VOTE-3).
    advance_clock(day1, game=game)
    t = day1
    thread = services.thread_of(game)
    for text, name in zip(DAY_ONE_TALK, citizens, strict=False):
        do_post_message(thread, text, acting_user=users[name], now=tick(7))
    town = [n for n in PLAYER_NAMES if ROLES[demo.roles[n]].alignment != MAFIA]
    for name in town[:11]:
        do_post_message(thread, f"I've seen enough.\n\n##VOTE {goons[0]}\n##END", acting_user=users[name],
                        now=tick(5))
    # The hammer fell at day1 + DAY_ONE_MINUTES: night 1 started with it and runs 24 hours, to day 2's start.

    # Night 1 (M-NIGHT-1, M-MAFIA-1/2): the mafia vote a kill in their thread and take the gun; the roles act.
    victim = citizens[0]
    mafia_thread = Inbox.objects.get(game=game, kind=M21InboxKind.MAFIA_THREAD)
    for name in (one["godfather"], one["hooker"], one["ninja"], goons[1]):
        do_post_message(mafia_thread, f"Agreed, tonight it's them.\n\n**kill {victim}**", acting_user=users[name],
                        now=tick(10))
    night_services.do_assign_stash_item(game, item="gun", holder=one["godfather"], acting_user=users[one["ninja"]],
                                        now=tick())
    acts = ((one["cop"], "investigate", one["hooker"]), (one["reporter"], "visit", one["hooker"]),
            (one["hooker"], "roleblock", one["coroner"]), (one["coroner"], "protect", citizens[1]))
    for actor, option, target in acts:
        night_services.do_submit_night_action(game, option=option, target=target, acting_user=users[actor],
                                              now=tick(15))
    night = night_services.open_night(game)
    advance_clock(night.planned_end, game=game)  # resolved; the morning post; day 2 starts at the shift

    # Day 2: talk and a count in progress (3 on the hooker, 2 on a citizen, 1 No Lynch); the co-host posts it.
    t = day2
    for text, name in zip(DAY_TWO_TALK, citizens[1:], strict=False):
        do_post_message(thread, text, acting_user=users[name], now=tick(3))
    for name in citizens[2:5]:
        do_post_message(thread, f"The headline was no accident.\n\n##VOTE {one['hooker']}", acting_user=users[name],
                        now=tick(2))
    for name in (one["hooker"], one["ninja"]):
        do_post_message(thread, f"Deflection much?\n\n##VOTE {citizens[5]}", acting_user=users[name], now=tick(2))
    do_post_message(thread, "Too early to lynch.\n\n##VOTE No Lynch", acting_user=users[citizens[6]], now=tick(2))
    services.do_post_vote_count(game, acting_user=cohost, now=tick(2))
    demo.game = Game.objects.get(pk=game.pk)
    return demo


def demo_logins(url: str) -> list[str]:
    """The lines ``manage.py load_demo`` prints about the M21 demo: where to open it, the hosts' logins and the
    console, every player's login with the role (the demo's secrets, printed on purpose), or [] before it loads."""
    game = Game.objects.filter(slug=M21_DEMO_SLUG).first()
    if game is None:
        return []
    seats = {seat.resident.user.username: seat for seat in
             M21Seat.objects.filter(resident__game=game).select_related("resident", "resident__user")}
    mafia = [f"{login} ({ROLES[s.role].name})" for login, s in sorted(seats.items())
             if ROLES[s.role].alignment == MAFIA]
    town = [f"{login} ({ROLES[s.role].name})" for login, s in sorted(seats.items())
            if ROLES[s.role].alignment != MAFIA and s.role != "citizen"]
    return [f"M21 demo (English, day 2): open {url}games/{M21_DEMO_SLUG}/m21/",
            f"  Hosts:      {HOST[0]} (host), {COHOST[0]} (co-host); host console {url}staff/m21/{game.slug}/",
            f"  Players:    {demo_username(1)}..{demo_username(len(PLAYER_NAMES))}; mafia {', '.join(mafia)}",
            f"  Town roles: {', '.join(town)}; the other players are citizens"]
