"""The access policy matrix (DESIGN.md "Tests"): every demo persona x every inbox of the demo game x
list / read / post, with the exact expected answer, and the four forms of the policy agreeing:
``can_read_inbox`` (bool), ``readable_inboxes`` (queryset), ``readers_of_inbox`` (audience) and
``readable_messages``; plus the states that change answers (banned, ban expired, removed, killed, game over,
replaced seat). Rules: the L-INBOX table, L-INBOX-17, L-INBOX-18, L-STAFF-1..6, L-REPLACE-1, L-ARCH-1.

The expectations below are written out per persona from RULES.md, not computed from the policy's own table.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from cities.models import GameStatus, Resident
from inboxes import membership_services, policies
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from tests.conftest import PERSONA_NAMES, fresh
from tests.support.policy_matrix import _offer_inbox, expected_access, label, offer_labels


def observed(demo, user) -> tuple[set[str], set[str], set[str]]:
    """(listed by readable_inboxes, readable by can_read_inbox, postable by can_post_in_inbox) for ``user``."""
    inboxes = list(Inbox.objects.filter(game=demo.game).select_related("city", "resident", "game"))
    user = fresh(user)
    listed = {label(i) for i in policies.readable_inboxes(user, demo.game).select_related("city", "resident")}
    read = {label(i) for i in inboxes if policies.can_read_inbox(user, i)}
    post = {label(i) for i in inboxes if policies.can_post_in_inbox(user, i)}
    return listed, read, post


def test_demo_game_has_every_inbox_of_the_matrix(demo):
    labels = sorted(label(i) for i in Inbox.objects.filter(game=demo.game).select_related("city", "resident"))
    offers = offer_labels(demo.game)
    assert 3 <= len(offers) <= 9  # one to three offers per city (L-COMM-3)
    # city, mafia, personal, police/court/cemetery/office/bar/notary, one per commissar offer; all distinct
    assert len(labels) == len(set(labels)) == 3 + 3 + 60 + 6 + len(offers)
    assert {"police", "court", "cemetery", "office", "bar", "notary"} <= set(labels)


@pytest.mark.parametrize("persona", PERSONA_NAMES)
def test_policy_matrix_list_read_post_L_INBOX_L_STAFF_6(demo, persona):
    expected_read, expected_post = expected_access(demo)[persona]
    listed, read, post = observed(demo, getattr(demo, persona))
    assert read == expected_read
    assert listed == expected_read  # the queryset form agrees with the bool form
    assert post == expected_post


@pytest.mark.parametrize("persona", PERSONA_NAMES)
def test_complaint_inboxes_in_the_matrix_and_the_forms_agree_L_IMPEACH_3(demo, persona):
    """With a resident's complaint about the Arbiter (by the honest persona) and the mafia of city 1's about the
    Consigliere filed, every persona lists, reads and posts exactly as written out, and the audience agrees."""
    from rulesets.lepra.no_confidence_services import do_file_no_confidence_in_arbiter, do_file_no_confidence_in_consigliere

    arbiter_case = do_file_no_confidence_in_arbiter(demo.game, "Жалоба", acting_user=fresh(demo.honest))
    mafia_case = do_file_no_confidence_in_consigliere(demo.game, "Жалоба", acting_user=fresh(demo.mafioso))
    expected_read, expected_post = expected_access(demo)[persona]
    assert f"complaint:{demo.seat('honest').name}" in expected_access(demo)["honest"][1]
    listed, read, post = observed(demo, getattr(demo, persona))
    assert (read, listed, post) == (expected_read, expected_read, expected_post)
    user = getattr(demo, persona)
    for case in (arbiter_case, mafia_case):
        audience = set(policies.readers_of_inbox(case.inbox).values_list("pk", flat=True))
        assert (getattr(user, "pk", None) in audience) == (label(case.inbox) in expected_read)


def test_readers_of_inbox_is_the_audience_of_the_bool_form_L_INBOX_20(demo):
    personas = {name: u for name, u in demo.all().items() if getattr(u, "is_authenticated", False)}
    for inbox in Inbox.objects.filter(game=demo.game).select_related("city", "resident", "game"):
        audience = set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))
        for name, user in personas.items():
            assert (user.pk in audience) == policies.can_read_inbox(fresh(user), inbox), (name, label(inbox))
    # Exact audience of one secret inbox: the living mafia of city 1 and the Consigliere, nobody else.
    mafia1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    expected = set(Resident.objects.filter(game=demo.game, city__number=1, alignment="mafia").values_list("user", flat=True))
    expected.add(demo.consigliere.pk)
    assert set(policies.readers_of_inbox(mafia1).values_list("pk", flat=True)) == expected


@pytest.mark.parametrize("persona", ["procurator", "tribune1", "consigliere", "mafioso", "honest", "anonymous", "superuser"])
def test_readable_messages_are_exactly_the_messages_of_readable_inboxes_L_INBOX_20(demo, persona):
    user = fresh(getattr(demo, persona))
    readable = set(policies.readable_inboxes(user, demo.game).values_list("pk", flat=True))
    expected = set(Message.objects.filter(inbox__in=readable).values_list("pk", flat=True))
    got = set(policies.readable_messages(user, Message.objects.filter(inbox__game=demo.game)).values_list("pk", flat=True))
    assert got == expected
    if persona in ("anonymous", "superuser"):
        assert got == set()


def _city1(demo) -> Inbox:
    return Inbox.objects.select_related("game").get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def test_banned_member_reads_but_cannot_post_L_INBOX_17(demo):
    inbox = _city1(demo)
    Membership.objects.filter(inbox=inbox, resident=demo.seat("honest")).update(state=MembershipState.BANNED)
    user = fresh(demo.honest)
    assert policies.can_read_inbox(user, inbox) is True
    assert inbox in policies.readable_inboxes(user, demo.game)
    assert policies.can_post_in_inbox(user, inbox) is False
    assert policies.post_denial_reason(user, inbox) in ("You are banned in this inbox.", "Вы забанены в этом ящике.")
    assert demo.honest.pk in set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))


def test_a_ban_with_an_end_lifts_at_its_end_L_INBOX_18(demo):
    inbox = _city1(demo)
    now = timezone.now()
    Membership.objects.filter(inbox=inbox, resident=demo.seat("honest")).update(
        state=MembershipState.BANNED, banned_until=now + timedelta(hours=1))
    user = fresh(demo.honest)
    assert policies.can_post_in_inbox(user, inbox, now) is False
    assert policies.can_post_in_inbox(user, inbox, now + timedelta(hours=1)) is True


def test_removed_member_sees_nothing_not_even_the_title_L_INBOX_17(demo):
    inbox = _city1(demo)
    Membership.objects.filter(inbox=inbox, resident=demo.seat("honest")).update(state=MembershipState.REMOVED)
    user = fresh(demo.honest)
    assert policies.can_read_inbox(user, inbox) is False
    assert inbox not in policies.readable_inboxes(user, demo.game)
    assert demo.honest.pk not in set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))


def test_killed_inbox_is_read_only_for_everyone_L_INBOX(demo):
    inbox = _city1(demo)
    Inbox.objects.filter(pk=inbox.pk).update(killed_at=timezone.now())
    inbox.refresh_from_db()
    for persona in ("honest", "tribune1"):
        user = fresh(getattr(demo, persona))
        assert policies.can_read_inbox(user, inbox) is True
        assert policies.can_post_in_inbox(user, inbox) is False


def test_after_the_game_public_kinds_open_to_everyone_and_secret_ones_stay_closed_L_ARCH_1(demo):
    demo.game.__class__.objects.filter(pk=demo.game.pk).update(status=GameStatus.FINISHED)
    listed, read, post = observed(demo, demo.anonymous)
    # The draw's notary opens to all after the game (L-INBOX-12); mafia, personal, office, bar and secret inboxes
    # wait for a logged click or consent (tests/archive/test_disclosure_matrix.py).
    assert read == listed == {"city1", "city2", "city3", "court", "police", "cemetery", "notary"}
    assert post == set()
    listed, read, post = observed(demo, demo.outsider)
    assert "mafia1" not in read and not any(x.startswith("personal:") for x in read)
    assert post == set()


def test_replaced_player_loses_access_and_the_new_one_takes_the_seat_L_REPLACE_1(demo):
    seat = demo.seat("mafioso")
    old_user = demo.mafioso
    new_user = get_user_model().objects.create_user("newcomer", "n@example.com", "x-secret-123")
    Resident.objects.filter(pk=seat.pk).update(user=new_user)
    old_read = observed(demo, old_user)[1]
    new_read = observed(demo, new_user)[1]
    assert old_read == set()
    assert new_read == {"city1", f"personal:{seat.name}", "mafia1"} | ({"court"} if seats.is_judge(seat) else set())


def test_access_inbox_by_id_gives_one_404_for_missing_forbidden_and_malformed_ids(demo):
    from django.http import Http404

    mafia2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=2)
    from kernel.public_ids import new_public_id

    errors = []
    # A forbidden public id, a missing one, the database id (never accepted), malformed ones.
    for inbox_id in (mafia2.public_id, new_public_id(), mafia2.pk, str(mafia2.pk), "abc", None, "1;drop",
                     mafia2.public_id.upper(), mafia2.public_id + "\x00"):
        with pytest.raises(Http404) as exc:
            policies.access_inbox_by_id(fresh(demo.honest), inbox_id)
        errors.append(str(exc.value))
    assert set(errors) == {"No such inbox."}
    assert policies.access_inbox_by_id(fresh(demo.consigliere), mafia2.public_id) == mafia2


# --------------------------------------------------------------------------------------------------------------
# Every inbox kind and state of issue 3 (secret, stage, rolled over, renewed court, the dead, the replaced):
# persona -> (read, post), written out from RULES.md, and the bool, queryset and audience forms agreeing.
# --------------------------------------------------------------------------------------------------------------

def _scenario(demo, name: str) -> tuple[Inbox, dict[str, tuple[bool, bool]]]:
    """Build scenario ``name`` in the demo game; return the inbox under test and the personas who may read it,
    with whether they may post (everyone else: neither)."""
    from cities.models import City
    from inboxes import services

    seat = demo.seat
    if name == "secret by a resident":
        inbox = services.do_create_secret_inbox(demo.game, title="Тайный сговор", members=[seat("mafioso")],
                                                acting_user=fresh(demo.honest))
        return inbox, {"honest": (True, True), "mafioso": (True, True)}
    if name == "secret by a tribune":
        inbox = services.do_create_secret_inbox(demo.game, title="Тайный разговор", members=[seat("resident2")],
                                                acting_user=fresh(demo.tribune2))
        return inbox, {"tribune2": (True, True), "resident2": (True, True)}
    if name == "secret after a member left":
        inbox = services.do_create_secret_inbox(demo.game, title="Тайна троих", members=[seat("mafioso"), seat("judge")],
                                                acting_user=fresh(demo.honest))
        services.do_leave_secret_inbox(inbox, acting_user=fresh(demo.judge))
        return inbox, {"honest": (True, True), "mafioso": (True, True)}
    if name == "stage for city 1":
        inbox = services.do_create_stage_inbox(demo.game, title="Очная ставка", speakers=[seat("honest"), seat("mafioso")],
                                               audience=City.objects.get(game=demo.game, number=1),
                                               acting_user=fresh(demo.procurator))
        return inbox, {"procurator": (True, True), "honest": (True, True), "mafioso": (True, True),
                       "commissar": (True, False), "judge": (True, False)}
    if name == "mafia inbox after its mafioso died":
        membership_services.do_kill_resident(seat("mafioso"), "executed", acting_user=None)
        return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1), {"consigliere": (True, True)}
    if name == "police station after its commissar died":
        membership_services.do_kill_resident(seat("commissar"), "killed", acting_user=None)
        return Inbox.objects.get(game=demo.game, kind=LepraInboxKind.POLICE), {"procurator": (True, True)}
    if name == "city inbox of a replaced user":
        membership_services.do_replace_player(seat("honest"), get_user_model().objects.create_user("sub", "s@example.com", "x-1234567"),
                                   acting_user=fresh(demo.procurator))
        return _city1(demo), {"procurator": (True, False), "tribune1": (True, True), "mafioso": (True, True),
                              "commissar": (True, True), "judge": (True, True)}
    if name == "rolled-over city inbox (old)":
        old = _city1(demo)
        services.do_roll_over_inbox(old, acting_user=fresh(demo.tribune1))
        return old, {p: (True, False) for p in ("procurator", "tribune1", "mafioso", "honest", "commissar", "judge")}
    if name == "rolled-over city inbox (new)":
        membership_services.do_kill_resident(seat("honest"), "killed", acting_user=None)
        new = services.do_roll_over_inbox(_city1(demo), acting_user=fresh(demo.tribune1))
        return new, {"procurator": (True, False), "tribune1": (True, True), "mafioso": (True, True), "honest": (True, False),
                     "commissar": (True, True), "judge": (True, True)}
    if name == "old court after its judge died":
        membership_services.do_kill_resident(seat("judge"), "killed", acting_user=None)
        old = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.COURT, predecessor__isnull=True)
        return old, {"procurator": (True, False), "arbiter": (True, False), "judge": (True, False)}
    if name == "new court after its judge died":
        membership_services.do_kill_resident(seat("judge"), "killed", acting_user=None)
        return (Inbox.objects.get(game=demo.game, kind=LepraInboxKind.COURT, rolled_over_at__isnull=True),
                {"procurator": (True, False), "arbiter": (True, True)})
    raise AssertionError(name)


SCENARIOS = ["secret by a resident", "secret by a tribune", "secret after a member left", "stage for city 1",
             "mafia inbox after its mafioso died", "police station after its commissar died",
             "city inbox of a replaced user", "rolled-over city inbox (old)", "rolled-over city inbox (new)",
             "old court after its judge died", "new court after its judge died"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_policy_matrix_for_lifecycle_kinds_and_states_all_forms_agree_L_INBOX(demo, scenario):
    inbox, expected = _scenario(demo, scenario)
    inbox = Inbox.objects.select_related("game").get(pk=inbox.pk)
    audience = set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))
    got = {}
    for name in PERSONA_NAMES:
        user = fresh(getattr(demo, name))
        read = policies.can_read_inbox(user, inbox)
        assert (inbox in policies.readable_inboxes(user, demo.game)) == read, (scenario, name)
        assert (getattr(user, "pk", None) in audience) == read, (scenario, name)
        if read:
            got[name] = (read, policies.can_post_in_inbox(user, inbox))
    assert got == expected
    # The Consigliere never reads a secret inbox (L-STAFF-4), and nobody outside the game reads anything here.
    assert "consigliere" not in got or inbox.kind == LepraInboxKind.MAFIA
    assert not {"outsider", "superuser", "anonymous"} & set(got)


def test_offer_inbox_clause_bool_queryset_and_audience_agree_L_COMM_2(demo):
    offer_inbox, plain = _offer_inbox(demo)
    readers, posters, plain_readers = set(), set(), set()
    for name, user in demo.all().items():
        user = fresh(user)
        can = policies.can_read_inbox(user, offer_inbox)
        assert can == policies.readable_inboxes(user, demo.game).filter(pk=offer_inbox.pk).exists(), name
        assert can == policies.readable_messages(user, Message.objects.filter(inbox=offer_inbox)).exists(), name
        if getattr(user, "is_authenticated", False):
            assert can == policies.readers_of_inbox(offer_inbox).filter(pk=user.pk).exists(), name
            assert policies.can_read_inbox(user, plain) == policies.readers_of_inbox(plain).filter(pk=user.pk).exists()
        assert policies.can_read_inbox(user, plain) == policies.readable_inboxes(user, demo.game).filter(pk=plain.pk).exists()
        if can:
            readers.add(name)
        if policies.can_post_in_inbox(user, offer_inbox):
            posters.add(name)
        if policies.can_read_inbox(user, plain):
            plain_readers.add(name)
    # The offer is a secret inbox the Procurator organises (L-COMM-1, L-INBOX-13): he and the candidate read and
    # post; the Procurator gets no other secret inbox (L-STAFF-1).
    assert readers == {"procurator", "honest"}
    assert posters == {"procurator", "honest"}
    assert plain_readers == {"honest"}


def test_offer_clause_is_per_game_a_procurator_of_another_game_reads_nothing_L_COMM_2(demo, django_user_model):
    from cities.services import do_create_game

    offer_inbox, _plain = _offer_inbox(demo)
    other = django_user_model.objects.create_user("otherproc", "op@example.com", "x-secret-123")
    do_create_game(title="Other", slug="other-game", acting_user=other)
    assert policies.can_read_inbox(fresh(other), offer_inbox) is False
    assert not policies.readable_inboxes(fresh(other)).filter(pk=offer_inbox.pk).exists()
    assert not policies.readers_of_inbox(offer_inbox).filter(pk=other.pk).exists()
