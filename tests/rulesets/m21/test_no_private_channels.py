"""M21 allows no private channel (RULES.md M-SETUP-5): an M21 game has the game thread, the mafia thread, each
player's role PM with the hosts, the spectators' thread and the hosts' office, nothing else, and the hosts read every
one of them. The ruleset declares its inbox kinds (``RulesetSpec.inbox_kinds``): the engine refuses a secret inbox
in an M21 game, whoever asks and however (service or a real form post), and no M21 page offers one; Lepra's secret
inboxes (L-INBOX-13) go on working."""
from __future__ import annotations

from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from inboxes import policies, services
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.m21.kinds import M21InboxKind
from inboxes.page_policy import offers_secret_inbox
from kernel.errors import NotAllowed
from kernel.public_ids import new_idempotency_key
from kernel.rulesets import ruleset_of
from rulesets.m21 import services as m21_services
from tests.conftest import fresh
from tests.rulesets.m21.day_helpers import build_game, make_user

pytestmark = pytest.mark.django_db

REFUSAL = "This game's rules allow no private conversations: there are no secret inboxes in it."


@pytest.fixture
def english():
    """Services of an English game called directly speak its language, as its pages do."""
    with translation.override("en"):
        yield


@pytest.fixture
def table():
    t = build_game(seed=3, slug="m21-no-pm")
    t.spectator = make_user("Watcher")
    m21_services.do_join_as_spectator(t.game, acting_user=t.spectator, now=t.tick())
    return t


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _inbox_rows(game) -> tuple[int, int]:
    return Inbox.objects.filter(game=game).count(), Membership.objects.filter(inbox__game=game).count()


def test_m21_declares_no_secret_inbox_and_exactly_its_five_kinds_M_SETUP_5(table):
    spec = ruleset_of(table.game)
    assert spec.inbox_kinds == {M21InboxKind.GAME_THREAD, M21InboxKind.MAFIA_THREAD, M21InboxKind.ROLE_PM,
                                M21InboxKind.SPECTATORS, M21InboxKind.OFFICE}
    assert not spec.lets_open_inbox_kind(LepraInboxKind.SECRET)
    kinds = set(Inbox.objects.filter(game=table.game).values_list("kind", flat=True))
    assert kinds == set(spec.inbox_kinds)
    assert Inbox.objects.filter(game=table.game, kind=M21InboxKind.ROLE_PM).count() == len(table.users)


def test_a_player_cannot_open_a_secret_inbox_by_the_service_M_SETUP_5(table, english):
    before = _inbox_rows(table.game)
    alice, bob = table.users["Alice"], table.seat("Bob")
    with pytest.raises(NotAllowed, match=f"^{REFUSAL}$"):
        services.do_create_secret_inbox(table.game, title="Just us", members=[bob], acting_user=alice,
                                        now=table.tick())
    for who in (table.host, table.cohost, table.spectator):  # nobody opens one: not the hosts, not a spectator
        with pytest.raises(NotAllowed, match=f"^{REFUSAL}$"):
            services.do_create_secret_inbox(table.game, title="Side chat", members=[bob], acting_user=who,
                                            now=table.tick())
    assert _inbox_rows(table.game) == before


def test_the_engine_creates_no_inbox_of_a_kind_the_ruleset_lacks_M_SETUP_5(table, english):
    before = _inbox_rows(table.game)
    with pytest.raises(NotAllowed, match="no inboxes of the kind “Secret”"):
        services.new_inbox(table.game, LepraInboxKind.SECRET, title="Backdoor", actor=None, now=table.tick(),
                           members=[table.seat("Alice"), table.seat("Bob")])
    with pytest.raises(NotAllowed, match="no inboxes of the kind “Stage”"):
        services.do_create_inbox(table.game, LepraInboxKind.STAGE, title="Séance", acting_user=None,
                                 members=[table.seat("Alice")], now=table.tick())
    assert _inbox_rows(table.game) == before


def test_a_player_posting_the_real_form_is_refused_in_words_and_nothing_is_created_M_SETUP_5(table):
    before = _inbox_rows(table.game)
    url = reverse("secret_new", args=[table.game.slug])
    client = _client(table.users["Alice"])
    response = client.post(url, {"title": "Just us", "members": [table.seat("Bob").public_id],
                                 "idempotency_key": new_idempotency_key()})
    assert response.status_code == 403
    assert REFUSAL in unescape(response.content.decode())
    assert b'name="members"' not in response.content and b"<form" not in response.content.split(b"<main")[-1]
    assert _inbox_rows(table.game) == before
    assert client.get(url).status_code == 404  # no form to show
    response = _client(table.spectator).post(url, {"title": "Watchers", "members": [table.seat("Bob").public_id]})
    assert response.status_code == 403 and REFUSAL in unescape(response.content.decode())
    assert _inbox_rows(table.game) == before


def test_no_m21_page_offers_a_secret_inbox_to_players_spectators_or_hosts_M_SETUP_5(table):
    secret_url = reverse("secret_new", args=[table.game.slug])
    pages = [reverse("my_inboxes", args=[table.game.slug]), reverse("m21_game", args=[table.game.slug])]
    for user in (table.users["Alice"], table.user_of_role("godfather"), table.spectator, table.host):
        assert not offers_secret_inbox(fresh(user), table.game)
        client = _client(user)
        for page in pages:
            response = client.get(page)
            assert response.status_code == 200, page
            html = response.content.decode()
            assert secret_url not in html and "New secret inbox" not in html, (user, page)


def test_the_hosts_read_every_thread_of_an_m21_game_M_SETUP_5(table):
    inboxes = list(Inbox.objects.filter(game=table.game))
    assert len(inboxes) == 4 + len(table.users)  # game thread, mafia thread, spectators, office, one PM each
    for host in (table.host, table.cohost):
        readable = set(policies.readable_inboxes(fresh(host), table.game).values_list("pk", flat=True))
        assert readable == {i.pk for i in inboxes}
        client = _client(host)
        for inbox in inboxes:
            assert policies.can_read_inbox(fresh(host), inbox)
            assert client.get(reverse("inbox_thread", args=[inbox.public_id])).status_code == 200


def test_lepra_secret_inboxes_still_open_from_the_form_L_INBOX_13_M_SETUP_5(demo):
    url = reverse("secret_new", args=[demo.game.slug])
    client = _client(demo.honest)
    assert offers_secret_inbox(fresh(demo.honest), demo.game)
    assert url in client.get(reverse("my_inboxes", args=[demo.game.slug])).content.decode()
    assert client.get(url).status_code == 200
    response = client.post(url, {"title": "Заговор", "members": [demo.seat("judge").public_id],
                                 "idempotency_key": new_idempotency_key()})
    assert response.status_code == 302
    inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.SECRET, title="Заговор")
    assert set(inbox.memberships.values_list("resident__user", flat=True)) == {demo.honest.pk, demo.judge.pk}
    # The Consigliere (L-STAFF-4) and an outsider are not offered one.
    assert not offers_secret_inbox(fresh(demo.consigliere), demo.game)
    assert not offers_secret_inbox(fresh(demo.outsider), demo.game)
    assert url not in _client(demo.outsider).get(reverse("my_inboxes", args=[demo.game.slug])).content.decode()
