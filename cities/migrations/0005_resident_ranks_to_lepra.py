"""The seat's Lepra ranks leave ``Resident``: ``lepra.0001_initial`` copied them to ``LepraSeat`` first."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('cities', '0004_city_public_id'),
        ('lepra', '0001_initial'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='resident',
            name='resident_one_commissar_per_city',
        ),
        migrations.RemoveConstraint(
            model_name='resident',
            name='resident_one_sitting_judge_per_city',
        ),
        migrations.RemoveConstraint(
            model_name='resident',
            name='resident_one_living_godfather_per_city',
        ),
        migrations.RemoveConstraint(
            model_name='resident',
            name='resident_commissar_is_honest',
        ),
        migrations.RemoveConstraint(
            model_name='resident',
            name='resident_godfather_is_mafia',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='commissar_since',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='godfather_since',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='godfather_until',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='is_commissar',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='is_godfather',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='is_judge',
        ),
        migrations.RemoveField(
            model_name='resident',
            name='is_spirit',
        ),
    ]
