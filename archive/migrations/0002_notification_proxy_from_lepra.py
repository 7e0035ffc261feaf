"""A notification's proxy request is now ``lepra.ProxyRequest`` (the same table, moved in state by
``lepra.0002_day_models_from_voting``): the foreign key changes in Django's state only."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('archive', '0001_initial'),
        ('lepra', '0002_day_models_from_voting'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name='notification',
                name='proxy',
                field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='lepra.proxyrequest'),
            ),
        ], database_operations=[]),
    ]
