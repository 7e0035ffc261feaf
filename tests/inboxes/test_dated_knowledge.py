"""Knowledge is dated (RULES.md L-STAFF-6 [interp]), as clauses of the policy over the death time: a dead seat knows
the godfather, the commissars and the Consigliere of the moment of its death and nothing named afterwards; the
living know the present; the roster of the living drops the dead."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from cities.models import Resident, StaffRole
from cities.selectors import known_rosters
from inboxes import knowledge, membership_services
from rulesets.lepra import seats
from rulesets.lepra.models import LepraSeat
from rulesets.lepra.staff_kinds import StaffKind
from tests.conftest import fresh, knows_rank


def _dead(demo, persona, at):
    membership_services.do_kill_resident(demo.seat(persona), "killed", acting_user=None, now=at)
    return fresh(getattr(demo, persona))


def test_a_dead_mafioso_knows_the_godfather_of_his_death_not_the_next_L_STAFF_6(demo):
    death = timezone.now() + timedelta(hours=1)
    dead = _dead(demo, "mafioso", death)
    city = demo.seat("mafioso").city
    old = Resident.objects.get(seats.rank_q("is_godfather"), city=city)
    heir = Resident.objects.filter(city=city, alignment="mafia", status="alive").exclude(pk=old.pk).first()
    seats.do_set_seat_flags(old, is_godfather=False, acting_user=None, now=death + timedelta(hours=1))
    seats.do_set_seat_flags(heir, is_godfather=True, acting_user=None, now=death + timedelta(hours=1))
    old, heir = Resident.objects.get(pk=old.pk), Resident.objects.get(pk=heir.pk)
    assert (knows_rank(dead, old, "godfather"), knows_rank(dead, heir, "godfather")) == (True, False)
    living = fresh(heir.user)
    assert (knows_rank(living, old, "godfather"), knows_rank(living, heir, "godfather")) == (False, True)
    # The partners' side stays known to him: they were his partners at death.
    assert knowledge.visible_alignment(dead, heir) == "mafia"


def test_a_dead_mafioso_does_not_learn_a_consigliere_appointed_after_his_death_L_STAFF_6(demo):
    death = timezone.now() + timedelta(hours=1)
    dead = _dead(demo, "mafioso", death)
    role = StaffRole.objects.get(game=demo.game, kind=StaffKind.CONSIGLIERE)
    assert role in knowledge.visible_staff(dead, demo.game)
    StaffRole.objects.filter(pk=role.pk).update(since=death + timedelta(minutes=1))  # as if appointed later
    dead = fresh(demo.mafioso)
    assert role not in knowledge.visible_staff(dead, demo.game)
    living = next(r.user for r in Resident.objects.filter(city=demo.seat("mafioso").city, alignment="mafia",
                                                          status="alive"))
    assert role in knowledge.visible_staff(fresh(living), demo.game)


def test_a_dead_commissar_knows_the_commissars_of_his_death_and_leaves_the_roster_L_STAFF_6(demo):
    death = timezone.now() + timedelta(hours=1)
    other = Resident.objects.get(seats.rank_q("is_commissar"), game=demo.game, city__number=2)
    LepraSeat.objects.filter(pk=other.pk).update(commissar_since=death + timedelta(hours=1))  # named after
    third = Resident.objects.get(seats.rank_q("is_commissar"), game=demo.game, city__number=3)
    dead = _dead(demo, "commissar", death)
    assert knows_rank(dead, demo.seat("commissar"), "commissar") is True
    assert knows_rank(dead, Resident.objects.get(pk=third.pk), "commissar") is True
    assert knows_rank(dead, Resident.objects.get(pk=other.pk), "commissar") is False
    assert known_rosters(dead, demo.game) == []
    [rosters] = known_rosters(fresh(demo.procurator), demo.game)
    assert rosters.role.key == "commissar"
    roster = {r.name for r in rosters.residents}
    assert roster == {other.name, third.name}
