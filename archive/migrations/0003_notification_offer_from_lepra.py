"""A notification's commissar offer is now ``lepra.CommissarOffer`` (the same table, moved in state by
``lepra.0003_night_models_from_roles``): the foreign key changes in Django's state only."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('archive', '0002_notification_proxy_from_lepra'),
        ('lepra', '0003_night_models_from_roles'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name='notification',
                name='offer',
                field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='lepra.commissaroffer'),
            ),
        ], database_operations=[]),
    ]
