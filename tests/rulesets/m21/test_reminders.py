"""M21's deadline reminders (RULES.md M-SETUP-2, M-VOTE-5, M-ROLE judge): the reminder table is each ruleset's own;
an M21 player is told of the day's deadline, the night's end and, as the Judge, of the casting window, in M21's
words, an hour ahead."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import translation

from archive import services as archive_services
from archive.models import Notification, NotificationKind
from archive.notifications import notification_text
from cities.models import LifeStatus, ScheduledEvent
from rulesets.m21 import night_services as ns
from rulesets.m21.console_services import do_modkill_m21_player

from .day_helpers import build_game

pytestmark = pytest.mark.django_db


def told(table, kind: str) -> dict[str, str]:
    """Player name -> the reminder's text, for the deadlines of ``kind``."""
    names = {u.pk: n for n, u in table.users.items()}
    rows = Notification.objects.filter(game=table.game, kind=NotificationKind.DEADLINE, event__kind=kind)
    with translation.override(table.game.language):  # as the e-mail and the page write it
        return {names.get(n.user_id, f"user {n.user_id}"): notification_text(n, "Europe/London")
                for n in rows.select_related("event", "game")}


def test_the_living_players_are_reminded_of_the_days_deadline_in_m21_words_M_SETUP_2_M_VOTE_5():
    table = build_game()
    dead = table.names_of_roles("citizen")[0]
    do_modkill_m21_player(table.seat(dead), reveal_role=False, acting_user=table.host, now=table.tick())
    deadline = table.day(1).deadline
    archive_services.do_collect_notifications(now=deadline - timedelta(minutes=90))
    assert told(table, "m21_day_deadline") == {}  # more than an hour ahead
    archive_services.do_collect_notifications(now=deadline - timedelta(minutes=30))
    texts = told(table, "m21_day_deadline")
    assert set(texts) == {n for n in table.users if n != dead}
    assert set(texts.values()) == {"Prohibition Wars: the day ends at Wed 7 Jan 2026, 22:00 GMT (Europe/London). "
                                   "Have your vote in place (M-VOTE-5)."}


def test_the_nights_end_is_reminded_to_the_living_only_M_SETUP_2():
    table = build_game()
    prisoner = table.names_of_roles("citizen")[0]
    for name in [n for n in table.users if n != prisoner][:4]:
        table.post(name, f"##VOTE {prisoner}\n##END")
    end = ScheduledEvent.objects.get(game=table.game, kind="m21_night_end").due_at
    assert table.seat(prisoner).status == LifeStatus.IMPRISONED
    archive_services.do_collect_notifications(now=end - timedelta(minutes=20))
    texts = told(table, "m21_night_end")
    assert set(texts) == {n for n in table.users if n != prisoner}
    assert next(iter(texts.values())).startswith("Prohibition Wars: the night ends at Tue 6 Jan 2026, 22:00 GMT")
    assert ns.open_night(table.game) is not None


def test_only_the_judge_is_reminded_of_the_casting_window_M_ROLE_judge():
    table = build_game()
    godfather, hooker = table.name_of_role("godfather"), table.name_of_role("hooker")
    town = [n for n in table.users if n not in (godfather, hooker)]
    for voter, target in zip(town[:4], (godfather, godfather, hooker, hooker), strict=True):
        table.post(voter, f"##VOTE {target}")
    table.run_clock(table.day(1).deadline)
    window = ScheduledEvent.objects.get(game=table.game, kind="m21_casting_window_end", done_at__isnull=True)
    archive_services.do_collect_notifications(now=table.day(1).deadline + timedelta(minutes=1))
    texts = told(table, "m21_casting_window_end")
    assert list(texts) == [table.name_of_role("judge")]
    assert "your casting vote as the Judge closes at" in texts[table.name_of_role("judge")]
    assert window.due_at == table.day(1).deadline + timedelta(minutes=15)


def test_an_m21_deadline_is_never_read_with_lepras_wording_M_SETUP_2():
    table = build_game()
    archive_services.do_collect_notifications(now=table.day(1).deadline - timedelta(minutes=30))
    assert not any("nominations" in t or "voting closes" in t for t in told(table, "m21_day_deadline").values())
    assert Notification.objects.filter(game=table.game, kind=NotificationKind.DEADLINE).exists()
