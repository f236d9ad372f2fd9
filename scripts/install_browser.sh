#!/usr/bin/env bash
# Installs the browser toolchain on a fresh Debian machine (run as root): Debian's chromium + CJK fonts, and the
# pinned Pyodide runtime from npm (package-lock.json). Idempotent; silent when there is nothing to do.
# Never runs `playwright install`: the browser tests drive /usr/bin/chromium directly.
set -euo pipefail
cd "$(dirname "$0")/.."

PYODIDE_VERSION="314.0.7"

# Runs a command with its output captured; prints the output only if the command fails.
quiet() {
    local log
    log="$(mktemp)"
    if ! "$@" >"$log" 2>&1; then
        echo "install_browser: FAILED: $*" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
}

if [[ ! -x /usr/bin/chromium ]]; then
    echo "install_browser: installing chromium and fonts-noto-cjk (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    quiet apt-get update
    quiet apt-get install -y chromium fonts-noto-cjk
    if [[ ! -x /usr/bin/chromium ]]; then
        echo "install_browser: FAILED: /usr/bin/chromium is still missing after apt-get" >&2
        exit 1
    fi
fi

pyodide_version() {
    node -p 'require("./node_modules/pyodide/package.json").version' 2>/dev/null || true
}

if [[ "$(pyodide_version)" != "$PYODIDE_VERSION" ]]; then
    echo "install_browser: installing pyodide $PYODIDE_VERSION (npm)" >&2
    if [[ -f package-lock.json ]]; then
        quiet npm ci --no-audit --no-fund
    else
        quiet npm install --no-audit --no-fund
    fi
    found="$(pyodide_version)"
    if [[ "$found" != "$PYODIDE_VERSION" ]]; then
        echo "install_browser: FAILED: need pyodide $PYODIDE_VERSION in node_modules, found '${found:-nothing}'" >&2
        exit 1
    fi
fi
