#!/usr/bin/env bash
# The one command of every process of the production topology, in the containers of
# docker/compose.yaml and in the loopback tests alike (tests/distributed/): `entrypoint.sh ROLE`.
#
#   postgres        the Airflow metadata database: initdb on first start (PGDATA empty), then the
#                   server in the foreground on PG_LISTEN:PGPORT (password auth on TCP)
#   airflow-init    airflow db migrate, the paimon_spark pool, DAGs serialized; runs once, then exits
#   api-server      airflow api-server on AIRFLOW_API_HOST:AIRFLOW_API_PORT (REST API v2 and the UI)
#   scheduler       airflow scheduler (LocalExecutor: tasks run in this process's children)
#   dag-processor   airflow dag-processor
#   triggerer       airflow triggerer
#   spark-master    Spark standalone master on SPARK_MASTER_HOST:SPARK_MASTER_PORT
#   spark-worker    Spark standalone worker registering with SPARK_MASTER_URL (its applications'
#                   files under SPARK_WORKER_DIR)
#
# Every setting comes from the environment (defaults: the containers'); the tests set loopback
# hosts and free ports. Each role ends in `exec`, so signals reach the process itself.
set -euo pipefail

role=${1:-}
[ $# -gt 0 ] && shift

# Debian's PostgreSQL keeps its binaries out of PATH (/usr/lib/postgresql/<major>/bin).
pg_bin() {
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return
  fi
  local dir
  dir=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] || { echo "entrypoint.sh: no PostgreSQL binaries (apt-get install postgresql)" >&2; exit 2; }
  echo "$dir"
}

case "$role" in
  postgres)
    : "${PGDATA:?PGDATA: the data directory}"
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD: the password of POSTGRES_USER}"
    bin=$(pg_bin)
    user=${POSTGRES_USER:-airflow}
    sockets=${PG_SOCKET_DIR:-/var/run/postgresql}
    mkdir -p "$PGDATA" "$sockets"
    as_pg=()
    if [ "$(id -u)" = 0 ]; then  # PostgreSQL refuses to run as root: its binaries run as postgres
      chown postgres:postgres "$PGDATA" "$sockets"
      as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    fi
    cd "$PGDATA"
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
      pwfile=$(mktemp)
      log=$(mktemp)
      printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
      [ ${#as_pg[@]} -eq 0 ] || chown postgres "$pwfile" "$log"
      "${as_pg[@]}" "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
        --auth-local=peer --auth-host=scram-sha-256 >"$log" 2>&1 \
        || { cat "$log" >&2; rm -f "$pwfile" "$log"; exit 1; }
      rm -f "$pwfile" "$log"
      # the database Airflow connects to, created by a single-user backend (no server needed yet)
      echo "CREATE DATABASE \"${POSTGRES_DB:-airflow}\" OWNER \"$user\";" \
        | "${as_pg[@]}" "$bin/postgres" --single -D "$PGDATA" -j postgres >/dev/null
      # password auth from any host the server listens for (PG_LISTEN bounds it)
      echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
    fi
    exec "${as_pg[@]}" "$bin/postgres" -D "$PGDATA" -h "${PG_LISTEN:-0.0.0.0}" -p "${PGPORT:-5432}" \
      -k "$sockets" "$@"
    ;;
  airflow-init)
    airflow db migrate
    airflow pools set paimon_spark "${PAIMON_SPARK_POOL_SLOTS:-2}" "Spark jobs"
    exec airflow dags reserialize
    ;;
  api-server)
    exec airflow api-server --host "${AIRFLOW_API_HOST:-0.0.0.0}" --port "${AIRFLOW_API_PORT:-8080}" "$@"
    ;;
  scheduler | triggerer)
    # no log server: the api-server reads task logs from the shared logs volume
    exec airflow "$role" --skip-serve-logs "$@"
    ;;
  dag-processor)
    exec airflow dag-processor "$@"
    ;;
  spark-master)
    # no REST submission server (port 6066): jobs are submitted by spark-submit in client mode
    export SPARK_MASTER_OPTS=${SPARK_MASTER_OPTS:--Dspark.master.rest.enabled=false}
    exec spark-class org.apache.spark.deploy.master.Master \
      --host "${SPARK_MASTER_HOST:-0.0.0.0}" --port "${SPARK_MASTER_PORT:-7077}" \
      --webui-port "${SPARK_MASTER_WEBUI_PORT:-8080}" "$@"
    ;;
  spark-worker)
    : "${SPARK_MASTER_URL:?SPARK_MASTER_URL: spark://host:port of the master}"
    exec spark-class org.apache.spark.deploy.worker.Worker \
      --host "${SPARK_WORKER_HOST:-0.0.0.0}" --webui-port "${SPARK_WORKER_WEBUI_PORT:-8081}" \
      --cores "${SPARK_WORKER_CORES:-1}" --memory "${SPARK_WORKER_MEMORY:-1g}" "$@" "$SPARK_MASTER_URL"
    ;;
  *)
    echo "usage: entrypoint.sh {postgres|airflow-init|api-server|scheduler|dag-processor|triggerer|spark-master|spark-worker} [args]" >&2
    exit 2
    ;;
esac
