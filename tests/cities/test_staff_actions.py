"""The staff console's actions (issue 3 item 8: "Admin actions call the same services as the pages").

Each action is driven over HTTP as a browser does it: the changelist POST (``action`` + ``_selected_action``),
then, where input is needed, the intermediate page's POST (``apply``). Asserted: the exact resulting state
(seat, memberships, inboxes, hidden flag), the ``GameEvent`` audit rows, the exact success and refusal messages
(the service's own words), refusals for the wrong persona changing nothing, and intermediate pages that name
nothing the viewer may not know (RULES.md L-REPLACE-1, L-DEATH-1, L-STAFF-3, L-INBOX-18/19/21, L-STAFF-6).
"""
from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from django.utils import translation

from cities.models import HOST_STAFF_KIND, City, GameEvent, LifeStatus, Resident, StaffRole
from inboxes import policies, policy_tables
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.demo import STAFF_NAMES
from tests.admin_keys import action_url
from tests.support.policy_matrix import expected_access, label
from tests.support.staff_console import (
    CHANGELIST,
    STAFF_PERSONAS,
    act,
    flashed,
    listed_ids,
    nothing_found,
    staff_client,
    without_kind_filter_choices,
)

K = LepraInboxKind
NO_ACTION = "Действие не выбрано."
OPTION = re.compile(r'<option value="([a-z_]+)">')


def offered(client: Client, model: str) -> set[str]:
    return set(OPTION.findall(client.get(CHANGELIST[model]).content.decode())) - {""}


def inbox(demo, kind: str, city: int | None = None) -> Inbox:
    qs = Inbox.objects.filter(game=demo.game, kind=kind, rolled_over_at__isnull=True, killed_at__isnull=True)
    return qs.get(city__number=city) if city is not None else qs.order_by("pk").first()


def state_of(resident: Resident) -> tuple:
    """Everything an action could change about a seat: itself and its memberships."""
    resident = Resident.objects.get(pk=resident.pk)
    rows = sorted(Membership.objects.filter(resident=resident).values_list("inbox_id", "state", "banned_until",
                                                                            "reason"))
    return resident.user_id, resident.name, resident.status, seats.is_spirit(resident), rows


def events():
    return GameEvent.objects.order_by("-id")


def local_input(demo, delta: timedelta) -> tuple[str, datetime]:
    """A wall-clock input in the game's zone ``delta`` from now, and the aware UTC instant it means."""
    zone = ZoneInfo(demo.game.time_zone)
    naive = (datetime.now(UTC) + delta).astimezone(zone).replace(second=0, microsecond=0, tzinfo=None)
    return naive.strftime("%Y-%m-%dT%H:%M"), naive.replace(tzinfo=zone).astimezone(UTC)


# --------------------------------------------------------------------------------------------------------------
# Who is offered what
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("persona, resident_actions, inbox_actions, message_actions", [
    ("procurator", {"replace_player", "record_death"}, {"roll_over_inboxes", "kill_inboxes"}, {"hide_messages"}),
    ("tribune1", set(), {"roll_over_inboxes", "kill_inboxes"}, {"hide_messages"}),
    ("arbiter", {"penalty_ban"}, {"roll_over_inboxes", "kill_inboxes"}, {"hide_messages"}),
    ("consigliere", set(), {"roll_over_inboxes", "kill_inboxes"}, {"hide_messages"}),
])
def test_each_persona_is_offered_only_the_actions_its_services_allow(demo, persona, resident_actions,
                                                                     inbox_actions, message_actions):
    client = staff_client(getattr(demo, persona))
    assert offered(client, "resident") == resident_actions
    assert offered(client, "inbox") == inbox_actions
    assert offered(client, "message") == message_actions


# --------------------------------------------------------------------------------------------------------------
# Replace the player (L-REPLACE-1)
# --------------------------------------------------------------------------------------------------------------

def test_the_procurator_replaces_a_player_L_REPLACE_1(demo):
    client = staff_client(demo.procurator)
    seat = demo.seat("honest")
    old_name, before, n_events = seat.name, state_of(seat), events().count()

    page = act(client, "resident", "replace_player", [seat])
    body = page.content.decode()
    assert page.status_code == 200 and 'name="username"' in body and html.escape(old_name) in body
    assert state_of(seat) == before

    # An unknown username is the form's error; nothing is called.
    page = act(client, "resident", "replace_player", [seat], submit=True, username="nobody-such")
    assert "Аккаунта с таким логином нет." in page.content.decode()
    assert state_of(seat) == before and events().count() == n_events

    # A staff account is refused by the service, with its message.
    response = act(client, "resident", "replace_player", [seat], submit=True, username=demo.tribune1.username)
    assert flashed(response) == ["Ведущие игры не могут быть её жителями."]
    assert state_of(seat) == before and events().count() == n_events

    response = act(client, "resident", "replace_player", [seat], submit=True, username=demo.outsider.username)
    assert response.redirect_chain == [(CHANGELIST["resident"], 302)]
    seat.refresh_from_db()
    assert (seat.user_id, seat.name) == (demo.outsider.pk, demo.outsider.public_name)
    assert flashed(response) == [f"{seat.name} занимает место игрока {old_name}."]
    assert state_of(seat)[2:] == before[2:]  # status and memberships kept
    event = events().first()
    assert (event.kind, event.actor_id, event.payload["resident"], event.payload["old_user"],
            event.payload["new_user"]) == ("resident.replaced", demo.procurator.pk, seat.pk, demo.honest.pk,
                                           demo.outsider.pk)
    assert events().count() == n_events + 1
    # The old player has lost the city square at once.
    assert not policies.can_read_inbox(type(demo.honest).objects.get(pk=demo.honest.pk), inbox(demo, K.CITY, 1))


def test_replacement_takes_one_resident_at_a_time(demo):
    seats = [demo.seat("honest"), demo.seat("mafioso")]
    before = [state_of(s) for s in seats]
    response = act(staff_client(demo.procurator), "resident", "replace_player", seats, submit=True,
                   username=demo.outsider.username)
    assert flashed(response) == ["Выбирайте по одному жителю за раз."]
    assert [state_of(s) for s in seats] == before


@pytest.mark.parametrize("persona, action, data", [
    ("tribune1", "replace_player", {"username": "outsider"}),
    ("tribune1", "record_death", {"cause": "killed"}),
    ("arbiter", "record_death", {"cause": "executed"}),
    ("arbiter", "replace_player", {"username": "outsider"}),
    ("procurator", "penalty_ban", {"until": "2099-01-01T10:00", "reason": "insult"}),
    ("consigliere", "penalty_ban", {"until": "2099-01-01T10:00", "reason": "insult"}),
])
def test_the_wrong_persona_cannot_act_on_residents(demo, persona, action, data):
    seat = demo.seat("honest")
    city = inbox(demo, K.CITY, 1)
    before, n_events = state_of(seat), events().count()
    client = staff_client(getattr(demo, persona))
    # With other actions offered, the admin says "No action selected."; with none, the POST is just the list.
    expected = [NO_ACTION] if offered(client, "resident") else []
    response = act(client, "resident", action, [seat])
    assert response.status_code == 200 and flashed(response) == expected
    assert action_url(CHANGELIST["resident"], action) not in response.content.decode()  # no intermediate page
    # Its form posted to the action's own URL anyway: the action is not offered to the persona, a 403.
    response = act(client, "resident", action, [seat], submit=True, inboxes=[city.public_id], **data)
    assert response.status_code == 403 and flashed(response) == []
    assert state_of(seat) == before and events().count() == n_events


def test_tribune2_cannot_reach_city1_residents_not_even_in_the_queryset(demo):
    # Even the Procurator's own action, posted by the Tribune of city 2 on a city-1 seat: not offered, not found.
    seat = demo.seat("honest")
    before, n_events = state_of(seat), events().count()
    client = staff_client(demo.tribune2)
    assert seat.pk not in listed_ids(client, "resident")
    assert flashed(act(client, "resident", "record_death", [seat], submit=True, cause="killed")) == []
    assert state_of(seat) == before and events().count() == n_events


# --------------------------------------------------------------------------------------------------------------
# Record a death (L-DEATH-1)
# --------------------------------------------------------------------------------------------------------------

def test_the_procurator_records_a_death_with_its_membership_changes_L_DEATH_1(demo):
    client = staff_client(demo.procurator)
    seat = demo.seat("honest")
    page = act(client, "resident", "record_death", [seat]).content.decode()
    assert re.findall(r'<option value="(\w+)"', page.split('name="cause"')[1].split("</select>")[0]) == [
        "killed", "executed", "suicide", "penalty"]
    assert 'name="spirit"' in page
    assert Resident.objects.get(pk=seat.pk).status == LifeStatus.ALIVE

    city, cemetery = inbox(demo, K.CITY, 1), inbox(demo, K.CEMETERY)
    response = act(client, "resident", "record_death", [seat], submit=True, cause="executed", confirmed="yes")
    assert response.redirect_chain == [(CHANGELIST["resident"], 302)]
    assert flashed(response) == [f"Смерть жителя {seat.name} записана."]
    seat.refresh_from_db()
    assert (seat.status, seats.is_spirit(seat), seat.died_at is not None) == (LifeStatus.DEAD, False, True)
    assert Membership.objects.get(inbox=city, resident=seat).state == MembershipState.BANNED
    assert Membership.objects.get(inbox=cemetery, resident=seat).state == MembershipState.MEMBER
    event = events().first()
    assert (event.kind, event.actor_id, event.payload["resident"], event.payload["cause"], event.payload["spirit"]) == \
        ("resident.died", demo.procurator.pk, seat.pk, "executed", False)

    # Again: the service refuses, changing nothing.
    before, n_events = state_of(seat), events().count()
    response = act(client, "resident", "record_death", [seat], submit=True, cause="killed", confirmed="yes")
    assert flashed(response) == [f"Житель {seat.name} не жив."]
    assert state_of(seat) == before and events().count() == n_events


def test_a_spirit_is_only_a_night_victim_L_SPIRIT_1(demo):
    client = staff_client(demo.procurator)
    seat, other = demo.seat("mafioso"), demo.seat("commissar")
    before, n_events = state_of(seat), events().count()
    response = act(client, "resident", "record_death", [seat], submit=True, cause="suicide", spirit="on",
                   confirmed="yes")
    assert flashed(response) == ["Духом может стать только житель, убитый ночью."]
    assert state_of(seat) == before and events().count() == n_events

    response = act(client, "resident", "record_death", [seat, other], submit=True, cause="killed", spirit="on",
                   confirmed="yes")
    assert sorted(flashed(response)) == sorted([f"Смерть жителя {seat.name} записана.",
                                                f"Смерть жителя {other.name} записана."])
    for s in (seat, other):
        s.refresh_from_db()
        assert (s.status, seats.is_spirit(s)) == (LifeStatus.DEAD, True)
        assert not Membership.objects.filter(inbox=inbox(demo, K.CEMETERY), resident=s).exists()
    assert list(events().values_list("kind", flat=True)[:2]) == ["resident.died", "resident.died"]


# --------------------------------------------------------------------------------------------------------------
# Penalty ban (L-STAFF-3, L-INBOX-18)
# --------------------------------------------------------------------------------------------------------------

def candidate_labels(page: str) -> dict[int, str]:
    """inbox id -> label of the penalty-ban checkboxes on an intermediate page."""
    by_key = dict(Inbox.objects.values_list("public_id", "pk"))
    return {by_key[key]: html.unescape(text.strip()) for key, text in re.findall(
        r'<input type="checkbox" name="inboxes" value="([a-z0-9]+)"[^>]*>\s*([^<]*)</label>', page)}


def kind_name(inbox: Inbox) -> str:
    """The inbox kind's name as the Lepra console shows it (in the game's language, Russian)."""
    with translation.override("ru"):
        return str(inbox.get_kind_display())


def expected_candidates(demo, seat: Resident) -> dict[int, str]:
    """By the service's rule: open inboxes of the penalty kinds where the seat reads. The Arbiter sees the
    titles of those he reads (voting inboxes, precincts); for the others the kind and city only."""
    allowed, _ = expected_access(demo)["arbiter"]
    ban_kinds = policy_tables.kinds_of(demo.game, "penalty_ban_kinds")
    out = {}
    for m in Membership.objects.filter(resident=seat, state__in=["member", "banned"]).select_related("inbox__city"):
        i = m.inbox
        if i.kind in ban_kinds and i.killed_at is None and i.rolled_over_at is None:
            readable = label(i) in allowed
            out[i.pk] = i.title if readable else (
                f"{kind_name(i)} · {i.city.name}" if i.city_id else kind_name(i))
    return out


def test_the_penalty_ban_lists_only_what_the_arbiter_may_name_L_STAFF_6(demo):
    client = staff_client(demo.arbiter)
    allowed, _ = expected_access(demo)["arbiter"]
    unreadable_titles = [i.title for i in Inbox.objects.filter(game=demo.game).select_related("city", "resident")
                         if label(i) not in allowed]
    kinds_seen = {}
    for persona in ("honest", "mafioso", "commissar", "judge", "resident2"):
        seat = demo.seat(persona)
        page = act(client, "resident", "penalty_ban", [seat]).content.decode()
        assert 'name="until"' in page and 'name="reason"' in page and html.escape(seat.name) in page
        labels = candidate_labels(page)
        assert labels == expected_candidates(demo, seat), persona
        assert labels, persona
        kinds_seen[persona] = sorted(Inbox.objects.get(pk=pk).kind for pk in labels)
        # Never a mafia inbox, police station, secret inbox or any title the Arbiter may not read.
        ban_kinds = policy_tables.kinds_of(demo.game, "penalty_ban_kinds")
        assert not Inbox.objects.filter(pk__in=labels).exclude(kind__in=ban_kinds).exists()
        for title in unreadable_titles:
            assert html.escape(title) not in page, (persona, title)
        assert "data-fact" not in page and STAFF_NAMES["consigliere"] not in page
    # The mafioso's and the commissar's lists look like any honest resident's of the same city.
    assert kinds_seen["mafioso"] == kinds_seen["honest"] == kinds_seen["commissar"]


def test_the_arbiter_imposes_a_penalty_ban_L_INBOX_18(demo):
    client = staff_client(demo.arbiter)
    seat = demo.seat("honest")
    city = inbox(demo, K.CITY, 1)
    personal = Inbox.objects.get(kind=K.PERSONAL, resident=seat)
    until_input, until = local_input(demo, timedelta(days=2))
    response = act(client, "resident", "penalty_ban", [seat], submit=True, inboxes=[city.public_id, personal.public_id],
                   until=until_input, reason="Insult")
    assert response.redirect_chain == [(CHANGELIST["resident"], 302)]
    city_label = f"{kind_name(city)} · {city.city.name}"
    assert flashed(response) == [
        f"{seat.name} забанен до {until_input.replace('T', ' ')} ({demo.game.time_zone}) в ящиках: "
        f"{city_label}, {kind_name(personal)} · {personal.city.name}."]
    for i in (city, personal):
        m = Membership.objects.get(inbox=i, resident=seat)
        assert (m.state, m.banned_until, m.reason) == (MembershipState.BANNED, until, "Insult")
    event = events().first()
    assert (event.kind, event.actor_id, event.payload) == (
        "membership.penalty_banned", demo.arbiter.pk,
        {"resident": seat.pk, "inboxes": [city.pk, personal.pk], "until": until.isoformat(), "reason": "Insult"})


@pytest.mark.parametrize("case, message", [
    ("past", "Окончание бана должно быть в будущем."),
    ("no reason", "Укажите причину штрафа."),
    ("no inbox", "Укажите хотя бы один ящик."),
])
def test_penalty_ban_refusals_are_the_services_and_change_nothing(demo, case, message):
    seat = demo.seat("honest")
    city = inbox(demo, K.CITY, 1)
    data = {"inboxes": [city.public_id], "until": local_input(demo, timedelta(hours=5))[0], "reason": "x"}
    if case == "past":
        data["until"] = "2020-01-01T10:00"
    elif case == "no reason":
        data["reason"] = "  "
    else:
        del data["inboxes"]
    before, n_events = state_of(seat), events().count()
    assert flashed(act(staff_client(demo.arbiter), "resident", "penalty_ban", [seat], submit=True, **data)) == [message]
    assert state_of(seat) == before and events().count() == n_events


def test_a_penalty_ban_cannot_name_a_secret_inbox_same_answer_for_member_and_stranger(demo):
    # A forged POST naming the mafia inbox of city 1 is the form's "not one of the choices", alike for the mafioso
    # (a member) and the honest resident (not one): the answer tells nothing of who is mafia.
    client = staff_client(demo.arbiter)
    mafia = Inbox.objects.get(game=demo.game, kind=K.MAFIA, city__number=1)
    answers = []
    for persona in ("mafioso", "honest"):
        seat = demo.seat(persona)
        before, n_events = state_of(seat), events().count()
        page = act(client, "resident", "penalty_ban", [seat], submit=True, inboxes=[mafia.public_id],
                   until="2099-01-01T10:00", reason="x").content.decode()
        assert f"Выберите корректный вариант. {mafia.public_id} нет среди допустимых значений." in page
        assert html.escape(mafia.title) not in page
        assert state_of(seat) == before and events().count() == n_events
        errors = re.findall(r'<ul class="errorlist[^"]*"[^>]*>.*?</ul>', page, re.S)
        answers.append(errors)
    assert answers[0] == answers[1]


# --------------------------------------------------------------------------------------------------------------
# Inboxes: roll over and close
# --------------------------------------------------------------------------------------------------------------

def test_the_tribune_rolls_over_his_city_square(demo):
    client = staff_client(demo.tribune1)
    city = inbox(demo, K.CITY, 1)
    rows = dict(Membership.objects.filter(inbox=city).exclude(state=MembershipState.REMOVED)
                .values_list("resident_id", "state"))
    page = act(client, "inbox", "roll_over_inboxes", [city]).content.decode()
    assert 'name="title"' in page and html.escape(city.title) in page
    assert not Inbox.objects.filter(predecessor=city).exists()

    response = act(client, "inbox", "roll_over_inboxes", [city], submit=True, title="")
    assert response.redirect_chain == [(CHANGELIST["inbox"], 302)]
    new = Inbox.objects.get(predecessor=city)
    assert flashed(response) == [f"Ящик «{city.title}» перенесён в новый ящик «{new.title}»."]
    assert new.title.startswith(city.title) and (new.kind, new.city_id, new.organizer_id) == (
        city.kind, city.city_id, city.organizer_id)
    city.refresh_from_db()
    assert city.rolled_over_at is not None
    assert dict(Membership.objects.filter(inbox=new).values_list("resident_id", "state")) == rows
    assert set(Membership.objects.filter(inbox=city).exclude(state=MembershipState.REMOVED)
               .values_list("state", flat=True)) == {MembershipState.BANNED}
    assert list(events().values_list("kind", "actor_id")[:2]) == [("inbox.rolled_over", demo.tribune1.pk),
                                                                   ("inbox.created", demo.tribune1.pk)]
    # A title of one's own; and a rolled-over inbox cannot roll again.
    response = act(client, "inbox", "roll_over_inboxes", [new], submit=True, title="Day 3 square")
    assert Inbox.objects.get(predecessor=new).title == "Day 3 square"
    n_events = events().count()
    assert flashed(act(client, "inbox", "roll_over_inboxes", [city], submit=True, title="")) == [
        "Этот ящик уже перенесён в новый."]
    assert events().count() == n_events


def test_only_the_organizer_rolls_over_and_strangers_find_nothing(demo):
    city = inbox(demo, K.CITY, 1)
    n_events = events().count()
    # The Procurator reads the square but does not run it: the service refuses.
    assert flashed(act(staff_client(demo.procurator), "inbox", "roll_over_inboxes", [city], submit=True, title="")) == [
        "Перенести ящик в новый может только его организатор."]
    # The Tribune of city 2 does not even have it in his queryset: the same answer as a missing id.
    client = staff_client(demo.tribune2)
    assert flashed(act(client, "inbox", "roll_over_inboxes", [city], submit=True, title="")) == [nothing_found()]
    assert flashed(act(client, "inbox", "kill_inboxes", [city], submit=True)) == [nothing_found()]
    city.refresh_from_db()
    assert (city.rolled_over_at, city.killed_at) == (None, None)
    assert not Inbox.objects.filter(predecessor=city).exists() and events().count() == n_events


def test_a_moderator_closes_an_inbox_after_confirming(demo):
    client = staff_client(demo.procurator)
    city = inbox(demo, K.CITY, 1)
    page = act(client, "inbox", "kill_inboxes", [city]).content.decode()
    assert "Закрыть эти ящики?" in page and html.escape(city.title) in page
    city.refresh_from_db()
    assert city.killed_at is None

    response = act(client, "inbox", "kill_inboxes", [city], submit=True)
    assert flashed(response) == [f"Ящик «{city.title}» закрыт."]
    city.refresh_from_db()
    assert city.killed_at is not None
    event = events().first()
    assert (event.kind, event.actor_id, event.payload) == ("inbox.killed", demo.procurator.pk, {"inbox": city.pk})
    n_events = events().count()
    assert flashed(act(client, "inbox", "kill_inboxes", [city], submit=True)) == ["Этот ящик уже закрыт."]
    assert events().count() == n_events


def test_a_reader_who_does_not_run_an_inbox_cannot_close_it(demo):
    # The Arbiter reads the office but the Procurator runs it.
    office = inbox(demo, K.OFFICE)
    n_events = events().count()
    assert flashed(act(staff_client(demo.arbiter), "inbox", "kill_inboxes", [office], submit=True)) == [
        "Закрыть ящик могут только его организатор или Прокурор игры."]
    office.refresh_from_db()
    assert office.killed_at is None and events().count() == n_events


# --------------------------------------------------------------------------------------------------------------
# Messages: hide (L-INBOX-21)
# --------------------------------------------------------------------------------------------------------------

def test_a_moderator_hides_a_message_L_INBOX_21(demo):
    client = staff_client(demo.tribune1)
    message = Message.objects.filter(inbox__game=demo.game, inbox__kind=K.CITY, inbox__city__number=1,
                                     is_hidden=False).first()
    response = act(client, "message", "hide_messages", [message])
    assert response.redirect_chain == [(CHANGELIST["message"], 302)]
    assert flashed(response) == [f"Сообщение в ящике «{message.inbox.title}» скрыто."]
    message.refresh_from_db()
    assert (message.is_hidden, message.hidden_by_id, message.hidden_at is not None) == (True, demo.tribune1.pk, True)
    event = events().first()
    assert (event.kind, event.actor_id, event.payload) == (
        "message.hidden", demo.tribune1.pk, {"inbox": message.inbox_id, "message": message.pk})
    n_events = events().count()
    assert flashed(act(client, "message", "hide_messages", [message])) == ["Это сообщение уже скрыто."]
    assert events().count() == n_events


def test_hiding_is_refused_to_readers_who_do_not_moderate_and_invisible_to_strangers(demo):
    office = Message.objects.filter(inbox__game=demo.game, inbox__kind=K.OFFICE, is_hidden=False).first()
    city1 = Message.objects.filter(inbox__game=demo.game, inbox__kind=K.CITY, inbox__city__number=1,
                                   is_hidden=False).first()
    n_events = events().count()
    # The office is run by the Procurator: the Arbiter reads it but may not hide there.
    assert flashed(act(staff_client(demo.arbiter), "message", "hide_messages", [office])) == [
        "Скрывать сообщения могут только организатор ящика или Прокурор игры."]
    # City 1's square is not in the Tribune of city 2's queryset.
    assert flashed(act(staff_client(demo.tribune2), "message", "hide_messages", [city1])) == [nothing_found()]
    assert not Message.objects.filter(pk__in=[office.pk, city1.pk], is_hidden=True).exists()
    assert events().count() == n_events


# --------------------------------------------------------------------------------------------------------------
# The Procurator's stage page (L-INBOX-19)
# --------------------------------------------------------------------------------------------------------------

def stage_url(demo) -> str:
    return f"/staff/games/{demo.game.slug}/stage/"


def test_the_procurator_opens_a_stage_for_a_city_L_INBOX_19(demo):
    client = staff_client(demo.procurator)
    assert f'href="{stage_url(demo)}"' in client.get("/staff/").content.decode()
    page = client.get(stage_url(demo)).content.decode()
    assert 'name="speakers"' in page and 'name="audience"' in page and "data-fact" not in page
    audience = re.search(r'<select name="audience".*?</select>', page, re.DOTALL).group(0)
    assert re.findall(r'value="([^"]*)"', audience) == ["", "all", *[str(c.number) for c in City.objects.filter(
        game=demo.game).order_by("number")]]  # cities by their public number, never a database id
    honest, mafioso = demo.seat("honest"), demo.seat("mafioso")
    city1 = honest.city
    response = client.post(stage_url(demo), {"title": "Confrontation", "speakers": [honest.public_id, mafioso.public_id],
                                             "audience": city1.number}, follow=True)
    stage = Inbox.objects.get(game=demo.game, kind=K.STAGE, title="Confrontation")
    assert response.redirect_chain == [(f"/staff/inboxes/inbox/{stage.public_id}/change/", 302)]
    assert flashed(response) == ["Сцена «Confrontation» открыта."]
    procurator_role = StaffRole.objects.get(game=demo.game, kind=HOST_STAFF_KIND)
    assert (stage.city_id, stage.organizer_id) == (city1.pk, procurator_role.pk)
    rows = dict(Membership.objects.filter(inbox=stage).values_list("resident_id", "state"))
    expected = {r: MembershipState.BANNED for r in Resident.objects.filter(city=city1).values_list("pk", flat=True)}
    expected.update({honest.pk: MembershipState.MEMBER, mafioso.pk: MembershipState.MEMBER})
    assert rows == expected
    event = events().first()
    assert (event.kind, event.actor_id, event.payload["inbox"], event.payload["members"]) == (
        "inbox.created", demo.procurator.pk, stage.pk, len(expected))


def test_a_stage_for_everyone_and_the_services_refusals(demo):
    client = staff_client(demo.procurator)
    dead_speaker = demo.seat("resident2")
    response = client.post(stage_url(demo), {"title": "Séance", "speakers": [dead_speaker.public_id], "audience": "all"},
                           follow=True)
    stage = Inbox.objects.get(game=demo.game, kind=K.STAGE, title="Séance")
    assert stage.city_id is None
    assert Membership.objects.filter(inbox=stage, state=MembershipState.BANNED).count() == 59
    assert flashed(response) == ["Сцена «Séance» открыта."]
    n_inboxes, n_events = Inbox.objects.count(), events().count()
    response = client.post(stage_url(demo), {"title": "Nobody speaks", "audience": ""}, follow=True)
    assert response.status_code == 200 and flashed(response) == ["Выберите хотя бы одного выступающего."]
    response = client.post(stage_url(demo), {"title": " ", "speakers": [dead_speaker.public_id]}, follow=True)
    assert flashed(response) == ["Заголовок не заполнен."]
    assert (Inbox.objects.count(), events().count()) == (n_inboxes, n_events)


@pytest.mark.parametrize("persona", ["tribune1", "arbiter", "consigliere", "honest", "superuser"])
def test_only_the_procurator_has_the_stage_page(demo, persona):
    client = staff_client(getattr(demo, persona))
    honest = demo.seat("honest")
    n_inboxes = Inbox.objects.count()
    missing = "/staff/games/no-such-game/stage/"
    for method in ("get", "post"):
        answers = [getattr(client, method)(url, {"title": "x", "speakers": [honest.pk], "audience": "all"},
                                           follow=True) for url in (stage_url(demo), missing)]
        assert answers[0].status_code == answers[1].status_code and answers[0].status_code in (403, 404)
        assert [s for _u, s in answers[0].redirect_chain] == [s for _u, s in answers[1].redirect_chain]
    assert 'stage/"' not in client.get("/staff/").content.decode()
    assert Inbox.objects.count() == n_inboxes


# --------------------------------------------------------------------------------------------------------------
# Intermediate pages leak nothing (L-STAFF-6, L-INBOX-20)
# --------------------------------------------------------------------------------------------------------------

INPUT_ACTIONS = {"resident": ["replace_player", "record_death", "penalty_ban"],
                 "inbox": ["roll_over_inboxes", "kill_inboxes"]}


@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_intermediate_pages_name_only_what_the_persona_may_see(demo, persona):
    client = staff_client(getattr(demo, persona))
    allowed, _ = expected_access(demo)[persona]
    inboxes = list(Inbox.objects.filter(game=demo.game).select_related("city", "resident"))
    unreadable = [i.title for i in inboxes if label(i) not in allowed]
    pages = []
    for model, actions in INPUT_ACTIONS.items():
        ids = listed_ids(client, model)
        for action in set(actions) & offered(client, model):
            selections = [[pk] for pk in ids[:6]] if model == "resident" else [ids]
            for selected in selections:
                response = act(client, model, action, selected)
                assert response.status_code == 200
                pages.append(response.content.decode())
    if persona != "tribune2":
        assert pages
    everything = without_kind_filter_choices("\n".join(pages))
    for title in unreadable:
        assert html.escape(title) not in everything, (persona, title)
    assert "alignment:" not in everything and 'data-fact="godfather"' not in everything
    assert (STAFF_NAMES["consigliere"] in everything) <= (persona in ("procurator", "consigliere"))
