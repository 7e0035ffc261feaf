"""The Mafia Host project: settings, URLs, the Celery app and the scheduler tick."""
from .celery import app as celery_app

__all__ = ("celery_app",)
