"""The seam holds: a toy third ruleset (``tests.toy_ruleset``), registered by a fixture without editing any shared
file, signs players up, deals, plays days and a night through the shared engine in the test client (the engine's
thread pages carry the day's votes and the mafia's kill), and shows in the game list, the host's console and the
archive; it never inherits another ruleset's grants, inbox kinds or pages."""
from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from html import unescape
from types import MappingProxyType

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse
from django.utils.translation import override

from archive.selectors import consent_rows_for
from cities.models import HOST_STAFF_KIND, City, Game, GameStatus, LifeStatus, Resident, StaffRole
from cities.scheduler import advance_clock
from cities.services import do_appoint_staff, do_create_game
from cities.staff_kinds import STAFF_TABLES, staff_kind_choices, staff_kind_label, staff_kind_problems, staff_kinds_of
from inboxes import knowledge, policies
from inboxes.knowledge import visible_staff
from inboxes.membership_services import do_replace_player
from inboxes.models import Inbox, Membership, MembershipState
from inboxes.page_policy import can_leave_inbox, offers_nomination_link, offers_secret_inbox
from inboxes.selectors import inbox_list_for
from inboxes.services import do_create_secret_inbox, do_create_stage_inbox
from kernel.errors import InvalidInput, NotAllowed
from kernel.events import Audience, event_audience
from kernel.public_ids import new_idempotency_key
from kernel.rulesets import inbox_kind_label, known_page_sections, ruleset_choices, ruleset_of
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import MafiaDraw
from staff.audit_sentences import kind_label, sentence_of
from tests.conftest import fresh
from tests.factories import UserFactory
from tests.toy_ruleset import ruleset as toy

pytestmark = pytest.mark.django_db

START = datetime(2031, 3, 3, 12, 0, tzinfo=UTC)
NAMES = ("Ann", "Ben", "Cid", "Dot", "Eve", "Fay", "Gus", "Hal")


@pytest.fixture
def spec(monkeypatch):
    return toy.register(monkeypatch)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _post(user, inbox: Inbox, text: str):
    return _client(user).post(reverse("inbox_thread", args=[inbox.public_id]),
                              {"text": text, "idempotency_key": new_idempotency_key()})


@pytest.fixture
def table(spec):
    host = UserFactory(username="toyhost", display_name="Toyhost")
    players = {name: UserFactory(username=name.lower(), display_name=name) for name in NAMES}
    with time_machine.travel(START - timedelta(hours=1), tick=False):
        game = do_create_game(title="Toy Town", slug="toy-town", ruleset=toy.KEY, acting_user=host)
        for user in players.values():
            response = _client(user).post(reverse("sign_up", args=[game.slug]))
            assert response.status_code == 302
    toy.do_deal_toy_game(game, acting_user=host, rng=random.Random(4), now=START)
    roles = toy.roles_of(game)
    by_role = {}
    for seat in Resident.objects.filter(game=game):
        by_role.setdefault(roles[str(seat.pk)], []).append(seat)
    return game, host, players, by_role


def _seat(game, name) -> Resident:
    return Resident.objects.get(game=game, name=name)


def _city(game) -> City:
    """A city row for the inboxes of Lepra's city-bound kinds that a test writes into a toy game past the services
    (the toy itself has none)."""
    return City.objects.create(game=game, number=1, name="Elsewhere")


def test_the_toy_registers_and_its_choices_and_sections_come_from_the_registry(spec):
    assert ("toy", "Toy") in ruleset_choices()
    assert ruleset_of(Game(ruleset="toy")) is spec
    assert not spec.has_page_section("cities") and "cities" in known_page_sections()
    assert not spec.has_cities  # it declares no cities and inherits none
    # It inherits no other ruleset's grants: its host reads its two threads, nothing else by kind.
    assert [g.inbox_kind for g in policies.staff_grants_of("toy", HOST_STAFF_KIND)] == \
        [toy.ToyInboxKind.SQUARE, toy.ToyInboxKind.DEN]
    assert policies.staff_grants_of("toy", "tribune") == ()  # a Lepra kind: not the toy's
    assert policies.spectator_grants_of("toy") == ()


def test_the_toy_deals_plays_a_day_and_a_night_in_the_client_and_shows_in_list_console_and_archive(table):
    game, host, players, by_role = table
    square, den = toy.thread(game), toy.thread(game, toy.ToyInboxKind.DEN)
    mafia = sorted(by_role["mafioso"], key=lambda r: r.name)
    town = sorted(by_role["citizen"] + by_role["witness"], key=lambda r: r.name)
    assert len(mafia) == 2 and len(by_role["witness"]) == 1
    assert set(Inbox.objects.filter(game=game).values_list("kind", flat=True)) == {toy.ToyInboxKind.SQUARE,
                                                                                    toy.ToyInboxKind.DEN}
    # Its seats and threads are in no city, and the game has none.
    assert not City.objects.filter(game=game).exists()
    assert set(Resident.objects.filter(game=game).values_list("city", flat=True)) == {None}
    assert set(Inbox.objects.filter(game=game).values_list("city", flat=True)) == {None}
    # The game list shows it with its ruleset's name.
    home = Client().get(reverse("home")).content.decode()
    assert "Toy Town" in home and "Toy ·" in home

    # Day 1: five votes on the first mafioso, two on a townie; a bad name is refused in words and stores nothing.
    with time_machine.travel(START + timedelta(hours=2), tick=False):
        refused = _post(players[town[0].name], square, "vote Nobody")
        assert refused.status_code == 400 and "No living player is named Nobody." in unescape(refused.content.decode())
        for voter in town[:5]:
            assert _post(players[voter.name], square, f"vote {mafia[0].name}").status_code == 302
        for voter in mafia:
            assert _post(players[voter.name], square, f"vote {town[0].name}").status_code == 302
        # An outsider and the town never read the mafia's thread: the same 404 as a missing one.
        assert _client(players[town[0].name]).get(reverse("inbox_thread", args=[den.public_id])).status_code == 404
        assert _client(host).get(reverse("inbox_thread", args=[den.public_id])).status_code == 200
    advance_clock(START + timedelta(hours=24, minutes=1), game=game)
    assert _seat(game, mafia[0].name).status == LifeStatus.DEAD
    assert square.messages.filter(body=f"Day 1: {mafia[0].name} is executed with 5 votes.").exists()

    # Night 1: the surviving mafioso kills in the mafia thread; the last line counts; by day it was refused.
    with time_machine.travel(START + timedelta(hours=26), tick=False):
        assert _post(players[mafia[1].name], den, f"kill {town[0].name}").status_code == 302
        assert _post(players[mafia[1].name], den, f"kill {town[1].name}").status_code == 302
        dead_voice = _post(players[mafia[0].name], square, "I was town!")
        assert dead_voice.status_code == 403
    advance_clock(START + timedelta(hours=36, minutes=1), game=game)
    assert _seat(game, town[1].name).status == LifeStatus.DEAD and _seat(game, town[0].name).status == "alive"
    assert square.messages.filter(body=f"Night 1: {town[1].name} died.").exists()
    game.refresh_from_db()
    assert game.day_number == 2 and game.status == GameStatus.RUNNING

    # The host's console lists the game (the engine's dashboard), with no tool of another ruleset.
    console = _client(host).get(reverse("staff_admin:index"))
    assert console.status_code == 200 and "Toy Town" in console.content.decode()

    # Day 2: the town executes the last mafioso; the town wins, and the archive says so in the toy's words.
    with time_machine.travel(START + timedelta(hours=40), tick=False):
        for voter in [t for t in town if t.name != town[1].name][:4]:
            assert _post(players[voter.name], square, f"vote {mafia[1].name}").status_code == 302
    advance_clock(START + timedelta(hours=60, minutes=1), game=game)
    game.refresh_from_db()
    assert game.status == GameStatus.FINISHED
    with time_machine.travel(START + timedelta(hours=61), tick=False):
        archive = Client().get(reverse("archive_game", args=[game.slug])).content.decode()
    assert '<p class="winner" data-winner="town">The town won.</p>' in archive
    assert 'data-section="cast"' in archive and f'<li data-player="{mafia[0].name}">{mafia[0].name}: mafioso</li>' \
        in archive
    # It inherits no other ruleset's disclosure: its threads stay closed to a visitor after the game (M21 makes its
    # game thread public, Lepra its city inbox; the toy declares nothing).
    with time_machine.travel(START + timedelta(hours=61), tick=False):
        for inbox in (square, den):
            assert Client().get(reverse("inbox_thread", args=[inbox.public_id])).status_code == 404
    assert not policies.public_after_game_kinds("toy") and not policies.open_on_request_kinds("toy")


def test_the_toy_words_its_own_audit_kinds_and_its_host_reads_them_in_the_console_log(table):
    game, host, _players, _roles = table
    assert event_audience("toy.dealt") is Audience.PROCURATOR  # the family the toy declares
    assert sentence_of(game, "toy.dealt") == "%(actor)s dealt the roles to %(count)s players."
    assert sentence_of(game, "voting.opened") is None and sentence_of(game, "m21.day_decided") is None
    with override("en"):
        assert kind_label("toy.dealt") == "… dealt the roles to … players."
    body = _client(host).get("/staff/cities/gameevent/?all=").content.decode()
    shown = " ".join(re.sub(r"<script.*?</script>|<[^>]+>", " ", body, flags=re.DOTALL).split())
    assert "Toyhost dealt the roles to 8 players." in shown and "toy.dealt" not in shown


def test_the_toy_has_no_secret_inboxes_and_no_page_offers_one(table):
    game, _host, players, _roles = table
    alice = players[NAMES[0]]
    assert not offers_secret_inbox(fresh(alice), game)
    with pytest.raises(NotAllowed):
        do_create_secret_inbox(game, title="x", members=[_seat(game, NAMES[1])], acting_user=alice)
    assert _client(alice).get(reverse("secret_new", args=[game.slug])).status_code == 404


def test_the_toy_asks_no_consent_for_a_kind_another_ruleset_discloses_with_consent(table):
    # The toy declares no ``consent_after_game``: an inbox about a seat of a kind Lepra asks consent for (written
    # here past the services, which refuse the kind) waits for nobody's consent in a toy game.
    game, _host, players, _roles = table
    seat = _seat(game, NAMES[0])
    assert seat.city is None  # the toy has no cities; the kind is Lepra's, whose inboxes of it are in one
    Inbox.objects.create(game=game, kind=LepraInboxKind.PERSONAL, title="about Ann", resident=seat, city=_city(game),
                         created_at=START)
    assert consent_rows_for(fresh(players[NAMES[0]])) == []


def test_the_toy_declares_none_of_lepras_per_kind_behaviour_so_its_pages_and_policy_apply_none(spec, table, monkeypatch):
    # Inboxes of the kinds Lepra declares in its tables, written here past the services (which refuse the kinds):
    # in a toy game the engine leaves, links, organises, signs and discloses by none of them. The toy's host may
    # organise (``secret_organizers``), but the toy declares no kind an organizer takes part in.
    monkeypatch.setattr(spec, "policy_grants", MappingProxyType({**spec.policy_grants,
                                                                 "secret_organizers": (HOST_STAFF_KIND,)}))
    game, host, players, _roles = table
    ann, seat = players[NAMES[0]], _seat(game, NAMES[0])
    role = StaffRole.objects.get(game=game, user=host, kind=HOST_STAFF_KIND)

    def inbox(kind, **fields):
        return Inbox.objects.create(game=game, kind=kind, title=kind, created_at=START, **fields)

    secret = inbox(LepraInboxKind.SECRET, organizer=role)
    city = _city(game)  # Lepra's kinds of inboxes are in a city; the toy's seats are in none
    personal = inbox(LepraInboxKind.PERSONAL, resident=seat, city=city)
    complaint, notary = inbox(LepraInboxKind.MAFIA_COMPLAINT, city=city), inbox(LepraInboxKind.NOTARY)
    for each, state in ((secret, MembershipState.MEMBER), (personal, MembershipState.MEMBER),
                        (complaint, MembershipState.BANNED)):
        Membership.objects.create(inbox=each, resident=seat, state=state, since=START)
    assert not can_leave_inbox(fresh(ann), secret)
    assert not offers_nomination_link(fresh(ann), personal)
    assert not policies.can_read_inbox(fresh(host), secret)
    assert secret not in policies.readable_inboxes(fresh(host), game)
    with override("en"):
        assert policies.post_denial_reason(fresh(ann), complaint) == "You are banned in this inbox."
    MafiaDraw.objects.create(game=game, lists=[], salt="s", commitment="c", notary=notary, committed_at=START)
    Game.objects.filter(pk=game.pk).update(status=GameStatus.FINISHED)
    notary = Inbox.objects.select_related("game").get(pk=notary.pk)
    assert not policies.is_disclosed(notary)
    assert notary not in policies.readable_inboxes(AnonymousUser(), notary.game)


def test_the_toy_lists_its_inboxes_by_city_and_id_and_in_the_order_it_declares_once_it_declares_one(spec, table,
                                                                                                   monkeypatch):
    game, host, _players, _roles = table
    threads = list(Inbox.objects.filter(game=game).order_by("pk"))
    assert {i.kind for i in threads} == {toy.ToyInboxKind.SQUARE, toy.ToyInboxKind.DEN}
    assert [i.pk for i in inbox_list_for(fresh(host), game)] == [i.pk for i in threads]
    monkeypatch.setattr(spec, "inbox_kind_order", (toy.ToyInboxKind.DEN,))
    mafia_first = sorted(threads, key=lambda i: (i.kind != toy.ToyInboxKind.DEN, i.pk))
    assert [i.pk for i in inbox_list_for(fresh(host), game)] == [i.pk for i in mafia_first]
    assert mafia_first != threads


def test_the_toys_own_staff_kind_is_registered_and_gives_exactly_the_powers_the_toy_declares(table):
    game, host, players, by_role = table
    referee_user = UserFactory(username="ref", display_name="Ref")
    # The toy's referee is a staff kind of its registry: its choices, its label, appointed by the engine's service.
    assert ("referee", "Referee") in staff_kind_choices() and staff_kind_problems() == []
    role = do_appoint_staff(game, referee_user, toy.REFEREE, acting_user=host, now=START)
    role.full_clean()
    assert (role.kind, role.city_id, staff_kind_label(game, role.kind)) == ("referee", None, "Referee")
    assert [r.kind for r in visible_staff(fresh(players[NAMES[0]]), game)] == [HOST_STAFF_KIND, "referee"]
    # Another ruleset's kind is no kind of the toy's.
    with pytest.raises(InvalidInput, match="Unknown staff role: tribune."):
        do_appoint_staff(game, UserFactory(username="trib"), "tribune", acting_user=host, now=START)
    # The referee reads the game thread and posts nowhere; the mafia thread is closed to them (the same 404).
    square, den = toy.thread(game), toy.thread(game, toy.ToyInboxKind.DEN)
    referee = fresh(referee_user)
    assert policies.can_read_inbox(referee, square) and not policies.can_post_in_inbox(referee, square)
    assert not policies.can_read_inbox(referee, den)
    assert set(policies.readable_inboxes(referee, game)) == {square}
    assert _client(referee_user).get(reverse("inbox_thread", args=[den.public_id])).status_code == 404
    # None of the engine's staff tables names it: no city, no court, no secret, no night, no co-host powers.
    assert all(not staff_kinds_of(game, t) for t in STAFF_TABLES)
    mafioso = by_role["mafioso"][0]
    assert knowledge.visible_alignment(referee, mafioso) is None
    assert not policies.holds_role_of(referee, game, "night_staff_kinds")  # no night knowledge (a city game's)
    with pytest.raises(NotAllowed):
        do_replace_player(mafioso, UserFactory(username="sub"), acting_user=referee_user, now=START)


def test_the_toy_brings_its_own_inbox_kinds_which_the_engine_takes_without_a_migration(table):
    game, host, players, _roles = table
    square = toy.thread(game)
    assert ("toy_square", "Town square") in list(Inbox._meta.get_field("kind").choices)  # read from the registry
    square.clean_fields(exclude=[f.name for f in Inbox._meta.fields if f.name != "kind"])  # a valid choice
    assert inbox_kind_label(toy.ToyInboxKind.DEN, game) == "Mafia den"
    # The roles the shared services ask for are none of the toy's: no stage, no city square to notify.
    with override("en"), pytest.raises(NotAllowed) as refused:
        do_create_stage_inbox(game, title="Stage", speakers=[_seat(game, NAMES[0])], acting_user=fresh(host))
    assert str(refused.value) == "This game's rules do not provide this inbox."
    assert not Inbox.objects.filter(game=game).exclude(kind__in=toy.ToyInboxKind.values).exists()
    # The archive's map leaves out no kind of the toy's (it declares no ``map_hidden_kinds``): both threads show.
    body = _client(host).get(reverse("archive_map", args=[game.slug])).content.decode()
    assert "Town square" in body and "Mafia den" in body
