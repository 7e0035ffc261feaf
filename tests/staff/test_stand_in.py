"""Stand-ins (``staff.models.StaffStandIn``) in a Lepra game, Lepra's Tribune stand-ins (RULES.md L-STAFF-2): a
Tribune granted another city's Tribune powers holds them for the set period, recorded, through the access policy
(all four forms), the staff admin and the services; before and after the period, nothing; never the absent
Tribune's secret inboxes (L-INBOX-13). The audit rows recorded under the previous kinds take the neutral ones
(``staff.0005_stand_in_event_kinds``), and back."""
from __future__ import annotations

import importlib
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.apps import apps as django_apps
from django.utils import translation

from cities.models import GameEvent, Resident, StaffRole
from cities.services import record_event
from inboxes import audit_policy, moderation_policy, policies
from inboxes import services as inbox_services
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed
from rulesets.lepra import seats
from rulesets.lepra.staff_kinds import StaffKind
from staff import services
from staff.audit_sentences import audit_sentence
from staff.models import StaffStandIn
from tests.conftest import fresh, knows_rank
from tests.support.staff_console import staff_client

from .conftest import NOW

START, END = NOW + timedelta(hours=1), NOW + timedelta(hours=5)


def _roles(demo) -> dict[int, StaffRole]:
    return {r.city.number: r for r in StaffRole.objects.filter(game=demo.game, kind=StaffKind.TRIBUNE)
            .select_related("city", "user", "game")}


@pytest.fixture
def period(demo) -> StaffStandIn:
    """Tribune 1 stands in for the Tribune of city 2 from START to END."""
    roles = _roles(demo)
    with time_machine.travel(NOW, tick=False):
        return services.do_grant_stand_in(roles[2], roles[1], START, END, acting_user=demo.procurator)


def _city2_inboxes(demo) -> list[Inbox]:
    return list(Inbox.objects.filter(game=demo.game, city__number=2, kind__in=[LepraInboxKind.CITY, LepraInboxKind.PERSONAL])
                .select_related("game"))


def _all_forms(user, inbox: Inbox) -> tuple[bool, bool, bool]:
    user = fresh(user)
    return (policies.can_read_inbox(user, inbox), policies.readable_inboxes(fresh(user)).filter(pk=inbox.pk).exists(),
            policies.readers_of_inbox(inbox).filter(pk=user.pk).exists())


def test_the_grant_is_recorded_with_its_period_L_STAFF_2(demo, period):
    event = GameEvent.objects.filter(game=demo.game, kind="staff.stand_in_granted").get()
    assert event.actor_id == demo.procurator.pk
    assert event.payload == {"stand_in": period.pk, "city": period.city_id, "absent": period.absent_id,
                             "role": period.stand_in_id, "from": START.isoformat(), "until": END.isoformat()}


def test_the_stand_in_holds_the_other_citys_grants_only_during_the_period_all_forms_agree_L_STAFF_2(demo, period):
    inboxes = _city2_inboxes(demo)
    assert len(inboxes) == 21  # the city inbox and 20 personal inboxes
    commissar2 = Resident.objects.get(seats.rank_q("is_commissar"), game=demo.game, city__number=2)
    for moment, expected in ((START - timedelta(seconds=1), False), (START, True), (END - timedelta(seconds=1), True),
                             (END, False)):
        with time_machine.travel(moment, tick=False):
            for inbox in inboxes:
                assert _all_forms(demo.tribune1, inbox) == (expected,) * 3, (moment, inbox.title)
            assert knows_rank(fresh(demo.tribune1), commissar2, "commissar") is expected
            assert policies.holds_role(fresh(demo.tribune1), demo.game, StaffKind.TRIBUNE,
                                       city_id=commissar2.city_id) is expected
            # The absent Tribune keeps his own powers; the stand-in keeps his own city.
            assert _all_forms(demo.tribune2, inboxes[0]) == (True,) * 3
            city1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
            assert _all_forms(demo.tribune1, city1) == (True,) * 3
            # Nobody else gains anything: Tribune 3 reads nothing of city 2.
            tribune3 = _roles(demo)[3].user
            assert _all_forms(tribune3, inboxes[0]) == (False,) * 3


def test_the_stand_in_never_reads_the_absent_tribunes_secret_inboxes_L_INBOX_13(demo, period):
    with time_machine.travel(NOW, tick=False):
        secret = inbox_services.do_create_secret_inbox(
            demo.game, title="Tribune 2 talks", members=[demo.seat("resident2")], acting_user=demo.tribune2)
    with time_machine.travel(START + timedelta(minutes=5), tick=False):
        assert _all_forms(demo.tribune2, secret) == (True,) * 3
        assert _all_forms(demo.tribune1, secret) == (False,) * 3
        assert not moderation_policy.can_moderate_inbox(fresh(demo.tribune1), secret)


def test_the_stand_in_runs_the_city_in_the_staff_admin_and_services_during_the_period_L_STAFF_2(demo, period):
    city2 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=2, rolled_over_at__isnull=True)
    resident = demo.seat("resident2")
    with time_machine.travel(START + timedelta(minutes=5), tick=False):
        client = staff_client(demo.tribune1)
        body = client.get("/staff/cities/resident/?all=").content.decode()
        assert f"/staff/cities/resident/{resident.public_id}/change/" in body
        assert client.get(f"/staff/inboxes/inbox/{city2.public_id}/change/").status_code == 200
        assert client.get(f"/staff/cities/{resident.city.public_id}/schedule-voting/").status_code == 200
        membership = inbox_services.do_ban_member(city2, resident, acting_user=fresh(demo.tribune1), reason="flood")
        assert membership.state == "banned"
    with time_machine.travel(END, tick=False):
        client = staff_client(demo.tribune1)
        body = client.get("/staff/cities/resident/?all=").content.decode()
        assert f"/staff/cities/resident/{resident.public_id}/change/" not in body
        assert client.get(f"/staff/cities/{resident.city.public_id}/schedule-voting/").status_code == 404
        with pytest.raises(NotAllowed):
            inbox_services.do_unban_member(city2, resident, acting_user=fresh(demo.tribune1))


def test_ending_the_period_early_takes_the_powers_at_once_L_STAFF_2(demo, period):
    city2 = _city2_inboxes(demo)[0]
    with time_machine.travel(START + timedelta(minutes=5), tick=False):
        assert _all_forms(demo.tribune1, city2) == (True,) * 3
        services.do_end_stand_in(period, acting_user=demo.procurator)
        assert _all_forms(demo.tribune1, city2) == (False,) * 3
        event = GameEvent.objects.filter(game=demo.game).order_by("-id").first()
        assert (event.kind, event.actor_id, event.payload) == ("staff.stand_in_ended", demo.procurator.pk,
                                                               {"stand_in": period.pk, "city": period.city_id})


def test_only_the_procurator_grants_and_the_period_must_make_sense_L_STAFF_2(demo):
    roles = _roles(demo)
    # The messages are those a Lepra host reads (Russian); the language is pinned, not left to earlier tests.
    with time_machine.travel(NOW, tick=False), translation.override("ru"):
        with pytest.raises(NotAllowed):
            services.do_grant_stand_in(roles[2], roles[1], START, END, acting_user=demo.tribune1)
        with pytest.raises(InvalidInput, match="Конец срока должен быть позже его начала"):
            services.do_grant_stand_in(roles[2], roles[1], END, START, acting_user=demo.procurator)
        with pytest.raises(InvalidInput, match="Конец срока должен быть в будущем"):
            services.do_grant_stand_in(roles[2], roles[1], NOW - timedelta(hours=2),
                                       NOW - timedelta(hours=1), acting_user=demo.procurator)
        with pytest.raises(InvalidInput, match="другого города той же игры"):
            services.do_grant_stand_in(roles[2], roles[2], START, END, acting_user=demo.procurator)
        arbiter = StaffRole.objects.get(game=demo.game, kind=StaffKind.ARBITER)
        with pytest.raises(InvalidInput, match="другого города той же игры"):
            services.do_grant_stand_in(roles[2], arbiter, START, END, acting_user=demo.procurator)
    assert not StaffStandIn.objects.exists()


def test_the_audit_log_names_the_period_by_its_public_id_and_the_roles_by_their_label_L_STAFF_2(demo, period):
    event = GameEvent.objects.get(game=demo.game, kind="staff.stand_in_granted")
    scope = audit_policy.AuditScope(fresh(demo.procurator), demo.game)
    with translation.override("en"):
        shown = dict(scope.shown_details(event))
    assert (shown["stand_in"], shown["role"], shown["absent"]) == (
        f"[{period.public_id}]", f"Tribune ({period.stand_in.city.name})", f"Tribune ({period.city.name})")
    sentence = audit_sentence(scope, event)
    assert period.city.name in sentence and f"({period.stand_in.city.name})" in sentence
    assert "—" not in sentence and "…" not in sentence


def test_the_audit_rows_of_the_previous_kinds_take_the_neutral_kinds_and_back(demo, period):
    migration = importlib.import_module("staff.migrations.0005_stand_in_event_kinds")
    granted = GameEvent.objects.get(game=demo.game, kind="staff.stand_in_granted")
    neutral = dict(granted.payload)
    previous = {("tribune" if key == "role" else key): value for key, value in neutral.items()}
    GameEvent.objects.filter(pk=granted.pk).update(kind="tribune.stand_in_granted", payload=previous)
    ended = record_event(demo.game, "tribune.stand_in_ended", actor=demo.procurator, at=NOW,
                         payload={"stand_in": period.pk, "city": period.city_id})
    others = list(GameEvent.objects.exclude(pk__in=[granted.pk, ended.pk]).order_by("pk")
                  .values_list("pk", "kind", "payload"))

    def rows():
        return [GameEvent.objects.filter(pk=pk).values_list("kind", "payload").get() for pk in (granted.pk, ended.pk)]

    migration.forwards(django_apps, None)
    assert rows() == [("staff.stand_in_granted", neutral),
                      ("staff.stand_in_ended", {"stand_in": period.pk, "city": period.city_id})]
    migration.backwards(django_apps, None)
    assert rows() == [("tribune.stand_in_granted", previous),
                      ("tribune.stand_in_ended", {"stand_in": period.pk, "city": period.city_id})]
    assert list(GameEvent.objects.exclude(pk__in=[granted.pk, ended.pk]).order_by("pk")
                .values_list("pk", "kind", "payload")) == others


def test_the_grant_page_names_the_role_as_the_games_ruleset_does_L_STAFF_2(demo):
    roles = _roles(demo)
    zone = ZoneInfo(demo.game.time_zone)
    client = staff_client(demo.procurator)
    url = f"/staff/games/{demo.game.slug}/stand-in/"
    with time_machine.travel(NOW, tick=False):
        page = client.get(url).content.decode()
        assert "Город, чей Трибун отсутствует" in page and "Замещающий Трибун" in page and "Tribune" not in page
        done = client.post(url, {"absent": roles[2].public_id, "stand_in": roles[1].public_id,
                                 **{name: moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M")
                                    for name, moment in (("starts_at", START), ("ends_at", END))}}, follow=True)
    assert done.redirect_chain[-1][0].startswith("/staff/staff/staffstandin/")
    assert f"{roles[1].user.public_name} замещает в городе {roles[2].city.name} (Трибун)." in done.content.decode()
    assert StaffStandIn.objects.get().stand_in_id == roles[1].pk
