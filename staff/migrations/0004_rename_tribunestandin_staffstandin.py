"""The stand-in model takes a neutral name (``StaffStandIn``): its table becomes ``staff_staffstandin`` and its
content type follows (``django.contrib.contenttypes`` renames it with the model); the named constraints and the
index keep their names, the related names of the game and the city become ``stand_ins``."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cities', '0001_initial'),
        ('staff', '0003_lepra_models_to_lepra'),
    ]

    operations = [
        migrations.RenameModel(
            old_name='TribuneStandIn',
            new_name='StaffStandIn',
        ),
        migrations.AlterModelOptions(
            name='staffstandin',
            options={'ordering': ['starts_at', 'id'], 'verbose_name': 'stand-in', 'verbose_name_plural': 'stand-ins'},
        ),
        migrations.AlterField(
            model_name='staffstandin',
            name='city',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='stand_ins', to='cities.city', verbose_name='city'),
        ),
        migrations.AlterField(
            model_name='staffstandin',
            name='game',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='stand_ins', to='cities.game', verbose_name='game'),
        ),
    ]
