#!/usr/bin/env bash
# The command-line demo (no Airflow): a local warehouse, a sample table written
# and read back through the command line (two commits, a tag, time travel, a filter).
set -euo pipefail
# WAREHOUSE=DIR picks the warehouse; PAIMON_DEMO_PYTHON=PYTHON runs with an interpreter that
# already has the project installed (the tests do) instead of bootstrapping .venv.
cd "$(dirname "$0")/.."
[ -n "${PAIMON_DEMO_PYTHON:-}" ] || scripts/bootstrap.sh
WH=${WAREHOUSE:-$PWD/warehouse}
PY=${PAIMON_DEMO_PYTHON:-.venv/bin/python}
CLI="$PY -m paimon_core"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$PY - "$work" <<'PYEOF'
import sys, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1]
for k in (0, 1):
    ids = list(range(k * 1000, (k + 1) * 1000))
    pq.write_table(pa.table({
        "id": pa.array(ids, pa.int64()),
        "dt": [f"2024-01-0{1 + i % 3}" for i in ids],
        "v": [i * 0.5 for i in ids],
        "s": [f"row-{i}" for i in ids],
    }), f"{d}/batch{k}.parquet")
PYEOF
rm -rf "$WH/demo.db/events"
set -x
$CLI create-table "$WH" demo.events --schema-from "$work/batch0.parquet" --partition-by dt --option bucket=-1
$CLI write "$WH" demo.events "$work/batch0.parquet"
$CLI create-tag "$WH" demo.events first
$CLI write "$WH" demo.events "$work/batch1.parquet"
$CLI read "$WH" demo.events --where "dt = '2024-01-02' AND id >= 1990" --columns id,dt,v
$CLI read "$WH" demo.events --output "$work/all.parquet"
$CLI read "$WH" demo.events --tag first --output "$work/first.parquet"
$CLI snapshots "$WH" demo.events | $PY -c "import json,sys; print([(s['id'], s['commitKind'], s['totalRecordCount']) for s in json.load(sys.stdin)])"
