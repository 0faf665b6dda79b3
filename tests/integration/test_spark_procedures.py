"""The metadata procedure jobs: expire_snapshots, create_tag, delete_tag, rollback_to, reset_consumer.

Each job is called in-process (``main(argv)``) and once through ``python -m spark_jobs``; the
tests check the one JSON line, the table state afterwards, and the exit code of bad arguments.
None of these jobs needs Spark: the tests also check that no Spark session (not even pyspark)
is loaded.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.table.table import FileStoreTable
from spark_jobs import JOBS
from spark_jobs import create_tag as create_tag_job
from spark_jobs import delete_tag as delete_tag_job
from spark_jobs import expire_snapshots as expire_job
from spark_jobs import reset_consumer as reset_consumer_job
from spark_jobs import rollback_to as rollback_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

PROCEDURES = ("expire_snapshots", "create_tag", "delete_tag", "rollback_to", "reset_consumer")
FUTURE = "2999-01-01T00:00:00"  # an older_than that every snapshot is older than


def _table(wh: str, commits: int = 4) -> FileStoreTable:
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    t = catalog.create_table("db.t", schema, partition_keys=["dt"])
    for i in range(commits):
        t.write_arrow(
            pa.table({"id": pa.array([i * 10 + j for j in range(3)], pa.int64()), "dt": [f"d{i}"] * 3})
        )
    return t


def _reload(wh: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table("db.t")


def _run(module: Any, wh: str, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """Run a job in-process; its exit code and its one JSON line."""
    capsys.readouterr()
    rc = module.main(["--warehouse", wh, "--table", "db.t", *args])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return rc, json.loads(lines[0])


def _ids(wh: str) -> list[int]:
    return _reload(wh).snapshot_manager.list_snapshot_ids()


# --------------------------------------------------------------------------------------------
# expire_snapshots
# --------------------------------------------------------------------------------------------


def test_expire_snapshots_flags(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh, 5)
    rows = t.to_arrow().num_rows
    # Snapshots younger than snapshot.time-retained (1 h) are kept down to retain_max ...
    rc, out = _run(expire_job, wh, "--retain-max", "2", "--retain-min", "1", capsys=capsys)
    assert rc == 0 and out["status"] == "ok" and out["job"] == "expire_snapshots" and out["table"] == "db.t"
    assert out["expired_snapshot_ids"] == [1, 2, 3] and out["dry_run"] is False
    assert _ids(wh) == [4, 5]
    # ... and with an older_than they are all older than, down to retain_min (Java's rule).
    rc, out = _run(
        expire_job, wh, "--retain-max", "2", "--retain-min", "1", "--older-than", FUTURE, capsys=capsys
    )
    assert rc == 0 and out["expired_snapshot_ids"] == [4]
    assert _ids(wh) == [5]
    assert _reload(wh).to_arrow().num_rows == rows  # expiry never loses live data


def test_expire_snapshots_positional_underscore_and_dry_run(
    wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(wh, 4)
    rc, out = _run(
        expire_job, wh, "--dry-run", "1", "1", FUTURE, capsys=capsys
    )  # retain_max, retain_min, older_than
    assert rc == 0 and out["dry_run"] is True and out["expired_snapshot_ids"] == [1, 2, 3]
    assert _ids(wh) == [1, 2, 3, 4]  # nothing deleted
    rc, out = _run(
        expire_job,
        wh,
        "--retain_max",
        "3",
        "--retain_min",
        "1",
        "--older_than",
        FUTURE,
        "--max_deletes",
        "1",
        capsys=capsys,
    )
    assert rc == 0 and out["expired_snapshot_ids"] == [1]
    assert _ids(wh) == [2, 3, 4]


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--retain-max", "x"], EXIT_USAGE, "integer"),
        (["--retain-max", "2", "3"], EXIT_USAGE, "twice"),
        (["1", "1", FUTURE, "5", "extra"], EXIT_USAGE, "too many"),
        (["--retain-max", "0"], EXIT_FAILURE, "retain_max"),
        (["--retain-max", "1", "--retain-min", "3"], EXIT_FAILURE, "retain_min"),
        (["--older-than", "yesterday-ish"], EXIT_FAILURE, "older_than"),
        (["--no-such-flag"], EXIT_USAGE, "unrecognized"),
    ],
)
def test_expire_snapshots_bad_arguments(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    _table(wh, 3)
    rc, out = _run(expire_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and out["job"] == "expire_snapshots"
    assert needle in out["error"]
    assert _ids(wh) == [1, 2, 3]  # nothing changed


def test_missing_table_and_bad_table_argument(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    FileSystemCatalog(wh).create_database("db")
    rc, out = _run(expire_job, wh, "--retain-max", "1", capsys=capsys)
    assert rc == EXIT_FAILURE and out["error_type"] == "TableNotFoundError"
    capsys.readouterr()
    assert expire_job.main(["--warehouse", wh, "--table", "no_dot"]) == EXIT_USAGE
    assert json.loads(capsys.readouterr().out)["status"] == "error"
    assert expire_job.main(["--warehouse", wh]) == EXIT_USAGE  # --table is required


# --------------------------------------------------------------------------------------------
# create_tag / delete_tag
# --------------------------------------------------------------------------------------------


def test_create_tag(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    _table(wh, 3)
    rc, out = _run(
        create_tag_job, wh, "--tag", "v1", "--snapshot", "2", "--time-retained", "1 d", capsys=capsys
    )
    assert rc == 0 and out["job"] == "create_tag" and out["tag"] == "v1" and out["snapshot_id"] == 2
    t = _reload(wh)
    assert t.tag_manager.get("v1").id == 2
    assert t.inspect.system_table("tags").column("tag_name").to_pylist() == ["v1"]
    rc, out = _run(create_tag_job, wh, "v2", capsys=capsys)  # positional: tag; snapshot defaults to latest
    assert rc == 0 and out["snapshot_id"] == 3 and _reload(wh).tag_manager.get("v2").id == 3
    rc, out = _run(create_tag_job, wh, "--tag_name", "v3", "--snapshot_id", "1", capsys=capsys)
    assert rc == 0 and _reload(wh).tag_manager.get("v3").id == 1


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--tag", "v1", "--snapshot", "1"], EXIT_FAILURE),  # v1 exists already
        (["--tag", "new", "--snapshot", "99"], EXIT_FAILURE),  # no such snapshot
        (["--tag", "new", "--snapshot", "abc"], EXIT_USAGE),
        (["--snapshot", "1"], EXIT_USAGE),  # tag is required
        (["--tag", "  "], EXIT_USAGE),
        (["--tag", "new", "--time-retained", "soon"], EXIT_FAILURE),
    ],
)
def test_create_tag_bad_arguments(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int
) -> None:
    t = _table(wh, 2)
    t.maintenance.create_tag("v1", 2)
    rc, out = _run(create_tag_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error"
    assert _reload(wh).tag_manager.list_names() == ["v1"] and _reload(wh).tag_manager.get("v1").id == 2


def test_delete_tag(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh, 3)
    for name, sid in (("a", 1), ("b", 2), ("c", 3)):
        t.maintenance.create_tag(name, sid)
    rc, out = _run(delete_tag_job, wh, "--tag", "a,b", "--dry-run", capsys=capsys)
    assert (
        rc == 0
        and out["job"] == "delete_tag"
        and out["deleted_tags"] == ["a", "b"]
        and out["dry_run"] is True
    )
    assert _reload(wh).tag_manager.list_names() == ["a", "b", "c"]
    rc, out = _run(delete_tag_job, wh, "--tag", "a, b", "--dry-run", "false", capsys=capsys)
    assert rc == 0 and out["status"] == "ok" and out["deleted_tags"] == ["a", "b"] and out["dry_run"] is False
    assert _reload(wh).tag_manager.list_names() == ["c"]
    rc, out = _run(delete_tag_job, wh, "c", "--dry-run", "false", capsys=capsys)  # positional
    assert rc == 0 and _reload(wh).tag_manager.list_names() == []
    assert _reload(wh).to_arrow().num_rows == 9


@pytest.mark.parametrize(
    ("args", "code"), [(["--tag", "nope"], EXIT_FAILURE), (["--tag", "a,,b"], EXIT_USAGE), ([], EXIT_USAGE)]
)
def test_delete_tag_bad_arguments(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int
) -> None:
    t = _table(wh, 2)
    t.maintenance.create_tag("a", 1)
    t.maintenance.create_tag("b", 2)
    rc, out = _run(delete_tag_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error"
    assert _reload(wh).tag_manager.list_names() == ["a", "b"]


# --------------------------------------------------------------------------------------------
# rollback_to
# --------------------------------------------------------------------------------------------


def _rows_at(wh: str, snapshot: int) -> list[int]:
    return sorted(_reload(wh).copy({"scan.snapshot-id": str(snapshot)}).to_arrow().column("id").to_pylist())


def test_rollback_to_snapshot_tag_and_version(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh, 5)
    t.maintenance.create_tag("at2", 2)
    at3, at2 = _rows_at(wh, 3), _rows_at(wh, 2)
    rc, out = _run(rollback_job, wh, "--snapshot", "4", "--dry-run", capsys=capsys)
    assert (
        rc == 0 and out["target_snapshot_id"] == 4 and out["dry_run"] is True and _ids(wh) == [1, 2, 3, 4, 5]
    )
    rc, out = _run(rollback_job, wh, "3", "--dry-run", "false", capsys=capsys)  # positional version: a snapshot id
    assert (
        rc == 0
        and out["job"] == "rollback_to"
        and out["target_snapshot_id"] == 3
        and out["target_tag"] is None
    )
    assert _reload(wh).latest_snapshot().id == 3  # type: ignore[union-attr]
    assert sorted(_reload(wh).to_arrow().column("id").to_pylist()) == at3
    rc, out = _run(rollback_job, wh, "--tag", "at2", "--dry-run", "false", capsys=capsys)
    assert rc == 0 and out["target_tag"] == "at2" and out["target_snapshot_id"] == 2
    assert _reload(wh).latest_snapshot().id == 2  # type: ignore[union-attr]
    assert sorted(_reload(wh).to_arrow().column("id").to_pylist()) == at2


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--snapshot", "2", "--tag", "t"], EXIT_USAGE),
        ([], EXIT_USAGE),
        (["--snapshot", "two"], EXIT_USAGE),
        (["--snapshot", "42"], EXIT_FAILURE),
        (["--tag", "missing"], EXIT_FAILURE),
        (["--version", "missing"], EXIT_FAILURE),
    ],
)
def test_rollback_to_bad_arguments(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int
) -> None:
    _table(wh, 3)
    rc, out = _run(rollback_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error"
    assert _ids(wh) == [1, 2, 3]


# --------------------------------------------------------------------------------------------
# reset_consumer
# --------------------------------------------------------------------------------------------


def test_reset_consumer(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(wh, 3)
    t.consumer_manager.reset_consumer("c1", Consumer(3))
    rc, out = _run(reset_consumer_job, wh, "--consumer-id", "c1", "--next-snapshot-id", "2", capsys=capsys)
    assert rc == 0 and out["job"] == "reset_consumer" and out["deleted"] is False
    assert (
        out["consumer_id"] == "c1" and out["previous_next_snapshot_id"] == 3 and out["next_snapshot_id"] == 2
    )
    assert _reload(wh).consumer_manager.consumers() == {"c1": 2}
    rc, out = _run(reset_consumer_job, wh, "--consumerId", "c2", "--nextSnapshotId", "1", capsys=capsys)
    assert rc == 0 and _reload(wh).consumer_manager.consumers() == {"c1": 2, "c2": 1}
    rc, out = _run(reset_consumer_job, wh, "c1", capsys=capsys)  # positional, no next id: delete
    assert rc == 0 and out["deleted"] is True
    assert _reload(wh).consumer_manager.consumers() == {"c2": 1}


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--next-snapshot-id", "2"], EXIT_USAGE),  # consumer id is required
        (["--consumer-id", "c1", "--next-snapshot-id", "x"], EXIT_USAGE),
        (["--consumer-id", "c1", "--next-snapshot-id", "0"], EXIT_FAILURE),
        (["--consumer-id", "a/b", "--next-snapshot-id", "2"], EXIT_FAILURE),
    ],
)
def test_reset_consumer_bad_arguments(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int
) -> None:
    t = _table(wh, 3)
    t.consumer_manager.reset_consumer("c1", Consumer(3))
    rc, out = _run(reset_consumer_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error"
    assert _reload(wh).consumer_manager.consumers() == {"c1": 3}


# --------------------------------------------------------------------------------------------
# through `python -m spark_jobs`, and no Spark
# --------------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spark_jobs", *args], capture_output=True, text=True, timeout=300, cwd="/"
    )


def _line(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (proc.stdout, proc.stderr[-2000:])
    out: dict[str, Any] = json.loads(lines[0])
    return out


def test_every_procedure_through_python_m_spark_jobs(wh: str) -> None:
    t = _table(wh, 4)
    t.maintenance.create_tag("old", 1)
    t.consumer_manager.reset_consumer("c1", Consumer(4))
    base = ("--warehouse", wh, "--table", "db.t")
    runs = [
        (
            ("create_tag", *base, "--tag", "keep", "--snapshot", "3"),
            lambda s: s.tag_manager.get("keep").id == 3,
        ),
        (("delete_tag", *base, "--tag", "old", "--dry-run", "false"), lambda s: s.tag_manager.list_names() == ["keep"]),
        (
            ("reset_consumer", *base, "--consumer_id", "c1", "--next_snapshot_id", "3"),
            lambda s: s.consumer_manager.consumers() == {"c1": 3},
        ),
        (("rollback_to", *base, "--snapshot", "3", "--dry-run", "false"), lambda s: s.latest_snapshot().id == 3),
        (
            ("expire_snapshots", *base, "--retain-max", "1", "--retain-min", "1", "--older-than", FUTURE),
            lambda s: s.snapshot_manager.list_snapshot_ids() == [3],  # the consumer (next 3) holds 3
        ),
    ]
    for args, check in runs:
        proc = _cli(*args)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = _line(proc)
        assert out["job"] == args[0] and out["status"] == "ok" and out["table"] == "db.t"
        assert check(_reload(wh)), (args[0], out)
    bad = _cli("rollback_to", *base, "--dry-run", "false")
    assert bad.returncode == EXIT_USAGE and _line(bad)["status"] == "error"
    assert _cli("expire_snapshots", *base, "--retain-max", "nope").returncode == EXIT_USAGE


def test_procedures_never_load_spark(wh: str) -> None:
    _table(wh, 2)
    script = (
        "import sys\n"
        "from spark_jobs.__main__ import main\n"
        f"rc = main(['create_tag', '--warehouse', {wh!r}, '--table', 'db.t', '--tag', 'x'])\n"
        f"rc += main(['expire_snapshots', '--warehouse', {wh!r}, '--table', 'db.t', '--dry-run'])\n"
        f"rc += main(['rollback_to', '--warehouse', {wh!r}, '--table', 'db.t', '1', '--dry-run'])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j'))\n"
        "assert not loaded, loaded\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.splitlines()) == 3


@pytest.mark.parametrize("job", PROCEDURES)
def test_registered_and_documented(job: str) -> None:
    module = importlib.import_module(JOBS[job])
    assert callable(module.main)
    assert "Spark session" in (module.__doc__ or "")
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0
