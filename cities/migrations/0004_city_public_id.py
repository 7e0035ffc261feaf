"""Cities get an opaque public id (the staff console and the setup page address them by it)."""
from django.db import migrations

from kernel.public_ids import add_public_id_operations


class Migration(migrations.Migration):

    dependencies = [
        ("cities", "0003_staffrole_public_id"),
    ]

    operations = add_public_id_operations("cities", "city")
