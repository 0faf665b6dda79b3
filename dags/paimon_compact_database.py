"""``paimon_compact_database`` (manual): Paimon's ``compact_database`` over the warehouse, plan first.

The run's form takes ``compact_database``'s arguments with Paimon's names: ``including_databases``,
``mode`` (divided | combined), ``including_tables``, ``excluding_tables`` (regexes, full match;
the tables' over ``db.table``, excluding wins), ``table_options``, ``partition_idle_time``,
``compact_strategy``, plus ``execution`` (distributed: spark-submit; local: no JVM). The ``plan``
task always runs first as a dry run: per table, the compaction units it would run (partition,
bucket, files and bytes read and rewritten, sorted runs). ``run_mode`` decides what follows, as
in ``paimon_rollback`` (whose ``mode`` is called ``run_mode`` here, Paimon's ``mode`` being an
argument): ``plan`` stops there, ``apply`` compacts, ``approve_in_ui`` waits for a person to
approve the plan in the UI. Each table is compacted in its own COMPACT commit; a table that
fails is reported with its error (XCom ``tables`` and the log) while the others go on, and then
fails the task, naming it.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import datetime as dt
from typing import Any

from airflow.sdk import DAG, Param

from _paimon_common import DEFAULT_ARGS, DURATION_PATTERN, SPARK_POOL, mode_param, plan_then_apply
from _paimon_registry import load
from paimon_airflow.operators.compact_database import PaimonCompactDatabaseOperator

REGISTRY = load()
#: The operator's arguments, from the run's Params (Paimon's names).
ARGS: dict[str, Any] = {
    name: "{{ params." + name + " if params." + name + " is not none else '' }}"
    for name in (
        "including_databases",
        "mode",
        "including_tables",
        "excluding_tables",
        "partition_idle_time",
        "compact_strategy",
        "execution",
    )
}

with DAG(
    dag_id="paimon_compact_database",
    description="Compact every matching Paimon table of the warehouse (dry-run plan first; approval optional)",
    schedule=None,
    is_paused_upon_creation=False,  # unpausing starts nothing: the form's Unpause box never shows
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args={**DEFAULT_ARGS, "retries": 0},
    params={
        "including_databases": Param(
            ".*",
            type="string",
            format="regex",
            minLength=1,
            description="regex of the databases (full match)",
        ),
        "mode": Param("divided", type="string", enum=["divided", "combined"], description="Paimon's mode"),
        "including_tables": Param(
            ".*", type="string", format="regex", minLength=1, description="regex over db.table (full match)"
        ),
        "excluding_tables": Param(
            None,
            type=["null", "string"],
            format="regex",
            description="regex over db.table to skip; wins over including (empty: none)",
        ),
        "table_options": Param(
            {},
            type="object",
            additionalProperties={"type": "string"},
            propertyNames={"pattern": r"^[A-Za-z0-9_.-]+$"},
            description='dynamic table options for this run, e.g. {"compaction.max.file-num": "10"}',
        ),
        "partition_idle_time": Param(
            None,
            type=["null", "string"],
            pattern=DURATION_PATTERN,
            description="only partitions without new files for this long, e.g. '1 d'",
        ),
        "compact_strategy": Param("full", type="string", enum=["full", "minor"], description="full or minor"),
        "execution": Param(
            "distributed",
            type="string",
            enum=["distributed", "local"],
            description="distributed: Spark tasks (spark-submit); local: threads in a subprocess, no JVM",
        ),
        "run_mode": mode_param(),
    },
    tags=["paimon", "manual", "compaction"],
    doc_md=__doc__,
) as dag:
    common: dict[str, Any] = {
        **ARGS,
        "table_options": "{{ params.table_options | dictsort | map('join', '=') | join(',') }}",
        "paimon_conn_id": REGISTRY.paimon_conn_id,
        "spark_conn_id": REGISTRY.spark_conn_id,
    }
    plan = PaimonCompactDatabaseOperator(task_id="plan", dry_run=True, **common)
    apply = PaimonCompactDatabaseOperator(
        task_id="compact_database",
        pool=SPARK_POOL,
        conf={"spark.sql.shuffle.partitions": "4"},
        **common,
    )
    plan_then_apply(plan, apply, subject="Compact the tables of the plan?", mode_param="run_mode")
