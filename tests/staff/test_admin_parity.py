"""Each staff admin action produces the same state and the same audit row as the direct service call
(issue 7 item 6: "All admin actions call the same services as the pages: no rule is implemented twice"; RULES.md
L-INBOX-17/18/19/21, L-REPLACE-1, L-STAFF-2/3, L-IMPEACH-2, L-WIN-3, L-NOM-5/6).

Each case starts from the same state twice, inside savepoints: once through /staff/ (the action's page posted as
a staff member would), once by calling the service; after each, the rows of the touched tables and the new
GameEvent rows are snapshotted, then rolled back; before each run every id sequence restarts after the table's
largest id, so that both runs create the same ids on PostgreSQL too (whose sequences ignore rollbacks). The two snapshots must
be equal, and not empty (the action did something).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management.color import no_style
from django.db import connection, transaction
from django.forms.models import model_to_dict

from cities.models import Game, GameEvent, Resident, StaffRole
from inboxes import membership_services
from inboxes import services as inbox_services
from inboxes.models import Inbox, Membership, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import game_end_services
from rulesets.lepra.day import services as voting_services
from rulesets.lepra.staff_kinds import StaffKind
from rulesets.lepra import staff_services
from rulesets.lepra.models import ImpeachmentDemand, ImpeachmentSignature
from staff import services as stand_in_services
from staff.models import StaffStandIn
from tests.admin_keys import action_url, key_of
from tests.conftest import fresh
from tests.support.staff_console import _opened_demand, staff_client
from rulesets.lepra.models import ProxyRequest, SuicideDeclaration

from .conftest import NOW

AT = NOW + timedelta(minutes=10)
TABLES = (Game, Resident, StaffRole, Inbox, Membership, Message, StaffStandIn, ImpeachmentDemand,
          ImpeachmentSignature, ProxyRequest, SuicideDeclaration)


def _local(demo, moment) -> str:
    return moment.astimezone(ZoneInfo(demo.game.time_zone)).strftime("%Y-%m-%dT%H:%M")


def _snapshot(event_before: int) -> dict:
    """Rows of TABLES (all columns) and the GameEvents written after ``event_before``."""
    state = {model._meta.label: [{"pk": o.pk, **model_to_dict(o)} for o in model.objects.order_by("pk")]
             for model in TABLES}
    events = [{"kind": e.kind, "actor": e.actor_id, "at": e.at, "payload": e.payload}
              for e in GameEvent.objects.filter(pk__gt=event_before).order_by("pk")]
    return {"state": state, "events": events}


def _reset_sequences() -> None:
    """Make the next id of every table max(id) + 1, so that both runs create rows with the same ids (PostgreSQL
    sequences do not roll back with a savepoint; on SQLite this is a no-op, AUTOINCREMENT state rolls back)."""
    managed = [model for model in apps.get_models() if model._meta.managed]  # the bench's floor table may be gone
    statements = connection.ops.sequence_reset_sql(no_style(), managed)
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def run_both(admin_run: Callable[[], object], service_run: Callable[[], object]) -> tuple[dict, dict]:
    event_before = GameEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    initial = _snapshot(event_before)
    results = []
    for run in (admin_run, service_run):
        sid = transaction.savepoint()
        _reset_sequences()
        with time_machine.travel(AT, tick=False):
            run()
        results.append(_snapshot(event_before))
        transaction.savepoint_rollback(sid)
    assert results[0]["events"], "the action recorded nothing"
    assert results[0]["state"] != initial["state"], "the action changed nothing"
    return results[0], results[1]


def post_action(client, url: str, action: str, pks, **data):
    """POST ``action`` for the objects ``pks`` (database ids) on the changelist ``url``, by their console keys."""
    from staff.console import staff_admin_site

    model = next(m for m in staff_admin_site._registry if url.startswith(f"/staff/{m._meta.app_label}/{m._meta.model_name}/"))
    keys = [key_of(model.objects.get(pk=pk)) for pk in pks]
    response = client.post(action_url(url, action), {"_selected_action": keys, "confirmed": "yes",
                                     **data}, follow=True)
    assert response.status_code == 200
    return response


@dataclass
class Case:
    """An admin action against its service: ``admin(demo)`` posts to /staff/, ``service(demo)`` calls."""

    admin: Callable
    service: Callable


def _city1(demo) -> Inbox:
    return Inbox.objects.select_related("game").get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)


def _member(demo, persona="honest") -> Membership:
    return Membership.objects.select_related("inbox__game", "resident").get(inbox=_city1(demo),
                                                                             resident=demo.seat(persona))


def _tribune_role(demo, number: int) -> StaffRole:
    return StaffRole.objects.select_related("game", "city", "user").get(game=demo.game, kind=StaffKind.TRIBUNE,
                                                                        city__number=number)


M = "/staff/inboxes/membership/"
UNTIL = AT + timedelta(days=1)

CASES = {
    "ban_with_end_L_INBOX_18": Case(
        lambda d: post_action(staff_client(d.tribune1), M, "ban_members", [_member(d).pk],
                              until=_local(d, UNTIL), reason="flood"),
        lambda d: inbox_services.do_ban_member(_city1(d), d.seat("honest"), acting_user=fresh(d.tribune1),
                                               until=UNTIL.replace(second=0, microsecond=0), reason="flood")),
    "unban_L_INBOX_17": Case(
        lambda d: post_action(staff_client(d.tribune1), M, "unban_members", [_member(d, "mafioso").pk]),
        lambda d: inbox_services.do_unban_member(_city1(d), d.seat("mafioso"), acting_user=fresh(d.tribune1))),
    "remove_L_INBOX_17": Case(
        lambda d: post_action(staff_client(d.procurator), M, "remove_members", [_member(d).pk]),
        lambda d: inbox_services.do_remove_member(_city1(d), d.seat("honest"), acting_user=fresh(d.procurator))),
    "hide_message_L_INBOX_21": Case(
        lambda d: post_action(staff_client(d.tribune1), "/staff/inboxes/message/", "hide_messages",
                              [Message.objects.filter(inbox=_city1(d)).order_by("pk").first().pk]),
        lambda d: membership_services.do_hide_message(Message.objects.filter(inbox=_city1(d)).order_by("pk").first(),
                                                 acting_user=fresh(d.tribune1))),
    "roll_over_inbox": Case(
        lambda d: post_action(staff_client(d.tribune1), "/staff/inboxes/inbox/", "roll_over_inboxes",
                              [_city1(d).pk], title=""),
        lambda d: inbox_services.do_roll_over_inbox(_city1(d), acting_user=fresh(d.tribune1), title=None)),
    "kill_inbox": Case(
        lambda d: post_action(staff_client(d.tribune1), "/staff/inboxes/inbox/", "kill_inboxes", [_city1(d).pk]),
        lambda d: inbox_services.do_kill_inbox(_city1(d), acting_user=fresh(d.tribune1))),
    "stage_inbox_L_INBOX_19": Case(
        lambda d: staff_client(d.procurator).post(f"/staff/games/{d.game.slug}/stage/", {
            "title": "Confrontation", "speakers": [d.seat("honest").public_id, d.seat("mafioso").public_id],
            "audience": str(d.seat("honest").city.number)}),
        lambda d: inbox_services.do_create_stage_inbox(
            d.game, title="Confrontation", speakers=[d.seat("honest"), d.seat("mafioso")],
            audience=d.seat("honest").city, acting_user=fresh(d.procurator))),
    "replace_player_L_REPLACE_1": Case(
        lambda d: post_action(staff_client(d.procurator), "/staff/cities/resident/", "replace_player",
                              [d.seat("honest").pk], username="outsider"),
        lambda d: membership_services.do_replace_player(d.seat("honest"), get_user_model().objects.get(username="outsider"),
                                                   acting_user=fresh(d.procurator))),
    "record_death_L_DEATH_1": Case(
        lambda d: post_action(staff_client(d.procurator), "/staff/cities/resident/", "record_death",
                              [d.seat("honest").pk], cause="penalty"),
        lambda d: membership_services.do_kill_resident(d.seat("honest"), "penalty", acting_user=fresh(d.procurator),
                                                  spirit=False)),
    "penalty_ban_L_STAFF_3": Case(
        lambda d: post_action(staff_client(d.arbiter), "/staff/cities/resident/", "penalty_ban",
                              [d.seat("honest").pk], inboxes=[_city1(d).public_id], until=_local(d, UNTIL), reason="insult"),
        lambda d: membership_services.do_penalty_ban(d.seat("honest"), [_city1(d)], UNTIL.replace(second=0, microsecond=0),
                                                "insult", acting_user=fresh(d.arbiter))),
    "accept_proxy_L_NOM_6": Case(
        lambda d: post_action(staff_client(d.tribune1), "/staff/lepra/proxyrequest/", "accept_proxies",
                              [ProxyRequest.objects.get(city__number=1).pk]),
        lambda d: voting_services.do_accept_proxy(ProxyRequest.objects.get(city__number=1),
                                                  acting_user=fresh(d.tribune1))),
    "confirm_suicide_L_NOM_5": Case(
        lambda d: post_action(staff_client(d.tribune1), "/staff/lepra/suicidedeclaration/", "confirm_suicides",
                              [SuicideDeclaration.objects.get(city__number=1).pk]),
        lambda d: voting_services.do_confirm_suicide(SuicideDeclaration.objects.get(city__number=1),
                                                     acting_user=fresh(d.tribune1))),
    "grant_stand_in_L_STAFF_2": Case(
        lambda d: staff_client(d.procurator).post(f"/staff/games/{d.game.slug}/stand-in/", {
            "absent": _tribune_role(d, 2).public_id, "stand_in": _tribune_role(d, 1).public_id,
            "starts_at": _local(d, AT + timedelta(hours=1)), "ends_at": _local(d, AT + timedelta(hours=3))}),
        lambda d: stand_in_services.do_grant_stand_in(
            _tribune_role(d, 2), _tribune_role(d, 1), (AT + timedelta(hours=1)).replace(second=0, microsecond=0),
            (AT + timedelta(hours=3)).replace(second=0, microsecond=0), acting_user=fresh(d.procurator))),
    "end_stand_in_L_STAFF_2": Case(
        lambda d: post_action(staff_client(d.procurator), "/staff/staff/staffstandin/", "end_stand_ins",
                              [StaffStandIn.objects.get().pk]),
        lambda d: stand_in_services.do_end_stand_in(StaffStandIn.objects.get(), acting_user=fresh(d.procurator))),
    "open_impeachment_inbox_L_IMPEACH_2": Case(
        lambda d: post_action(staff_client(d.procurator), "/staff/lepra/impeachmentdemand/",
                              "open_impeachment_inboxes", [ImpeachmentDemand.objects.get().pk]),
        lambda d: staff_services.do_open_impeachment_inbox(ImpeachmentDemand.objects.get(),
                                                           acting_user=fresh(d.procurator))),
    "rule_replace_L_IMPEACH_2": Case(
        lambda d: post_action(staff_client(d.procurator), "/staff/lepra/impeachmentdemand/", "rule_on_impeachments",
                              [ImpeachmentDemand.objects.get().pk], ruling="replace", username="outsider",
                              reason="abuse"),
        lambda d: staff_services.do_rule_on_impeachment(
            ImpeachmentDemand.objects.get(), "replace", acting_user=fresh(d.procurator), reason="abuse",
            new_tribune_user=get_user_model().objects.get(username="outsider"))),
    "end_game_early_L_WIN_3": Case(
        lambda d: staff_client(d.procurator).post(f"/staff/games/{d.game.slug}/end/",
                                                  {"reason": "servers on fire", "confirmed": "yes"}),
        lambda d: game_end_services.do_end_game_early(d.game, reason="servers on fire", acting_user=fresh(d.procurator))),
}

SETUP = {
    "unban_L_INBOX_17": lambda d: inbox_services.do_ban_member(_city1(d), d.seat("mafioso"),
                                                               acting_user=fresh(d.tribune1), now=NOW),
    "end_stand_in_L_STAFF_2": lambda d: stand_in_services.do_grant_stand_in(
        _tribune_role(d, 2), _tribune_role(d, 1), NOW, NOW + timedelta(hours=5), acting_user=fresh(d.procurator),
        now=NOW),
    "open_impeachment_inbox_L_IMPEACH_2": _opened_demand,
    "rule_replace_L_IMPEACH_2": lambda d: staff_services.do_open_impeachment_inbox(
        _opened_demand(d), acting_user=fresh(d.procurator), now=NOW),
}


@pytest.mark.parametrize("name", list(CASES))
def test_admin_action_produces_the_same_state_and_audit_rows_as_the_service(populated, name):
    demo = populated
    if name in SETUP:
        SETUP[name](demo)
    case = CASES[name]
    via_admin, via_service = run_both(lambda: case.admin(demo), lambda: case.service(demo))
    assert via_admin == via_service
