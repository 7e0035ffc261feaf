"""Opaque public ids (kernel.public_ids) for the inboxes objects whose ids reach pages, forms and the audit log.

Expand/contract, safe under a running game: the column is added nullable with no default (instant; the previous
release's processes insert NULL), existing rows are filled in batches, then the unique index and the default of new
rows are added.
"""
from django.db import migrations, models

import kernel.public_ids
from kernel.public_ids import backfill_public_ids


class Migration(migrations.Migration):

    dependencies = [("inboxes", "0005_m21_inbox_kinds")]

    operations = [
        migrations.AddField(
            model_name="inbox", name="public_id",
            field=models.CharField(editable=False, max_length=12, null=True, verbose_name="public id"),
        ),
        migrations.AddField(
            model_name="message", name="public_id",
            field=models.CharField(editable=False, max_length=12, null=True, verbose_name="public id"),
        ),
        migrations.RunPython(backfill_public_ids("inboxes", ["inbox", "message"]), migrations.RunPython.noop),
        migrations.AlterField(
            model_name="inbox", name="public_id",
            field=kernel.public_ids.PublicIdField(),
        ),
        migrations.AlterField(
            model_name="message", name="public_id",
            field=kernel.public_ids.PublicIdField(),
        ),
    ]
