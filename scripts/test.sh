#!/usr/bin/env bash
# The whole test suite, as CI runs it: install the system packages (Chromium), install from the
# lock file, build the peer virtualenv (pypaimon, pypaimon-rust), then lint, type-check and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/system_deps.sh
scripts/bootstrap.sh
scripts/setup_peers.sh >/dev/null
.venv/bin/ruff check paimon_core spark_jobs tests pyspark_paimon.py plugins dags
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
