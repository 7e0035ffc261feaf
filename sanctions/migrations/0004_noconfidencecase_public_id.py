"""Complaints of no confidence get an opaque public id (the staff console addresses them by it)."""
from django.db import migrations

from kernel.public_ids import add_public_id_operations


class Migration(migrations.Migration):

    dependencies = [
        ("sanctions", "0003_playban_public_id"),
    ]

    operations = add_public_id_operations("sanctions", "noconfidencecase")
