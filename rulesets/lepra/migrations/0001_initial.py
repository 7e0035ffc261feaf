"""Lepra's seat ranks (``LepraSeat``), copied from the columns ``Resident`` had for every resident of a Lepra game;
back again when unapplied (``cities.0005_resident_ranks_to_lepra`` drops those columns after this)."""
import django.db.models.deletion
from django.db import migrations, models

#: The columns that move, with the copies of the resident's kept for the constraints.
RANKS = ("is_commissar", "is_judge", "is_godfather", "is_spirit", "godfather_since", "godfather_until",
         "commissar_since")
BATCH = 1000


def copy_ranks_to_seats(apps, schema_editor):
    """One ``LepraSeat`` per resident of a Lepra game, with its ranks and dates and copies of its city, alignment
    and status."""
    Resident = apps.get_model("cities", "Resident")
    LepraSeat = apps.get_model("lepra", "LepraSeat")
    residents = Resident.objects.filter(game__ruleset="lepra").order_by("pk").values(
        "pk", "city_id", "alignment", "status", *RANKS)
    seats = [LepraSeat(resident_id=r["pk"], city_id=r["city_id"], alignment=r["alignment"], status=r["status"],
                       **{name: r[name] for name in RANKS}) for r in residents.iterator(chunk_size=BATCH)]
    LepraSeat.objects.bulk_create(seats, batch_size=BATCH)


def copy_seats_to_ranks(apps, schema_editor):
    """The ranks and dates back on the residents (the columns re-added by unapplying ``cities.0005``)."""
    Resident = apps.get_model("cities", "Resident")
    LepraSeat = apps.get_model("lepra", "LepraSeat")
    residents = []
    for seat in LepraSeat.objects.order_by("pk").iterator(chunk_size=BATCH):
        resident = Resident(pk=seat.resident_id)
        for name in RANKS:
            setattr(resident, name, getattr(seat, name))
        residents.append(resident)
    Resident.objects.bulk_update(residents, list(RANKS), batch_size=BATCH)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('cities', '0004_city_public_id'),
    ]

    operations = [
        migrations.CreateModel(
            name='LepraSeat',
            fields=[
                ('resident', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='lepra_seat', serialize=False, to='cities.resident', verbose_name='resident')),
                ('alignment', models.CharField(choices=[('honest', 'honest'), ('mafia', 'mafia')], default='honest', max_length=10, verbose_name='alignment')),
                ('status', models.CharField(choices=[('alive', 'alive'), ('dead', 'dead'), ('imprisoned', 'imprisoned')], default='alive', max_length=12, verbose_name='status')),
                ('is_commissar', models.BooleanField(default=False, verbose_name='is commissar')),
                ('is_judge', models.BooleanField(default=False, verbose_name='is judge')),
                ('is_godfather', models.BooleanField(default=False, verbose_name='is godfather')),
                ('is_spirit', models.BooleanField(default=False, verbose_name='is spirit')),
                ('godfather_since', models.DateTimeField(blank=True, null=True, verbose_name='godfather since')),
                ('godfather_until', models.DateTimeField(blank=True, null=True, verbose_name='godfather until')),
                ('commissar_since', models.DateTimeField(blank=True, null=True, verbose_name='commissar since')),
                ('city', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='cities.city', verbose_name='city')),
            ],
            options={
                'verbose_name': 'Lepra seat',
                'verbose_name_plural': 'Lepra seats',
                'constraints': [models.UniqueConstraint(condition=models.Q(('is_commissar', True)), fields=('city',), name='lepraseat_one_commissar_per_city'), models.UniqueConstraint(condition=models.Q(('is_judge', True), ('status', 'alive')), fields=('city',), name='lepraseat_one_sitting_judge_per_city'), models.UniqueConstraint(condition=models.Q(('is_godfather', True), ('status', 'alive')), fields=('city',), name='lepraseat_one_living_godfather_per_city'), models.CheckConstraint(condition=models.Q(('alignment', 'mafia'), ('is_commissar', True), _negated=True), name='lepraseat_commissar_is_honest'), models.CheckConstraint(condition=models.Q(models.Q(('is_godfather', True), _negated=True), ('alignment', 'mafia'), _connector='OR'), name='lepraseat_godfather_is_mafia')],
            },
        ),
        migrations.RunPython(copy_ranks_to_seats, copy_seats_to_ranks),
    ]
