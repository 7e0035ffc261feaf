"""Knowledge is dated (RULES.md L-STAFF-6 [interp]), as clauses of the policy over the death time: a dead seat knows
the godfather, the commissars and the Consigliere of the moment of its death and nothing named afterwards; the
living know the present; the roster of the living drops the dead."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from cities.models import Resident, StaffKind, StaffRole
from cities.resident_services import do_set_resident_flags
from cities.selectors import known_commissars
from inboxes import knowledge, membership_services
from tests.conftest import fresh


def _dead(demo, persona, at):
    membership_services.do_kill_resident(demo.seat(persona), "killed", acting_user=None, now=at)
    return fresh(getattr(demo, persona))


def test_a_dead_mafioso_knows_the_godfather_of_his_death_not_the_next_L_STAFF_6(demo):
    death = timezone.now() + timedelta(hours=1)
    dead = _dead(demo, "mafioso", death)
    city = demo.seat("mafioso").city
    old = Resident.objects.get(city=city, is_godfather=True)
    heir = Resident.objects.filter(city=city, alignment="mafia", status="alive").exclude(pk=old.pk).first()
    do_set_resident_flags(old, is_godfather=False, acting_user=None, now=death + timedelta(hours=1))
    do_set_resident_flags(heir, is_godfather=True, acting_user=None, now=death + timedelta(hours=1))
    old, heir = Resident.objects.get(pk=old.pk), Resident.objects.get(pk=heir.pk)
    assert (knowledge.knows_godfather(dead, old), knowledge.knows_godfather(dead, heir)) == (True, False)
    living = fresh(heir.user)
    assert (knowledge.knows_godfather(living, old), knowledge.knows_godfather(living, heir)) == (False, True)
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
    other = Resident.objects.get(game=demo.game, city__number=2, is_commissar=True)
    Resident.objects.filter(pk=other.pk).update(commissar_since=death + timedelta(hours=1))  # named after
    third = Resident.objects.get(game=demo.game, city__number=3, is_commissar=True)
    dead = _dead(demo, "commissar", death)
    assert knowledge.knows_commissar(dead, demo.seat("commissar")) is True
    assert knowledge.knows_commissar(dead, Resident.objects.get(pk=third.pk)) is True
    assert knowledge.knows_commissar(dead, Resident.objects.get(pk=other.pk)) is False
    assert known_commissars(dead, demo.game) == []
    roster = {r.name for r in known_commissars(fresh(demo.procurator), demo.game)}
    assert roster == {other.name, third.name}
