"""``LepraVote.latest_retraction`` and ``retracted_at``: the voter's latest retracted vote in a voting inbox, flagged,
and each retraction's receive time on its row, so that the stored tally reads at most two rows per voter and no
message (``rulesets.lepra.day.standing``). Expand-only: a column with a database default, a nullable column and a partial
index; existing rows are filled from their retractions (the latest by receive time, then the message id)."""

from django.db import migrations, models


def flag_latest_retractions(apps, schema_editor):
    LepraVote = apps.get_model("voting", "LepraVote")
    Message = apps.get_model("inboxes", "Message")
    LepraVote.objects.filter(state="retracted").update(retracted_at=models.Subquery(
        Message.objects.filter(pk=models.OuterRef("retracted_by_id")).values("received_at")[:1]))
    latest = {}
    for vote_id, inbox_id, voter_id, at, retraction_id in (
            LepraVote.objects.filter(state="retracted").order_by()
            .values_list("id", "inbox_id", "voter_id", "retracted_at", "retracted_by_id")):
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
        migrations.AddField(
            model_name='lepravote',
            name='retracted_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='retracted at'),
        ),
        migrations.AddIndex(
            model_name='lepravote',
            index=models.Index(condition=models.Q(('latest_retraction', True)), fields=['inbox', 'voter'], name='lepravote_latest_retraction'),
        ),
        migrations.RunPython(flag_latest_retractions, migrations.RunPython.noop),
    ]
