#!/usr/bin/env bash
# System packages the tests need beyond Python, all from Debian's packages (no downloads of their own):
# - chromium: the Airflow UI test drives it headless through Playwright;
# - postgresql: the Airflow metadata database of tests/distributed/ (the tests start their own
#   server on loopback; the package's own cluster is not used);
# - docker-compose: `docker-compose config` validates docker/compose.yaml (no daemon needed).
# Idempotent; a no-op when they are all there.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
[ -x /usr/bin/docker-compose ] || missing+=(docker-compose)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
