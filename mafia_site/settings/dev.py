"""Development settings: DEBUG, console e-mail, the demo game allowed. Used by ``make run`` and manage.py."""
from .base import *  # noqa: F401,F403
from .base import env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
MAFIA_ALLOW_DEMO = True
