"""Bench settings (``manage.py bench`` and the gunicorn it starts): the production settings, served on loopback
over plain HTTP, with the floor view's URLs and a statement counter. Never deployed: the floor is routed only here.

The secret key comes from ``DJANGO_SECRET_KEY`` when set (the bench passes its own to the server so that the
sessions it writes are valid there), else a fixed bench-only key.
"""
import os

os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-deployed-" + "0123456789abcdef" * 3)
os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("DJANGO_COOKIES_SECURE", "0")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")

from .production import *
from .production import MIDDLEWARE, STORAGES

ROOT_URLCONF = "bench.urls"
MIDDLEWARE = ["bench.middleware.StatementCountMiddleware", *MIDDLEWARE]
SECURE_HSTS_SECONDS = 0
# The bench fetches no static file: templates resolve static URLs without collectstatic's manifest.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
