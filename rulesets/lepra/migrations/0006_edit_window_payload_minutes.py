"""The audit rows of a changed daily-post edit window name their minutes ``old_minutes`` and ``minutes``: under
``from``/``to`` the audit log read the integers as record ids and showed "…" instead of the minutes."""
from django.db import migrations

KIND = "daily_post.edit_window_set"


def _rename(apps, old_keys, new_keys):
    GameEvent = apps.get_model("cities", "GameEvent")
    for event in GameEvent.objects.filter(kind=KIND).only("pk", "payload").iterator():
        payload = dict(event.payload or {})
        if not any(key in payload for key in old_keys):
            continue
        for old, new in zip(old_keys, new_keys):
            if old in payload:
                payload[new] = payload.pop(old)
        GameEvent.objects.filter(pk=event.pk).update(payload=payload)


def forwards(apps, schema_editor):
    _rename(apps, ("from", "to"), ("old_minutes", "minutes"))


def backwards(apps, schema_editor):
    _rename(apps, ("old_minutes", "minutes"), ("from", "to"))


class Migration(migrations.Migration):
    dependencies = [
        ("lepra", "0005_staff_models_from_staff_and_sanctions"),
        ("cities", "0007_staffrole_kinds_from_rulesets"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
