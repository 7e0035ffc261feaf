"""An M21 game has no number of cities: the games created before, which were given one city, forget the count.
Reversible: going back gives them one city again."""
from django.db import migrations

RULESET = "m21"


def forget_city_count(apps, schema_editor):
    apps.get_model("cities", "Game").objects.filter(ruleset=RULESET).update(city_count=None)


def restore_city_count(apps, schema_editor):
    apps.get_model("cities", "Game").objects.filter(ruleset=RULESET).update(city_count=1)


class Migration(migrations.Migration):

    dependencies = [
        ("m21", "0004_games_without_city"),
    ]

    operations = [
        migrations.RunPython(forget_city_count, restore_city_count),
    ]
