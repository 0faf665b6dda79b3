"""Branch procedure jobs: create_branch, delete_branch, fast_forward (``python -m spark_jobs <job>``,
Paimon's argument names and order: table, branch, tag).

Each: its documented behaviour, its bad inputs (clear error, exit code, table unchanged), and
pypaimon reading the branch and the fast-forwarded table afterwards.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from spark_jobs import create_branch as create_job
from spark_jobs import delete_branch as delete_job
from spark_jobs import fast_forward as ff_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import cli, ids, make_table, reload, run_job

JOBS_HERE = ("create_branch", "delete_branch", "fast_forward")


def _state(wh: str) -> dict[str, bytes]:
    """Every file of db.t (metadata, branches and data) with its content."""
    root = os.path.join(wh, "db.db", "t")
    out: dict[str, bytes] = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def _branch_ids(wh: str, branch: str) -> list[int]:
    return ids(FileSystemCatalog(wh).get_table(f"db.t$branch_{branch}"))


@pytest.mark.parametrize("name", JOBS_HERE)
def test_registered_documented_and_spark_free(name: str) -> None:
    from spark_jobs import JOBS

    module = importlib.import_module(JOBS[name])
    assert module.JOB == name and "no Spark" in " ".join((module.__doc__ or "").split())
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0


def test_create_write_fast_forward_delete_read_by_pypaimon(
    wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    t = make_table(wh, 3)
    t.maintenance.create_tag("t1", 1)
    rc, out = run_job(create_job, wh, "b1", "t1", capsys=capsys)  # positional: branch, tag
    assert rc == 0 and out["status"] == "ok" and out["job"] == "create_branch"
    assert (out["branch"], out["tag"], out["snapshot_id"], out["created"]) == ("b1", "t1", 1, True)
    rc, out = run_job(create_job, wh, "--branch", "empty", capsys=capsys)
    assert rc == 0 and out["snapshot_id"] is None and out["tag"] is None
    rc, out = run_job(create_job, wh, "--branch", "b1", "--ignoreIfExists", capsys=capsys)
    assert rc == 0 and out["created"] is False
    assert _branch_ids(wh, "b1") == [0, 1, 2] and _branch_ids(wh, "empty") == []

    FileSystemCatalog(wh).get_table("db.t$branch_b1").write_arrow(
        pa.table({"id": pa.array([100, 101], pa.int64()), "dt": ["b", "b"]})
    )
    assert sorted(pypaimon.read(wh, "db.t$branch_b1").column("id").to_pylist()) == [0, 1, 2, 100, 101]
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == ids(reload(wh)) == [
        0, 1, 2, 10, 11, 12, 20, 21, 22,
    ]  # fmt: skip

    before = _state(wh)
    rc, out = run_job(ff_job, wh, "b1", "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and _state(wh) == before
    assert out["removed_snapshots"] == [1, 2, 3] and out["copied_snapshots"] == [1, 2]
    rc, out = run_job(ff_job, wh, "--branch", "b1", "--dry-run", "false", capsys=capsys)
    assert (
        rc == 0 and out["job"] == "fast_forward" and out["into"] == "main" and out["latest_snapshot_id"] == 2
    )
    assert ids(reload(wh)) == [0, 1, 2, 100, 101]
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == [0, 1, 2, 100, 101]

    data_before = {k for k in _state(wh) if "bucket-" in k}
    rc, out = run_job(delete_job, wh, "b1,empty", "--dry-run", capsys=capsys)
    assert rc == 0 and out["deleted_branches"] == ["b1", "empty"] and reload(wh).branches() == ["b1", "empty"]
    rc, out = run_job(delete_job, wh, "--branch", "b1,empty", "--dry-run", "false", capsys=capsys)
    assert (
        rc == 0
        and out["job"] == "delete_branch"
        and out["deleted_snapshots"] == 2
        and out["deleted_tags"] == 1
    )
    assert reload(wh).branches() == [] and {k for k in _state(wh) if "bucket-" in k} == data_before
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == [0, 1, 2, 100, 101]


@pytest.mark.parametrize(
    ("job", "args", "code", "needle"),
    [
        (create_job, [], EXIT_USAGE, "branch"),  # branch is required
        (create_job, ["main"], EXIT_FAILURE, "default branch"),
        (create_job, ["123", "t1"], EXIT_FAILURE, "pure numeric"),
        (create_job, ["a/b"], EXIT_FAILURE, "Invalid branch name"),
        (create_job, ["x", "nope"], EXIT_FAILURE, "nope"),  # unknown tag
        (create_job, ["old"], EXIT_FAILURE, "already exists"),
        (create_job, ["x", "--ignore-if-exists", "maybe"], EXIT_USAGE, "true or false"),
        (delete_job, ["nope"], EXIT_FAILURE, "nope"),
        (delete_job, ["old,nope"], EXIT_FAILURE, "nope"),  # one missing: none deleted
        (delete_job, ["old,nope", "--dry-run"], EXIT_FAILURE, "nope"),
        (delete_job, ["../x"], EXIT_FAILURE, "Invalid branch name"),
        (ff_job, ["main"], EXIT_FAILURE, "fast-forward"),
        (ff_job, ["nope"], EXIT_FAILURE, "nope"),
        (ff_job, ["empty"], EXIT_FAILURE, "does not have snapshot"),
        (ff_job, [], EXIT_USAGE, "branch"),
    ],
)
def test_bad_inputs_fail_clearly_and_change_nothing(
    wh: str, capsys: pytest.CaptureFixture[str], job: Any, args: list[str], code: int, needle: str
) -> None:
    t = make_table(wh, 2)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("old", "t1")
    t.maintenance.create_branch("empty")
    before = _state(wh)
    rc, out = run_job(job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"], out
    assert _state(wh) == before


def test_each_job_through_python_m_spark_jobs(wh: str) -> None:
    t = make_table(wh, 2)
    t.maintenance.create_tag("t1", 1)
    common = ["--warehouse", wh, "--table", "db.t"]
    rc, out = cli("create_branch", *common, "--branch", "b", "--tag", "t1")
    assert rc == 0 and out["branch"] == "b" and out["snapshot_id"] == 1
    rc, out = cli("fast_forward", *common, "b", "--dry-run", "false")
    assert rc == 0 and out["removed_snapshots"] == [1, 2] and ids(reload(wh)) == [0, 1, 2]
    rc, out = cli("delete_branch", *common, "--branch", "b", "--dry-run", "false")
    assert rc == 0 and out["deleted_branches"] == ["b"] and reload(wh).branches() == []
    rc, out = cli("delete_branch", *common, "b", "--dry-run", "false")
    assert rc == EXIT_FAILURE and out["status"] == "error" and "doesn't exist" in out["error"]


def test_spark_reads_and_writes_a_branch(spark: Any, wh: str) -> None:
    t = make_table(wh, 2)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_branch("b", "t1")
    df = spark.createDataFrame([(100, "b"), (101, "b")], "id long, dt string")
    df.write.format("paimon").mode("append").option("warehouse", wh).option("branch", "b").save("db.t")
    by_ident = spark.read.format("paimon").option("warehouse", wh).load("db.t$branch_b")
    by_option = spark.read.format("paimon").option("warehouse", wh).option("branch", "b").load("db.t")
    for got in (by_ident, by_option):
        assert sorted(r.id for r in got.collect()) == [0, 1, 2, 100, 101]
    assert _branch_ids(wh, "b") == [0, 1, 2, 100, 101]
    assert ids(reload(wh)) == [0, 1, 2, 10, 11, 12]  # main unchanged
