"""An M21 game has no city: the seats and inboxes of the games dealt before leave the city the deal made for them,
which goes. Reversible: going back makes one city per dealt game again (number 1, the game's title) and puts every
seat and inbox of the game in it, as the deal did."""
from django.db import migrations

RULESET = "m21"


def detach_and_drop_cities(apps, schema_editor):
    City = apps.get_model("cities", "City")
    Resident = apps.get_model("cities", "Resident")
    Inbox = apps.get_model("inboxes", "Inbox")
    Resident.objects.filter(game__ruleset=RULESET, city__isnull=False).update(city=None)
    Inbox.objects.filter(game__ruleset=RULESET, city__isnull=False).update(city=None)
    City.objects.filter(game__ruleset=RULESET).delete()


def recreate_cities(apps, schema_editor):
    Game = apps.get_model("cities", "Game")
    City = apps.get_model("cities", "City")
    Resident = apps.get_model("cities", "Resident")
    Inbox = apps.get_model("inboxes", "Inbox")
    for game in Game.objects.filter(ruleset=RULESET, residents__isnull=False).distinct().order_by("pk"):
        city = City.objects.filter(game=game, number=1).first() or City.objects.create(
            game=game, number=1, name=game.title[:100])
        Resident.objects.filter(game=game, city__isnull=True).update(city=city)
        Inbox.objects.filter(game=game, city__isnull=True).update(city=city)


class Migration(migrations.Migration):

    dependencies = [
        ("cities", "0006_resident_city_optional"),
        ("inboxes", "0002_membership_public_id"),
        ("m21", "0003_game_thread_public_and_replacement_list"),
    ]

    operations = [
        migrations.RunPython(detach_and_drop_cities, recreate_cities),
    ]
