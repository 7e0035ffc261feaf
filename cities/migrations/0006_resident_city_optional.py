"""A seat's city becomes optional: the seats of a game whose ruleset has no cities have none."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cities', '0005_resident_ranks_to_lepra'),
    ]

    operations = [
        migrations.AlterField(
            model_name='resident',
            name='city',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='residents', to='cities.city', verbose_name='city'),
        ),
    ]
