"""Lepra's impeachment, role acknowledgement (from the engine's ``staff`` app) and no-confidence (from ``sanctions``)
models move here in Django's state only: they keep their tables (``db_table``), constraints and indexes, so no row
moves and no table is renamed (``staff.0003_lepra_models_to_lepra`` and ``sanctions.0005_no_confidence_to_lepra``
delete them from those apps' state). Their content types follow them."""
import django.db.models.deletion
import kernel.public_ids
from django.conf import settings
from django.db import migrations, models

#: The models that move, by their app and model name.
MOVED = {"staff": ("impeachmentdemand", "impeachmentsignature", "roleacknowledgement"),
         "sanctions": ("noconfidencecase",)}


def content_types_to_lepra(apps, schema_editor):
    """The content types of the moved models follow them (with their permissions and admin log entries)."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app, models_ in MOVED.items():
        ContentType.objects.using(schema_editor.connection.alias).filter(app_label=app, model__in=models_).update(
            app_label="lepra")


def content_types_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app, models_ in MOVED.items():
        ContentType.objects.using(schema_editor.connection.alias).filter(app_label="lepra", model__in=models_).update(
            app_label=app)


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('staff', '0002_tribunestandin_public_id'),
        ('sanctions', '0004_noconfidencecase_public_id'),
        ('cities', '0007_staffrole_kinds_from_rulesets'),
        ('inboxes', '0004_inbox_rules_to_rulesets'),
        ('lepra', '0004_inbox_constraints'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='ImpeachmentDemand',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('created_at', models.DateTimeField(verbose_name='created at')),
                    ('reached_at', models.DateTimeField(blank=True, null=True, verbose_name='reached at')),
                    ('opened_at', models.DateTimeField(blank=True, null=True, verbose_name='opened at')),
                    ('ruling', models.CharField(blank=True, choices=[('replace', 'replace the Tribune'), ('bonus', 'bonus to the complainants'), ('unfounded', 'rejected as unfounded'), ('trivial', 'closed as trivial')], max_length=10, verbose_name='ruling')),
                    ('ruled_at', models.DateTimeField(blank=True, null=True, verbose_name='ruled at')),
                    ('reason', models.TextField(blank=True, verbose_name='reason')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='impeachment_demands', to='cities.city', verbose_name='city')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='impeachment_demands', to='cities.game', verbose_name='game')),
                    ('inbox', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='impeachment_demand', to='inboxes.inbox', verbose_name='inbox')),
                    ('initiator', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='impeachments_initiated', to='cities.resident', verbose_name='initiator')),
                    ('new_tribune_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='new tribune user')),
                    ('tribune', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='impeachment_demands', to='cities.staffrole', verbose_name='tribune')),
                    ('tribune_user', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='tribune user')),
                ],
                options={
                    'verbose_name': 'impeachment demand',
                    'verbose_name_plural': 'impeachment demands',
                    'db_table': 'staff_impeachmentdemand',
                    'ordering': ['-created_at', '-id'],
                },
            ),
            migrations.CreateModel(
                name='ImpeachmentSignature',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('demand', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='signatures', to='lepra.impeachmentdemand', verbose_name='demand')),
                    ('resident', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='impeachment_signatures', to='cities.resident', verbose_name='resident')),
                ],
                options={
                    'verbose_name': 'impeachment signature',
                    'verbose_name_plural': 'impeachment signatures',
                    'db_table': 'staff_impeachmentsignature',
                    'ordering': ['at', 'id'],
                },
            ),
            migrations.CreateModel(
                name='NoConfidenceCase',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('target', models.CharField(choices=[('arbiter', 'the Supreme Arbiter'), ('consigliere', 'the Consigliere')], max_length=12, verbose_name='about')),
                    ('filed_at', models.DateTimeField(verbose_name='filed at')),
                    ('ruling', models.CharField(blank=True, choices=[('bonus', 'well-founded: bonus granted'), ('unfounded', 'unfounded')], max_length=10, verbose_name='ruling')),
                    ('ruled_at', models.DateTimeField(blank=True, null=True, verbose_name='ruled at')),
                    ('reason', models.TextField(blank=True, verbose_name='reason')),
                    ('bonus', models.TextField(blank=True, verbose_name='bonus')),
                    ('public_id', kernel.public_ids.PublicIdField(default=kernel.public_ids.new_public_id, editable=False, max_length=12, null=True, unique=True, verbose_name='public id')),
                    ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='no_confidence_cases', to='cities.city', verbose_name='city')),
                    ('complainant', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='no_confidence_cases', to='cities.resident', verbose_name='complainant')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='no_confidence_cases', to='cities.game', verbose_name='game')),
                    ('inbox', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='no_confidence_case', to='inboxes.inbox', verbose_name='inbox')),
                ],
                options={
                    'verbose_name': 'complaint of no confidence',
                    'verbose_name_plural': 'complaints of no confidence',
                    'db_table': 'sanctions_noconfidencecase',
                    'ordering': ['-filed_at', '-id'],
                },
            ),
            migrations.CreateModel(
                name='RoleAcknowledgement',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('at', models.DateTimeField(verbose_name='at')),
                    ('game', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='role_acknowledgements', to='cities.game', verbose_name='game')),
                    ('resident', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='role_acknowledgement', to='cities.resident', verbose_name='resident')),
                ],
                options={
                    'verbose_name': 'role acknowledgement',
                    'verbose_name_plural': 'role acknowledgements',
                    'db_table': 'staff_roleacknowledgement',
                },
            ),
            migrations.AddConstraint(
                model_name='impeachmentdemand',
                constraint=models.UniqueConstraint(condition=models.Q(('ruled_at__isnull', True)), fields=('city',), name='impeachment_one_open_per_city'),
            ),
            migrations.AddConstraint(
                model_name='impeachmentdemand',
                constraint=models.CheckConstraint(condition=models.Q(models.Q(('ruled_at__isnull', True), ('ruling', '')), models.Q(models.Q(('ruling', ''), _negated=True), ('ruled_at__isnull', False)), _connector='OR'), name='impeachment_ruling_with_time'),
            ),
            migrations.AddConstraint(
                model_name='impeachmentdemand',
                constraint=models.CheckConstraint(condition=models.Q(('ruled_at__isnull', True), ('opened_at__isnull', False), _connector='OR'), name='impeachment_ruled_after_opening'),
            ),
            migrations.AddConstraint(
                model_name='impeachmentdemand',
                constraint=models.CheckConstraint(condition=models.Q(('opened_at__isnull', True), ('reached_at__isnull', False), _connector='OR'), name='impeachment_opened_after_threshold'),
            ),
            migrations.AddConstraint(
                model_name='impeachmentdemand',
                constraint=models.CheckConstraint(condition=models.Q(('new_tribune_user__isnull', True), ('ruling', 'replace'), _connector='OR'), name='impeachment_new_tribune_only_on_replace'),
            ),
            migrations.AddConstraint(
                model_name='impeachmentsignature',
                constraint=models.UniqueConstraint(fields=('demand', 'resident'), name='impeachment_one_signature_each'),
            ),
            migrations.AddConstraint(
                model_name='noconfidencecase',
                constraint=models.CheckConstraint(condition=models.Q(models.Q(('complainant__isnull', False), ('target', 'arbiter')), models.Q(('complainant__isnull', True), ('target', 'consigliere')), _connector='OR'), name='noconfidence_complainant_only_about_arbiter'),
            ),
            migrations.AddConstraint(
                model_name='noconfidencecase',
                constraint=models.UniqueConstraint(condition=models.Q(('ruled_at__isnull', True), ('target', 'arbiter')), fields=('complainant',), name='noconfidence_one_open_per_resident'),
            ),
            migrations.AddConstraint(
                model_name='noconfidencecase',
                constraint=models.UniqueConstraint(condition=models.Q(('ruled_at__isnull', True), ('target', 'consigliere')), fields=('city',), name='noconfidence_one_open_mafia_case_per_city'),
            ),
            migrations.AddConstraint(
                model_name='noconfidencecase',
                constraint=models.CheckConstraint(condition=models.Q(models.Q(('ruled_at__isnull', True), ('ruling', '')), models.Q(models.Q(('ruling', ''), _negated=True), ('ruled_at__isnull', False)), _connector='OR'), name='noconfidence_ruling_with_time'),
            ),
            migrations.AddConstraint(
                model_name='noconfidencecase',
                constraint=models.CheckConstraint(condition=models.Q(('bonus', ''), ('ruling', 'bonus'), _connector='OR'), name='noconfidence_bonus_only_granted'),
            ),
        ]),
        migrations.RunPython(content_types_to_lepra, content_types_back),
    ]
