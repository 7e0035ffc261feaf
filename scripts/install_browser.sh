#!/usr/bin/env bash
# Install the browser of the e2e tests (tests/e2e/): Debian's Chromium and a font with Cyrillic glyphs.
#
# Playwright for Python drives this system Chromium through `executable_path`; nothing is downloaded by
# Playwright itself at run time. Idempotent: does nothing (and needs no network) when both are present.
# Non-interactive; runs apt-get directly as root, through sudo otherwise. Debian and Ubuntu only.
#
#   scripts/install_browser.sh           install what is missing
#   MAFIA_CHROMIUM=/path/to/chromium     a browser elsewhere: checked, nothing installed for it
set -euo pipefail

CHROMIUM="${MAFIA_CHROMIUM:-/usr/bin/chromium}"
FONT_FILE=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
packages=()

log() { printf '[install_browser] %s\n' "$*" >&2; }

if [[ -x "$CHROMIUM" ]]; then
    log "browser present: $CHROMIUM"
elif [[ -n "${MAFIA_CHROMIUM:-}" ]]; then
    log "MAFIA_CHROMIUM=$MAFIA_CHROMIUM is not an executable file"
    exit 1
else
    packages+=(chromium)
fi
if [[ -f "$FONT_FILE" ]]; then
    log "font present: $FONT_FILE"
else
    packages+=(fonts-dejavu-core)
fi
if ((${#packages[@]} == 0)); then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "apt-get not found: install Chromium (and a font with Cyrillic) with your system's package manager,"
    log "then point the tests at it: MAFIA_CHROMIUM=/path/to/chromium make test"
    exit 1
fi
if ((EUID == 0)); then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    log "not root and no sudo: cannot install ${packages[*]}"
    exit 1
fi

started=$SECONDS
export DEBIAN_FRONTEND=noninteractive
log "installing ${packages[*]} with apt-get"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
if [[ ! -x "$CHROMIUM" ]]; then
    log "apt-get finished but $CHROMIUM is missing"
    exit 1
fi
log "installed ${packages[*]} in $((SECONDS - started)) s: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
