"""``python -m spark_jobs reassign_row_id`` (Paimon's ``sys.reassign_row_id(table, partitions)``):
arguments by flag and by position, the dry run, and bad input: a clear error, exit 2 (usage) or 3
(refused), and no file of the table changed. No Spark session starts."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from spark_jobs import reassign_row_id as job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE
from tests.integration.procedure_helpers import run_job

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}


def _table(wh: str, name: str = "db.t", options: dict[str, str] | None = None, commits: int = 4) -> None:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table(name, SCHEMA, partition_keys=["dt"], options=DE if options is None else options)
    for i in range(commits):  # alternating partitions: interleaved row ids
        t.write_arrow(pa.table({"id": [2 * i, 2 * i + 1], "dt": ["ab"[i % 2]] * 2}, schema=SCHEMA))


def _state(wh: str) -> dict[str, bytes]:
    root = os.path.join(wh, "db.db", "t")
    out: dict[str, bytes] = {}
    for d, _, files in os.walk(root):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), root)] = fh.read()
    return out


def _ids(wh: str) -> dict[int, int]:
    t = FileSystemCatalog(wh).get_table("db.t")
    return {r["id"]: r["_ROW_ID"] for r in t.inspect.system_table("row_tracking").to_pylist()}


def _refused(wh: str, *args: str, capsys: pytest.CaptureFixture[str], rc: int) -> dict[str, Any]:
    before = _state(wh)
    code, out = run_job(job, wh, "--no-ledger", *args, capsys=capsys)
    assert code == rc and out["status"] == "error" and out["retryable"] is False, out
    assert _state(wh) == before, f"reassign_row_id {args} changed the table"
    return out


def test_flags_positional_and_dry_run(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    wh = str(tmp_path / "warehouse")
    _table(wh)
    assert _ids(wh) == {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
    before = _state(wh)
    rc, out = run_job(job, wh, "--partitions", "dt=a", "--dry-run", capsys=capsys)
    assert rc == 0 and out["result"].startswith("Dry run.") and out["partitions"] == ["dt=a"] and _state(wh) == before
    rc, out = run_job(job, wh, "dt=a", capsys=capsys)  # positionally, as CALL sys.reassign_row_id('db.t', 'dt=a')
    assert rc == 0 and out["result"].startswith("Success.") and (out["previous_snapshot_id"], out["new_snapshot_id"]) == (4, 5)
    assert _ids(wh) == {0: 8, 1: 9, 2: 2, 3: 3, 4: 10, 5: 11, 6: 6, 7: 7}
    rc, out = run_job(job, wh, "--partitions", "dt=a", capsys=capsys)
    assert rc == 0 and out["result"].startswith("Skipped.") and "no partition requires" in out["result"]
    rc, out = run_job(job, wh, capsys=capsys)  # all partitions: b is still interleaved
    assert rc == 0 and out["partitions"] == ["dt=b"] and out["next_row_id"] == 16
    assert _ids(wh) == {0: 8, 1: 9, 2: 12, 3: 13, 4: 10, 5: 11, 6: 14, 7: 15}


def test_bad_input_changes_nothing(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    wh = str(tmp_path / "warehouse")
    _table(wh)
    assert "names no partition" in _refused(wh, "--partitions", " ", capsys=capsys, rc=EXIT_USAGE)["error"]
    assert "partitions" in _refused(wh, "--partitions", ";;", capsys=capsys, rc=EXIT_USAGE)["error"]
    assert "given twice" in _refused(wh, "--partitions", "dt=a", "dt=b", capsys=capsys, rc=EXIT_USAGE)["error"]
    assert "too many arguments" in _refused(wh, "dt=a", "dt=b", capsys=capsys, rc=EXIT_USAGE)["error"]
    assert "Partition spec 'maybe'" in _refused(wh, "maybe", capsys=capsys, rc=EXIT_USAGE)["error"]
    out = _refused(wh, "--partitions", "id=1", capsys=capsys, rc=EXIT_FAILURE)
    assert "non-partition column(s) ['id']" in out["error"] and out["error_type"] == "InvalidArgumentError"


@pytest.mark.parametrize(
    ("options", "commits", "message"),
    [
        ({}, 1, "must enable 'row-tracking.enabled=true'"),
        ({"row-tracking.enabled": "true"}, 1, "must enable 'data-evolution.enabled=true'"),
        (DE, 0, "Cannot reassign row IDs for empty table"),
    ],
    ids=["plain", "row-tracking-only", "empty"],
)
def test_refused_tables(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], options: dict[str, str], commits: int, message: str
) -> None:
    wh = str(tmp_path / "warehouse")
    _table(wh, options=options, commits=commits)
    assert message in _refused(wh, capsys=capsys, rc=EXIT_FAILURE)["error"]
