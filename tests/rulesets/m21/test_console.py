"""The M21 host console on /staff/ (M-SETUP-2, M-SETUP-4, M-VOTE-5, M-VOTE-8, M-MAFIA-2, L-REPLACE-1): what needs
the hosts now by count, the phase clock in the game's zone (extend, shorten), the vote count posted on demand,
replacements, the modkill with or without a role reveal, the items; co-hosts do what the host does."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from cities.models import GameEvent, LifeStatus, ScheduledEvent
from inboxes.models import Message
from rulesets.m21.kinds import M21InboxKind
from kernel.errors import NotAllowed, WrongState
from rulesets.m21 import console_selectors, console_services, services
from rulesets.m21 import night_services as ns
from rulesets.m21.night_models import M21Night
from rulesets.m21.roles import ROLES

from .day_helpers import build_game, make_user

pytestmark = pytest.mark.django_db


def console_url(table) -> str:
    return reverse("staff_admin:m21_console", args=[table.game.slug])


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def get(table, user, url=None):
    with time_machine.travel(table.tick(), tick=False):
        return web(user).get(url or console_url(table))


def post(table, user, button: str, data=None):
    """POST the console's ``button`` (its own URL, ``m21_console_<button>``) with ``data``, following redirects."""
    with time_machine.travel(table.tick(), tick=False):
        return web(user).post(reverse(f"staff_admin:m21_console_{button}", args=[table.game.slug]), data or {},
                              follow=True)


def thread_texts(table) -> list[str]:
    return list(Message.objects.filter(inbox=table.thread).order_by("received_at", "id").values_list("body", flat=True))


def to_night(table):
    victim = table.names_of_roles("citizen")[0]
    for name in [n for n in table.users if n != victim][:4]:
        table.post(name, f"##VOTE {victim}\n##END")
    table.run_clock(table.now + timedelta(minutes=1))
    return victim


def test_host_and_cohost_see_the_clock_in_the_game_zone_and_the_live_count_M_SETUP_4_M_VOTE_8():
    table = build_game()
    target = table.names_of_roles("citizen")[0]
    table.post("Alice" if target != "Alice" else "Bob", f"##VOTE {target}")
    for user in (table.host, table.cohost):
        response = get(table, user)
        page = response.content.decode()
        assert response.status_code == 200
        assert 'data-phase="day"' in page
        # Day 1 started at 22:00 London on 5 January and lasts 48 h: its planned end in the game's zone, named.
        assert '<span class="planned-end">Wed 7 Jan 2026, 22:00 GMT</span>' in page
        assert f'data-target="{target}" data-count="1"' in page
        assert "Times are in the game's time zone, Europe/London." in page


def test_the_host_shortens_and_extends_the_day_through_the_console_M_SETUP_2():
    table = build_game()
    day = table.day(1)
    old = day.deadline
    post(table, table.cohost, "shorten", {"shorten-hours": "5"})
    day.refresh_from_db()
    assert day.deadline == old - timedelta(hours=5)
    pending = ScheduledEvent.objects.get(game=table.game, kind="m21_day_deadline", done_at__isnull=True,
                                         cancelled_at__isnull=True)
    assert pending.due_at == day.deadline
    assert "**Day 1 is shortened by 5 hours:** it now ends at Wed 7 Jan 2026, 17:00 GMT." in \
        thread_texts(table)
    event = GameEvent.objects.get(game=table.game, kind="m21.phase_shortened")
    assert event.actor == table.cohost and event.payload["hours"] == 5
    post(table, table.host, "extend", {"extend-hours": "2"})
    day.refresh_from_db()
    assert day.deadline == old - timedelta(hours=3)


def test_a_shortening_into_the_next_quarter_hour_is_refused_and_changes_nothing_M_SETUP_2():
    table = build_game()
    day = table.day(1)
    table.now = day.deadline - timedelta(hours=2)
    with pytest.raises(WrongState, match="less than 15 minutes from now"):
        console_services.do_shorten_m21_phase(table.game, 2, acting_user=table.host, now=table.now)
    response = post(table, table.host, "shorten", {"shorten-hours": "2"})
    assert response.status_code == 409
    assert "less than 15 minutes from now: shorten it by less." in response.content.decode()
    day.refresh_from_db()
    assert day.deadline == table.day(1).deadline and not GameEvent.objects.filter(kind="m21.phase_shortened").exists()


def test_the_console_is_named_by_the_games_slug_and_its_database_id_is_a_404_M_SETUP_4():
    table = build_game()
    assert console_url(table) == f"/staff/m21/{table.game.slug}/"
    for url in (f"/staff/m21/{table.game.pk}/", "/staff/m21/no-such-game/", "/staff/m21/%C2%B2/"):
        response = get(table, table.host, url)
        assert response.status_code == 404, url
        assert "404.html" in [t.name for t in response.templates], url


def test_a_player_cannot_shorten_or_modkill_M_SETUP_4():
    table = build_game()
    with pytest.raises(NotAllowed, match="Only the hosts"):
        console_services.do_shorten_m21_phase(table.game, 1, acting_user=table.users["Alice"], now=table.tick())
    with pytest.raises(NotAllowed, match="Only the hosts"):
        console_services.do_modkill_m21_player(table.seat("Bob"), reveal_role=True, acting_user=None,
                                               now=table.tick())
    assert table.seat("Bob").status == LifeStatus.ALIVE


def test_the_night_is_shortened_and_extended_with_its_submission_cut_off_M_SETUP_2_M_NIGHT_1():
    table = build_game()
    to_night(table)
    cop = table.name_of_role("cop")
    ns.do_submit_night_action(table.game, option="investigate", target=table.name_of_role("godfather"),
                              acting_user=table.users[cop], now=table.tick())
    night = M21Night.objects.get(game=table.game, number=1)
    old = night.planned_end
    new = console_services.do_shorten_m21_phase(table.game, 3, acting_user=table.host, now=table.tick())
    night.refresh_from_db()
    assert new == old - timedelta(hours=3) == night.planned_end
    services.do_extend_m21_phase(table.game, 1, acting_user=table.cohost, now=table.tick())
    night.refresh_from_db()
    assert night.planned_end == old - timedelta(hours=2)
    assert ScheduledEvent.objects.get(game=table.game, kind="m21_night_end", done_at__isnull=True,
                                      cancelled_at__isnull=True).due_at == night.planned_end


def test_what_needs_the_host_counts_night_actions_without_saying_whose_M_NIGHT_1():
    table = build_game()
    victim = to_night(table)
    cop, hooker = table.name_of_role("cop"), table.name_of_role("hooker")
    godfather = table.name_of_role("godfather")
    ns.do_submit_night_action(table.game, option="investigate", target=hooker, acting_user=table.users[cop],
                              now=table.tick())
    ns.do_submit_night_action(table.game, option="investigate", target=godfather, acting_user=table.users[cop],
                              now=table.tick())
    ns.do_submit_night_action(table.game, option="roleblock", target=cop, acting_user=table.users[hooker],
                              now=table.tick())
    assert console_selectors.night_submission_count(table.game) == 2
    ns.do_withdraw_night_action(table.game, option="role", acting_user=table.users[hooker], now=table.tick())
    needs = {n.key: n.count for n in console_selectors.host_needs(table.game, table.now)}
    assert needs["m21_night_actions"] == 1
    response = get(table, table.host, reverse("staff_admin:index"))
    page = response.content.decode()
    assert 'data-need="m21_night_actions" data-count="1"' in page
    console = get(table, table.host).content.decode()
    assert 'data-need="m21_night_actions" data-count="1"' in console
    # A count only: the dashboard names no actor and no target of the night.
    dashboard = page.split('class="needs"')[1].split("</tr>")[0]
    assert cop not in dashboard and godfather not in dashboard and victim not in dashboard


def test_must_vote_offenders_and_a_casting_vote_awaited_are_listed_M_VOTE_5():
    table = build_game()
    to_night(table)
    number, offenders = console_selectors.last_offenders(table.game)
    assert number == 1
    needs = {n.key: n.count for n in console_selectors.host_needs(table.game, table.now)}
    assert needs["m21_offenders"] == len(offenders) > 0
    page = get(table, table.host).content.decode()
    assert f"{offenders[0]['seat']}: " in page


def test_modkill_with_and_without_role_reveal_through_the_console_M_SETUP_4():
    table = build_game()
    bob, carol = table.seat("Bob"), table.seat("Carol")
    post(table, table.host, "modkill", {"modkill-player": bob.public_id, "confirmed": "yes"})
    post(table, table.cohost, "modkill", {"modkill-player": carol.public_id, "modkill-reveal_role": "on",
                               "confirmed": "yes"})
    texts = thread_texts(table)
    bob_role = ROLES[table.roles["Bob"]].name
    carol_role = ROLES[table.roles["Carol"]].name
    assert "**Bob has been removed from the game.**" in texts
    carol_side = "Mafia" if ROLES[table.roles["Carol"]].alignment == "mafia" else "Town"
    assert f"**Carol has been removed from the game.** They were the {carol_role} ({carol_side})." in texts
    assert not any(f"Bob has been removed from the game.** They were the {bob_role}" in t for t in texts)
    bob.refresh_from_db()
    carol.refresh_from_db()
    assert (bob.status, bob.alignment_announced, carol.status, carol.alignment_announced) == (
        LifeStatus.DEAD, False, LifeStatus.DEAD, True)
    assert [e.payload["reveal_role"] for e in GameEvent.objects.filter(kind="m21.modkill").order_by("id")] == [
        False, True]


def test_a_cohost_replaces_a_player_by_login_L_REPLACE_1():
    table = build_game()
    newcomer = make_user("Newcomer")
    seat = table.seat("Dave")
    response = post(table, table.cohost, "replace", {"replace-player": seat.public_id,
                                          "replace-username": "NEWCOMER", "confirmed": "yes"})
    assert "Newcomer now plays the seat." in response.content.decode()
    seat.refresh_from_db()
    assert seat.user == newcomer
    refused = post(table, table.host, "replace", {"replace-player": seat.public_id,
                                       "replace-username": "nobody-here", "confirmed": "yes"})
    assert refused.status_code == 400 and "No account has this login." in refused.content.decode()


def test_the_host_posts_the_vote_count_in_the_game_thread_M_VOTE_8():
    table = build_game()
    target = table.names_of_roles("citizen")[0]
    voter = next(n for n in table.users if n != target)
    table.post(voter, f"##VOTE {target}")
    post(table, table.cohost, "vote_count")
    last = Message.objects.filter(inbox=table.thread).order_by("-received_at", "-id").first()
    assert last.author_user == table.cohost and last.body.startswith("Day 1\n\n")
    assert target in last.body and voter in last.body


def test_the_items_show_the_stash_not_yet_in_play_M_MAFIA_2():
    table = build_game()
    stash = console_selectors.stash_of(table.game)
    assert (stash.unused, stash.held, stash.safe) == (["Gun", "Binoculars", "Whiskey"], [], [])
    page = get(table, table.host).content.decode()
    assert "Gun, Binoculars, Whiskey" in page


def test_the_console_page_is_english_whatever_the_browser_asks_M_SETUP_4():
    table = build_game()
    with time_machine.travel(table.tick(), tick=False):
        page = web(table.host).get(console_url(table), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Phase clock" in page and "What needs you now" in page
    assert M21InboxKind.GAME_THREAD  # the console links the game page, whose thread the host runs


def test_each_console_button_posts_to_its_own_url_and_a_bad_form_is_refused_in_it_M_SETUP_2():
    """No field of the console chooses what runs: each button's form has its own URL (POST only), the page takes
    no POST, and a malformed form comes back with its errors (400), changing nothing."""
    table = build_game()
    page = get(table, table.host).content.decode()
    assert 'name="form"' not in page and 'name="public"' not in page
    for button in ("extend", "shorten", "vote_count", "thread_members_only", "modkill", "replace"):
        url = reverse(f"staff_admin:m21_console_{button}", args=[table.game.slug])
        assert f'action="{url}"' in page, button
        assert get(table, table.host, url).status_code == 405, button
    with time_machine.travel(table.tick(), tick=False):
        assert web(table.host).post(console_url(table), {"extend-hours": "2"}).status_code == 405
    deadline = table.day(1).deadline
    bad = post(table, table.host, "extend", {"extend-hours": "two"})
    assert bad.status_code == 400
    form = bad.content.decode().split(reverse("staff_admin:m21_console_extend", args=[table.game.slug]))[1]
    assert 'class="errorlist' in form.split("</form>")[0]
    assert table.day(1).deadline == deadline and not GameEvent.objects.filter(kind="m21.phase_extended").exists()


def test_the_dashboard_calls_the_m21_host_host_not_procurator_M_SETUP_4():
    table = build_game()
    page = get(table, table.host, reverse("staff_admin:index")).content.decode()
    row = page.split('<tr data-role="procurator">')[1].split("</tr>")[0]
    assert "<td>Host</td>" in row and "Procurator" not in row
