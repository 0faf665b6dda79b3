"""``python -m spark_jobs remove_unexisting_files``: a table whose data files were deleted behind
its back reads again after the job; the dry run lists the files per partition and changes nothing;
bad inputs fail cleanly; pypaimon reads the repaired table."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.exceptions import DataFileNotFoundError
from spark_jobs import remove_unexisting_files as job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import cli, data_files, ids, make_table, metadata_state, reload, run_job


def _damage(wh: str) -> tuple[str, str]:
    """Delete one data file of partition d1 and the whole bucket directory of d2 (both commits'
    files there); the paths deleted, relative to the table."""
    t = reload(wh)
    t.write_arrow(pa.table({"id": pa.array([23, 24, 25], pa.int64()), "dt": ["d2"] * 3}))  # a 2nd file in d2
    root = os.path.join(wh, "db.db", "t")
    d1 = sorted(os.listdir(os.path.join(root, "dt=d1", "bucket-0")))[0]
    os.remove(os.path.join(root, "dt=d1", "bucket-0", d1))
    for name in os.listdir(os.path.join(root, "dt=d2", "bucket-0")):
        os.remove(os.path.join(root, "dt=d2", "bucket-0", name))
    os.rmdir(os.path.join(root, "dt=d2", "bucket-0"))
    return os.path.join("dt=d1", "bucket-0", d1), os.path.join("dt=d2", "bucket-0")


def test_remove_unexisting_files_dry_run_then_repair(
    wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    make_table(wh, 4)
    d1_file, _ = _damage(wh)
    with pytest.raises(DataFileNotFoundError):
        reload(wh).to_arrow()
    before, files_before = metadata_state(wh), data_files(wh)

    rc, out = run_job(job, wh, "--dry-run", capsys=capsys)
    assert (
        rc == 0
        and out["status"] == "ok"
        and out["job"] == "remove_unexisting_files"
        and out["dry_run"] is True
    )
    assert out["snapshot_id"] == 5 and out["checked_files"] == 5 and out["removed_files"] == 3
    assert out["removed_rows"] == 9 and out["committed_snapshot_id"] is None
    parts = {p["partition"]: p for p in out["partitions"]}
    assert sorted(parts) == ["dt=d1", "dt=d2"] and parts["dt=d1"]["row_count"] == 3
    assert [os.path.relpath(f, os.path.join(wh, "db.db", "t")) for f in parts["dt=d1"]["files"]] == [d1_file]
    assert len(parts["dt=d2"]["files"]) == 2 and all("/dt=d2/bucket-0/" in f for f in parts["dt=d2"]["files"])
    assert metadata_state(wh) == before and data_files(wh) == files_before
    rc, out = run_job(job, wh, "true", capsys=capsys)  # Paimon's positional dry_run
    assert rc == 0 and out["dry_run"] is True and metadata_state(wh) == before

    rc, out = cli(
        "remove_unexisting_files",
        "--warehouse",
        wh,
        "--table",
        "db.t",
        "--dry-run",
        "false",
        "--parallelism",
        "2",
    )
    assert rc == 0 and out["dry_run"] is False and out["removed_files"] == 3
    assert out["committed_snapshot_id"] == 6 and out["commit_kind"] == "OVERWRITE"
    t = reload(wh)
    assert t.latest_snapshot().commit_kind.value == "OVERWRITE"
    assert ids(t) == [0, 1, 2, 30, 31, 32]  # d0 and d3 intact; d1, d2 rows were lost with their files
    assert data_files(wh) == files_before  # nothing on disk was deleted
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == [0, 1, 2, 30, 31, 32]

    rc, out = run_job(job, wh, "--dry-run", "false", capsys=capsys)  # nothing left to remove: no commit
    assert rc == 0 and out["removed_files"] == 0 and out["committed_snapshot_id"] is None
    assert reload(wh).latest_snapshot().id == 6


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--dry-run", "maybe"], EXIT_USAGE, "true or false"),
        (["--parallelism", "0"], EXIT_USAGE, "parallelism"),  # the shared argument rules: exit 2
        (["--parallelism", "lots"], EXIT_USAGE, "integer"),
        (["false", "2", "extra"], EXIT_USAGE, "too many"),
    ],
)
def test_remove_unexisting_files_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    make_table(wh, 3)
    _damage(wh)
    before = metadata_state(wh)
    rc, out = run_job(job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before


def test_remove_unexisting_files_on_a_missing_table(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    make_table(wh, 1)
    rc, out = run_job(job, wh, "--table", "db.nope", "--dry-run", "false", capsys=capsys)
    assert rc == EXIT_FAILURE and out["error_type"] == "TableNotFoundError"
