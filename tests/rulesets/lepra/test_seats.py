"""Lepra's seat ranks (``rulesets.lepra.models.LepraSeat``, ``rulesets.lepra.seats``): the constraints the database
keeps (L-COMM, L-JUDGE, L-NIGHT-3), the service that sets the ranks, and the seat hooks of ``LepraRuleset`` whose
query and instance forms must agree (the engine reads one or the other)."""
from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import translation

from cities.models import Alignment, GameEvent, LifeStatus, Resident
from inboxes import membership_services
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed
from kernel.rulesets import get_ruleset, seat_state_relations
from rulesets.lepra import seats
from rulesets.lepra.models import LepraSeat
from tests.conftest import fresh

LEPRA = get_ruleset("lepra")


def _residents(game) -> list[Resident]:
    return list(Resident.objects.filter(game=game).select_related(*seat_state_relations()).order_by("pk"))


def _plain_honest(demo, city_number: int) -> list[Resident]:
    return [r for r in _residents(demo.game) if r.city.number == city_number and r.alignment == Alignment.HONEST
            and r.status == LifeStatus.ALIVE and not (seats.is_commissar(r) or seats.is_judge(r))]


def _some_deaths(demo) -> None:
    """A spirit, a buried honest resident and city 1's judge dead: the ranks differ from the demo's start."""
    spirit, buried = _plain_honest(demo, 1)[-2:]
    membership_services.do_kill_resident(spirit, "killed", acting_user=None, spirit=True)
    membership_services.do_kill_resident(buried, "killed", acting_user=None)
    membership_services.do_kill_resident(demo.seat("judge"), "executed", acting_user=None)


def test_the_seat_hooks_query_and_instance_forms_agree(demo):
    _some_deaths(demo)
    residents = _residents(demo.game)
    assert any(seats.is_spirit(r) for r in residents)
    for role in LEPRA.seat_roles:
        by_query = set(Resident.objects.filter(LEPRA.seat_role_q(role.key), game=demo.game).values_list("pk", flat=True))
        by_instance = {r.pk for r in residents if LEPRA.holds_seat_role(r, role.key)}
        assert by_query == by_instance and len(by_query) == 3, role.key  # one per city
    for kind in (LepraInboxKind.CEMETERY, LepraInboxKind.POLICE, LepraInboxKind.COURT):
        by_query = set(Resident.objects.filter(LEPRA.standing_members_q(kind), game=demo.game)
                       .values_list("pk", flat=True))
        by_instance = {r.pk for r in LEPRA.standing_members(demo.game, kind, residents)}
        assert by_query == by_instance and by_query, kind
    assert LEPRA.standing_members(demo.game, LepraInboxKind.OFFICE, residents) is None
    assert LEPRA.standing_members_q(LepraInboxKind.OFFICE) is None
    for flag in seats.FLAGS:
        for value in (True, False):
            by_query = set(Resident.objects.filter(seats.rank_q(flag, value), game=demo.game)
                           .values_list("pk", flat=True))
            assert by_query == {r.pk for r in residents if getattr(seats, flag)(r) is value}, (flag, value)


def test_the_ranks_read_with_the_seats_cost_no_query(demo, django_assert_num_queries):
    residents = _residents(demo.game)
    with django_assert_num_queries(0):
        ranks = [(seats.is_commissar(r), seats.is_judge(r), seats.is_godfather(r), seats.is_spirit(r),
                  LEPRA.public_seat_roles(r), LEPRA.seat_state(r)) for r in residents]
    assert sum(1 for commissar, *_rest in ranks if commissar) == 3
    assert [key for *_flags, public, _state in ranks for key, _label in public] == ["judge"] * 3


def test_a_seat_without_a_lepra_row_holds_no_rank(demo):
    plain = _plain_honest(demo, 2)[0]
    LepraSeat.objects.filter(pk=plain.pk).delete()
    fresh_plain = Resident.objects.select_related(seats.SEAT).get(pk=plain.pk)
    assert seats.seat_of(fresh_plain) is None
    assert not any(getattr(seats, flag)(fresh_plain) for flag in seats.FLAGS)
    assert Resident.objects.filter(seats.rank_q("is_judge", False), pk=plain.pk).exists()
    assert not Resident.objects.filter(seats.rank_q("is_judge"), pk=plain.pk).exists()


@pytest.mark.parametrize("case", ["second commissar", "mafia commissar", "honest godfather", "second godfather",
                                  "second judge"])
def test_the_database_keeps_one_rank_holder_per_city_and_the_right_side_L_COMM_L_JUDGE_L_NIGHT_3(demo, case):
    residents = [r for r in _residents(demo.game) if r.city.number == 1]
    honest = _plain_honest(demo, 1)[0]
    mafioso = next(r for r in residents if r.alignment == Alignment.MAFIA and not seats.is_godfather(r))
    target, flag = {"second commissar": (honest, "is_commissar"), "mafia commissar": (mafioso, "is_commissar"),
                    "honest godfather": (honest, "is_godfather"), "second godfather": (mafioso, "is_godfather"),
                    "second judge": (honest, "is_judge")}[case]
    if case == "mafia commissar":  # the city's commissar gone, so that only the side is wrong
        LepraSeat.objects.filter(city=target.city, is_commissar=True).update(is_commissar=False)
    if case == "honest godfather":
        LepraSeat.objects.filter(city=target.city, is_godfather=True).update(is_godfather=False)
    before = sorted(LepraSeat.objects.filter(city=target.city).values_list("pk", *seats.FLAGS))
    with pytest.raises(IntegrityError), transaction.atomic():
        seats.do_set_seat_flags(target, acting_user=None, **{flag: True})
    assert sorted(LepraSeat.objects.filter(city=target.city).values_list("pk", *seats.FLAGS)) == before


def test_only_the_site_sets_a_rank_and_only_a_rank_L_ASSIGN_3(demo):
    honest = _plain_honest(demo, 2)[0]
    events = GameEvent.objects.filter(game=demo.game, kind="resident.flags").count()
    with translation.override("en"), pytest.raises(NotAllowed, match="draws and elections"):
        seats.do_set_seat_flags(honest, acting_user=fresh(demo.procurator), is_judge=True)
    with pytest.raises(InvalidInput, match="is_spirit"):
        seats.do_set_seat_flags(honest, acting_user=None, is_spirit=True)
    assert not seats.is_judge(Resident.objects.get(pk=honest.pk))
    assert GameEvent.objects.filter(game=demo.game, kind="resident.flags").count() == events


def test_setting_a_rank_dates_the_secret_ones_and_audits_without_naming_their_holder_L_STAFF_6(demo):
    honest = _plain_honest(demo, 2)[0]
    LepraSeat.objects.filter(city=honest.city, is_commissar=True).update(is_commissar=False)
    seats.do_set_seat_flags(honest, acting_user=None, is_commissar=True)
    stored = LepraSeat.objects.get(pk=honest.pk)
    assert (stored.is_commissar, stored.commissar_since is not None, stored.city_id, stored.alignment,
            stored.status) == (True, True, honest.city_id, Alignment.HONEST, LifeStatus.ALIVE)
    last = GameEvent.objects.filter(game=demo.game, kind="resident.flags").latest("id")
    assert last.payload == {"flags": ["is_commissar"]}
    judge = demo.seat("judge")
    seats.do_set_seat_flags(judge, acting_user=None, is_judge=False)
    last = GameEvent.objects.filter(game=demo.game, kind="resident.flags").latest("id")
    assert last.payload == {"resident": judge.pk, "flags": ["is_judge"]}


def test_a_death_vacates_the_judges_seat_and_makes_the_spirit_with_their_audit_rows_L_SPIRIT_2_L_INBOX_2(demo):
    judge = demo.seat("judge")
    spirit = _plain_honest(demo, 1)[-1]
    before = GameEvent.objects.latest("id").pk
    membership_services.do_kill_residents([(judge, False), (spirit, True)], "killed", acting_user=None)
    rows = {s.pk: s for s in LepraSeat.objects.filter(pk__in=[judge.pk, spirit.pk])}
    assert (rows[judge.pk].is_judge, rows[judge.pk].is_spirit, rows[judge.pk].status) == (False, False, "dead")
    assert (rows[spirit.pk].is_spirit, rows[spirit.pk].status) == (True, "dead")
    died = {e.payload["resident"]: e.payload for e in GameEvent.objects.filter(game=demo.game, kind="resident.died")}
    assert (died[judge.pk]["judge"], died[spirit.pk]["judge"], died[spirit.pk]["spirit"]) == (True, False, True)
    assert list(GameEvent.objects.filter(game=demo.game, kind="resident.flags", pk__gt=before)
                .values_list("payload", flat=True)) == [{"resident": judge.pk, "flags": ["is_judge"]}]
