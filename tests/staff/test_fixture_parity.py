"""The staff fixtures' rows are the services' rows (tests/staff/conftest.py): the day's requests and the console's
cases written by the factories leave, table by table, the rows the services leave for the same acts (the audit
log aside), so the leak suite and the dashboard read the state the rules produce (L-NOM-4..6, L-IMPEACH-1/3,
L-SANCTION-2, L-STAFF-2)."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.db import models, transaction

from cities.models import GameEvent
from kernel.public_ids import PublicIdField
from sanctions.models import PlayBan

from .conftest import populate_by_services, populate_console_cases, populate_day_requests

#: Columns whose values are drawn at random or name the row itself.
_RANDOM = (PublicIdField,)
#: Keys of a JSON payload that hold the id of a row (a scheduled event's ``{"ban": <PlayBan id>}``).
_PAYLOAD_REFS = {"ban": PlayBan}


def _last_ids() -> dict:
    """model -> the highest primary key now (0 for an empty table), for every model with an integer key."""
    last = {}
    for model in apps.get_models():
        if model._meta.managed and isinstance(model._meta.pk, (models.AutoField, models.BigAutoField)):
            last[model] = model.objects.aggregate(m=models.Max("pk"))["m"] or 0
    return last


def _natural(obj, before: dict, depth: int = 0):
    """``obj`` without its ids: its own columns, and for a relation the related row's id when it existed before
    (the demo's seats, accounts, inboxes) or its natural form when it is new too."""
    values = []
    for field in obj._meta.concrete_fields:
        if field.primary_key or isinstance(field, _RANDOM):
            continue
        if field.is_relation:
            target_id = getattr(obj, field.attname)
            target = field.related_model
            if target_id is None or target not in before or target_id <= before[target] or depth > 1:
                values.append((field.name, target_id))
            else:
                values.append((field.name, _natural(target.objects.get(pk=target_id), before, depth + 1)))
        elif isinstance(field, models.JSONField) and isinstance(getattr(obj, field.attname), dict):
            values.append((field.name, sorted(
                (key, _natural(_PAYLOAD_REFS[key].objects.get(pk=value), before, depth + 1)
                 if key in _PAYLOAD_REFS and value > before[_PAYLOAD_REFS[key]] else value)
                for key, value in getattr(obj, field.attname).items())))
        else:
            values.append((field.name, getattr(obj, field.attname)))
    return tuple(values)


def _new_rows(before: dict) -> dict:
    """label -> sorted natural forms of the rows made since ``before`` (the audit log left out)."""
    rows = {}
    for model, last in before.items():
        if model is GameEvent:
            continue
        made = [_natural(obj, before) for obj in model.objects.filter(pk__gt=last)]
        if made:
            rows[model._meta.label] = sorted(made, key=repr)
    return rows


def _made_by(populate, demo) -> dict:
    """The rows ``populate(demo)`` makes, rolled back afterwards."""
    before = _last_ids()
    with transaction.atomic():
        populate(demo)
        rows = _new_rows(before)
        transaction.set_rollback(True)
    return rows


@pytest.mark.parametrize("console_cases", [False, True], ids=["populated", "full"])
def test_the_staff_fixtures_write_the_rows_the_services_make(demo, console_cases):
    def as_rows(demo):
        populate_day_requests(demo)
        if console_cases:
            populate_console_cases(demo)

    by_services = _made_by(lambda d: populate_by_services(d, console_cases=console_cases), demo)
    written = _made_by(as_rows, demo)
    assert written == by_services
    expected = {"lepra.SpeechRequest", "lepra.Nomination", "lepra.ProxyRequest", "lepra.SuicideDeclaration",
                "inboxes.Message"}
    if console_cases:
        expected |= {"staff.StaffStandIn", "lepra.ImpeachmentDemand", "lepra.ImpeachmentSignature",
                     "lepra.NoConfidenceCase", "sanctions.PlayBan", "sanctions.PlayBanEvidence", "inboxes.Inbox",
                     "inboxes.Membership", "inboxes.ReadMark", "cities.ScheduledEvent"}
    assert expected <= set(written)
    assert [len(written[label]) for label in ("lepra.Nomination", "lepra.ProxyRequest")] == [2, 2]
