"""The procedure jobs of issue 25 (``python -m spark_jobs <job>``, Paimon's names and order):
purge_files, repair, repair_earliest_snapshot, rename_branch, merge_branch,
create_tag_from_watermark, rollback_to_watermark, drop_partition, remove_unexisting_manifests,
rewrite_file_index.

Each: Java's behaviour (the cases Java's procedure and its core call decide), its bad inputs (a
clear error naming the problem, exit 3 for a failed check and 2 for a bad argument, every file of
the table unchanged), and pypaimon 2.1.0 reading the table afterwards where the job changes rows.
Driver-only jobs run in-process through their ``main``.
"""

from __future__ import annotations

import importlib
import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.schema.schema_change import RemoveOption, SetOption
from paimon_core.snapshot.watermark_search import (
    LONG_MIN,
    earlier_or_equal_watermark,
    later_or_equal_watermark,
)
from paimon_core.table.table import FileStoreTable
from spark_jobs import JOBS
from spark_jobs import create_tag_from_watermark as tag_wm_job
from spark_jobs import drop_partition as drop_job
from spark_jobs import merge_branch as merge_job
from spark_jobs import migrate_database as migrate_db_job
from spark_jobs import purge_files as purge_job
from spark_jobs import remove_unexisting_manifests as rum_job
from spark_jobs import rename_branch as rename_job
from spark_jobs import repair as repair_job
from spark_jobs import repair_earliest_snapshot as earliest_job
from spark_jobs import rewrite_file_index as index_job
from spark_jobs import rollback_to_watermark as rb_wm_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import ids, make_table, reload, run_job

NEW_JOBS = (
    "purge_files", "repair", "repair_earliest_snapshot", "rename_branch", "merge_branch",
    "create_tag_from_watermark", "rollback_to_watermark", "drop_partition",
    "remove_unexisting_manifests", "rewrite_file_index", "migrate_database",
)  # fmt: skip


def _state(wh: str, table: str = "t") -> dict[str, bytes]:
    """Every file of db.<table> (metadata, branches and data) with its content."""
    root = os.path.join(wh, "db.db", table)
    out: dict[str, bytes] = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def _refused(module: Any, wh: str, *args: str, capsys: pytest.CaptureFixture[str], rc: int = EXIT_FAILURE) -> str:
    """Run a job that must fail with ``rc`` and change no file of db.t; its error message."""
    before = _state(wh)
    code, out = run_job(module, wh, "--no-ledger", *args, capsys=capsys)
    assert code == rc and out["status"] == "error" and out["retryable"] is False, out
    assert _state(wh) == before, f"{module.JOB} {args} changed the table"
    return str(out["error"])


def _write_wm(t: FileStoreTable, data: pa.Table, watermark: int | None) -> int:
    write = t.new_batch_write_builder().new_write()
    write.write_arrow(data)
    result = t.new_file_store_commit(str(uuid.uuid4())).commit(write.prepare_commit(), 2**63 - 1, watermark=watermark)
    assert result.snapshot_id is not None
    return result.snapshot_id


def _rows(start: int, dt: str) -> pa.Table:
    return pa.table({"id": pa.array([start, start + 1], pa.int64()), "dt": [dt, dt]})


def _pypaimon_ids(pypaimon: Any, wh: str, table: str = "db.t", **options: str) -> list[int]:
    return sorted(pypaimon.read(wh, table, options=options or None).column("id").to_pylist())


@pytest.mark.parametrize("name", NEW_JOBS)
def test_registered_documented_and_spark_free(name: str) -> None:
    module = importlib.import_module(JOBS[name])
    assert module.JOB == name and "no Spark session" in " ".join((module.__doc__ or "").split())
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0


# --- watermarks -----------------------------------------------------------------------------
def _watermark_table(wh: str) -> FileStoreTable:
    """Snapshots 1-2 without watermark, 3: 1000, 4: 1000 (committed with Long.MIN_VALUE, "none",
    so it keeps the previous watermark as Java's commit does), 5: 2000, 6: 3000."""
    t = make_table(wh, 2)
    for i, wm in enumerate((1000, LONG_MIN, 2000, 3000)):
        _write_wm(t, _rows(100 + 10 * i, "w"), wm)
    return reload(wh)


def test_watermark_search_matches_java(wh: str) -> None:
    sm = _watermark_table(wh).snapshot_manager
    later = {w: getattr(later_or_equal_watermark(sm, w), "id", None) for w in (0, 1000, 1001, 2000, 2500, 3000, 3001)}
    assert later == {0: 3, 1000: 3, 1001: 5, 2000: 5, 2500: 6, 3000: 6, 3001: None}
    earlier = {w: getattr(earlier_or_equal_watermark(sm, w), "id", None) for w in (999, 1000, 1999, 2000, 2999, 9999)}
    assert earlier == {999: None, 1000: 4, 1999: 4, 2000: 5, 2999: 5, 9999: 6}
    assert [sm.snapshot(i).watermark for i in range(1, 7)] == [None, None, 1000, 1000, 2000, 3000]
    # Long.MIN_VALUE stored (no earlier watermark to keep) means none, as null does
    m = FileSystemCatalog(wh).create_table("db.m", pa.schema([("id", pa.int64()), ("dt", pa.string())]))
    for i, wm in enumerate((None, LONG_MIN, LONG_MIN, 1000, 2000)):
        _write_wm(m, _rows(i, "x"), wm)
    msm = FileSystemCatalog(wh).get_table("db.m").snapshot_manager
    assert [msm.snapshot(i).watermark for i in range(1, 6)] == [None, LONG_MIN, LONG_MIN, 1000, 2000]
    assert getattr(later_or_equal_watermark(msm, LONG_MIN + 1), "id", None) == 4
    assert getattr(earlier_or_equal_watermark(msm, 1500), "id", None) == 4
    assert earlier_or_equal_watermark(msm, 999) is None


def test_create_tag_from_watermark(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    _watermark_table(wh)
    rc, out = run_job(tag_wm_job, wh, "w1", "1500", capsys=capsys)  # positional: tag, watermark
    assert rc == 0 and (out["tag"], out["snapshot"], out["watermark"]) == ("w1", 5, 2000), out
    assert out["commit_time"] == reload(wh).snapshot_manager.snapshot(5).time_millis
    assert _pypaimon_ids(pypaimon, wh, **{"scan.tag-name": "w1"}) == ids(reload(wh).copy({"scan.tag-name": "w1"}))
    rc, out = run_job(tag_wm_job, wh, "--tag", "w2", "--watermark", "3000", "--time-retained", "1 d", capsys=capsys)
    assert rc == 0 and out["snapshot"] == 6 and out["tag_time_retained"] is not None
    # a tag on a snapshot that expired still qualifies when its watermark is the lower one (Java)
    t = reload(wh)
    t.maintenance.create_tag("t3", 3)
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than="2999-01-01T00:00:00")
    rc, out = run_job(tag_wm_job, wh, "w3", "500", "--dry-run", capsys=capsys)
    assert rc == 0 and out["snapshot"] == 3 and out["dry_run"] is True
    assert not reload(wh).tag_manager.exists("w3")


def test_create_tag_from_watermark_bad_input(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    _watermark_table(wh)
    err = _refused(tag_wm_job, wh, "w", "3001", capsys=capsys)
    assert "watermark later than 3001" in err
    reload(wh).maintenance.create_tag("taken", 1)
    assert "already exists" in _refused(tag_wm_job, wh, "taken", "10", capsys=capsys)
    assert "must be an integer" in _refused(tag_wm_job, wh, "w", "soon", capsys=capsys, rc=EXIT_USAGE)
    assert "Java long" in _refused(tag_wm_job, wh, "w", str(2**63), capsys=capsys, rc=EXIT_USAGE)
    assert "missing required argument --watermark" in _refused(tag_wm_job, wh, "w", capsys=capsys, rc=EXIT_USAGE)
    code, out = run_job(tag_wm_job, wh, "--no-ledger", capsys=capsys)
    assert code == EXIT_USAGE
    code, out = run_job(tag_wm_job, wh.replace("warehouse", "nowhere"), "w", "10", capsys=capsys)
    assert code == EXIT_FAILURE and out["error_type"] in ("TableNotFoundError", "DatabaseNotFoundError"), out


def test_rollback_to_watermark(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    _watermark_table(wh)
    before = _state(wh)
    rc, out = run_job(rb_wm_job, wh, "--watermark", "2999", "--dry-run", capsys=capsys)
    assert rc == 0 and (out["previous_snapshot_id"], out["target_snapshot_id"]) == (6, 5) and _state(wh) == before
    expected = ids(reload(wh).copy({"scan.snapshot-id": "4"}))
    rc, out = run_job(rb_wm_job, wh, "1999", "--dry-run", "false", capsys=capsys)
    assert rc == 0 and out["target_snapshot_id"] == 4 and out["deleted_snapshot_ids"] == [5, 6]
    assert ids(reload(wh)) == expected == _pypaimon_ids(pypaimon, wh)
    assert "earlier than 999" in _refused(rb_wm_job, wh, "999", "--dry-run", "false", capsys=capsys)
    assert "must be an integer" in _refused(rb_wm_job, wh, "1.5", "--dry-run", "false", capsys=capsys, rc=EXIT_USAGE)


def test_rollback_to_watermark_without_watermarks(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    make_table(wh, 2)
    assert "earlier than 5" in _refused(rb_wm_job, wh, "5", "--dry-run", "false", capsys=capsys)
    FileSystemCatalog(wh).create_table("db.e", pa.schema([("id", pa.int64())]))
    assert rb_wm_job.main(["--warehouse", wh, "--table", "db.e", "5", "--no-ledger"]) == EXIT_FAILURE
    assert "Latest snapshot is null" in capsys.readouterr().out


# --- drop_partition --------------------------------------------------------------------------
def test_drop_partition(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    make_table(wh, 4)
    before = _state(wh)
    rc, out = run_job(drop_job, wh, "--partitions", "dt=d1;dt=d2", "--dry-run", capsys=capsys)
    assert rc == 0 and [p["partition"] for p in out["partitions"]] == ["dt=d1", "dt=d2"] and _state(wh) == before
    assert [p["record_count"] for p in out["partitions"]] == [3, 3]
    rc, out = run_job(drop_job, wh, "dt=d1;dt=d2", "--dry-run", "false", capsys=capsys)
    assert rc == 0 and (out["commit_kind"], out["deleted_files"], out["deleted_rows"]) == ("OVERWRITE", 2, 6), out
    assert ids(reload(wh)) == _pypaimon_ids(pypaimon, wh) == [0, 1, 2, 30, 31, 32]
    # time travel still reads the dropped rows (nothing deleted from storage)
    assert _pypaimon_ids(pypaimon, wh, **{"scan.snapshot-id": "4"}) == ids(reload(wh).copy({"scan.snapshot-id": "4"}))


def test_drop_partition_partial_spec(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hh", pa.int32())])
    t = catalog.create_table("db.t", schema, partition_keys=["dt", "hh"])
    t.write_arrow(
        pa.table({"id": pa.array(range(6), pa.int64()), "dt": ["a", "a", "a", "b", "b", None],
                  "hh": pa.array([1, 2, 2, 1, 2, 1], pa.int32())})
    )  # fmt: skip
    rc, out = run_job(drop_job, wh, "dt=a", "--dry-run", capsys=capsys)
    assert rc == 0 and [p["partition"] for p in out["partitions"]] == ["dt=a, hh=1", "dt=a, hh=2"], out
    rc, out = run_job(drop_job, wh, "dt=__DEFAULT_PARTITION__;dt=b,hh=2", "--dry-run", "false", capsys=capsys)
    assert rc == 0 and out["deleted_rows"] == 2, out
    assert ids(reload(wh)) == _pypaimon_ids(pypaimon, wh) == [0, 1, 2, 3]


def test_drop_partition_bad_input(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    make_table(wh, 2)
    assert "does not exist" in _refused(drop_job, wh, "dt=d9", "--dry-run", "false", capsys=capsys)
    assert "does not exist" in _refused(drop_job, wh, "dt=d0;dt=d9", "--dry-run", "false", capsys=capsys)  # all or nothing
    assert "not partition keys" in _refused(drop_job, wh, "id=1", "--dry-run", "false", capsys=capsys)
    assert "names no partition" in _refused(drop_job, wh, ";;;", "--dry-run", "false", capsys=capsys, rc=EXIT_USAGE)
    assert "key=value" in _refused(drop_job, wh, "d1", "--dry-run", "false", capsys=capsys, rc=EXIT_USAGE)
    assert "missing required argument --partitions" in _refused(drop_job, wh, "--dry-run", "false", capsys=capsys, rc=EXIT_USAGE)
    FileSystemCatalog(wh).create_table("db.u", pa.schema([("id", pa.int64())])).write_arrow(
        pa.table({"id": pa.array([1], pa.int64())})
    )
    before = _state(wh, "u")
    assert drop_job.main(["--warehouse", wh, "--table", "db.u", "id=1", "--no-ledger"]) == EXIT_FAILURE
    assert "not partitioned" in capsys.readouterr().out and _state(wh, "u") == before


# --- purge_files -----------------------------------------------------------------------------
def test_purge_files(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    t = make_table(wh, 3)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    reload(wh).consumer_manager.reset_consumer("c1", Consumer(2))
    orphan = Path(wh, "db.db", "t", "dt=d0", "bucket-0", "data-orphan.parquet")
    orphan.write_bytes(b"x")
    before = _state(wh)
    rc, out = run_job(purge_job, wh, "--dry-run", capsys=capsys)
    assert rc == 0 and _state(wh) == before
    assert (out["dropped_branches"], out["deleted_tags"], out["deleted_consumers"]) == (["b1"], ["t1"], ["c1"])
    assert (out["live_files"], out["live_rows"], out["snapshots"]) == (3, 9, 3)
    rc, out = run_job(purge_job, wh, "--dry-run", "false", capsys=capsys)
    assert rc == 0 and out["result"] == "Success" and out["snapshot_id"] == 4 and out["expired_snapshots"] == 3
    assert out["deleted_orphan_files"] >= 1
    t = reload(wh)
    assert ids(t) == [] and _pypaimon_ids(pypaimon, wh) == []
    assert t.snapshot_manager.list_snapshot_ids() == [4] and t.tag_manager.list_names() == []
    assert t.branches() == [] and t.consumer_manager.list_all_ids() == []
    left = sorted(_state(wh))
    assert not [f for f in left if f.endswith(".parquet")], left  # no data file stays
    assert {f.split("/")[0] for f in left} <= {"schema", "snapshot", "manifest"}, left
    t.write_arrow(pa.table({"id": pa.array([7], pa.int64()), "dt": ["x"]}))  # the table is usable again
    assert _pypaimon_ids(pypaimon, wh) == [7]


def test_purge_files_refusals(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(wh, 2)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    before = _state(wh)
    assert purge_job.main(["--warehouse", wh, "--table", "db.t$branch_b1", "--no-ledger"]) == EXIT_FAILURE
    assert "runs on the main branch" in capsys.readouterr().out and _state(wh) == before
    FileSystemCatalog(wh).alter_table("db.t", [SetOption("scan.fallback-branch", "b1")])
    assert "scan.fallback-branch" in _refused(purge_job, wh, "--dry-run", "false", capsys=capsys)


# --- repair ----------------------------------------------------------------------------------
def test_repair(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    make_table(wh, 1)
    FileSystemCatalog(wh).create_database("db2")
    FileSystemCatalog(wh).create_table("db2.u", pa.schema([("id", pa.int64())]))
    before = _state(wh)

    def call(*args: str) -> tuple[int, dict[str, Any]]:
        import json

        capsys.readouterr()
        rc = repair_job.main(["--warehouse", wh, "--no-ledger", *args])
        return rc, json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    rc, out = call()
    assert rc == 0 and out["result"] is True and out["tables"] == ["db.t", "db2.u"] and "no metastore" in out["note"]
    rc, out = call("db2,db.t")
    assert rc == 0 and out["databases"] == ["db2"] and out["tables"] == ["db2.u", "db.t"]
    rc, out = call("--database_or_table", "db.nope")
    assert rc == EXIT_FAILURE and out["error_type"] == "TableNotFoundError"
    rc, out = call("nodb")
    assert rc == EXIT_FAILURE and out["error_type"] == "DatabaseNotFoundError"
    rc, out = call("a.b.c")
    assert rc == EXIT_FAILURE and "Cannot get splits from 'a.b.c'" in out["error"]
    rc, out = call("--table", "db.t")
    assert rc == EXIT_USAGE
    assert _state(wh) == before


def test_repair_earliest_snapshot(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    make_table(wh, 5)
    snap_dir = Path(wh, "db.db", "t", "snapshot")
    (snap_dir / "snapshot-2").unlink()  # a gap: 1 | 3 4 5, EARLIEST still 1
    assert (snap_dir / "EARLIEST").read_text().strip() == "1"
    assert "Snapshot 2 does not exist" in _refused(earliest_job, wh, "1", capsys=capsys)
    assert "Snapshot 2 does not exist" in _refused(earliest_job, wh, "2", capsys=capsys)
    assert "must not be later than latest snapshot 5" in _refused(earliest_job, wh, "6", capsys=capsys)
    assert "must not be earlier than current earliest snapshot 1" in _refused(earliest_job, wh, "0", capsys=capsys)
    assert "does not immediately follow a snapshot gap" in _refused(earliest_job, wh, "4", capsys=capsys)
    assert "must be an integer" in _refused(earliest_job, wh, "three", capsys=capsys, rc=EXIT_USAGE)
    rc, out = run_job(earliest_job, wh, "--snapshot_id", "3", "--dry-run", capsys=capsys)
    assert rc == 0 and (snap_dir / "EARLIEST").read_text().strip() == "1"
    rc, out = run_job(earliest_job, wh, "3", capsys=capsys)
    assert rc == 0 and (out["previous_earliest_snapshot_id"], out["current_earliest_snapshot_id"]) == (1, 3)
    assert (snap_dir / "EARLIEST").read_text().strip() == "3"
    assert reload(wh).snapshot_manager.earliest_snapshot_id() == 3
    assert ids(reload(wh)) == _pypaimon_ids(pypaimon, wh)
    FileSystemCatalog(wh).create_table("db.e", pa.schema([("id", pa.int64())]))
    assert earliest_job.main(["--warehouse", wh, "--table", "db.e", "1", "--no-ledger"]) == EXIT_FAILURE
    assert "empty table" in capsys.readouterr().out


# --- branches --------------------------------------------------------------------------------
def test_rename_branch(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    t = make_table(wh, 3)
    t.maintenance.create_tag("t1", 2)
    t.maintenance.create_branch("b1", "t1")
    t.maintenance.create_branch("other")
    reload(wh).switch_to_branch("b1").write_arrow(pa.table({"id": pa.array([100], pa.int64()), "dt": ["b"]}))
    expected = _pypaimon_ids(pypaimon, wh, "db.t$branch_b1")
    before = _state(wh)
    rc, out = run_job(rename_job, wh, "b1", "b2", "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and _state(wh) == before
    rc, out = run_job(rename_job, wh, "--from_branch", "b1", "--to_branch", "b2", capsys=capsys)
    assert rc == 0 and out["result"] is True and (out["from_branch"], out["to_branch"]) == ("b1", "b2")
    assert reload(wh).branches() == ["b2", "other"]
    assert _pypaimon_ids(pypaimon, wh, "db.t$branch_b2") == expected == ids(
        FileSystemCatalog(wh).get_table("db.t$branch_b2")
    )
    assert ids(reload(wh)) == _pypaimon_ids(pypaimon, wh)
    assert "Cannot rename the main branch" in _refused(rename_job, wh, "main", "x", capsys=capsys)
    assert "doesn't exist" in _refused(rename_job, wh, "b1", "x", capsys=capsys)
    assert "already exists" in _refused(rename_job, wh, "b2", "other", capsys=capsys)
    assert "pure numeric" in _refused(rename_job, wh, "b2", "123", capsys=capsys)
    assert "default branch" in _refused(rename_job, wh, "b2", "main", capsys=capsys)
    assert "Invalid branch name" in _refused(rename_job, wh, "b2", "../x", capsys=capsys)
    assert "missing required argument --to-branch" in _refused(rename_job, wh, "b2", capsys=capsys, rc=EXIT_USAGE)
    FileSystemCatalog(wh).alter_table("db.t", [SetOption("scan.fallback-branch", "b2")])
    assert "scan.fallback-branch" in _refused(rename_job, wh, "b2", "b3", capsys=capsys)


def test_merge_branch(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    t = make_table(wh, 2)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    branch = FileSystemCatalog(wh).get_table("db.t$branch_b1")
    branch.write_arrow(pa.table({"id": pa.array([100, 101], pa.int64()), "dt": ["b", "d0"]}))
    before = _state(wh)
    rc, out = run_job(merge_job, wh, "b1", "--dry-run", capsys=capsys)
    assert rc == 0 and (out["merged_files"], out["merged_rows"], out["snapshot_id"]) == (2, 2, None)
    assert _state(wh) == before
    rc, out = run_job(merge_job, wh, "--source_branch", "b1", "--target_branch", "main", capsys=capsys)
    assert rc == 0 and (out["merged_files"], out["snapshot_id"], out["commit_kind"]) == (2, 3, "APPEND"), out
    assert ids(reload(wh)) == _pypaimon_ids(pypaimon, wh) == [0, 1, 2, 10, 11, 12, 100, 101]
    rc, out = run_job(merge_job, wh, "b1", capsys=capsys)  # again: nothing new
    assert rc == 0 and out["merged_files"] == 0 and out["snapshot_id"] is None
    # main's new files into the branch (main has 1 2 3, all APPEND)
    rc, out = run_job(merge_job, wh, "main", "b1", capsys=capsys)
    assert rc == 0 and out["merged_files"] == 1, out
    assert _pypaimon_ids(pypaimon, wh, "db.t$branch_b1") == [0, 1, 2, 10, 11, 12, 100, 101]

    assert "into itself" in _refused(merge_job, wh, "b1", "b1", capsys=capsys)
    assert "doesn't exist" in _refused(merge_job, wh, "nope", capsys=capsys)
    reload(wh).maintenance.create_branch("empty")
    assert "does not have snapshot" in _refused(merge_job, wh, "empty", capsys=capsys)
    assert "does not have snapshot" in _refused(merge_job, wh, "b1", "empty", capsys=capsys)
    assert "missing required argument --source-branch" in _refused(merge_job, wh, capsys=capsys, rc=EXIT_USAGE)
    reload(wh).maintenance.drop_partition("dt=d1", dry_run=False)  # an OVERWRITE snapshot in main's history: Java refuses
    assert "has commit kind 'OVERWRITE'" in _refused(merge_job, wh, "b1", capsys=capsys)


def test_merge_branch_refuses_what_java_refuses(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string())])
    t = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(pa.table({"id": pa.array([1], pa.int64()), "dt": ["a"]}))
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    catalog.get_table("db.t$branch_b1").write_arrow(pa.table({"id": pa.array([2], pa.int64()), "dt": ["a"]}))
    assert "only supported for append-only tables" in _refused(merge_job, wh, "b1", capsys=capsys)
    # row tracking: refused until the commit assigns row ids (Java's merge re-assigns them)
    catalog.drop_table("db.t")
    t = make_table(wh, 1, options={"row-tracking.enabled": "true"})
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    assert "row-tracking tables" in _refused(merge_job, wh, "b1", capsys=capsys)
    # an append table whose main expired its first snapshot: no fork point, refused
    catalog.drop_table("db.t")
    t = make_table(wh, 3)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b1", "t1")
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than="2999-01-01T00:00:00")
    assert "does not start at snapshot 1 (earliest is 3)" in _refused(merge_job, wh, "b1", capsys=capsys)


# --- remove_unexisting_manifests ---------------------------------------------------------------
def test_remove_unexisting_manifests(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    t = make_table(wh, 3)
    rc, out = run_job(rum_job, wh, "--dry-run", "false", capsys=capsys)
    assert rc == 0 and out["missing_manifests"] == [] and out["snapshot_id"] is None
    latest = t.snapshot_manager.latest_snapshot()
    assert latest is not None
    [lost] = t.new_file_store_scan().delta_manifests(latest)
    Path(t.paths.manifest_path(lost.file_name)).unlink()  # snapshot 3's own manifest: rows 20..22
    before = _state(wh)
    rc, out = run_job(rum_job, wh, "--dry-run", capsys=capsys)
    assert rc == 0 and out["missing_manifests"] == [lost.file_name] and out["lost_records"] == 3
    assert _state(wh) == before
    rc, out = run_job(rum_job, wh, "--dry-run", "false", capsys=capsys)
    assert rc == 0 and (out["snapshot_id"], out["commit_kind"]) == (4, "OVERWRITE"), out
    t = reload(wh)
    snap = t.snapshot_manager.snapshot(4)
    assert snap.total_record_count == 6 and snap.delta_record_count == 0
    assert ids(t) == _pypaimon_ids(pypaimon, wh) == [0, 1, 2, 10, 11, 12]
    # a missing manifest list cannot be repaired this way: refused, unchanged
    Path(t.paths.manifest_path(snap.base_manifest_list)).unlink()
    assert "Manifest list" in _refused(rum_job, wh, "--dry-run", "false", capsys=capsys)


# --- rewrite_file_index ----------------------------------------------------------------------
def _schema_with_options(wh: str, **options: str) -> None:
    """A next schema file with ``options`` added, as another engine (or a hand edit) would leave
    it: options our ALTER TABLE refuses can still reach a table."""
    import json

    schema_dir = Path(wh) / "db.db" / "t" / "schema"
    latest = max(int(p.name.split("-")[1]) for p in schema_dir.glob("schema-*"))
    doc = json.loads((schema_dir / f"schema-{latest}").read_text())
    doc["id"] = latest + 1
    doc["options"] = {**doc["options"], **options}
    (schema_dir / f"schema-{latest + 1}").write_text(json.dumps(doc, indent=2))


def test_rewrite_file_index(wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    make_table(wh, 2)
    before = _state(wh)
    rc, out = run_job(index_job, wh, capsys=capsys)  # no index configured, none to drop: Java's no-op
    assert rc == 0 and out["rewritten_files"] == 0 and out["files"] == 2 and _state(wh) == before
    assert "not partition keys" in _refused(index_job, wh, "--partitions", "id=1", capsys=capsys)
    assert "names no partition" in _refused(index_job, wh, ";", capsys=capsys, rc=EXIT_USAGE)
    catalog = FileSystemCatalog(wh)
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id")])
    before = _state(wh)
    rc, out = run_job(index_job, wh, "--partitions", "dt=d0", "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["snapshot_id"] is None and _state(wh) == before
    assert (out["files"], out["rewritten_files"], out["written_partitions"], out["index_files_written"]) == (1, 1, 1, 1)
    rc, out = run_job(index_job, wh, "--partitions", "dt=d0", "--dry-run", "false", capsys=capsys)
    assert rc == 0 and (out["files"], out["rewritten_files"], out["written_partitions"], out["written_indexes"]) == (1, 1, 1, 1)
    rc, out = run_job(index_job, wh, capsys=capsys)  # d0 has its index already
    assert rc == 0 and (out["files"], out["rewritten_files"], out["index_files_written"]) == (2, 1, 1)
    t = reload(wh)
    snap = t.latest_snapshot()
    assert snap is not None and snap.commit_kind.name == "COMPACT"
    assert all(e.file.extra_files == (e.file.file_name + ".index",) for e in t.new_file_store_scan().live_entries(snap))
    assert ids(t) == _pypaimon_ids(pypaimon, wh) == [0, 1, 2, 10, 11, 12]
    rc, out = run_job(index_job, wh, capsys=capsys)
    assert rc == 0 and out["rewritten_files"] == 0 and out["snapshot_id"] is None
    # index types paimon_core does not write: refused, naming them
    catalog.alter_table("db.t", [SetOption("file-index.bsi.columns", "id")])
    err = _refused(index_job, wh, capsys=capsys)
    assert "bsi" in err and "not supported by paimon_core" in err and "nothing was changed" in err
    catalog.alter_table("db.t", [RemoveOption("file-index.bsi.columns")])
    # options Java refuses, left by another engine
    _schema_with_options(wh, **{"file-index.bloom-filter.columns": "nope"})
    assert "Column 'nope'" in _refused(index_job, wh, "dt=d0", capsys=capsys)
    _schema_with_options(wh, **{"file-index.bloom-filter.columns": "id", "file-index.zmap.columns": "id"})
    assert "unknown file index type 'zmap'" in _refused(index_job, wh, capsys=capsys)


# --- migrate_database ------------------------------------------------------------------------
def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


def _migrate(wh: str, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    import json

    capsys.readouterr()
    rc = migrate_db_job.main(["--warehouse", wh, "--no-ledger", *args])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return rc, json.loads(lines[0])


def _landing(tmp_path: Path) -> Path:
    """landing.db/ with t1 (partitioned dt=a, dt=b), t2 (flat), _staging (skipped)."""
    import pyarrow.parquet as pq

    src = tmp_path / "landing.db"
    for dt_ in ("a", "b"):
        (src / "t1" / f"dt={dt_}").mkdir(parents=True)
        pq.write_table(pa.table({"id": pa.array([1, 2] if dt_ == "a" else [3], pa.int64())}), src / "t1" / f"dt={dt_}" / "p.parquet")
    (src / "t2").mkdir()
    pq.write_table(pa.table({"id": pa.array([7], pa.int64()), "v": ["x"]}), src / "t2" / "p.parquet")
    (src / "_staging").mkdir()
    (src / "_staging" / "junk.txt").write_text("not a table")
    return src


def test_migrate_database(wh: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], pypaimon: Any) -> None:
    src = _landing(tmp_path)
    before = _tree(src)
    rc, out = _migrate(wh, "--connector", "parquet", "--source_database", str(src), "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and (out["files"], out["rows"]) == (3, 4), out
    assert _tree(src) == before and not FileSystemCatalog(wh).database_exists("landing")
    rc, out = _migrate(wh, "parquet", str(src), "file.compression=zstd", "2", capsys=capsys)  # Paimon's order
    assert rc == 0 and out["result"] == "migrate database is finished, success cnt: 2 , failed cnt: 0", out
    assert [t["table"] for t in out["tables"]] == ["landing.t1", "landing.t2"]
    assert sorted(pypaimon.read(wh, "landing.t1").column("id").to_pylist()) == [1, 2, 3]
    assert pypaimon.read(wh, "landing.t2").to_pylist() == [{"id": 7, "v": "x"}]
    assert FileSystemCatalog(wh).get_table("landing.t1").partition_keys == ["dt"]
    assert _tree(src) == {"_staging/junk.txt": 11}  # the files moved; the skipped directory stayed


def test_migrate_database_goes_on_after_a_failed_table(
    wh: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    src = _landing(tmp_path)
    (src / "t0").mkdir()
    pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), src / "t0" / "a.parquet")
    pq.write_table(pa.table({"id": ["text"]}), src / "t0" / "b.parquet")  # a second schema
    rc, out = _migrate(wh, "--source_database", str(src), "--target_database", "raw", capsys=capsys)
    assert rc == EXIT_FAILURE and out["status"] == "error" and "raw.t0" in out["error"], out
    assert (out["success_count"], out["failed_count"]) == (2, 1)
    assert [t["status"] for t in out["tables"]] == ["error", "ok", "ok"]
    assert sorted(FileSystemCatalog(wh).list_tables("raw")) == ["t1", "t2"]
    assert sorted(p.name for p in (src / "t0").iterdir()) == ["a.parquet", "b.parquet"]  # untouched


def test_migrate_database_refusals(wh: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_table(wh, 1)
    state = _tree(Path(wh))
    src = _landing(tmp_path)
    before = _tree(src)
    for args, message, code in (
        (["--source_database", os.path.join(wh, "db.db")], "overlap", EXIT_FAILURE),
        (["--source_database", os.path.join(wh, "db.db", "t")], "inside the Paimon table", EXIT_FAILURE),
        (["--source_database", str(tmp_path / "nope")], "does not exist", EXIT_FAILURE),
        (["--source_database", str(src / "_staging")], "holds no table directory", EXIT_FAILURE),
        (["--source_database", str(src), "--target_database", "bad name"], "Invalid target database", EXIT_FAILURE),
        (["--connector", "hive", "--source_database", str(src)], "Hive metastore", EXIT_USAGE),
        (["--connector", "orc", "--source_database", str(src)], "unsupported connector", EXIT_USAGE),
        (["--connector", "parquet"], "missing required argument --source-database", EXIT_USAGE),
        (["--source_database", str(src), "--parallelism", "0"], "at least 1", EXIT_USAGE),
    ):
        rc, out = _migrate(wh, *args, capsys=capsys)
        assert rc == code and out["status"] == "error" and message in out["error"], (args, out)
    assert _tree(src) == before and _tree(Path(wh)) == state
