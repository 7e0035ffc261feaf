"""The bench app: the ``bench`` management command and, under ``mafia_site.settings.bench`` only, the floor."""
from django.apps import AppConfig


class BenchConfig(AppConfig):
    name = "bench"
    verbose_name = "Benchmark"
    default_auto_field = "django.db.models.BigAutoField"
