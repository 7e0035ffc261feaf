"""Lepra's setup, night and game-end models move here from the engine's ``roles`` app, in Django's state only: they
keep their tables (``db_table``: ``roles_<model>``), constraints and indexes, so no row moves and no table is renamed
(``roles.0002_night_models_to_lepra`` deletes them from ``roles``' state). Their content types follow them."""
import django.db.models.deletion
import kernel.public_ids
from django.db import migrations, models

#: The models that move, by their model name.
MOVED = ('commissarcheck', 'commissaroffer', 'gameresult', 'gift', 'godfatherelection',
         'godfathervote', 'mafiadraw', 'nightdecision', 'nightresolution')


def content_types_to_lepra(apps, schema_editor):
    """The content types of the moved models follow them (with their permissions and admin log entries)."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.using(schema_editor.connection.alias).filter(app_label="roles", model__in=MOVED).update(
        app_label="lepra")


def content_types_to_roles(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.using(schema_editor.connection.alias).filter(app_label="lepra", model__in=MOVED).update(
        app_label="roles")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('roles', '0001_initial'),
        ('cities', '0005_resident_ranks_to_lepra'),
        ('inboxes', '0002_membership_public_id'),
        ('lepra', '0002_day_models_from_voting'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='GameResult',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('winner', models.CharField(blank=True, max_length=8)),
                    ('reason', models.TextField(blank=True)),
                    ('ended_at', models.DateTimeField()),
                    ('scoreboard', models.JSONField(default=dict)),
                    ('game', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='result', to='cities.game')),
                    ('post', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='cities.publicpost')),
                ],
                options={
                    'db_table': 'roles_gameresult',
                },
            ),
            migrations.CreateModel(
                name='GodfatherElection',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('night', models.PositiveSmallIntegerField()),
                    ('opened_at', models.DateTimeField()),
                    ('closed_at', models.DateTimeField(blank=True, null=True)),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='godfather_elections', to='cities.city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='godfather_elections', to='cities.game')),
                    ('winner', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident')),
                ],
                options={
                    'db_table': 'roles_godfatherelection',
                    'ordering': ['city_id', 'opened_at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='GodfatherVote',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('at', models.DateTimeField()),
                    ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident')),
                    ('election', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='votes', to='lepra.godfatherelection')),
                    ('voter', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident')),
                ],
                options={
                    'db_table': 'roles_godfathervote',
                    'ordering': ['at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='MafiaDraw',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('lists', models.JSONField()),
                    ('salt', models.CharField(max_length=64)),
                    ('commitment', models.CharField(max_length=64)),
                    ('committed_at', models.DateTimeField()),
                    ('numbers', models.JSONField(blank=True, null=True)),
                    ('numbers_at', models.DateTimeField(blank=True, null=True)),
                    ('numbers_by_site', models.BooleanField(default=False)),
                    ('game', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='mafia_draw', to='cities.game')),
                    ('notary', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='inboxes.inbox')),
                ],
                options={
                    'db_table': 'roles_mafiadraw',
                },
            ),
            migrations.CreateModel(
                name='NightDecision',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('night', models.PositiveSmallIntegerField()),
                    ('kind', models.CharField(choices=[('kill', 'kill'), ('tour', 'touring')], max_length=8)),
                    ('by_consigliere', models.BooleanField(default=False)),
                    ('at', models.DateTimeField()),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='night_decisions', to='cities.city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='night_decisions', to='cities.game')),
                    ('target', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident')),
                ],
                options={
                    'db_table': 'roles_nightdecision',
                    'ordering': ['at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='NightResolution',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('night', models.PositiveSmallIntegerField()),
                    ('resolved_at', models.DateTimeField()),
                    ('outcome', models.JSONField(default=dict)),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='night_resolutions', to='cities.game')),
                    ('touring_city', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.city')),
                ],
                options={
                    'db_table': 'roles_nightresolution',
                    'ordering': ['-game_id', 'night'],
                },
            ),
            migrations.CreateModel(
                name='CommissarCheck',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('night', models.PositiveSmallIntegerField()),
                    ('is_mafia', models.BooleanField()),
                    ('at', models.DateTimeField()),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='commissar_checks', to='cities.city')),
                    ('commissar', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='commissar_checks', to='cities.game')),
                    ('target', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident')),
                ],
                options={
                    'db_table': 'roles_commissarcheck',
                    'ordering': ['night', 'at', 'id'],
                    'constraints': [models.UniqueConstraint(fields=('city', 'night'), name='commissarcheck_once_per_night_L_NIGHT_5'), models.CheckConstraint(condition=models.Q(('night__gte', 2)), name='commissarcheck_from_night_2_L_DAY_5')],
                },
            ),
            migrations.CreateModel(
                name='CommissarOffer',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('number', models.PositiveSmallIntegerField()),
                    ('offered_at', models.DateTimeField()),
                    ('answered_at', models.DateTimeField(blank=True, null=True)),
                    ('accepted', models.BooleanField(blank=True, null=True)),
                    ('decline_reason', models.TextField(blank=True)),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='commissar_offers', to='cities.resident')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='commissar_offers', to='cities.city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='commissar_offers', to='cities.game')),
                    ('inbox', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='commissar_offer', to='inboxes.inbox')),
                ],
                options={
                    'db_table': 'roles_commissaroffer',
                    'ordering': ['city_id', 'number'],
                    'constraints': [models.UniqueConstraint(fields=('city', 'number'), name='commissaroffer_unique_number_per_city'), models.UniqueConstraint(fields=('city', 'candidate'), name='commissaroffer_one_per_candidate'), models.UniqueConstraint(condition=models.Q(('answered_at__isnull', True)), fields=('city',), name='commissaroffer_one_pending_per_city'), models.UniqueConstraint(condition=models.Q(('accepted', True)), fields=('city',), name='commissaroffer_one_accepted_per_city'), models.CheckConstraint(condition=models.Q(('number__gte', 1), ('number__lte', 3)), name='commissaroffer_at_most_three_L_COMM_3'), models.CheckConstraint(condition=models.Q(models.Q(('accepted__isnull', True), ('answered_at__isnull', True)), models.Q(('accepted__isnull', False), ('answered_at__isnull', False)), _connector='OR'), name='commissaroffer_answer_with_time'), models.CheckConstraint(condition=models.Q(('decline_reason', ''), ('accepted', False), _connector='OR'), name='commissaroffer_reason_only_on_decline')],
                },
            ),
            migrations.CreateModel(
                name='Gift',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('night', models.PositiveSmallIntegerField()),
                    ('kind', models.CharField(choices=[('gift', 'gift'), ('fish', 'fish')], max_length=8)),
                    ('text', models.TextField(blank=True)),
                    ('at', models.DateTimeField()),
                    ('from_city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='cities.city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='gifts', to='cities.game')),
                    ('to_city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='cities.city')),
                ],
                options={
                    'db_table': 'roles_gift',
                    'ordering': ['at', 'id'],
                    'constraints': [models.CheckConstraint(condition=models.Q(('from_city', models.F('to_city')), _negated=True), name='gift_to_another_city')],
                },
            ),
            migrations.AddConstraint(
                model_name='godfatherelection',
                constraint=models.UniqueConstraint(condition=models.Q(('closed_at__isnull', True)), fields=('city',), name='godfatherelection_one_open_per_city'),
            ),
            migrations.AddConstraint(
                model_name='godfatherelection',
                constraint=models.CheckConstraint(condition=models.Q(('winner__isnull', True), ('closed_at__isnull', False), _connector='OR'), name='godfatherelection_winner_when_closed'),
            ),
            migrations.AddConstraint(
                model_name='godfathervote',
                constraint=models.UniqueConstraint(fields=('election', 'voter'), name='godfathervote_one_per_voter'),
            ),
            migrations.AddConstraint(
                model_name='mafiadraw',
                constraint=models.CheckConstraint(condition=models.Q(models.Q(('numbers__isnull', True), ('numbers_at__isnull', True)), models.Q(('numbers__isnull', False), ('numbers_at__isnull', False)), _connector='OR'), name='mafiadraw_numbers_with_time'),
            ),
            migrations.AddConstraint(
                model_name='mafiadraw',
                constraint=models.CheckConstraint(condition=models.Q(('numbers_at__isnull', True), ('numbers_at__gt', models.F('committed_at')), _connector='OR'), name='mafiadraw_numbers_after_commitment'),
            ),
            migrations.AddIndex(
                model_name='nightdecision',
                index=models.Index(fields=['game', 'night'], name='nightdecision_game_night_idx'),
            ),
            migrations.AddConstraint(
                model_name='nightdecision',
                constraint=models.CheckConstraint(condition=models.Q(('night__gte', 2)), name='nightdecision_from_night_2_L_DAY_5'),
            ),
            migrations.AddConstraint(
                model_name='nightresolution',
                constraint=models.UniqueConstraint(fields=('game', 'night'), name='nightresolution_once_per_night'),
            ),
        ], database_operations=[]),
        migrations.RunPython(content_types_to_lepra, content_types_to_roles),
    ]
