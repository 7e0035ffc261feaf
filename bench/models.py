"""The floor's table: one row per floor post. Unmanaged (no migration, never in a deployed schema): the bench
creates the table before it starts the server and drops it at the end (``bench.runner``)."""
from django.db import models


class FloorRow(models.Model):
    """One row written by the floor view (the least a post can do: one INSERT)."""

    text = models.CharField(max_length=200)
    at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "bench_floor_row"
