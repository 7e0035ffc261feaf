"""Lepra's setup, night and game-end models leave this app in Django's state only (``lepra.0003_night_models_from_roles``
creates them there over the same tables): no table is dropped. The app keeps its migrations, the models' history."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('lepra', '0003_night_models_from_roles'),
        ('archive', '0003_notification_offer_from_lepra'),
        ('roles', '0001_initial'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app holds the models changes.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveField(
                model_name='commissaroffer',
                name='candidate',
            ),
            migrations.RemoveField(
                model_name='commissaroffer',
                name='city',
            ),
            migrations.RemoveField(
                model_name='commissaroffer',
                name='game',
            ),
            migrations.RemoveField(
                model_name='commissaroffer',
                name='inbox',
            ),
            migrations.RemoveField(
                model_name='gameresult',
                name='game',
            ),
            migrations.RemoveField(
                model_name='gameresult',
                name='post',
            ),
            migrations.RemoveField(
                model_name='gift',
                name='from_city',
            ),
            migrations.RemoveField(
                model_name='gift',
                name='game',
            ),
            migrations.RemoveField(
                model_name='gift',
                name='to_city',
            ),
            migrations.RemoveField(
                model_name='godfatherelection',
                name='city',
            ),
            migrations.RemoveField(
                model_name='godfatherelection',
                name='game',
            ),
            migrations.RemoveField(
                model_name='godfatherelection',
                name='winner',
            ),
            migrations.RemoveField(
                model_name='godfathervote',
                name='election',
            ),
            migrations.RemoveField(
                model_name='godfathervote',
                name='candidate',
            ),
            migrations.RemoveField(
                model_name='godfathervote',
                name='voter',
            ),
            migrations.RemoveField(
                model_name='mafiadraw',
                name='game',
            ),
            migrations.RemoveField(
                model_name='mafiadraw',
                name='notary',
            ),
            migrations.RemoveField(
                model_name='nightdecision',
                name='city',
            ),
            migrations.RemoveField(
                model_name='nightdecision',
                name='game',
            ),
            migrations.RemoveField(
                model_name='nightdecision',
                name='target',
            ),
            migrations.RemoveField(
                model_name='nightresolution',
                name='game',
            ),
            migrations.RemoveField(
                model_name='nightresolution',
                name='touring_city',
            ),
            migrations.DeleteModel(
                name='CommissarCheck',
            ),
            migrations.DeleteModel(
                name='CommissarOffer',
            ),
            migrations.DeleteModel(
                name='GameResult',
            ),
            migrations.DeleteModel(
                name='Gift',
            ),
            migrations.DeleteModel(
                name='GodfatherElection',
            ),
            migrations.DeleteModel(
                name='GodfatherVote',
            ),
            migrations.DeleteModel(
                name='MafiaDraw',
            ),
            migrations.DeleteModel(
                name='NightDecision',
            ),
            migrations.DeleteModel(
                name='NightResolution',
            ),
        ], database_operations=[]),
    ]
