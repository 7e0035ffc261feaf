#!/usr/bin/env bash
# Refresh the Russian catalogue (locale/ru/LC_MESSAGES/django.po) from our code and templates, then compile it.
#
# Usage: scripts/update_translations.sh            (from anywhere; needs GNU gettext: msgfmt, msgmerge, xgettext)
#
# After running it, translate every new or emptied msgstr in django.po, remove any "#, fuzzy" flags (gettext
# ignores fuzzy entries), and run the script again so django.mo matches the .po.
#
# The compiled locale/ru/LC_MESSAGES/django.mo is committed to the repository on purpose: a fresh machine may
# lack GNU gettext, and Django reads only the .mo file. Commit the .po and the .mo together.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
export PYTHONPATH=.

if ! command -v msgfmt >/dev/null 2>&1; then
    echo "GNU gettext (msgfmt) is not installed; install it (e.g. apt-get install gettext) to update translations." >&2
    exit 1
fi

mkdir -p locale
"$PYTHON" manage.py makemessages -l ru --ignore=.venv --ignore=staticfiles --ignore=var --ignore=tests
"$PYTHON" manage.py compilemessages -l ru --ignore=.venv

po=locale/ru/LC_MESSAGES/django.po
# Report what still needs a translator (msgattrib ships with gettext).
untranslated=$(msgattrib --untranslated --no-obsolete "$po" | grep -c '^msgid ' || true)
fuzzy=$(msgattrib --only-fuzzy --no-obsolete "$po" | grep -c '^msgid ' || true)
# Each count includes the header entry when there is anything to report.
echo "Untranslated entries: $(( untranslated > 0 ? untranslated - 1 : 0 )); fuzzy entries: $(( fuzzy > 0 ? fuzzy - 1 : 0 ))."
