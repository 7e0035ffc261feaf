# Mafia Host. Needs only Python >= 3.11 and make: no PostgreSQL, no Redis.
#
#   make run                 create .venv, install, migrate SQLite, load the demo game, start web + worker + beat
#   make test                install the test dependencies and run the whole suite
#   make test PYTEST_ARGS="-k policy -x"    extra arguments for pytest (also read from the environment)
#   make test TEST_WORKERS=1 a serial run (default: one pytest-xdist worker per core, `auto`)
#   make browser             install Debian's Chromium for the browser tests (scripts/install_browser.sh, apt)
#   make clean               remove the SQLite database, var/ (broker, beat schedule), collected static, caches
#   make distclean           clean, and remove .venv too
#
# `make run` reads an optional .env file (see .env.example) through honcho; `make test` does not (the suite uses
# SQLite unless DATABASE_URL / REDIS_URL are set in the environment, as .ci/run does). The browser tests
# (tests/e2e/) run when a Chromium is found; without one pytest deselects them and says so loudly, naming
# `make browser` (scripts/install_browser.sh); .ci/run installs it and makes a missing browser a failure.

.DEFAULT_GOAL := help

# A Python >= 3.11 to create .venv with. Unset: the first of python3, python3.14 ... python3.11 that is >= 3.11.
PYTHON ?=
PYTHON_CANDIDATES := python3 python3.14 python3.13 python3.12 python3.11
PIP_VERSION ?= 26.3
PYTEST_ARGS ?=
# pytest-xdist workers of `make test`: `auto` is one per core; 0 runs in-process, serially. Each worker has its own
# test database (pytest-django's _gw<N> suffix); the tests that start processes share one worker (xdist_group).
TEST_WORKERS ?= auto

VENV := .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip --disable-pip-version-check
HONCHO := $(VENV)/bin/honcho

# The installed requirements are recorded by a stamp file named after a checksum of the requirements files, so
# a changed pin (not a mere touch or checkout) reinstalls, and nothing is installed when nothing changed.
RUN_HASH := $(shell cat requirements.txt | cksum | tr -d ' \t')
TEST_HASH := $(shell cat requirements.txt requirements-test.txt | cksum | tr -d ' \t')
RUN_STAMP := $(VENV)/.installed-run-$(RUN_HASH)
TEST_STAMP := $(VENV)/.installed-test-$(TEST_HASH)

# .venv/bin first on PATH so that Procfile.dev's `python` / `celery` (and the integration tests' Celery
# processes) are the virtualenv's.
VENV_PATH := PATH="$(CURDIR)/$(VENV)/bin:$$PATH"
RUN_ENV := env DJANGO_SETTINGS_MODULE=mafia_site.settings.dev PYTHONUNBUFFERED=1 $(VENV_PATH)
TEST_ENV := env DJANGO_SETTINGS_MODULE=mafia_site.settings.test $(VENV_PATH)

.PHONY: help run test browser clean distclean

help:
	@echo "make run        install, migrate, load the demo game, start web (http://127.0.0.1:8000/) + worker + beat"
	@echo "make test       install the test dependencies and run the suite in parallel (PYTEST_ARGS=..., TEST_WORKERS=N)"
	@echo "make browser    install Chromium for the browser tests (apt; sudo when not root)"
	@echo "make clean      remove db.sqlite3, var/, staticfiles/ and caches"
	@echo "make distclean  clean, and remove .venv"

run: $(RUN_STAMP) | var
	@echo "==> manage.py migrate"
	@$(RUN_ENV) $(HONCHO) run -- python manage.py migrate --noinput
	@echo "==> manage.py load_demo --if-empty"
	@$(RUN_ENV) $(HONCHO) run -- python manage.py load_demo --if-empty
	@echo "==> starting web (http://127.0.0.1:8000/), Celery worker and Celery beat (Procfile.dev); Ctrl-C stops all"
	@$(RUN_ENV) $(HONCHO) start -f Procfile.dev

test: $(TEST_STAMP) | var
	@echo "==> pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)"
	@$(TEST_ENV) $(VPY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

browser:
	@bash scripts/install_browser.sh

var:
	@mkdir -p var

# Create .venv with a Python >= 3.11 (fails with a clear message when there is none).
$(VPY):
	@py=""; \
	for candidate in $(if $(PYTHON),$(PYTHON),$(PYTHON_CANDIDATES)); do \
	  if command -v "$$candidate" >/dev/null 2>&1 \
	     && "$$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then \
	    py="$$candidate"; break; \
	  fi; \
	done; \
	if [ -z "$$py" ]; then \
	  echo "error: Mafia Host needs Python >= 3.11, and none was found (tried: $(if $(PYTHON),$(PYTHON),$(PYTHON_CANDIDATES)))." >&2; \
	  if command -v python3 >/dev/null 2>&1; then echo "       python3 is $$(python3 --version 2>&1)." >&2; fi; \
	  echo "       Install Python 3.11 or newer, or point make at it: make run PYTHON=/path/to/python3.11" >&2; \
	  exit 1; \
	fi; \
	echo "==> creating $(VENV) with $$("$$py" --version 2>&1) ($$(command -v "$$py"))"; \
	"$$py" -m venv $(VENV) || { \
	  rm -rf $(VENV); \
	  echo "error: '$$py -m venv' failed (on Debian/Ubuntu: apt install python3-venv)." >&2; exit 1; }; \
	$(PIP) install --quiet --upgrade "pip==$(PIP_VERSION)"

define check_venv_python
	@$(VPY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: $(VENV) runs $$($(VPY) --version 2>&1); Mafia Host needs >= 3.11. Run 'make distclean' and retry." >&2; \
	  exit 1; }
endef

$(RUN_STAMP): | $(VPY)
	$(check_venv_python)
	@echo "==> installing requirements.txt into $(VENV)"
	@$(PIP) install --quiet -r requirements.txt
	@rm -f $(VENV)/.installed-run-*
	@touch $@

$(TEST_STAMP): | $(VPY)
	$(check_venv_python)
	@echo "==> installing requirements-test.txt into $(VENV)"
	@$(PIP) install --quiet -r requirements-test.txt
	@rm -f $(VENV)/.installed-test-*
	@touch $@

clean:
	rm -rf var db.sqlite3 staticfiles .pytest_cache .hypothesis .ruff_cache
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
