"""``paimon_tags``: one tag per logical date and table, then expiry of tags past their retention.

Daily data intervals: the run of interval [D, D+1) tags, as ``D``, the last snapshot committed by
D+1 00:00 UTC, so a backfill creates each missing day's tag from that day's snapshot. No catchup:
a day missed while the DAG was paused is made up by a backfill, never by unpausing. An existing
tag is left alone: re-running a day adds nothing. A run started by a person only lists the tags
that would expire (``dry_run``, default on); scheduled runs expire them.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The shared modules (_paimon_common, _paimon_registry) sit next to this file. Airflow puts its
# DAGS_FOLDER on sys.path, but a DagBag of this folder under another DAGS_FOLDER does not.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from typing import Any

from airflow.sdk import DAG, task_group

from _paimon_common import DEFAULT_ARGS, DRY_RUN, daily_intervals, dry_run_param, list_tables, table_params
from _paimon_registry import load
from paimon_airflow.operators.maintenance import PaimonCreateTagOperator, PaimonExpireTagsOperator

REGISTRY = load()

with DAG(
    dag_id="paimon_tags",
    description="A tag per logical date (YYYY-MM-DD) of every registered table, with retention",
    schedule=daily_intervals(),
    start_date=REGISTRY.start_date,
    catchup=False,  # a missed day is tagged by a backfill (the trigger form must not release them)
    max_active_runs=2,
    default_args=DEFAULT_ARGS,
    params={
        **table_params(),
        "dry_run": dry_run_param("list the tags that would expire; delete none (the day's tag is created)"),
    },
    tags=["paimon", "tags"],
    doc_md=__doc__,
) as dag:

    @task_group(group_id="table")
    def tag_table(
        table: Any,
        tag_period: Any,
        tag_retention: Any,
    ) -> None:
        """Tag the day, then expire old tags, of one table."""
        common: dict[str, Any] = {
            "table": table,
            "paimon_conn_id": REGISTRY.paimon_conn_id,
            "map_index_template": "{{ task.table }}",
        }
        create = PaimonCreateTagOperator(
            task_id="create_tag",
            tag_name="{{ data_interval_start | ds }}",
            snapshot_time="{{ data_interval_end }}",
            period=tag_period,
            time_retained=tag_retention,
            **common,
        )
        expire = PaimonExpireTagsOperator(
            task_id="expire_tags", dry_run=DRY_RUN, trigger_rule="none_failed", **common
        )
        create >> expire

    tag_table.expand_kwargs(list_tables(fields=["tag_period", "tag_retention"]))
