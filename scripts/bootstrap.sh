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
# The locked pyspark (the full distribution: jars, spark-submit, pyspark.zip).
PYSPARK_PIN=$(grep -i '^pyspark==' requirements-lock.txt)
pyspark_files_version() {
  # The version of the pyspark/ *files* (not pip's metadata), read without importing pyspark.
  .venv/bin/python - <<'PYEOF'
import importlib.util, pathlib, re
spec = importlib.util.find_spec("pyspark")
loc = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None
text = (pathlib.Path(loc) / "version.py").read_text() if loc else ""
m = re.search(r"__version__[^=]*=\s*['\"]([^'\"]+)", text)
print(m.group(1) if m else "none")
PYEOF
}
stamp=.venv/.lock-sha
want=$(cat requirements-lock.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q -r requirements-lock.txt
  # compat mode: the project dir on sys.path via a .pth, so PySpark finds pyspark_paimon
  # (its data source auto-registration walks pkgutil.iter_modules, which import hooks hide)
  .venv/bin/python -m pip install -q --no-deps --config-settings editable_mode=compat -e .
  # compat mode puts only the project dir on sys.path; plugins/ (Airflow's plugins folder, home of
  # the paimon_airflow package) goes on it too, for tests, task processes and Spark workers alike.
  purelib=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$PWD/plugins" > "$purelib/paimon_airflow_plugins.pth"
  rm -f "$stamp"
fi
# apache-airflow-providers-apache-spark depends on pyspark-client (the Spark Connect client), which
# ships the same pyspark/ files and silently overwrites the full pyspark's (stack.md 6.1). Put the
# locked pyspark's files back (from pip's cache: seconds) whenever they are not the locked version.
if [ "$(pyspark_files_version)" != "${PYSPARK_PIN#*==}" ]; then
  .venv/bin/python -m pip install -q --force-reinstall --no-deps "$PYSPARK_PIN"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip check
  echo "$want" > "$stamp"
fi
