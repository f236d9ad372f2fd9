#!/usr/bin/env bash
# Installs the browser toolchain on a fresh Debian machine (run as root): Debian's chromium + CJK fonts,
# and the pinned Pyodide runtime from npm (package-lock.json). Idempotent and quiet when nothing is to do.
# Never runs `playwright install`: the tests drive /usr/bin/chromium directly.
set -euo pipefail
cd "$(dirname "$0")/.."

PYODIDE_VERSION="314.0.7"

if [[ ! -x /usr/bin/chromium ]]; then
    echo "install_browser: installing chromium and fonts-noto-cjk from Debian" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
    [[ -x /usr/bin/chromium ]] || { echo "install_browser: /usr/bin/chromium still missing after apt-get" >&2; exit 1; }
fi

installed_version() {
    node -p 'require("./node_modules/pyodide/package.json").version' 2>/dev/null || true
}

if [[ "$(installed_version)" != "$PYODIDE_VERSION" ]]; then
    echo "install_browser: installing pyodide $PYODIDE_VERSION from npm" >&2
    if [[ -f package-lock.json ]]; then
        npm ci --no-audit --no-fund --loglevel=error >/dev/null
    else
        npm install --no-audit --no-fund --loglevel=error >/dev/null
    fi
    got="$(installed_version)"
    if [[ "$got" != "$PYODIDE_VERSION" ]]; then
        echo "install_browser: expected pyodide $PYODIDE_VERSION in node_modules, found '${got:-nothing}'" >&2
        exit 1
    fi
fi
