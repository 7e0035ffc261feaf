"""``LepraVote.latest_retraction``: the voter's latest retracted vote in a voting inbox, flagged, so that the stored
tally reads at most two rows per voter (``voting.standing``). Expand-only: a column with a database default and a
partial index; existing rows are flagged from their retractions' order (receive time, then the message id)."""

from django.db import migrations, models


def flag_latest_retractions(apps, schema_editor):
    LepraVote = apps.get_model("voting", "LepraVote")
    latest = {}
    for vote_id, inbox_id, voter_id, at, retraction_id in (
            LepraVote.objects.filter(state="retracted").order_by()
            .values_list("id", "inbox_id", "voter_id", "retracted_by__received_at", "retracted_by_id").iterator()):
        key = (at, retraction_id)
        if (inbox_id, voter_id) not in latest or key > latest[(inbox_id, voter_id)][0]:
            latest[(inbox_id, voter_id)] = (key, vote_id)
    LepraVote.objects.filter(pk__in=[vote_id for _key, vote_id in latest.values()]).update(latest_retraction=True)


class Migration(migrations.Migration):

    dependencies = [
        ('cities', '0001_initial'),
        ('inboxes', '0001_initial'),
        ('voting', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='lepravote',
            name='latest_retraction',
            field=models.BooleanField(db_default=False, default=False, verbose_name='latest retraction'),
        ),
        migrations.AddIndex(
            model_name='lepravote',
            index=models.Index(condition=models.Q(('latest_retraction', True)), fields=['inbox', 'voter'], name='lepravote_latest_retraction'),
        ),
        migrations.RunPython(flag_latest_retractions, migrations.RunPython.noop),
    ]
