#!/usr/bin/env bash
# Installs Debian's nginx for the published-site browser test (tests/browser/test_publish.py), which starts its own
# nginx on 127.0.0.1 with a generated config (pid, logs and temp paths under the test's tmp folder): the package's
# own service is never used. Run as root; idempotent; silent when there is nothing to do.
set -euo pipefail

if [[ -x /usr/sbin/nginx ]]; then
    exit 0
fi
log="$(mktemp)"
echo "install_nginx: installing nginx (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update && apt-get install -y --no-install-recommends nginx; } >"$log" 2>&1; then
    echo "install_nginx: FAILED: apt-get install nginx" >&2
    cat "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
if [[ ! -x /usr/sbin/nginx ]]; then
    echo "install_nginx: FAILED: /usr/sbin/nginx is still missing after apt-get" >&2
    exit 1
fi
