"""Deterministic errors are terminal, and the error line names the root cause (issue 27, item 7).

With real local Spark: ``merge_into`` with a CAST_INVALID_INPUT source and with a NULL into a NOT
NULL key, ``ingest`` of a missing source path: one JSON line with ``retryable: false`` whose
``error`` names the cause (the Python worker's ``SchemaMismatchError``, Spark's condition), the
Airflow operators fail such a line without retries, and the table is unchanged. A Python worker's
own exception decides a ``PythonException``: transient ones (a timeout, a commit conflict, a reset
connection) stay retryable (more classes without Spark below). Every :mod:`paimon_core.exceptions` class is classified by its branch
of the tree (enumerated from the module, so a new error class is covered).
"""

from __future__ import annotations

import errno
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core import exceptions as paimon_exceptions
from paimon_core.exceptions import (
    CommitConflictError,
    PaimonError,
    SchemaMismatchError,
    TerminalError,
    TransientError,
)
from spark_jobs import merge_into
from spark_jobs.common.args import EXIT_FAILURE, UsageError
from spark_jobs.common.output import is_retryable, root_cause

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


def _table(wh: str) -> FileSystemCatalog:
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db", ignore_if_exists=True)
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array([10, 20, 30], pa.int64())}))
    return catalog


def _state(wh: str) -> tuple[Any, ...]:
    """The table's latest snapshot, rows, live data files and metadata files (snapshot, schema,
    manifest, index directories)."""
    t = FileSystemCatalog(wh).get_table("db.t")
    root = Path(wh) / "db.db" / "t"
    meta = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "bucket-" not in str(p))
    live = sorted(e.file.file_name for e in t.new_file_store_scan().live_entries(t.latest_snapshot()))
    return t.snapshot_manager.latest_snapshot_id(), sorted(t.to_arrow().to_pylist(), key=str), live, meta


def _data_files(wh: str) -> list[str]:
    return sorted(p.name for p in (Path(wh) / "db.db" / "t").rglob("bucket-*/*") if p.is_file())


def _merge(capsys: pytest.CaptureFixture[str], wh: str, view_sql: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = merge_into.main(
        [
            "--warehouse", wh, "--no-ledger", "--table", "db.t",
            "--source_sqls", f"CREATE OR REPLACE TEMPORARY VIEW S AS {view_sql}",
            "--source_table", "S", "--merge_condition", "T.id = S.id",
            "--matched_upsert_setting", "v = S.v", "--not_matched_insert_values", "*",
        ]
    )  # fmt: skip
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return rc, json.loads(lines[0])


def _terminal_for_airflow(line: dict[str, Any]) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.utils.errors import raise_for_job_error

    with pytest.raises(AirflowFailException):
        raise_for_job_error("merge_into", line, returncode=EXIT_FAILURE)


@pytest.mark.parametrize(
    ("view_sql", "needles"),
    [
        ("SELECT CAST('abc' AS BIGINT) AS id, 5L AS v", ("[CAST_INVALID_INPUT]", "'abc'")),
        (
            "SELECT * FROM VALUES (CAST(NULL AS BIGINT), 5L), (9L, 6L) AS s(id, v)",
            ("SchemaMismatchError: Column 'id' is NOT NULL",),
        ),
    ],
    ids=["cast", "null-key"],
)
def test_merge_into_deterministic_errors_are_terminal(
    spark: Any, wh: str, capsys: pytest.CaptureFixture[str], view_sql: str, needles: tuple[str, ...]
) -> None:
    _table(wh)
    before, files = _state(wh), _data_files(wh)
    rc, line = _merge(capsys, wh, view_sql)
    assert rc == EXIT_FAILURE and line["status"] == "error", line
    assert line["retryable"] is False, line
    for needle in needles:
        assert needle in line["error"], line
    assert "\n" not in line["error"] and "An exception was thrown from the Python worker" not in line["error"]
    assert _state(wh) == before
    if "CAST" in needles[0]:  # fails reading the source: no task writes
        assert _data_files(wh) == files
    # (NULL key: a task whose rows were valid may have written a file before the job failed; no
    # snapshot names it, remove_orphan_files deletes it)
    _terminal_for_airflow(line)


def test_ingest_missing_source_path_is_terminal(wh: str, tmp_path: Path) -> None:
    """``python -m spark_jobs ingest`` (its own Spark) of a path that does not exist."""
    _table(wh)
    before = _state(wh)
    missing = tmp_path / "nope" / "events.parquet"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-m", "spark_jobs", "ingest", "--warehouse", wh, "--table", "db.t", "--no-ledger",
         "--source", str(missing), "--master", "local[1]", "--conf", "spark.ui.enabled=false"],
        capture_output=True, text=True, timeout=300, env=env, cwd="/",
    )  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert proc.returncode == EXIT_FAILURE and len(lines) == 1, (proc.stdout, proc.stderr[-3000:])
    line = json.loads(lines[0])
    assert line["retryable"] is False and "[PATH_NOT_FOUND]" in line["error"] and str(missing) in line["error"], line
    assert _state(wh) == before


def test_missing_paths_in_spark_are_terminal(spark: Any, tmp_path: Path) -> None:
    for read in (
        lambda: spark.read.parquet(str(tmp_path / "none.parquet")),
        lambda: spark.read.format("csv").load(str(tmp_path / "none")),
        lambda: spark.table("no_such_db.no_such_view"),
    ):
        with pytest.raises(Exception) as info:
            read()
        cause = root_cause(info.value)
        assert cause.condition in ("PATH_NOT_FOUND", "TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"), cause
        assert is_retryable(info.value) is False, cause


def _raise_in_worker(error: BaseException) -> Iterator[Any]:
    raise error
    yield  # pragma: no cover - a generator for mapInArrow


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (SchemaMismatchError("Column 'id' is NOT NULL"), False),
        (PermissionError(errno.EACCES, "Permission denied", "/data/x"), False),
        (TimeoutError("read timed out"), True),
        (CommitConflictError("conflict"), True),
        (RuntimeError("something unexpected"), True),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_python_worker_errors_are_classified_by_the_worker_exception(
    spark: Any, error: BaseException, retryable: bool
) -> None:
    df = spark.range(1).mapInArrow(lambda _batches: _raise_in_worker(error), "id long")
    with pytest.raises(Exception) as info:
        df.collect()
    assert type(info.value).__name__ == "PythonException"
    cause = root_cause(info.value)
    assert cause.type_name == type(error).__name__ and str(error) in cause.message, cause
    assert is_retryable(info.value) is retryable, cause


# --- without Spark: the classes ------------------------------------------------------------


def _paimon_error_classes() -> list[type[PaimonError]]:
    return [
        c
        for _, c in inspect.getmembers(paimon_exceptions, inspect.isclass)
        if issubclass(c, PaimonError) and c.__module__ == paimon_exceptions.__name__
    ]


@pytest.mark.parametrize("cls", _paimon_error_classes(), ids=lambda c: c.__name__)
def test_every_paimon_error_class_by_its_branch(cls: type[PaimonError]) -> None:
    error = cls("x")
    if issubclass(cls, TerminalError):
        assert is_retryable(error) is False
    elif issubclass(cls, TransientError):
        assert is_retryable(error) is True
    else:  # the roots: unknown, retried as the operators' contract says
        assert cls in (PaimonError, paimon_exceptions.CommitError), cls


class ThrottlingException(Exception):  # noqa: N818 - named like botocore's
    pass


def _chained() -> BaseException:
    try:
        raise SchemaMismatchError("Column 'id' is NOT NULL")
    except SchemaMismatchError as e:
        try:
            raise RuntimeError("write failed") from e
        except RuntimeError as outer:
            return outer


def _pyspark_value_error() -> BaseException:
    from pyspark.errors import PySparkValueError

    return PySparkValueError(errorClass="CANNOT_BE_NONE", messageParameters={"arg_name": "path"})


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (UsageError("--x"), False),
        ("unknown job", False),
        (ValueError("x"), False),
        (KeyError("x"), False),
        (TypeError("x"), False),
        (PermissionError(errno.EACCES, "denied"), False),
        (FileNotFoundError(errno.ENOENT, "missing"), False),
        (OSError(errno.EACCES, "denied"), False),
        (OSError(errno.ENOSPC, "disk full"), True),
        (OSError("disk"), True),
        (TimeoutError(), True),
        (ConnectionRefusedError(), True),
        (ThrottlingException("Rate exceeded"), True),
        (RuntimeError("executor lost"), True),
        (_chained(), False),
        (_pyspark_value_error(), False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_python_error_classes(error: BaseException | str, retryable: bool) -> None:
    assert is_retryable(error) is retryable
