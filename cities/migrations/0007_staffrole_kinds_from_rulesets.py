# Staff kinds come from the rulesets (StaffRole.kind takes a callable's choices: a ruleset's new kind needs no
# migration); the constraints that named one ruleset's kinds give way to neutral ones (one host per game, one role of
# a kind per city); the rest is checked by cities.services.do_appoint_staff. Stored values are unchanged.

import cities.staff_kinds
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cities', '0006_resident_city_optional'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='staffrole',
            name='staffrole_one_per_kind_per_game',
        ),
        migrations.RemoveConstraint(
            model_name='staffrole',
            name='staffrole_one_tribune_per_city',
        ),
        migrations.RemoveConstraint(
            model_name='staffrole',
            name='staffrole_city_iff_tribune',
        ),
        migrations.AlterField(
            model_name='staffrole',
            name='kind',
            field=models.CharField(choices=cities.staff_kinds.staff_kind_choices, max_length=12, verbose_name='kind'),
        ),
        migrations.AddConstraint(
            model_name='staffrole',
            constraint=models.UniqueConstraint(condition=models.Q(('kind', 'procurator')), fields=('game',), name='staffrole_one_host_per_game'),
        ),
        migrations.AddConstraint(
            model_name='staffrole',
            constraint=models.UniqueConstraint(condition=models.Q(('city__isnull', False)), fields=('city', 'kind'), name='staffrole_one_per_kind_per_city'),
        ),
    ]
