"""A notification of a ruleset's own record is a generic relation (``record_type`` + ``record_id``) instead of one
foreign key per record model: the commissar offers and proxy requests already told keep their rows (their content
types are made if missing), then the old columns and their unique constraints go. Reversible: going back fills
the old columns again from the generic relation (a row of any other record model cannot be kept there and goes)."""
import django.db.models.deletion
from django.db import migrations, models
from django.db.models import F

#: The old column of each record model the notifications pointed at, with its content type's natural key.
OLD_COLUMNS = (("offer", "lepra", "commissaroffer"), ("proxy", "lepra", "proxyrequest"))


def to_generic(apps, schema_editor):
    """Copy ``offer``/``proxy`` into ``record_type``/``record_id``."""
    Notification = apps.get_model("archive", "Notification")
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for column, app_label, model in OLD_COLUMNS:
        rows = Notification.objects.using(db).filter(**{f"{column}__isnull": False})
        if rows.exists():
            record_type, _created = ContentType.objects.using(db).get_or_create(app_label=app_label, model=model)
            rows.update(record_type=record_type, record_id=F(f"{column}_id"))


def from_generic(apps, schema_editor):
    """Copy ``record_type``/``record_id`` back into ``offer``/``proxy``; drop rows of any other record model."""
    Notification = apps.get_model("archive", "Notification")
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    known = []
    for column, app_label, model in OLD_COLUMNS:
        record_type = ContentType.objects.using(db).filter(app_label=app_label, model=model).first()
        if record_type is not None:
            known.append(record_type.pk)
            Notification.objects.using(db).filter(record_type=record_type).update(**{f"{column}_id": F("record_id")})
    Notification.objects.using(db).filter(record_type__isnull=False).exclude(record_type__in=known).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('archive', '0003_notification_offer_from_lepra'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.AddField(
            model_name='notification',
            name='record_type',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='contenttypes.contenttype'),
        ),
        migrations.AddField(
            model_name='notification',
            name='record_id',
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(to_generic, from_generic),
        migrations.RemoveConstraint(
            model_name='notification',
            name='notification_one_per_user_offer',
        ),
        migrations.RemoveConstraint(
            model_name='notification',
            name='notification_one_per_user_proxy',
        ),
        migrations.RemoveField(
            model_name='notification',
            name='offer',
        ),
        migrations.RemoveField(
            model_name='notification',
            name='proxy',
        ),
        migrations.AddIndex(
            model_name='notification',
            index=models.Index(fields=['record_type', 'record_id'], name='notification_record'),
        ),
        migrations.AddConstraint(
            model_name='notification',
            constraint=models.UniqueConstraint(condition=models.Q(('record_type__isnull', False)), fields=('user', 'record_type', 'record_id'), name='notification_one_per_user_record'),
        ),
    ]
