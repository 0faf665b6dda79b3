"""The ``remove_orphan_files`` job: distributed vs local on the same tables, DB.*, abort, CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import OrphanCleanAbortedError
from paimon_core.table.table import FileStoreTable
from spark_jobs import remove_orphan_files as job
from spark_jobs.common.args import UsageError
from spark_jobs.common.output import EXIT_TERMINAL

DAY = 86_400_000


def _rows(ids: list[int], dt: str, v: float = 0.0) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": pa.array([dt] * len(ids)), "v": pa.array([v + i for i in ids])})  # fmt: skip


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _age(root: Path, millis: int) -> None:
    for p in [*root.rglob("*"), root]:
        os.utime(p, (millis / 1000, millis / 1000))


def _plant(path: Path, mtime_millis: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"orphan")
    os.utime(path, (mtime_millis / 1000, mtime_millis / 1000))


def _read(t: FileStoreTable, **options: str) -> list[tuple[Any, ...]]:
    out = (t.copy(options) if options else t).to_arrow()
    return sorted(zip(*(out.column(c).to_pylist() for c in out.column_names), strict=True))


def _build(wh: str) -> tuple[FileSystemCatalog, set[str], set[str]]:
    """db.ev (append: overwrite, tag, branch b, snapshots 1-2 expired by hand) and db.pk (dynamic
    bucket: index files). Everything is 2 days old; returns (catalog, planted old, planted new)."""
    now = int(time.time() * 1000)
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db", ignore_if_exists=True)
    schema, db = _rows([0], "x").schema, Path(wh) / "db.db"
    ev = catalog.create_table("db.ev", schema, partition_keys=["dt"], options={"manifest.full-compaction-threshold-size": "1 b"})  # fmt: skip
    ev.write_arrow(_rows([1, 2, 3], "d1"))
    ev.write_arrow(_rows([1, 2], "d1", 5.0), overwrite={"dt": "d1"})
    ev.write_arrow(_rows([7, 8], "d2"))
    ev.maintenance.create_tag("t3")
    ev.write_arrow(_rows([9], "d2"))
    ev.write_arrow(_rows([100], "d3"))  # snapshot 5: only branch b keeps it
    branch = db / "ev/branch/branch-b"
    for sub, name in (("snapshot", "snapshot-5"), ("schema", "schema-0")):
        (branch / sub).mkdir(parents=True)
        shutil.copy(db / "ev" / sub / name, branch / sub / name)
    for i in (1, 2, 5):
        (db / "ev/snapshot" / f"snapshot-{i}").unlink()
    (db / "ev/snapshot/LATEST").write_text("4")
    (db / "ev/snapshot/EARLIEST").write_text("3")
    pk = catalog.create_table("db.pk", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "-1", "dynamic-bucket.target-row-num": "2"})  # fmt: skip
    pk.write_arrow(_rows([1, 2, 3], "d1"))
    pk.write_arrow(_rows([2, 3, 4, 5], "d1", 9.0))
    (db / "pk/snapshot/snapshot-1").unlink()
    _age(db, now - 2 * DAY)
    old = {"ev/dt=d1/bucket-0/data-orphan-0.parquet", "ev/manifest/manifest-orphan-0", "ev/snapshot/.snapshot-9.x.tmp",
           "ev/branch/branch-b/snapshot/.snapshot-6.tmp", "pk/index/index-orphan-0", "ev/dt=zz/bucket-0/data-z-0.orc"}  # fmt: skip
    new = {"ev/dt=d1/bucket-0/data-fresh-0.parquet", "pk/manifest/manifest-fresh-0"}
    for rel in old:
        _plant(db / rel, now - 2 * DAY)
    for rel in new:
        _plant(db / rel, now + 60_000)
    return catalog, old, new


def _plan(wh: str, table: str, *extra: str) -> job.OrphanCleanPlan:
    return job.parse_args(["--warehouse", wh, "--table", table, *extra])


def test_distributed_and_local_find_and_delete_the_same_files(spark: SparkSession, wh: str) -> None:
    catalog, old, new = _build(wh)
    db = Path(wh) / "db.db"
    ev = catalog.get_table("db.ev")
    reads = {
        "latest": _read(ev),
        "t3": _read(ev, **{"scan.tag-name": "t3"}),
        "pk": _read(catalog.get_table("db.pk")),
    }
    before = _files(db)
    dist = job.run(spark, _plan(wh, "db.*", "--dry-run", "--parallelism", "3"))
    local = job.run(None, _plan(wh, "db.*", "--dry-run", "--mode", "local"))
    assert _files(db) == before
    assert dist["mode"] == "distributed" and local["mode"] == "local"
    for key in ("deleted_paths", "deleted_file_count", "deleted_bytes", "candidates_scanned", "tables"):
        assert dist[key] == local[key], key
    paths = {Path(p).relative_to(db).as_posix() for p in dist["deleted_paths"]}
    assert old <= paths and not new & paths
    assert any(p.startswith("ev/dt=d1/") and "orphan" not in p for p in paths)  # the expired overwrite's file
    assert any(p.startswith("pk/index/index-") and "orphan" not in p for p in paths)  # a replaced index file
    # the real run deletes exactly what the dry runs reported; nothing else changes
    done = job.run(spark, _plan(wh, "db.*", "--parallelism", "3", "--dry-run", "false"))
    assert done["deleted_paths"] == dist["deleted_paths"] and done["deleted_file_count"] == len(paths)
    assert done["deleted_bytes"] == dist["deleted_bytes"] and done["dry_run"] is False
    assert _files(db) == before - paths
    assert not (db / "ev/dt=zz").exists() and (db / "ev/dt=d3/bucket-0").is_dir()  # branch b's data stays
    ev = catalog.get_table("db.ev")
    assert reads == {"latest": _read(ev), "t3": _read(ev, **{"scan.tag-name": "t3"}), "pk": _read(catalog.get_table("db.pk"))}  # fmt: skip
    again = job.run(None, _plan(wh, "db.*", "--mode", "local", "--dry-run", "false"))
    assert again["deleted_file_count"] == 0 and [t["table"] for t in again["tables"]] == ["db.ev", "db.pk"]


def test_a_commit_after_the_listing_keeps_its_files(
    spark: SparkSession, wh: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, _, _ = _build(wh)
    ev = catalog.get_table("db.ev")
    builder = ev.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(_rows([50], "d4"))
    messages = write.prepare_commit()
    _age(Path(wh) / "db.db/ev/dt=d4", int(time.time() * 1000) - 2 * DAY)
    real = job.collect_roots

    committed: list[int] = []

    def commit_then_collect(*args: Any, **kwargs: Any) -> Any:
        if not committed:  # the first read (the clean reads the roots again after moving orphans)
            committed.append(builder.new_commit().commit(messages).snapshot_id or 0)  # candidates listed by now
        return real(*args, **kwargs)

    monkeypatch.setattr(job, "collect_roots", commit_then_collect)
    result = job.run(spark, _plan(wh, "db.ev", "--dry-run", "false"))
    assert not [p for p in result["deleted_paths"] if "dt=d4" in p]
    assert [r for r in _read(catalog.get_table("db.ev")) if r[1] == "d4"] == [(50, "d4", 50.0)]


def test_unreadable_manifest_aborts_before_any_delete(spark: SparkSession, wh: str) -> None:
    catalog, old, _ = _build(wh)
    ev = catalog.get_table("db.ev")
    snap = ev.latest_snapshot()
    assert snap is not None
    manifest = Path(ev.paths.manifest_path(ev.new_file_store_scan().data_manifests(snap)[0].file_name))
    manifest.write_bytes(b"garbage")
    before = _files(Path(wh) / "db.db")
    with pytest.raises(OrphanCleanAbortedError, match="nothing deleted.*CorruptFileError"):
        job.run(spark, _plan(wh, "db.ev", "--dry-run", "false"))
    assert _files(Path(wh) / "db.db") == before


def test_main_prints_one_json_line(spark: SparkSession, wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    _build(wh)
    assert job.main(["--warehouse", wh, "--table", "db.*", "--dry-run", "--parallelism", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["status"] == "ok" and out["job"] == "remove_orphan_files" and out["dry_run"] is True
    assert out["table"] == "db.*" and out["deleted_file_count"] >= 6 and len(out["tables"]) == 2
    assert spark.sparkContext._jsc is not None  # main() left the shared session running
    assert spark.range(3).count() == 3
    # bad arguments: exit 2, one JSON line, no Spark needed
    for args, message in (
        (["--older-than", str(int(time.time() * 1000) + DAY)], "must be in the past"),
        (["--older-than", str(int(time.time() * 1000) - 60_000)], "--force"),
        (["--parallelism", "0"], "--parallelism"),
        (["--mode", "fast"], "invalid choice"),
    ):
        assert job.main(["--warehouse", wh, "--table", "db.ev", *args]) == 2
        err = json.loads(capsys.readouterr().out.strip())
        assert err["status"] == "error" and message in err["error"], (args, err)
    assert job.main(["--warehouse", wh, "--table", "db.nope", "--mode", "local"]) == EXIT_TERMINAL
    assert "does not exist" in json.loads(capsys.readouterr().out.strip())["error"]


def test_argument_parsing() -> None:
    plan = _plan("/w", "db.*", "--older-than", "2020-01-01T00:00:00", "--dry-run", "--mode", "local")
    assert plan.all_tables and plan.database == "db" and plan.dry_run and plan.mode == "local"
    assert _plan("/w", "db.t").mode == "distributed" and not _plan("/w", "db.t").all_tables
    with pytest.raises(UsageError, match="DB.TABLE"):
        _plan("/w", "nodot")


def test_cli_local_mode_runs_without_spark(wh: str) -> None:
    _build(wh)
    proc = subprocess.run(
        [sys.executable, "-m", "spark_jobs", "remove_orphan_files", "--warehouse", wh, "--table", "db.pk", "--mode", "local", "--dry-run", "false"],
        capture_output=True, text=True, timeout=120, cwd="/",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["status"] == "ok" and out["deleted_file_count"] >= 1
    assert not (Path(wh) / "db.db/pk/index/index-orphan-0").exists()


@pytest.mark.parametrize("mode", ["local", "distributed"])
@pytest.mark.parametrize("table", ["nodb.t", "nodb.*"])
def test_missing_database_is_one_json_line_and_one_log_line(wh: str, mode: str, table: str) -> None:
    """Issue 27 item 9: like every other job, one JSON line and one error line, no traceback
    (and no Spark session started for it)."""
    Path(wh).mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "spark_jobs", "remove_orphan_files", "--warehouse", wh, "--table", table, "--mode", mode, "--dry-run", "false"],
        capture_output=True, text=True, timeout=120, cwd="/",
    )  # fmt: skip
    assert proc.returncode == EXIT_TERMINAL, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    out = json.loads(lines[0])
    assert out["status"] == "error" and out["error_type"] == "DatabaseNotFoundError", out
    assert "nodb" in out["error"] and out["retryable"] is False
    assert "Traceback" not in proc.stderr and " ERROR " not in proc.stderr, proc.stderr
    assert [ln for ln in proc.stderr.splitlines() if "nodb" in ln and "failed" in ln], proc.stderr
    assert time.monotonic() - started < 60  # no JVM for a database that is not there


def test_a_commit_landing_between_the_read_and_the_delete_keeps_its_files(
    spark: SparkSession, wh: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27 item 4 on the cluster: a commit lands after the first reference read, so its
    (old enough) files are orphans to that read; the clean moves them aside, sees the commit on
    its second read and moves them back. Today's main deletes them and the table cannot be read."""
    catalog, old, _ = _build(wh)
    ev = catalog.get_table("db.ev")
    builder = ev.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(_rows([60], "d5"))
    messages = write.prepare_commit()
    _age(Path(wh) / "db.db/ev/dt=d5", int(time.time() * 1000) - 2 * DAY)
    real = job.collect_roots
    committed: list[int] = []

    def collect_then_commit(*args: Any, **kwargs: Any) -> Any:
        roots = real(*args, **kwargs)
        if not committed:
            committed.append(builder.new_commit().commit(messages).snapshot_id or 0)
        return roots

    monkeypatch.setattr(job, "collect_roots", collect_then_commit)
    result = job.run(spark, _plan(wh, "db.ev", "--force", "--older-than", str(int(time.time() * 1000) - 1000), "--dry-run", "false"))
    assert committed and not [p for p in result["deleted_paths"] if "dt=d5" in p]
    assert {p.split("/db.db/", 1)[1] for p in result["deleted_paths"]} >= {p for p in old if p.startswith("ev/")}
    assert [r for r in _read(catalog.get_table("db.ev")) if r[1] == "d5"] == [(60, "d5", 60.0)]
    assert not [p for p in (Path(wh) / "db.db/ev/_orphan_trash").rglob("*") if p.is_file()]


def test_the_trash_of_a_clean_that_died_is_finished(spark: SparkSession, wh: str) -> None:
    """A clean killed between its move and its delete left a live file and an orphan in its trash:
    the distributed run moves the live one back (the table reads again) and deletes the other."""
    catalog, _, _ = _build(wh)
    table_dir = Path(wh) / "db.db/ev"
    live = next(p for p in (table_dir / "dt=d2/bucket-0").iterdir() if p.name.startswith("data-"))
    trash = table_dir / "_orphan_trash/1-dead"
    for p in (live, table_dir / "dt=d1/bucket-0/data-orphan-0.parquet"):
        (trash / p.relative_to(table_dir)).parent.mkdir(parents=True, exist_ok=True)
        p.rename(trash / p.relative_to(table_dir))
    result = job.run(spark, _plan(wh, "db.ev", "--dry-run", "false"))
    assert str(table_dir / "dt=d1/bucket-0/data-orphan-0.parquet") in result["deleted_paths"]
    assert live.exists() and not (table_dir / "_orphan_trash").exists()
    assert [r for r in _read(catalog.get_table("db.ev")) if r[1] == "d2"]
