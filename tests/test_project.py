"""Project-wide guarantees: deploy checks, migrations in sync, only services write game models (DESIGN.md)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _manage(*args, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_passes_with_production_settings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env_extra={
        "DJANGO_SETTINGS_MODULE": "mafia_site.settings.production",
        "DJANGO_SECRET_KEY": "k" * 20 + "-production-like-secret-with-enough-entropy-0123456789",
        "DJANGO_ALLOWED_HOSTS": "mafia.example.com",
    })
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = _manage("check", env_extra={"DJANGO_SETTINGS_MODULE": "mafia_site.settings.production"})
    assert result.returncode != 0
    assert "The environment variable DJANGO_SECRET_KEY must be set." in result.stderr


def test_demo_cannot_be_loaded_with_production_settings():
    result = _manage("load_demo", "--if-empty", env_extra={
        "DJANGO_SETTINGS_MODULE": "mafia_site.settings.production",
        "DJANGO_SECRET_KEY": "k" * 60,
        "DJANGO_ALLOWED_HOSTS": "mafia.example.com",
        "SQLITE_PATH": str(ROOT / "var" / "never-created.sqlite3"),
    })
    assert result.returncode != 0
    assert "The demo game cannot be loaded with these settings (MAFIA_ALLOW_DEMO is off)." in result.stderr


def test_makemigrations_is_clean():
    result = _manage("makemigrations", "--check", "--dry-run",
                     env_extra={"DJANGO_SETTINGS_MODULE": "mafia_site.settings.test"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No changes detected" in result.stdout


def test_migrations_build_a_fresh_database(tmp_path):
    """The suite builds its test databases from the models (``--no-migrations`` in pyproject.toml, for speed);
    this test applies the migrations themselves to a fresh SQLite file, so that a migration that cannot run still
    fails the suite (and ``test_makemigrations_is_clean`` keeps models and migrations equal)."""
    path = tmp_path / "fresh.sqlite3"
    env = {"DJANGO_SETTINGS_MODULE": "mafia_site.settings.test", "SQLITE_PATH": str(path), "DATABASE_URL": ""}
    result = _manage("migrate", "--noinput", env_extra=env)
    assert result.returncode == 0, result.stdout + result.stderr
    result = _manage("migrate", "--check", env_extra=env)
    assert result.returncode == 0, result.stdout + result.stderr


WRITE_CALL = re.compile(r"\.(save|delete|update|bulk_create|bulk_update|create|get_or_create|update_or_create)\(")
GAME_APPS = ("cities", "inboxes", "voting", "roles", "archive", "staff", "sanctions", "mafia_site")
# Modules allowed to write game models: services, the scheduler (which runs handlers that call services),
# and the demo loader, which writes accounts (not game models) besides calling services.
WRITERS = {"services.py", "scheduler.py"}


def test_only_services_write_game_models():
    offenders = []
    for app in GAME_APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts or _is_writer(path):
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if WRITE_CALL.search(line) and not _allowed(path, line):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def _is_writer(path: Path) -> bool:
    """Service modules (``services.py``, ``<subject>_services.py``, modules of a ``services`` package) and the
    scheduler may write game models."""
    return (path.name in WRITERS or path.name.endswith("_services.py")
            or "services" in path.relative_to(ROOT).parts[:-1])


def _allowed(path: Path, line: str) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    # Account rows of demo users (not game models) and allauth's e-mail rows.
    if rel == "rulesets/lepra/demo.py" and ("User.objects.create(" in line or "EmailAddress.objects.create(" in line):
        return True
    # A model's (or its queryset's) own save/bulk_create/update override handing the write on to Django (it tells
    # the live polls): the write itself is still the calling service's.
    if path.name == "models.py" and re.search(r"\bsuper\(\)\.(save|bulk_create|update)\(", line):
        return True
    # accounts is not a game app; django's own QuerySet methods named like writes inside selectors are reads.
    return False


def test_no_tests_are_skipped_or_trivially_true():
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        text = path.read_text()
        for pattern in (r"^\s*assert True\b", r"pytest\.mark\.skip\b", r"pytest\.skip\(", r"\.skipTest\("):
            if re.search(pattern, text, re.M) and path.name != "test_project.py":
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert offenders == []


@pytest.mark.django_db
def test_every_response_to_a_logged_in_user_is_private(client, django_user_model):
    user = django_user_model.objects.create_user("someone", "s@example.com", "x-secret-123")
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    assert "private" in response["Cache-Control"]


#: The apps, the rulesets and the project package. (Tests are not linted: hypothesis takes naive bounds for its datetimes.)
LINTED = ("accounts", "cities", "inboxes", "voting", "roles", "rulesets", "mafia_site")


def test_no_naive_datetime_anywhere_ruff_DTZ():
    """ruff's flake8-datetimez rules (DTZ, selected in pyproject.toml) find no naive datetime in the code
    (DESIGN.md "The clock": everything aware, zones through zoneinfo). ruff is pinned in requirements-test.txt."""
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "DTZ",
                             "--output-format", "concise", *LINTED], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "All checks passed!"
