"""Lepra's impeachment and role acknowledgement models leave this app in Django's state only
(``lepra.0005_staff_models_from_staff_and_sanctions`` creates them there over the same tables): no table is dropped."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('lepra', '0005_staff_models_from_staff_and_sanctions'),
        ('staff', '0002_tribunestandin_public_id'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveField(
                model_name='impeachmentsignature',
                name='demand',
            ),
            migrations.RemoveField(
                model_name='impeachmentsignature',
                name='resident',
            ),
            migrations.RemoveField(
                model_name='roleacknowledgement',
                name='game',
            ),
            migrations.RemoveField(
                model_name='roleacknowledgement',
                name='resident',
            ),
            migrations.DeleteModel(
                name='ImpeachmentDemand',
            ),
            migrations.DeleteModel(
                name='ImpeachmentSignature',
            ),
            migrations.DeleteModel(
                name='RoleAcknowledgement',
            ),
        ]),
    ]
