"""Tribune stand-ins get an opaque public id (the staff console addresses them by it)."""
from django.db import migrations

from kernel.public_ids import add_public_id_operations


class Migration(migrations.Migration):

    dependencies = [
        ("staff", "0001_initial"),
    ]

    operations = add_public_id_operations("staff", "tribunestandin")
