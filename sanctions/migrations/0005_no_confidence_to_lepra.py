"""Lepra's complaints of no confidence leave this app in Django's state only
(``lepra.0005_staff_models_from_staff_and_sanctions`` creates them there over the same table): no table is dropped."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('lepra', '0005_staff_models_from_staff_and_sanctions'),
        ('sanctions', '0004_noconfidencecase_public_id'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.DeleteModel(
                name='NoConfidenceCase',
            ),
        ]),
    ]
