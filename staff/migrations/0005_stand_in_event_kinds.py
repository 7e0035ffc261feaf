"""The audit rows of stand-in periods take neutral kinds (``staff.stand_in_granted``, ``staff.stand_in_ended``) and
the granted row's payload names the standing-in role ``role``; reversing restores the previous kinds and key."""
from django.db import migrations

#: (previous kind, neutral kind, {previous payload key: neutral key}).
RENAMED = (
    ("tribune.stand_in_granted", "staff.stand_in_granted", {"tribune": "role"}),
    ("tribune.stand_in_ended", "staff.stand_in_ended", {}),
)


def _rewrite(apps, backwards: bool) -> None:
    GameEvent = apps.get_model("cities", "GameEvent")
    for old, new, keys in RENAMED:
        source, target = (new, old) if backwards else (old, new)
        renames = {v: k for k, v in keys.items()} if backwards else keys
        rows = list(GameEvent.objects.filter(kind=source).only("pk", "kind", "payload"))
        for row in rows:
            row.kind = target
            if isinstance(row.payload, dict):
                row.payload = {renames.get(key, key): value for key, value in row.payload.items()}
        GameEvent.objects.bulk_update(rows, ["kind", "payload"], batch_size=1000)


def forwards(apps, schema_editor):
    _rewrite(apps, backwards=False)


def backwards(apps, schema_editor):
    _rewrite(apps, backwards=True)


class Migration(migrations.Migration):

    dependencies = [
        ('cities', '0007_staffrole_kinds_from_rulesets'),
        ('staff', '0004_rename_tribunestandin_staffstandin'),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
