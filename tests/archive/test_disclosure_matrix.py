"""The disclosure matrix (issue 8, L-ARCH-1, L-ARCH-2, the "after the game" column of L-INBOX): persona (winner,
loser, dead, logged-in spectator, visitor) x inbox kind x consent state, before and after the end, exact answers;
and the five forms of the policy (bool, queryset, messages, audience, by id) agreeing on every case.

The expectations are written out from RULES.md, not computed from the policy.
"""
from __future__ import annotations

import pytest
from django.http import Http404

from archive import services
from archive.models import OpenRequest
from cities.models import GameEvent
from inboxes import policies
from inboxes.models import Message
from kernel.errors import NotAllowed, WrongState
from tests.conftest import fresh

PERSONAS = ["winner", "loser", "dead", "spectator", "visitor"]
PUBLIC_AFTER = {"city1", "police", "cemetery", "notary"}

#: What each persona reads while the game runs (their own inboxes only), whatever the consents.
DURING = {
    "winner": {"city1", "personal:winner", "secret4"},
    "loser": {"city1", "mafia1", "secret4"},
    "dead": {"personal:dead", "secret4", "cemetery"},
    "spectator": set(),
    "visitor": set(),
}


def after(extra: set[str] = frozenset(), **per_persona: set[str]) -> dict[str, set[str]]:
    """After the end: public kinds to all, each member still reads their own, plus ``extra`` to all."""
    return {p: PUBLIC_AFTER | DURING[p] | set(extra) | per_persona.get(p, set()) for p in PERSONAS}


def consent(world, persona: str, label: str) -> None:
    services.do_give_consent(world.inbox(label), acting_user=fresh(world.personas[persona]))


def secret_member_users(world) -> list:
    d = world.demo
    return [d.honest, d.mafioso, d.resident2, d.commissar]


def read_set(world, persona: str) -> set[str]:
    """What ``persona`` reads among the inboxes under test, checking that the four forms agree on each."""
    user = fresh(world.personas[persona])
    listed = set(policies.readable_inboxes(user, world.game).values_list("pk", flat=True))
    with_messages = set(policies.readable_messages(user, Message.objects.filter(inbox__game=world.game))
                        .values_list("inbox_id", flat=True))
    got = set()
    for label in world.inboxes:
        inbox = world.inbox(label)
        can = policies.can_read_inbox(user, inbox)
        assert (inbox.pk in listed) == can, (persona, label)
        if inbox.messages.exists():
            assert (inbox.pk in with_messages) == can, (persona, label)
        if getattr(user, "is_authenticated", False):
            # The audience of what is posted now: the dead member of the secret inbox reads it as it was at his
            # death, and learns nothing posted after it while the game runs (L-STAFF-6 [interp]).
            dated = persona == "dead" and label == "secret4" and world.game.status != "finished"
            assert policies.readers_of_inbox(inbox).filter(pk=user.pk).exists() == (can and not dated), (persona, label)
        try:  # the by-id form: the same answer, a 404 when not readable
            assert policies.access_inbox_by_id(fresh(world.personas[persona]), inbox.public_id).pk == inbox.pk and can, (persona, label)
        except Http404:
            assert not can, (persona, label)
        if can:
            got.add(label)
    return got


def observed(world) -> dict[str, set[str]]:
    return {p: read_set(world, p) for p in PERSONAS}


def test_before_the_end_each_persona_reads_only_their_own_inboxes_whatever_the_consents_L_ARCH_1(world):
    assert observed(world) == DURING
    consent(world, "winner", "personal:winner")
    for user in secret_member_users(world):
        services.do_give_consent(world.inbox("secret4"), acting_user=fresh(user))
    assert observed(world) == DURING  # consent discloses nothing while the game runs


def test_after_the_end_public_kinds_and_the_draws_notary_open_to_all_others_stay_closed_L_ARCH_1(world):
    world.end()
    assert observed(world) == after()


def test_consent_given_during_the_game_opens_the_personal_inbox_at_the_end_L_ARCH_2(world):
    consent(world, "winner", "personal:winner")
    assert observed(world) == DURING
    world.end()
    assert observed(world) == after({"personal:winner"})


def test_personal_inbox_opens_to_everyone_with_its_residents_consent_only_L_INBOX_5(world):
    world.end()
    with pytest.raises(NotAllowed):  # nobody else consents for the resident
        services.do_give_consent(world.inbox("personal:winner"), acting_user=fresh(world.demo.mafioso))
    assert observed(world) == after()
    consent(world, "dead", "personal:dead")  # the dead resident consents for their own
    assert observed(world) == after({"personal:dead"})


def test_three_of_four_secret_members_consenting_keep_it_closed_the_fourth_opens_it_L_ARCH_2(world):
    world.end()
    members = secret_member_users(world)
    for user in members[:3]:
        services.do_give_consent(world.inbox("secret4"), acting_user=fresh(user))
        assert observed(world) == after()
    assert policies.is_disclosed(world.inbox("secret4")) is False
    services.do_give_consent(world.inbox("secret4"), acting_user=fresh(members[3]))
    assert observed(world) == after({"secret4"})
    assert policies.is_disclosed(world.inbox("secret4")) is True


def test_a_consent_is_revocable_until_the_inbox_opens_then_final_L_ARCH_2(world):
    members = secret_member_users(world)
    for user in members[:3]:
        services.do_give_consent(world.inbox("secret4"), acting_user=fresh(user))
    services.do_revoke_consent(world.inbox("secret4"), acting_user=fresh(members[0]))
    world.end()
    services.do_give_consent(world.inbox("secret4"), acting_user=fresh(members[3]))
    assert observed(world) == after()  # the revoked consent is missing
    services.do_give_consent(world.inbox("secret4"), acting_user=fresh(members[0]))
    assert observed(world) == after({"secret4"})
    with pytest.raises(WrongState) as exc:
        services.do_revoke_consent(world.inbox("secret4"), acting_user=fresh(members[1]))
    assert exc.value.rule == "L-ARCH-2"


def test_open_on_request_inboxes_open_to_a_logged_in_user_after_one_logged_click_L_ARCH_1(world):
    with pytest.raises(WrongState):  # not before the end
        services.do_request_open(world.inbox("mafia1"), acting_user=fresh(world.demo.outsider))
    world.end()
    with pytest.raises(NotAllowed):  # a visitor must log in
        services.do_request_open(world.inbox("mafia1"), acting_user=world.demo.anonymous)
    with pytest.raises(WrongState):  # a personal inbox is not "open to anyone who asks"
        services.do_request_open(world.inbox("personal:winner"), acting_user=fresh(world.demo.outsider))
    for label in ("mafia1", "office", "bar"):
        services.do_request_open(world.inbox(label), acting_user=fresh(world.demo.outsider))
    services.do_request_open(world.inbox("mafia1"), acting_user=fresh(world.demo.outsider))  # idempotent
    assert observed(world) == after(spectator={"mafia1", "office", "bar"})
    assert OpenRequest.objects.filter(user=world.demo.outsider).count() == 3
    logged = GameEvent.objects.filter(game=world.game, kind="archive.open_request", actor=world.demo.outsider)
    assert sorted(e.payload["inbox"] for e in logged) == sorted(world.inboxes[x].pk for x in ("mafia1", "office", "bar"))


def test_consents_page_lists_and_changes_the_residents_consents_L_ARCH_2(world, client):
    client.force_login(world.demo.honest)
    page = client.get("/me/consents/")
    assert page.status_code == 200
    shown = {row.inbox.pk for row in page.context["rows"]}
    assert world.inboxes["personal:winner"].pk in shown and world.inboxes["secret4"].pk in shown
    assert world.inboxes["mafia1"].pk not in shown and world.inboxes["personal:dead"].pk not in shown
    # Consent is permanent once disclosed: the first POST only asks again, changing nothing.
    ask = client.post("/me/consents/give/", {"inbox": world.inboxes["secret4"].public_id})
    assert ask.status_code == 200 and 'class="inline confirm-form"' in ask.content.decode()
    row = next(r for r in client.get("/me/consents/").context["rows"] if r.inbox.pk == world.inboxes["secret4"].pk)
    assert row.consented is False
    response = client.post("/me/consents/give/", {"inbox": world.inboxes["secret4"].public_id, "confirmed": "yes"})
    assert response.status_code == 302
    row = next(r for r in client.get("/me/consents/").context["rows"] if r.inbox.pk == world.inboxes["secret4"].pk)
    assert (row.consented, row.given, row.needed, row.disclosed) == (True, 1, 4, False)
    # Withdrawn by its own button, which asks nothing (a consent not yet used can be given again).
    page = client.get("/me/consents/").content.decode()
    assert 'action="/me/consents/revoke/"' in page and 'name="action"' not in page
    assert client.post("/me/consents/revoke/", {"inbox": world.inboxes["secret4"].public_id}).status_code == 302
    row = next(r for r in client.get("/me/consents/").context["rows"] if r.inbox.pk == world.inboxes["secret4"].pk)
    assert (row.consented, row.given) == (False, 0)
    # An inbox the user may not read is a 404, not a refusal; the page and the buttons' URLs take no other method.
    assert client.post("/me/consents/give/", {"inbox": world.inboxes["mafia1"].public_id}).status_code == 404
    assert client.post("/me/consents/revoke/", {"inbox": world.inboxes["mafia1"].public_id}).status_code == 404
    assert client.post("/me/consents/", {"inbox": world.inboxes["secret4"].public_id}).status_code == 405
    assert client.get("/me/consents/give/").status_code == 405


def test_one_click_open_page_flow_and_the_visitor_is_sent_to_log_in_L_ARCH_1(world, client):
    world.end()
    mafia1 = world.inboxes["mafia1"]
    assert client.get(f"/inboxes/{mafia1.public_id}/").status_code == 404
    response = client.post(f"/games/{world.game.slug}/archive/open/{mafia1.public_id}/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(world.demo.outsider)
    assert client.get(f"/inboxes/{mafia1.public_id}/").status_code == 404
    page = client.get(f"/games/{world.game.slug}/archive/")
    assert mafia1.pk in {r.inbox.pk for r in page.context["openable"] if not r.readable}
    response = client.post(f"/games/{world.game.slug}/archive/open/{mafia1.public_id}/")
    assert response.status_code == 302 and response["Location"] == f"/inboxes/{mafia1.public_id}/"
    assert "zebrafishconspiracy" in client.get(f"/inboxes/{mafia1.public_id}/").content.decode()
    personal = world.inboxes["personal:winner"]
    assert client.post(f"/games/{world.game.slug}/archive/open/{personal.public_id}/").status_code == 404


def test_the_draws_notary_and_verification_page_open_to_all_after_the_end_L_INBOX_12_L_ARCH_3(world, client):
    notary = world.inboxes["notary"]
    assert client.get(f"/inboxes/{notary.public_id}/").status_code == 404
    assert client.get(f"/games/{world.game.slug}/draw/").status_code == 404
    world.end()
    assert client.get(f"/inboxes/{notary.public_id}/").status_code == 200
    assert client.get(f"/games/{world.game.slug}/draw/").status_code == 200
    assert policies.readers_of_inbox(world.inbox("notary")).filter(pk=world.demo.outsider.pk).exists()


def test_a_secret_inbox_a_tribune_organised_also_waits_for_the_tribunes_consent_L_ARCH_2(world, client):
    from inboxes import services as inbox_services

    demo = world.demo
    inbox = inbox_services.do_create_secret_inbox(world.game, title="Tribune's talk", members=[demo.seat("judge")],
                                                  acting_user=fresh(demo.tribune2))
    world.end()
    inbox = type(inbox).objects.select_related("game").get(pk=inbox.pk)
    services.do_give_consent(inbox, acting_user=fresh(demo.judge))
    assert policies.can_read_inbox(demo.anonymous, inbox) is False
    assert policies.readable_inboxes(demo.anonymous, world.game).filter(pk=inbox.pk).exists() is False
    client.force_login(demo.tribune2)
    row = next(r for r in client.get("/me/consents/").context["rows"] if r.inbox.pk == inbox.pk)
    assert (row.consented, row.given, row.needed) == (False, 1, 2)
    client.post("/me/consents/give/", {"inbox": inbox.public_id, "confirmed": "yes"})
    assert policies.can_read_inbox(demo.anonymous, inbox) is True
    assert policies.readable_inboxes(demo.anonymous, world.game).filter(pk=inbox.pk).exists() is True
    assert policies.readers_of_inbox(inbox).filter(pk=demo.outsider.pk).exists()
