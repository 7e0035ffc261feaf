"""Lepra's day, court and judge models move here from the engine's ``voting`` app, in Django's state only: they keep
their tables (``db_table``: ``voting_<model>``), constraints and indexes, so no row moves and no table is renamed
(``voting.0007_day_models_to_lepra`` deletes them from ``voting``'s state). Their content types follow them."""
import django.db.models.deletion
import kernel.public_ids
from django.conf import settings
from django.db import migrations, models

#: The models that move, by their model name.
MOVED = ('cityjudge', 'courtcase', 'courtprocedurechoice', 'courtvote', 'electionballot', 'electionproxy',
         'executiondecision', 'judgeelection', 'judgeproposal', 'judgerecusal', 'lepravote', 'nomination',
         'precinct', 'proxyrequest', 'removalconfirmation', 'removaldemand', 'speechrequest', 'suicidedeclaration',
         'votingsession')


def content_types_to_lepra(apps, schema_editor):
    """The content types of the moved models follow them (with their permissions and admin log entries)."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.using(schema_editor.connection.alias).filter(app_label="voting", model__in=MOVED).update(
        app_label="lepra")


def content_types_to_voting(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.using(schema_editor.connection.alias).filter(app_label="lepra", model__in=MOVED).update(
        app_label="voting")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('voting', '0006_judgeelection_public_id'),
        ('cities', '0005_resident_ranks_to_lepra'),
        ('inboxes', '0002_membership_public_id'),
        ('lepra', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='CityJudge',
                fields=[
                ],
                options={
                    'verbose_name': 'city judge',
                    'verbose_name_plural': 'city judges',
                    'proxy': True,
                    'indexes': [],
                    'constraints': [],
                },
                bases=('cities.city',),
            ),
            migrations.CreateModel(
                name='JudgeElection',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('reason', models.CharField(choices=[('first_day', 'day 1'), ('removal', 'removal'), ('recusal', 'recusal'), ('death', 'death of the judge'), ('failed', 'failed election')], max_length=12, verbose_name='reason')),
                    ('announced_at', models.DateTimeField(verbose_name='announced at')),
                    ('opens_at', models.DateTimeField(verbose_name='opens at')),
                    ('closes_at', models.DateTimeField(verbose_name='closes at')),
                    ('candidates_passed_at', models.DateTimeField(blank=True, null=True, verbose_name='candidates passed at')),
                    ('opened_at', models.DateTimeField(blank=True, null=True, verbose_name='opened at')),
                    ('closed_at', models.DateTimeField(blank=True, null=True, verbose_name='closed at')),
                    ('cancelled_at', models.DateTimeField(blank=True, null=True, verbose_name='cancelled at')),
                    ('result', models.JSONField(blank=True, null=True, verbose_name='result')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judge_elections', to='cities.city', verbose_name='city')),
                    ('follows', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='followed_by', to='lepra.judgeelection', verbose_name='follows')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judge_elections', to='cities.game', verbose_name='game')),
                    ('winner', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='winner')),
                ],
                options={
                    'verbose_name': 'judge election',
                    'verbose_name_plural': 'judge elections',
                    'db_table': 'voting_judgeelection',
                    'ordering': ['opens_at', 'city_id', 'id'],
                },
            ),
            migrations.CreateModel(
                name='ElectionProxy',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('text', models.CharField(max_length=40, verbose_name='text')),
                    ('recorded_at', models.DateTimeField(verbose_name='recorded at')),
                    ('cast_at', models.DateTimeField(blank=True, null=True, verbose_name='cast at')),
                    ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='candidate')),
                    ('voter', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='voter')),
                    ('election', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='proxies', to='lepra.judgeelection', verbose_name='election')),
                ],
                options={
                    'verbose_name': 'election proxy',
                    'verbose_name_plural': 'election proxies',
                    'db_table': 'voting_electionproxy',
                    'ordering': ['recorded_at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='JudgeProposal',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='judge_proposals_received', to='cities.resident', verbose_name='candidate')),
                    ('election', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='proposals', to='lepra.judgeelection', verbose_name='election')),
                    ('proposer', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='judge_proposals_made', to='cities.resident', verbose_name='proposer')),
                ],
                options={
                    'verbose_name': 'judge proposal',
                    'verbose_name_plural': 'judge proposals',
                    'db_table': 'voting_judgeproposal',
                    'ordering': ['at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='JudgeRecusal',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judge_recusals', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judge_recusals', to='cities.game', verbose_name='game')),
                    ('judge', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='recusals', to='cities.resident', verbose_name='judge')),
                ],
                options={
                    'verbose_name': 'judge recusal',
                    'verbose_name_plural': 'judge recusals',
                    'db_table': 'voting_judgerecusal',
                    'ordering': ['at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='LepraVote',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('state', models.CharField(choices=[('standing', 'standing'), ('retracted', 'retracted')], default='standing', max_length=10, verbose_name='state')),
                    ('proxy', models.BooleanField(default=False, verbose_name='proxy')),
                    ('cast_at', models.DateTimeField(verbose_name='cast at')),
                    ('latest_retraction', models.BooleanField(db_default=False, default=False, verbose_name='latest retraction')),
                    ('retracted_at', models.DateTimeField(blank=True, null=True, verbose_name='retracted at')),
                    ('inbox', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lepra_votes', to='inboxes.inbox', verbose_name='inbox')),
                    ('message', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='lepra_vote', to='inboxes.message', verbose_name='message')),
                    ('retracted_by', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='inboxes.message', verbose_name='retracted by')),
                    ('voter', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='lepra_votes', to='cities.resident', verbose_name='voter')),
                ],
                options={
                    'verbose_name': 'lepra vote',
                    'verbose_name_plural': 'lepra votes',
                    'db_table': 'voting_lepravote',
                    'ordering': ['cast_at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='Nomination',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='nominations', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='nominations', to='cities.game', verbose_name='game')),
                    ('nominator', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='nominations_made', to='cities.resident', verbose_name='nominator')),
                    ('nominee', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='nominations_received', to='cities.resident', verbose_name='nominee')),
                ],
                options={
                    'verbose_name': 'nomination',
                    'verbose_name_plural': 'nominations',
                    'db_table': 'voting_nomination',
                    'ordering': ['city_id', 'day', 'at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='Precinct',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('candidate', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='candidate')),
                    ('election', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='precincts', to='lepra.judgeelection', verbose_name='election')),
                    ('inbox', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='precinct', to='inboxes.inbox', verbose_name='inbox')),
                ],
                options={
                    'verbose_name': 'precinct',
                    'verbose_name_plural': 'precincts',
                    'db_table': 'voting_precinct',
                    'ordering': ['election_id', 'id'],
                },
            ),
            migrations.CreateModel(
                name='ProxyRequest',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('state', models.CharField(choices=[('requested', 'requested'), ('accepted', 'accepted'), ('cast', 'cast')], default='requested', max_length=10, verbose_name='state')),
                    ('requested_at', models.DateTimeField(verbose_name='requested at')),
                    ('accepted_at', models.DateTimeField(blank=True, null=True, verbose_name='accepted at')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='proxy_requests', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='proxy_requests', to='cities.game', verbose_name='game')),
                    ('nominee', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='nominee')),
                    ('resident', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='proxy_requests', to='cities.resident', verbose_name='resident')),
                ],
                options={
                    'verbose_name': 'proxy request',
                    'verbose_name_plural': 'proxy requests',
                    'db_table': 'voting_proxyrequest',
                    'ordering': ['day', 'requested_at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='RemovalDemand',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('opened_at', models.DateTimeField(verbose_name='opened at')),
                    ('deadline', models.DateTimeField(blank=True, null=True, verbose_name='deadline')),
                    ('considered', models.BooleanField(default=True, verbose_name='considered')),
                    ('valid_at', models.DateTimeField(blank=True, null=True, verbose_name='valid at')),
                    ('removed_at', models.DateTimeField(blank=True, null=True, verbose_name='removed at')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='removal_demands', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='removal_demands', to='cities.game', verbose_name='game')),
                    ('inbox', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='removal_demand', to='inboxes.inbox', verbose_name='inbox')),
                    ('judge', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='removal_demands_against', to='cities.resident', verbose_name='judge')),
                    ('organizer', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='removal_demands_opened', to='cities.resident', verbose_name='organizer')),
                ],
                options={
                    'verbose_name': 'removal demand',
                    'verbose_name_plural': 'removal demands',
                    'db_table': 'voting_removaldemand',
                    'ordering': ['day', 'opened_at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='RemovalConfirmation',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('considered', models.BooleanField(default=True, verbose_name='considered')),
                    ('resident', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='removal_confirmations', to='cities.resident', verbose_name='resident')),
                    ('demand', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='confirmations', to='lepra.removaldemand', verbose_name='demand')),
                ],
                options={
                    'verbose_name': 'removal confirmation',
                    'verbose_name_plural': 'removal confirmations',
                    'db_table': 'voting_removalconfirmation',
                    'ordering': ['at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='SpeechRequest',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('kind', models.CharField(choices=[('confrontation', 'confrontation'), ('last_word', 'last word')], max_length=14, verbose_name='kind')),
                    ('note', models.CharField(blank=True, max_length=300, verbose_name='note')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='speech_requests', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='speech_requests', to='cities.game', verbose_name='game')),
                    ('other', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='other')),
                    ('resident', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='speech_requests', to='cities.resident', verbose_name='resident')),
                ],
                options={
                    'verbose_name': 'speech request',
                    'verbose_name_plural': 'speech requests',
                    'db_table': 'voting_speechrequest',
                    'ordering': ['day', 'at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='SuicideDeclaration',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('declared_at', models.DateTimeField(verbose_name='declared at')),
                    ('confirmed_at', models.DateTimeField(blank=True, null=True, verbose_name='confirmed at')),
                    ('applied_at', models.DateTimeField(blank=True, null=True, verbose_name='applied at')),
                    ('refused_at', models.DateTimeField(blank=True, null=True, verbose_name='refused at')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='suicide_declarations', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='suicide_declarations', to='cities.game', verbose_name='game')),
                    ('resident', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='suicide_declarations', to='cities.resident', verbose_name='resident')),
                ],
                options={
                    'verbose_name': 'suicide declaration',
                    'verbose_name_plural': 'suicide declarations',
                    'db_table': 'voting_suicidedeclaration',
                    'ordering': ['day', 'declared_at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='VotingSession',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('opens_at', models.DateTimeField(verbose_name='opens at')),
                    ('closes_at', models.DateTimeField(verbose_name='closes at')),
                    ('opened_at', models.DateTimeField(blank=True, null=True, verbose_name='opened at')),
                    ('closed_at', models.DateTimeField(blank=True, null=True, verbose_name='closed at')),
                    ('result', models.JSONField(blank=True, null=True, verbose_name='result')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='voting_sessions', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='voting_sessions', to='cities.game', verbose_name='game')),
                ],
                options={
                    'verbose_name': 'voting session',
                    'verbose_name_plural': 'voting sessions',
                    'db_table': 'voting_votingsession',
                    'ordering': ['day', 'city_id'],
                },
            ),
            migrations.CreateModel(
                name='CourtCase',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('candidates', models.JSONField(default=list, verbose_name='candidates')),
                    ('deadline', models.DateTimeField(verbose_name='deadline')),
                    ('opened_at', models.DateTimeField(verbose_name='opened at')),
                    ('decided_at', models.DateTimeField(blank=True, null=True, verbose_name='decided at')),
                    ('fallback', models.BooleanField(default=False, verbose_name='fallback')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='court_cases', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='court_cases', to='cities.game', verbose_name='game')),
                    ('leader', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='leader')),
                    ('sentenced', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='sentenced')),
                    ('session', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='court_case', to='lepra.votingsession', verbose_name='session')),
                ],
                options={
                    'verbose_name': 'court case',
                    'verbose_name_plural': 'court cases',
                    'db_table': 'voting_courtcase',
                    'ordering': ['day', 'city_id'],
                },
            ),
            migrations.CreateModel(
                name='CourtProcedureChoice',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('procedure', models.CharField(choices=[('votes_cast', 'at least half of the votes cast'), ('sitting_judges', 'at least half of the sitting judges')], default='votes_cast', max_length=16, verbose_name='procedure')),
                    ('set_at', models.DateTimeField(verbose_name='set at')),
                    ('game', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='court_procedure', to='cities.game', verbose_name='game')),
                    ('set_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='set by')),
                ],
                options={
                    'verbose_name': 'court procedure',
                    'verbose_name_plural': 'court procedures',
                    'db_table': 'voting_courtprocedurechoice',
                    'constraints': [models.CheckConstraint(condition=models.Q(('procedure__in', ['votes_cast', 'sitting_judges'])), name='courtprocedurechoice_known_procedure')],
                },
            ),
            migrations.CreateModel(
                name='CourtVote',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('case', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='votes', to='lepra.courtcase', verbose_name='case')),
                    ('choice', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='choice')),
                    ('judge', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='court_votes', to='cities.resident', verbose_name='judge')),
                ],
                options={
                    'verbose_name': 'court vote',
                    'verbose_name_plural': 'court votes',
                    'db_table': 'voting_courtvote',
                    'ordering': ['at', 'id'],
                    'constraints': [models.UniqueConstraint(fields=('case', 'judge'), name='courtvote_one_per_judge_per_case')],
                },
            ),
            migrations.CreateModel(
                name='ElectionBallot',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('pro', models.BooleanField(verbose_name='pro')),
                    ('proxy', models.BooleanField(default=False, verbose_name='proxy')),
                    ('cast_at', models.DateTimeField(verbose_name='cast at')),
                    ('inbox', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='election_ballots', to='inboxes.inbox', verbose_name='inbox')),
                    ('message', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='election_ballot', to='inboxes.message', verbose_name='message')),
                    ('voter', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='election_ballots', to='cities.resident', verbose_name='voter')),
                ],
                options={
                    'verbose_name': 'election ballot',
                    'verbose_name_plural': 'election ballots',
                    'db_table': 'voting_electionballot',
                    'ordering': ['cast_at', 'id'],
                    'constraints': [models.UniqueConstraint(fields=('inbox', 'voter'), name='electionballot_one_per_voter_precinct')],
                },
            ),
            migrations.CreateModel(
                name='ExecutionDecision',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('day', models.PositiveSmallIntegerField(verbose_name='day')),
                    ('source', models.CharField(choices=[('procurator', 'Procurator'), ('court', 'Supreme Court')], max_length=12, verbose_name='source')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='execution_decisions', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='execution_decisions', to='cities.game', verbose_name='game')),
                    ('resident', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='cities.resident', verbose_name='resident')),
                ],
                options={
                    'verbose_name': 'execution decision',
                    'verbose_name_plural': 'execution decisions',
                    'db_table': 'voting_executiondecision',
                    'ordering': ['day', 'city_id'],
                    'constraints': [models.UniqueConstraint(fields=('city', 'day'), name='executiondecision_one_per_city_per_day')],
                },
            ),
            migrations.AddConstraint(
                model_name='judgeelection',
                constraint=models.CheckConstraint(condition=models.Q(('opens_at__lt', models.F('closes_at'))), name='judgeelection_opens_before_closes'),
            ),
            migrations.AddConstraint(
                model_name='judgeelection',
                constraint=models.UniqueConstraint(condition=models.Q(('cancelled_at__isnull', True), ('closed_at__isnull', True)), fields=('city',), name='judgeelection_one_pending_per_city'),
            ),
            migrations.AddConstraint(
                model_name='electionproxy',
                constraint=models.UniqueConstraint(fields=('election', 'voter', 'candidate'), name='electionproxy_one_per_voter_candidate'),
            ),
            migrations.AddConstraint(
                model_name='judgeproposal',
                constraint=models.UniqueConstraint(fields=('election', 'proposer'), name='judgeproposal_one_per_proposer'),
            ),
            migrations.AddIndex(
                model_name='lepravote',
                index=models.Index(condition=models.Q(('latest_retraction', True)), fields=['inbox', 'voter'], name='lepravote_latest_retraction'),
            ),
            migrations.AddIndex(
                model_name='lepravote',
                index=models.Index(condition=models.Q(('state', 'standing'), ('latest_retraction', True), _connector='OR'), fields=['inbox', 'voter'], name='lepravote_tally'),
            ),
            migrations.AddConstraint(
                model_name='lepravote',
                constraint=models.UniqueConstraint(condition=models.Q(('state', 'standing')), fields=('inbox', 'voter'), name='lepravote_one_standing_per_voter_inbox'),
            ),
            migrations.AddConstraint(
                model_name='nomination',
                constraint=models.UniqueConstraint(fields=('nominator', 'day'), name='nomination_one_per_nominator_per_day'),
            ),
            migrations.AddConstraint(
                model_name='precinct',
                constraint=models.UniqueConstraint(fields=('election', 'candidate'), name='precinct_one_per_candidate'),
            ),
            migrations.AddConstraint(
                model_name='proxyrequest',
                constraint=models.UniqueConstraint(fields=('resident', 'nominee', 'day'), name='proxyrequest_one_per_voter_nominee_day'),
            ),
            migrations.AddConstraint(
                model_name='removalconfirmation',
                constraint=models.UniqueConstraint(fields=('demand', 'resident'), name='removalconfirmation_one_per_resident'),
            ),
            migrations.AddConstraint(
                model_name='speechrequest',
                constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'confrontation'), ('other__isnull', False)), models.Q(('kind', 'last_word'), ('other__isnull', True)), _connector='OR'), name='speechrequest_other_iff_confrontation'),
            ),
            migrations.AddConstraint(
                model_name='suicidedeclaration',
                constraint=models.UniqueConstraint(fields=('resident', 'day'), name='suicide_one_per_resident_per_day'),
            ),
            migrations.AddConstraint(
                model_name='suicidedeclaration',
                constraint=models.CheckConstraint(condition=models.Q(('refused_at__isnull', True), ('confirmed_at__isnull', True), _connector='OR'), name='suicide_confirmed_or_refused'),
            ),
            migrations.AddConstraint(
                model_name='votingsession',
                constraint=models.UniqueConstraint(fields=('city', 'day'), name='votingsession_one_per_city_per_day'),
            ),
            migrations.AddConstraint(
                model_name='votingsession',
                constraint=models.CheckConstraint(condition=models.Q(('opens_at__lt', models.F('closes_at'))), name='votingsession_opens_before_closes'),
            ),
        ], database_operations=[]),
        migrations.RunPython(content_types_to_lepra, content_types_to_voting),
    ]
