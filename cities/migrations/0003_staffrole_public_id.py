"""Staff roles get an opaque public id (the staff console's forms address them by it)."""
from django.db import migrations

from kernel.public_ids import add_public_id_operations


class Migration(migrations.Migration):

    dependencies = [
        ("cities", "0002_signup_public_id"),
    ]

    operations = add_public_id_operations("cities", "staffrole")
