#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs exactly the locked dependencies plus this project.
# Idempotent and fast when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
stamp=.venv/.lock-sha
want=$(cat requirements-lock.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q -r requirements-lock.txt
  # compat mode: the project dir on sys.path via a .pth, so PySpark finds pyspark_paimon
  # (its data source auto-registration walks pkgutil.iter_modules, which import hooks hide)
  .venv/bin/python -m pip install -q --no-deps --config-settings editable_mode=compat -e .
  echo "$want" > "$stamp"
fi
