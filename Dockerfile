# syntax=docker/dockerfile:1
# The production image of Mafia Host. docker-compose.yml runs it three times: web (gunicorn), Celery worker and
# Celery beat. Settings: mafia_site.settings.production (DJANGO_SECRET_KEY, DATABASE_URL, REDIS_URL required).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=mafia_site.settings.production \
    MAFIA_VAR_DIR=/app/var

# tzdata: the IANA zones of games (Europe/Moscow by default) for zoneinfo; not every slim base ships it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tzdata \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system mafia \
    && useradd --system --gid mafia --home-dir /app --no-create-home --shell /usr/sbin/nologin mafia

WORKDIR /app

# Dependencies first, so that a code change does not reinstall them.
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY . .

# Static files are collected at build time (whitenoise serves them); the secret key is a throwaway, only needed
# because production settings refuse to load without one. var/ holds the Celery beat schedule file.
RUN DJANGO_SECRET_KEY=collectstatic-only-not-a-secret python manage.py collectstatic --noinput \
    && mkdir -p /app/var \
    && chown mafia:mafia /app/var

USER mafia
EXPOSE 8000

CMD ["gunicorn", "mafia_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
