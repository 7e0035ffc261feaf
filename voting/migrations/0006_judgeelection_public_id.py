"""Judge elections get an opaque public id (the staff console addresses them by it)."""
from django.db import migrations

from kernel.public_ids import add_public_id_operations


class Migration(migrations.Migration):

    dependencies = [
        ("voting", "0005_suicide_refused"),
    ]

    operations = add_public_id_operations("voting", "judgeelection")
