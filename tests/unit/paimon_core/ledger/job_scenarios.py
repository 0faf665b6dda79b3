"""One run of every ``spark_jobs`` job on a small table, with the ledger row it must write.

Shared by the job enumeration tests (tests/unit/paimon_core/ledger/test_jobs_ledger.py runs the
jobs that need no Spark session, tests/integration/test_ledger_spark.py the ones that do). Both
walk :data:`spark_jobs.JOBS` (the registry ``python -m spark_jobs --help`` prints): a job added
later fails them until it records its row and has a scenario here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core import FileSystemCatalog
from paimon_core.ledger import ledger_disabled
from tests.unit.paimon_core.ledger.helpers import interleaved_de_table, old_file, rows, small_table


@dataclass(frozen=True)
class JobScenario:
    """``python -m spark_jobs <job> --warehouse W --table <table> <args>`` after ``setup``;
    ``status`` None: the job records nothing (not maintenance)."""

    args: Callable[[str], list[str]]  # the warehouse -> the job's own arguments
    status: str | None
    table: str = "db.t"
    setup: Callable[[FileSystemCatalog], object] = lambda c: None
    spark: bool = False  # needs a Spark session
    action: str | None = None  # default: the job's name
    table_flag: bool = True  # the job takes --table


def _now() -> int:
    return int(time.time() * 1000)


def _tag(name: str, snapshot: int | None = None) -> Callable[[FileSystemCatalog], object]:
    return lambda c: c.get_table("db.t").maintenance.create_tag(name, snapshot)


def _consumer(c: FileSystemCatalog) -> None:
    from paimon_core.consumer.consumer_manager import Consumer

    c.get_table("db.t").consumer_manager.reset_consumer("c1", Consumer(1))


def _orphan(c: FileSystemCatalog) -> None:
    old_file(os.path.join(c.get_table("db.t").path, "dt=2024-01-01", "bucket-0", "data-orphan.parquet"))


def _branch_from_tag(c: FileSystemCatalog) -> None:
    t = c.get_table("db.t")
    t.maintenance.create_tag("b0", 2)
    t.maintenance.create_branch("b", "b0")


def _old_partition(c: FileSystemCatalog) -> None:
    c.get_table("db.t").write_arrow(rows(900, 3, dt="2000-01-01"))


def _fixed_bucket(c: FileSystemCatalog) -> None:
    t = c.create_table(
        "db.fb", rows(0, 1).schema, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"}
    )
    t.write_arrow(rows(0, 20))


def _parquet_dir(c: FileSystemCatalog) -> None:
    d = Path(c.warehouse).parent / "to_migrate"
    d.mkdir(exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64())}), d / "part-0.parquet")


def _parquet_database(c: FileSystemCatalog) -> None:
    d = Path(c.warehouse).parent / "landing.db" / "t1"
    d.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64())}), d / "part-0.parquet")


def _merge_source(c: FileSystemCatalog) -> None:
    c.create_table("db.src", rows(0, 1).schema).write_arrow(rows(0, 5))


def _watermarks(c: FileSystemCatalog) -> None:
    """Two more commits of db.t, with watermarks 1000 and 2000 (snapshots 7 and 8)."""
    t = c.get_table("db.t")
    for i, wm in enumerate((1000, 2000)):
        write = t.new_batch_write_builder().new_write()
        write.write_arrow(rows(500 + 10 * i, 3))
        t.new_file_store_commit(f"wm-{i}").commit(write.prepare_commit(), 2**63 - 1, watermark=wm)


def _branch_at_1(c: FileSystemCatalog) -> None:
    t = c.get_table("db.t")
    t.maintenance.create_tag("b0", 1)
    t.maintenance.create_branch("b", "b0")


SCENARIOS: dict[str, JobScenario] = {
    "ingest": JobScenario(lambda w: ["--source", os.path.join(os.path.dirname(w), "none")], None, spark=True),
    "compact": JobScenario(lambda w: ["--mode", "local"], "success"),
    "compact_database": JobScenario(
        lambda w: ["--execution", "local", "--including_databases", "db"], "success", table_flag=False
    ),
    "compact_manifest": JobScenario(lambda w: ["--dry-run"], "dry_run"),
    "expire_snapshots": JobScenario(lambda w: ["--retain-max", "2", "--retain-min", "1"], "success"),
    "remove_orphan_files": JobScenario(
        lambda w: ["--mode", "local", "--older-than", str(_now() - 86_400_000), "--dry-run", "false"],
        "success",
        setup=_orphan,
    ),
    "remove_unexisting_files": JobScenario(lambda w: ["--dry-run", "false"], "no_op"),
    "expire_changelogs": JobScenario(lambda w: [], "no_op"),
    "create_tag": JobScenario(lambda w: ["--tag", "t1"], "success"),
    "create_tag_from_timestamp": JobScenario(lambda w: ["--tag", "t0", "--timestamp", "0"], "success"),
    "replace_tag": JobScenario(lambda w: ["--tag", "t1", "--snapshot", "1"], "success", setup=_tag("t1")),
    "rename_tag": JobScenario(lambda w: ["--tag", "t1", "--target_tag", "t2"], "success", setup=_tag("t1")),
    "delete_tag": JobScenario(lambda w: ["--tag", "t1", "--dry-run", "false"], "success", setup=_tag("t1", 1)),
    "expire_tags": JobScenario(lambda w: [], "no_op"),
    "trigger_tag_automatic_creation": JobScenario(lambda w: [], "no_op"),
    "rollback_to": JobScenario(lambda w: ["--snapshot", "1", "--dry-run", "false"], "success"),
    "rollback_to_timestamp": JobScenario(lambda w: ["--timestamp", str(_now()), "--dry-run"], "dry_run"),
    "rollback_to_as_latest": JobScenario(lambda w: ["--snapshot_id", "1"], "success"),
    "reset_consumer": JobScenario(
        lambda w: ["--consumer_id", "c1", "--next_snapshot_id", "2"], "success", setup=_consumer
    ),
    "clear_consumers": JobScenario(lambda w: ["--dry-run", "false"], "success", setup=_consumer),
    "merge_into": JobScenario(
        lambda w: (
            ["--target_alias", "t", "--source_table", "db.src", "--merge_condition", "t.id = src.id"]
            + ["--matched_upsert_setting", "v = src.v"]
        ),
        "success",
        setup=_merge_source,
        spark=True,
    ),
    "migrate_table": JobScenario(
        lambda w: ["--source_path", str(Path(w).parent / "to_migrate")],
        "success",
        table="db.m",
        setup=_parquet_dir,
    ),
    "rescale": JobScenario(lambda w: ["--bucket_num", "4"], "success", table="db.fb", setup=_fixed_bucket),
    "expire_partitions": JobScenario(
        lambda w: ["--expiration_time", "30 d", "--timestamp_formatter", "yyyy-MM-dd"],
        "success",
        setup=_old_partition,
    ),
    "mark_partition_done": JobScenario(lambda w: ["--partitions", "dt=2024-01-01"], "success"),
    "create_branch": JobScenario(lambda w: ["--branch", "b"], "success"),
    "delete_branch": JobScenario(
        lambda w: ["--branch", "b", "--dry-run", "false"],
        "success",
        setup=lambda c: c.get_table("db.t").maintenance.create_branch("b"),
    ),
    "fast_forward": JobScenario(lambda w: ["--branch", "b", "--dry-run"], "dry_run", setup=_branch_from_tag),
    "rename_branch": JobScenario(
        lambda w: ["--from_branch", "b", "--to_branch", "b2"], "success", setup=lambda c: c.get_table("db.t").maintenance.create_branch("b")
    ),
    "merge_branch": JobScenario(lambda w: ["--source_branch", "b"], "no_op", setup=_branch_at_1),
    "purge_files": JobScenario(lambda w: ["--dry-run"], "dry_run"),
    "repair": JobScenario(lambda w: ["--database_or_table", "db.t"], "no_op", table_flag=False),
    "repair_earliest_snapshot": JobScenario(lambda w: ["--snapshot_id", "1"], "no_op"),
    "create_tag_from_watermark": JobScenario(
        lambda w: ["--tag", "w", "--watermark", "1500"], "success", setup=_watermarks
    ),
    "rollback_to_watermark": JobScenario(
        lambda w: ["--watermark", "1500", "--dry-run", "false"], "success", setup=_watermarks
    ),
    "drop_partition": JobScenario(lambda w: ["--partitions", "dt=2024-01-01", "--dry-run", "false"], "success"),
    "remove_unexisting_manifests": JobScenario(lambda w: ["--dry-run", "false"], "no_op"),
    "rewrite_file_index": JobScenario(lambda w: [], "no_op"),
    "reassign_row_id": JobScenario(
        lambda w: ["--partitions", "dt=2024-01-01"], "success", table="db.de", setup=lambda c: interleaved_de_table(c, "db.de")
    ),
    "migrate_database": JobScenario(
        lambda w: ["--source_database", str(Path(w).parent / "landing.db")],
        "success",
        table="landing.t1",
        setup=_parquet_database,
        table_flag=False,
    ),
}


@dataclass
class Prepared:
    catalog: FileSystemCatalog
    argv: list[str] = field(default_factory=list)


def prepare(job: str, warehouse: str) -> Prepared:
    """The warehouse with ``db.t`` (6 small files) and the scenario's setup, written with the
    ledger off (the job creates it); the job's full argument list."""
    scenario = SCENARIOS[job]
    catalog = FileSystemCatalog(warehouse)
    small_table(catalog, commits=6)
    with ledger_disabled():
        scenario.setup(catalog)
    argv = [job, "--warehouse", warehouse]
    if scenario.table_flag:
        argv += ["--table", scenario.table]
    return Prepared(catalog, argv + scenario.args(warehouse))
