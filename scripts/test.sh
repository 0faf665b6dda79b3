#!/usr/bin/env bash
# The whole test suite, as CI runs it: install the system packages (Chromium), install from the
# lock file, build the peer virtualenv (pypaimon, pypaimon-rust), then lint, type-check and run every test
# in random order (the seed is printed in the summary; replay with -p randomly --randomly-seed=N).
#
#   scripts/test.sh [pytest args]   everything (CI)
#   scripts/test.sh --fast [args]   the inner loop: lint, then the unit layer without the tests marked
#                                   slow, on two processes (pytest-xdist); no type check, no Spark,
#                                   Airflow, browser or peer-interop layers
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  shift
  scripts/bootstrap.sh
  .venv/bin/ruff check paimon_core spark_jobs tests pyspark_paimon.py plugins dags
  exec .venv/bin/python -m pytest -q -p no:cacheprovider -m "not slow" -n "${PYTEST_WORKERS:-2}" tests/unit "$@"
fi
scripts/system_deps.sh
scripts/bootstrap.sh
scripts/setup_peers.sh >/dev/null
.venv/bin/ruff check paimon_core spark_jobs tests pyspark_paimon.py plugins dags
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
