#!/usr/bin/env bash
# README command 1: the Paimon DAGs on a real Airflow 3 on loopback (SQLite, LocalExecutor, local
# Spark). Starts api-server, scheduler, dag-processor and triggerer (127.0.0.1 only), creates a
# sample warehouse, backfills 3 days of paimon_ingest, triggers paimon_maintenance (compaction,
# tags, expiry, orphan cleanup) over the REST API, prints what each task did and where the UI is.
#
#   scripts/demo.sh          start (or restart) and run the demo; the servers keep running
#   scripts/demo.sh stop     stop the servers this script started
#
# WAREHOUSE=DIR (default ./warehouse), PAIMON_DEMO_HOME=DIR (AIRFLOW_HOME, default ./.demo),
# PAIMON_DEMO_PORT=N (default: a free port), PAIMON_DEMO_TIMEOUT=SECONDS (per DAG run, default 300),
# PAIMON_DEMO_PYTHON=PYTHON (an interpreter with the project installed; skips scripts/bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export AIRFLOW_HOME=${PAIMON_DEMO_HOME:-$ROOT/.demo}
RUN_DIR=$AIRFLOW_HOME/run
LOG_DIR=$AIRFLOW_HOME/logs

# Stop the process groups whose ids we saved (only if they are still airflow processes).
stop_servers() {
  local f pgid left i
  for f in "$RUN_DIR"/*.pgid; do
    [ -e "$f" ] || continue
    pgid=$(cat "$f")
    if ps -o args= -g "$pgid" 2>/dev/null | grep -q airflow; then
      kill -TERM -- "-$pgid" 2>/dev/null || true
    fi
  done
  for i in $(seq 1 40); do
    left=0
    for f in "$RUN_DIR"/*.pgid; do
      [ -e "$f" ] || continue
      ps -o pid= -g "$(cat "$f")" >/dev/null 2>&1 && left=1
    done
    [ "$left" = 0 ] && break
    sleep 0.5
  done
  for f in "$RUN_DIR"/*.pgid; do
    [ -e "$f" ] || continue
    pgid=$(cat "$f")
    if ps -o args= -g "$pgid" 2>/dev/null | grep -q airflow; then
      kill -KILL -- "-$pgid" 2>/dev/null || true
    fi
    rm -f "$f"
  done
}

if [ "${1:-}" = stop ]; then
  stop_servers
  echo "stopped the Airflow servers of $AIRFLOW_HOME"
  exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [stop]" >&2; exit 2; }

START=$(date +%s)
[ -n "${PAIMON_DEMO_PYTHON:-}" ] || scripts/bootstrap.sh
PY=${PAIMON_DEMO_PYTHON:-$ROOT/.venv/bin/python}
BIN=$(cd "$(dirname "$PY")" && pwd)
AIRFLOW=$BIN/airflow
WH=${WAREHOUSE:-$ROOT/warehouse}
mkdir -p "$RUN_DIR" "$LOG_DIR" "$WH"
WH=$(cd "$WH" && pwd)

stop_servers  # a re-run restarts cleanly

PORT=${PAIMON_DEMO_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
BASE=http://127.0.0.1:$PORT
[ -s "$AIRFLOW_HOME/jwt_secret" ] || "$PY" -c 'import secrets; print(secrets.token_urlsafe(64))' > "$AIRFLOW_HOME/jwt_secret"
chmod 600 "$AIRFLOW_HOME/jwt_secret"

export PATH="$BIN:$PATH"  # spark-submit of the venv
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="sqlite:///$AIRFLOW_HOME/airflow.db"
# a writer waits for SQLite's lock up to 30 s (the driver's default gives up after 5 s); not the
# api-server (start() below): see paimon_airflow/utils/sqlite_connect.py
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS_ASYNC
# a task waits past the api-server's 5 s lock wait (sqlite_connect.TASK_API_TIMEOUT_SECONDS)
export AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT=30
export AIRFLOW__CORE__EXECUTOR=LocalExecutor
export AIRFLOW__CORE__PARALLELISM=2
export AIRFLOW__CORE__DAGS_FOLDER=$ROOT/dags
export AIRFLOW__CORE__PLUGINS_FOLDER=$ROOT/plugins
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__AUTH_MANAGER=airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager
export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS=admin:admin
export AIRFLOW__API__HOST=127.0.0.1
export AIRFLOW__API__PORT=$PORT
export AIRFLOW__API__BASE_URL=$BASE
export AIRFLOW__API__WORKERS=1
export AIRFLOW__API_AUTH__JWT_SECRET=$(cat "$AIRFLOW_HOME/jwt_secret")
export AIRFLOW__LOGGING__BASE_LOG_FOLDER=$LOG_DIR
export AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK=False
export AIRFLOW_CONN_PAIMON_DEFAULT="{\"conn_type\": \"paimon\", \"extra\": {\"warehouse\": \"$WH\"}}"
export AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host": "local[2]"}'
export SPARK_LOCAL_IP=127.0.0.1

step() { printf '[demo %3ss] %s\n' "$(($(date +%s) - START))" "$*"; }

step "AIRFLOW_HOME=$AIRFLOW_HOME  warehouse=$WH"
"$AIRFLOW" db migrate > "$LOG_DIR/demo-migrate.log" 2>&1 || { tail -30 "$LOG_DIR/demo-migrate.log"; exit 1; }
"$AIRFLOW" pools set paimon_spark 2 "Spark jobs of the Paimon DAGs" > /dev/null

start() {  # start NAME ARGS...: its own session (process group), log and pgid under $AIRFLOW_HOME
  local name=$1 args=paimon_airflow.utils.sqlite_connect.CONNECT_ARGS
  shift
  if [ "$name" = api-server ]; then args=paimon_airflow.utils.sqlite_connect.API_SERVER_CONNECT_ARGS; fi
  AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS=$args AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC=${args}_ASYNC \
    setsid "$AIRFLOW" "$@" > "$LOG_DIR/demo-$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN_DIR/$name.pgid"
}
start api-server api-server --host 127.0.0.1 --port "$PORT"

# The sample warehouse and 3 days of landing files (while the servers start).
DAYS=$(for d in 3 2 1; do date -u -d "$d days ago" +%F; done | tr '\n' ' ')
LANDING=$AIRFLOW_HOME/landing/events
"$PY" - "$WH" "$LANDING" $DAYS <<'PYEOF'
import os, sys, time
import pyarrow as pa, pyarrow.parquet as pq
from paimon_core import FileSystemCatalog

wh, landing, days = sys.argv[1], sys.argv[2], sys.argv[3:]
for k, day in enumerate(days):  # the same files on every run: a re-run must land the same rows
    d = os.path.join(landing, f"dt={day}")
    os.makedirs(d, exist_ok=True)
    n = 100 + 10 * k
    pq.write_table(pa.table({
        "id": pa.array(range(n), pa.int64()),
        "user": [f"user-{i % 7}" for i in range(n)],
        "amount": [round(i * 1.25, 2) for i in range(n)],
    }), os.path.join(d, "part-0.parquet"))
catalog = FileSystemCatalog(wh)
catalog.create_database("db", ignore_if_exists=True)
if not catalog.table_exists("db.clicks"):
    # small commits to compact, old snapshots to expire (write-only: nothing expires on commit),
    # and an unreferenced data file to clean up
    from paimon_core.utils.clock import ManualClock

    # committed over yesterday (a day's tag has something to hold)
    start_ms = (int(time.time()) // 86400 - 1) * 86400 * 1000 + 3_600_000
    clock = ManualClock(start_ms)
    t = FileSystemCatalog(wh, clock=clock).create_table(
        "db.clicks",
        pa.schema([("id", pa.int64()), ("page", pa.string())]),
        options={"write-only": "true", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "3"},
    )
    for i in range(6):
        clock.set(start_ms + i * 3_600_000)
        t.write_arrow(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                                "page": [f"/p{j % 4}" for j in range(10)]}))
    orphan = os.path.join(t.path, "bucket-0", "data-demo-orphan.parquet")
    with open(orphan, "wb") as f:
        f.write(b"not referenced by any snapshot")
    old = time.time() - 10 * 86400
    os.utime(orphan, (old, old))
print(f"[demo] sample warehouse: db.clicks (6 small commits, 1 orphan file); landing files for {' '.join(days)} in {landing}")
PYEOF

# Serialize the DAGs now (before the dag-processor starts: both would insert them at once).
"$AIRFLOW" dags reserialize > "$LOG_DIR/demo-reserialize.log" 2>&1 || { tail -30 "$LOG_DIR/demo-reserialize.log"; exit 1; }
start scheduler scheduler --skip-serve-logs
start dag-processor dag-processor
start triggerer triggerer --skip-serve-logs
step "DAGs serialized; started api-server ($BASE), scheduler, dag-processor, triggerer; logs: $LOG_DIR/demo-*.log"

# Drive the rest through the REST API (v2, JWT of user admin).
set +e
"$PY" - "$BASE" "$AIRFLOW_HOME" "$WH" "$LANDING" "${PAIMON_DEMO_TIMEOUT:-300}" "$AIRFLOW" $DAYS <<'PYEOF'
import datetime as dt, json, subprocess, sys, time, urllib.error, urllib.request

from paimon_airflow.utils.sqlite_connect import REQUEST_TIMEOUT_SECONDS, is_locked_answer

base, home, wh, landing, timeout, airflow = sys.argv[1:7]
timeout = float(timeout)
days = sys.argv[7:]
t0 = time.monotonic()


def say(msg):
    print(msg, flush=True)


def call(method, path, body=None, token=None, retry_503=False):
    """One REST call. A locked SQLite, or no answer within REQUEST_TIMEOUT_SECONDS (the server is
    still waiting for the lock), is tried again for up to 5 min on reads and idempotent writes
    (GET, PATCH, PUT, the token); a POST with ``retry_503`` raises TimeoutError instead and the
    caller checks what landed."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    again = method != "POST" or path == "/auth/token"
    end = time.monotonic() + 300
    while True:
        req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_SECONDS) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            if is_locked_answer(e.code, text):
                if retry_503:
                    raise TimeoutError(text) from None
                if again and time.monotonic() < end:
                    time.sleep(0.5)
                    continue
            raise SystemExit(f"{method} {path}: HTTP {e.code}: {text[:800]}") from None
        except (TimeoutError, urllib.error.URLError) as e:
            if isinstance(e, urllib.error.URLError) and not isinstance(e.reason, TimeoutError):
                raise
            if retry_503:
                raise TimeoutError(f"{method} {path}: no answer in {REQUEST_TIMEOUT_SECONDS:.0f} s") from None
            if not (again and time.monotonic() < end):
                raise
            say(f"[demo] {method} {path}: no answer in {REQUEST_TIMEOUT_SECONDS:.0f} s; trying again")


deadline = time.monotonic() + 120
while True:
    try:
        with urllib.request.urlopen(base + "/api/v2/monitor/health", timeout=5) as r:
            health = json.load(r)
        if health.get("metadatabase", {}).get("status") == "healthy":
            break
    except (OSError, ValueError):
        pass
    if time.monotonic() > deadline:
        raise SystemExit(f"api-server not healthy after 120 s: see {home}/logs/demo-api-server.log")
    time.sleep(0.5)
password = json.load(open(f"{home}/simple_auth_manager_passwords.json.generated"))["admin"]
token = call("POST", "/auth/token", {"username": "admin", "password": password})["access_token"]
say(f"[demo] api-server healthy at {base}; REST token for admin obtained")

# paimon_ingest backfill of the 3 days (reprocessing completed ones: a re-run lands the same rows)
conf = {"sources": {"db.events": f"{landing}/dt={{ds}}"}}
backfill_body = {
    "dag_id": "paimon_ingest", "from_date": f"{days[0]}T00:00:00Z", "to_date": f"{days[-1]}T00:00:00Z",
    "run_backwards": False, "dag_run_conf": conf, "reprocess_behavior": "completed", "max_active_runs": 2,
}


def queued_days():
    """The days' runs the backfill created or re-queued (a new queued_at)."""
    out = call("GET", "/api/v2/dags/paimon_ingest/dagRuns?limit=100", token=token)["dag_runs"]
    return {r["dag_run_id"] for r in out
            if (r["logical_date"] or "")[:10] in days and before.get(r["dag_run_id"]) != r["queued_at"]}


before = {r["dag_run_id"]: r["queued_at"]
          for r in call("GET", "/api/v2/dags/paimon_ingest/dagRuns?limit=100", token=token)["dag_runs"]}
for attempt in range(20):
    try:  # SQLite answers 503 "Database is locked" while another component writes: try again
        backfill = call("POST", "/api/v2/backfills", backfill_body, token, retry_503=True)
        break
    except TimeoutError:
        time.sleep(0.5)
    except SystemExit as e:
        if "HTTP 409" not in str(e):
            raise
        # a try answered 503 committed its backfill row, then its runs' creation rolled back: if it
        # queued the days' runs after all it is ours; else cancel it (it holds no run) and try again
        listed = call("GET", "/api/v2/backfills?dag_id=paimon_ingest&limit=100", token=token)["backfills"]
        backfill = max(listed, key=lambda b: int(b["id"]))
        if backfill["completed_at"] is not None:
            raise
        if len(queued_days()) == len(days):
            break
        call("PUT", f"/api/v2/backfills/{backfill['id']}/cancel", token=token)
        time.sleep(0.5)
else:
    raise SystemExit("could not create the backfill: the SQLite database stayed locked")
say(f"[demo] backfill {backfill['id']} of paimon_ingest for {', '.join(days)} created (DAG still paused)")
# Unpausing a catchup DAG creates its missed runs after the latest existing one: re-parse so the
# next scheduled run is computed after the backfill's days, not from the registry's start_date.
for attempt in range(5):
    subprocess.run([airflow, "dags", "reserialize"], capture_output=True)  # may race the dag-processor
    nxt = call("GET", "/api/v2/dags/paimon_ingest", token=token).get("next_dagrun_logical_date")
    if nxt and nxt[:10] > days[-1]:
        break
    time.sleep(2)
else:
    raise SystemExit(f"paimon_ingest next run is {nxt}; unpausing would catch up from the start date")
call("PATCH", "/api/v2/dags/paimon_ingest", {"is_paused": False}, token)
say(f"[demo] unpaused paimon_ingest (its next scheduled run: {nxt})")


def runs_of(dag_id, run_ids):
    out = call("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100&order_by=-run_after", token=token)["dag_runs"]
    return {r["dag_run_id"]: r for r in out if r["dag_run_id"] in run_ids}


def task_instances(dag_id, run_id):
    return call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances?limit=100", token=token)[
        "task_instances"]


def fail(dag_id, run_id):
    for ti in task_instances(dag_id, run_id):
        if ti["state"] in ("failed", "upstream_failed", "up_for_retry"):
            mi = ti.get("map_index", -1)
            path = f"{home}/logs/dag_id={dag_id}/run_id={run_id}/task_id={ti['task_id']}"
            if mi is not None and mi >= 0:
                path += f"/map_index={mi}"
            say(f"[demo] FAILED {dag_id} {run_id} {ti['task_id']}[{mi}] ({ti['state']}); log: {path}/")
    raise SystemExit(1)


def wait(dag_id, run_ids):
    end = time.monotonic() + timeout * len(run_ids)
    done = {}
    while time.monotonic() < end:
        states = runs_of(dag_id, run_ids)
        for rid, r in states.items():
            if r["state"] == "failed":
                fail(dag_id, rid)
            if r["state"] == "success" and rid not in done:
                done[rid] = r
                took = ""
                if r.get("start_date") and r.get("end_date"):
                    s = dt.datetime.fromisoformat(r["start_date"].replace("Z", "+00:00"))
                    e = dt.datetime.fromisoformat(r["end_date"].replace("Z", "+00:00"))
                    took = f" in {(e - s).total_seconds():.0f} s"
                say(f"[demo {time.monotonic() - t0:5.0f}s] {dag_id} {rid}: success{took}")
        if len(done) == len(run_ids):
            return
        time.sleep(2)
    still = {rid: r["state"] for rid, r in runs_of(dag_id, run_ids).items() if rid not in done}
    say(f"[demo] timeout waiting for {dag_id}: {still}")
    for rid in still:
        fail(dag_id, rid)


def xcoms(dag_id, run_id):
    out = []
    for ti in sorted(task_instances(dag_id, run_id), key=lambda t: (t["task_id"], t.get("map_index", -1))):
        mi = ti.get("map_index", -1)
        q = f"?map_index={mi}" if mi is not None and mi >= 0 else ""
        path = f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{ti['task_id']}/xcomEntries/return_value{q}"
        try:
            value = call("GET", path, token=token).get("value")
        except SystemExit:  # no XCom (a task that returned nothing)
            value = None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        out.append((ti, value))
    return out


KEEP = ("table", "logical_date", "snapshot_id", "commit_kind", "already_committed", "delta_record_count",
        "total_record_count", "exists", "max_sorted_runs", "compaction_debt", "strategy", "files_read",
        "files_written", "files_upgraded", "rows_written", "tag_name", "created", "reason",
        "expired_tags", "expired_snapshot_ids", "earliest_snapshot_id", "latest_snapshot_id",
        "deleted_file_count", "dry_run", "in_task_process", "seconds")


def show(dag_id, run_id, logical=""):
    say(f"  {dag_id} / {run_id}{logical}:")
    for ti, value in xcoms(dag_id, run_id):
        mi = ti.get("map_index")
        label = ti["task_id"] + (f"[{ti.get('rendered_map_index') or mi}]" if mi is not None and mi >= 0 else "")
        if isinstance(value, dict) and isinstance(value.get("outcomes"), list):  # a maintenance batch
            say(f"    {label:<34} {ti['state']:<8} {json.dumps(value.get('counts'))}")
            for o in value["outcomes"]:
                res = {k: v for k, v in (o.get("result") or {}).items() if k in KEEP and k != "table"}
                say(f"      {o['table']:<22} {o['action']:<20} {o['status']:<8} {json.dumps(res, separators=(',', ':'))}")
            continue
        if isinstance(value, dict) and "summary" in value and "batches" in value:  # the pass's plan
            s = value["summary"]
            say(f"    {label:<34} {ti['state']:<8} {s['tables']} tables, {s['actions']} actions {s['by_action']}, "
                f"{s['batches']} batch(es), {s['spark_groups']} Spark group(s), backlog {s['backlog']}")
            continue
        if isinstance(value, dict):
            compact = {k: v for k, v in value.items() if k in KEEP}
            text = json.dumps(compact, separators=(",", ":"))
        elif isinstance(value, list):
            text = json.dumps([v.get("table") or v.get("label") or v if isinstance(v, dict) else v for v in value])
        else:
            text = json.dumps(value) if value is not None else f"({ti['state']}, no result)"
        say(f"    {label:<34} {ti['state']:<8} {text}")


ingest_runs = {r["dag_run_id"]: f"{r['data_interval_start'][:10]}..{r['data_interval_end'][:10]}" for r in call(
    "GET", f"/api/v2/dags/paimon_ingest/dagRuns?limit=100&run_type=backfill", token=token)["dag_runs"]
    if r["logical_date"][:10] in days}
wait("paimon_ingest", set(ingest_runs))
# A scheduled run already due (today's, before now) would be created on unpause and run first:
# the triggered run takes its logical date instead, so the scheduler creates no second one.
now = dt.datetime.now(dt.UTC).replace(microsecond=0)
due = call("GET", "/api/v2/dags/paimon_maintenance", token=token).get("next_dagrun_logical_date")
logical = now.isoformat().replace("+00:00", "Z")
if due and dt.datetime.fromisoformat(due.replace("Z", "+00:00")) <= now:
    existing = call("GET", f"/api/v2/dags/paimon_maintenance/dagRuns?logical_date_gte={due}&logical_date_lte={due}",
                    token=token)["dag_runs"]
    if not existing:
        logical = due
trigger = {"logical_date": logical, "conf": {"mode": "apply"}, "note": "scripts/demo.sh"}  # by hand: plan unless told
for attempt in range(60):
    try:
        run = call("POST", "/api/v2/dags/paimon_maintenance/dagRuns", trigger, token, retry_503=True)
        break
    except TimeoutError:  # rolled back, unless it landed after all: then it is ours
        landed = call("GET", f"/api/v2/dags/paimon_maintenance/dagRuns?logical_date_gte={logical}"
                      f"&logical_date_lte={logical}", token=token)["dag_runs"]
        if landed:
            run = landed[0]
            break
        time.sleep(0.5)
else:
    raise SystemExit("could not trigger paimon_maintenance: the SQLite database stayed locked")
call("PATCH", "/api/v2/dags/paimon_maintenance", {"is_paused": False}, token)
say(f"[demo {time.monotonic() - t0:5.0f}s] triggered paimon_maintenance over REST: {run['dag_run_id']} (and unpaused it)")
wait("paimon_maintenance", {run["dag_run_id"]})

say("\nWhat each task did (its XCom result, read over REST):")
for rid in sorted(ingest_runs):
    show("paimon_ingest", rid, f"  (data interval {ingest_runs[rid]})")
show("paimon_maintenance", run["dag_run_id"])
PYEOF
rc=$?
set -e
if [ $rc -ne 0 ]; then
  echo "[demo] failed (exit $rc); the servers are still up for a look: $BASE  (stop: scripts/demo.sh stop)" >&2
  exit $rc
fi

"$PY" - "$WH" <<'PYEOF'
import sys
from collections import Counter
from paimon_core import FileSystemCatalog

catalog = FileSystemCatalog(sys.argv[1])
for name in ("db.events", "db.clicks"):
    t = catalog.get_table(name)
    data = t.to_arrow()
    by_day = ""
    if "dt" in data.column_names:
        by_day = "  " + ", ".join(f"dt={d}: {n}" for d, n in sorted(Counter(map(str, data.column("dt").to_pylist())).items()))
    sm = t.snapshot_manager
    print(f"{name}: {data.num_rows} rows{by_day}; snapshots {sm.earliest_snapshot_id()}..{sm.latest_snapshot_id()}; "
          f"tags {sorted(t.tag_manager.list_names())}")
PYEOF

PASSWORD=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['admin'])" "$AIRFLOW_HOME/simple_auth_manager_passwords.json.generated")
cat <<EOF

Airflow UI:          $BASE/
Paimon tables page:  $BASE/plugin/paimon-tables   (Browse > Paimon tables; the page itself: $BASE/paimon/)
Paimon console:      $BASE/plugin/paimon-console  (Browse > Paimon console: every table's health, maintenance history, plans, alerts)
Log in as:           admin / $PASSWORD
Task logs:           $LOG_DIR/dag_id=*/   server logs: $LOG_DIR/demo-*.log
Stop the servers:    scripts/demo.sh stop
Demo took $(($(date +%s) - START)) s.
EOF
