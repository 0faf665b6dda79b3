"""Every Paimon operator records each action it runs once in the maintenance ledger, with the
task instance's ids: in the task process (entry point ``airflow``) or in the ``spark_jobs``
process it starts (``spark_job``, ids through ``$PAIMON_LEDGER_CONTEXT``). The operator classes
are found in ``paimon_airflow.operators``, not listed: a new operator fails this test until it
has a scenario."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.ledger import Ledger, ledger_disabled
from paimon_core.ledger.ledger import forget_cached_existence
from tests.airflow.conftest import paimon_conn
from tests.airflow.context import render_and_execute, task_context
from tests.unit.paimon_core.ledger.helpers import ledger_rows, old_file, rows, small_table

TI = {
    "dag_id": "ledger_dag",
    "run_id": "manual__2026-01-01",
    "task_id": "step",
    "map_index": 4,
    "try_number": 2,
}


@pytest.fixture(autouse=True)
def _spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PAIMON_LEDGER_SPOOL", str(tmp_path / "spool"))
    monkeypatch.delenv("PAIMON_LEDGER_CONTEXT", raising=False)
    forget_cached_existence()
    yield
    forget_cached_existence()


def operator_classes() -> dict[str, type]:
    from airflow.sdk import BaseOperator

    import paimon_airflow.operators as ops

    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(ops.__path__):
        module = importlib.import_module(f"paimon_airflow.operators.{info.name}")
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, BaseOperator) and cls.__module__ == module.__name__:
                found[name] = cls
    return found


@dataclass(frozen=True)
class OpScenario:
    kwargs: dict[str, Any]
    rows: list[tuple[str, str, str]]  # (table, action, status), in order; [] records nothing
    entry_point: str = "airflow"
    setup: Callable[[FileSystemCatalog], object] = lambda c: None
    abstract: bool = False  # a base class: run through its subclasses
    takes_table: bool = True  # a ``table`` argument (not the warehouse-wide operators)


def _tag(c: FileSystemCatalog) -> None:
    c.get_table("db.t").maintenance.create_tag("t1", 1)


def _consumer(c: FileSystemCatalog) -> None:
    from paimon_core.consumer.consumer_manager import Consumer

    c.get_table("db.t").consumer_manager.reset_consumer("c1", Consumer(1))


def _old_partition(c: FileSystemCatalog) -> None:
    c.get_table("db.t").write_arrow(rows(900, 3, dt="2000-01-01"))


def _landed(module: str) -> Callable[[FileSystemCatalog], None]:
    """A commit of the task's run id already landed (a retry): ingest / merge_into settle in the task."""

    def setup(c: FileSystemCatalog) -> None:
        from paimon_airflow.utils.identity import run_key

        job = importlib.import_module(module)
        user = job.commit_user_for("db.t", run_key(task_context(**TI)))
        builder = c.get_table("db.t").new_stream_write_builder(user)
        write = builder.new_write()
        write.write_arrow(rows(500, 2))
        builder.new_commit().commit(write.prepare_commit(), job.RUN_COMMIT_IDENTIFIER)

    return setup


def _orphan(c: FileSystemCatalog) -> None:
    old_file(os.path.join(c.get_table("db.t").path, "dt=2024-01-01", "bucket-0", "data-orphan.parquet"), 800)


T = "db.t"
SCENARIOS: dict[str, OpScenario] = {
    "PaimonTableOperator": OpScenario({}, [], abstract=True),
    "PaimonExpireSnapshotsOperator": OpScenario(
        {"retain_max": 2, "retain_min": 1}, [(T, "expire_snapshots", "success")]
    ),
    "PaimonExpireChangelogsOperator": OpScenario({}, [(T, "expire_changelogs", "no_op")]),
    "PaimonCreateTagOperator": OpScenario(
        {"tag_name": "t9", "snapshot_time": None}, [(T, "create_tag", "success")]
    ),
    "PaimonDeleteTagOperator": OpScenario({"tag_names": "t1", "dry_run": False}, [(T, "delete_tag", "success")], setup=_tag),
    "PaimonExpireTagsOperator": OpScenario({}, [(T, "expire_tags", "no_op")]),
    "PaimonRollbackOperator": OpScenario({"snapshot_id": 1, "dry_run": False}, [(T, "rollback_to", "success")]),
    "PaimonResetConsumerOperator": OpScenario(
        {"consumer_id": "c1", "next_snapshot_id": 2}, [(T, "reset_consumer", "success")], setup=_consumer
    ),
    "PaimonRemoveOrphanFilesOperator": OpScenario({}, [(T, "remove_orphan_files", "dry_run")]),
    "PaimonExpirePartitionsOperator": OpScenario(
        {"expiration_time": "30 d", "timestamp_formatter": "yyyy-MM-dd"},
        [(T, "expire_partitions", "success")],
        setup=_old_partition,
    ),
    "PaimonMarkPartitionDoneOperator": OpScenario(
        {"partitions": "dt=2024-01-01"}, [(T, "mark_partition_done", "success")]
    ),
    "PaimonManageTagsOperator": OpScenario(
        {"tag_action": "rename", "tag": "t1", "target_tag": "t2"}, [(T, "rename_tag", "success")], setup=_tag
    ),
    "PaimonClearConsumersOperator": OpScenario({"dry_run": False}, [(T, "clear_consumers", "success")], setup=_consumer),
    "PaimonRemoveUnexistingFilesOperator": OpScenario({}, [(T, "remove_unexisting_files", "dry_run")]),
    "PaimonTableAdminOperator": OpScenario(
        {"procedure": "drop_partition", "partitions": "dt=2024-01-01", "dry_run": False},
        [(T, "drop_partition", "success")],
    ),
    # spark_jobs processes (plain subprocesses: metadata jobs, local modes)
    "PaimonSparkJobOperator": OpScenario(
        {"job": "expire_snapshots", "job_args": ["--retain-max", "2", "--retain-min", "1"]},
        [(T, "expire_snapshots", "success")],
        entry_point="spark_job",
    ),
    "PaimonRemoveOrphanFilesSparkOperator": OpScenario(
        {"job_args": ["--mode", "local"], "older_than": "2025-01-01", "dry_run": False},
        [(T, "remove_orphan_files", "success")],
        entry_point="spark_job",
        setup=_orphan,
    ),
    "PaimonCompactDatabaseOperator": OpScenario(
        {"execution": "local", "including_databases": "db"},
        [(T, "compact_database", "success")],
        entry_point="spark_job",
        takes_table=False,
    ),
    "PaimonCompactGroupOperator": OpScenario(
        {"group": {"label": "g", "tables": [T]}, "execution": "local"},
        [(T, "compact_database", "success")],
        entry_point="spark_job",
        takes_table=False,
    ),
    # settled in the task process: no job runs, the row is recorded there (once)
    "PaimonCompactOperator": OpScenario({}, [(T, "compact", "success")]),
    "PaimonMergeIntoOperator": OpScenario(
        {"source_table": "db.t", "merge_condition": "t.id = s.id", "matched_upsert_setting": "v = s.v"},
        [(T, "merge_into", "no_op")],
        setup=_landed("spark_jobs.merge_into"),
    ),
    "PaimonIngestOperator": OpScenario(
        {"job_args": ["--source", "/nowhere"]}, [], setup=_landed("spark_jobs.ingest")
    ),
    # the planned pass's batch: one row per action, written in one commit
    "PaimonMaintenanceBatchOperator": OpScenario(
        {
            "batch": {
                "label": "b",
                "items": [
                    {"table": T, "action": "expire_snapshots", "args": {"retain_max": 2, "retain_min": 1}}
                ],
            }
        },
        [(T, "expire_snapshots", "success")],
        takes_table=False,
    ),
}


def test_every_operator_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(operator_classes()), "add an OpScenario for each new operator"


def _run(name: str, warehouse: str, **extra: Any) -> Any:
    scenario = SCENARIOS[name]
    catalog = FileSystemCatalog(warehouse)
    small_table(catalog, commits=6)
    with ledger_disabled():
        scenario.setup(catalog)
    kwargs = {"task_id": "step", **({"table": T} if scenario.takes_table else {}), **scenario.kwargs, **extra}
    op = operator_classes()[name](**kwargs)
    return render_and_execute(op, task_context(**TI))


RUNNABLE = sorted(n for n, s in SCENARIOS.items() if not s.abstract)


@pytest.mark.parametrize("name", RUNNABLE)
def test_operator_records_each_action_once_with_the_task_ids(name: str, paimon_warehouse: str) -> None:
    scenario = SCENARIOS[name]
    _run(name, paimon_warehouse)
    got = ledger_rows(FileSystemCatalog(paimon_warehouse))
    assert [(r["table_name"], r["action"], r["status"]) for r in got] == scenario.rows, [
        r["error"] for r in got
    ]
    for r in got:
        ids = {k: r[k] for k in TI}
        assert (r["entry_point"], ids) == (scenario.entry_point, TI), name


def test_ledger_off_in_the_connection_records_and_creates_nothing(
    paimon_warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", paimon_conn(paimon_warehouse, ledger=False))
    for name in ("PaimonExpireSnapshotsOperator", "PaimonSparkJobOperator"):
        FileSystemCatalog(paimon_warehouse).drop_table(T, ignore_if_not_exists=True)
        _run(name, paimon_warehouse)
    assert FileSystemCatalog(paimon_warehouse).list_databases() == ["db"]


def test_a_compaction_the_task_hands_to_its_job_is_recorded_by_the_job_once(paimon_warehouse: str) -> None:
    out = _run("PaimonCompactOperator", paimon_warehouse, in_process_max_bytes=0, mode="local")
    assert "in_task_process" not in out
    [row] = ledger_rows(FileSystemCatalog(paimon_warehouse))
    assert (row["action"], row["status"], row["entry_point"], row["dag_id"]) == (
        "compact",
        "success",
        "spark_job",
        "ledger_dag",
    )
    assert json.loads(str(row["details"]))["files_read"] == row["files_read"] == 6


def test_skipped_compactions_are_recorded(paimon_warehouse: str) -> None:
    from airflow.sdk.exceptions import AirflowSkipException

    from paimon_airflow.utils.lease import CompactionLease

    catalog = FileSystemCatalog(paimon_warehouse)
    small_table(catalog, commits=6)
    Ledger(catalog).ensure()
    with pytest.raises(AirflowSkipException):
        render_and_execute(
            operator_classes()["PaimonCompactOperator"](task_id="c", table=T, compact_strategy="none"),
            task_context(**TI),
        )
    lease = CompactionLease(catalog.file_io, paimon_warehouse, T, holder="someone/else", ttl_millis=600_000)
    assert lease.acquire() is None
    with pytest.raises(AirflowSkipException):
        render_and_execute(
            operator_classes()["PaimonCompactOperator"](task_id="c", table=T), task_context(**TI)
        )
    got = [(r["action"], r["status"], json.loads(str(r["details"]))["reason"]) for r in ledger_rows(catalog)]
    assert got[0] == ("compact", "skipped", "compaction 'none'")
    assert got[1][:2] == ("compact", "skipped") and "someone/else" in got[1][2] and len(got) == 2
