"""Memberships get an opaque public id (the staff console addresses them by it): added empty, each existing row
given its own random id, then the column as the model declares it."""
from django.db import migrations

import kernel.public_ids


def fill_public_ids(apps, schema_editor):
    Membership = apps.get_model("inboxes", "Membership")
    rows = list(Membership.objects.filter(public_id__isnull=True).only("pk"))
    for row in rows:
        row.public_id = kernel.public_ids.new_public_id()
    Membership.objects.bulk_update(rows, ["public_id"], batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ("inboxes", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="public_id",
            field=kernel.public_ids.PublicIdField(default=None, editable=False, max_length=12, null=True,
                                                  unique=True, verbose_name="public id"),
            preserve_default=False,
        ),
        migrations.RunPython(fill_public_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="membership",
            name="public_id",
            field=kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False,
                                                  max_length=12, null=True, unique=True, verbose_name="public id"),
        ),
    ]
