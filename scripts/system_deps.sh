#!/usr/bin/env bash
# System packages the tests need beyond Python: Debian's Chromium (the Airflow UI test drives it
# headless through Playwright; no browser download). Idempotent; a no-op when it is there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version
