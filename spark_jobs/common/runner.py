"""The one runner of every ``python -m spark_jobs <job>``: :func:`run_job`.

A job module declares what it does (a parser and a body); the runner owns everything around it,
the same way for every job:

* logging on stderr (:func:`~spark_jobs.common.output.configure_logging`);
* ``--result-file`` (:func:`~spark_jobs.common.args.use_result_file`: even the line of an argument
  the parser refuses reaches it);
* parsing: a :class:`~spark_jobs.common.args.UsageError` prints the error line and exits 2
  (``EXIT_USAGE``), however late the body raises it;
* the maintenance ledger: ``ledger="table"`` records the run as one row of ``--table`` (the body
  opens the table with :meth:`JobContext.table`, which names the row's table), ``"tables"`` lets
  the body record one row per table it maintains (:meth:`JobContext.record`), ``"off"`` records
  nothing (``ingest``, which is not maintenance);
* the Spark session: only a job declared ``needs_spark=True`` may have one, and only when its body
  asks (:meth:`JobContext.spark`, after its cheap checks: a missing table fails before a JVM
  starts); the runner stops it at the end unless it was already active (a notebook's, a test's);
* the one JSON line: the body's payload plus ``job``, ``status`` and ``table``; a payload whose
  ``status`` is ``error`` (a multi-table job where some table failed) exits with the code its
  ``retryable`` says;
* errors: every exception becomes the error line (:func:`~spark_jobs.common.output.emit_error`,
  its root cause and ``retryable``) and the exit code :data:`EXIT_TERMINAL` (3) or
  :data:`EXIT_TRANSIENT` (75), one log line each (a traceback only for errors of no known kind).

Multi-table jobs (``compact_database``, ``remove_orphan_files --table DB.*``) skip a table of a kind
paimon_core refuses (:class:`~paimon_core.exceptions.UnsupportedTableKindError`) and maintain the
others: :func:`open_or_skip` gives its :class:`SkippedTable` (listed in the result with the reason,
and a ``skipped`` ledger row).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from paimon_core.exceptions import PaimonError, UnsupportedTableKindError
from paimon_core.ledger import ActionRecording
from spark_jobs.common.args import EXIT_USAGE, JobConfig, UsageError, use_result_file
from spark_jobs.common.ledger import job_catalog, job_recording
from spark_jobs.common.output import (
    EXIT_OK,
    configure_logging,
    emit,
    emit_error,
    exit_code_for,
    set_result_file,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core import FileStoreTable, FileSystemCatalog

__all__ = ["JobArgs", "JobContext", "JobDeclarationError", "LedgerMode", "SkippedTable", "open_or_skip", "run_job"]

logger = logging.getLogger(__name__)

#: ``table``: one ledger row for ``--table``; ``tables``: the body records a row per table;
#: ``off``: no row (not maintenance).
LedgerMode = Literal["table", "tables", "off"]
#: ``--table`` of a job that takes none (:func:`spark_jobs.common.args.parse_job_args`).
NO_TABLE = "*.*"


class JobDeclarationError(TypeError):
    """A job's body did what its :func:`run_job` declaration excludes (Spark in a job declared
    without it, a per-table row in a job the runner records): a bug, so terminal."""


class JobArgs(Protocol):
    """What a job's parser returns: at least the common :class:`JobConfig` (a ``dry_run``
    attribute, where the job has one, marks the ledger row)."""

    @property
    def config(self) -> JobConfig: ...


A = TypeVar("A", bound=JobArgs)


@dataclass(frozen=True)
class SkippedTable:
    """A table a multi-table job left alone: its kind is one paimon_core refuses (``feature``)."""

    table: str
    reason: str
    error_type: str
    feature: str = ""

    @classmethod
    def of(cls, table: str, error: UnsupportedTableKindError) -> SkippedTable:
        return cls(table, str(error), type(error).__name__, error.feature)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "status": "skipped",
            "reason": self.reason,
            "error_type": self.error_type,
            "feature": self.feature,
        }


def open_or_skip(catalog: FileSystemCatalog, name: str, recording: ActionRecording) -> FileStoreTable | SkippedTable:
    """The table ``name`` (named to ``recording``), or, when paimon_core refuses its kind, the
    :class:`SkippedTable` (the recording then ends as a ``skipped`` row giving the reason). Any
    other error (a missing table ...) is raised."""
    try:
        table = catalog.get_table(name)
    except UnsupportedTableKindError as e:
        logger.warning("Skipping %s: %s", name, e)
        skipped = SkippedTable.of(name, e)
        recording.set_status("skipped")
        recording.set_result(skipped)
        return skipped
    recording.set_table(table)
    return table


class JobContext(Generic[A]):
    """What a job's body gets: its parsed arguments, the warehouse catalog, the ledger recording
    of the run, and the Spark session on demand."""

    def __init__(self, job: str, args: A, *, needs_spark: bool, ledger: LedgerMode, action: str) -> None:
        self.job = job
        self.args = args
        self.config: JobConfig = args.config
        self.action = action
        self.dry_run = bool(getattr(args, "dry_run", False))
        self.started = time.monotonic()
        #: the run's ledger row (``ledger="table"``); a recording that records nothing otherwise
        self.recording: ActionRecording = ActionRecording()
        self._ledger = ledger
        self._needs_spark = needs_spark
        self._catalog: FileSystemCatalog | None = None
        self._spark: SparkSession | None = None
        self._owns_spark = False

    @property
    def catalog(self) -> FileSystemCatalog:
        """The warehouse's catalog (made once)."""
        if self._catalog is None:
            self._catalog = job_catalog(self.config)
        return self._catalog

    @property
    def target(self) -> str:
        """What the job runs on, for log lines: ``--table``, else the warehouse."""
        return self.config.table if self.config.table != NO_TABLE else self.config.warehouse

    def table(self) -> FileStoreTable:
        """``--table``, opened (TableNotFoundError / DatabaseNotFoundError / UnsupportedTableKindError),
        and named to the run's ledger row."""
        table = self.catalog.get_table(self.config.table)
        self.recording.set_table(table)
        return table

    def record(self, name: str) -> contextlib.AbstractContextManager[ActionRecording]:
        """One ledger row for table ``name`` (a job with ``ledger="tables"``)."""
        if self._ledger != "tables":
            raise JobDeclarationError(f"{self.job}: record() is for jobs run with ledger='tables'")
        return job_recording(self.config, name, self.action, catalog=self.catalog, dry_run=self.dry_run)

    def spark(self) -> SparkSession:
        """The Spark session: created on the first call (or the active one reused)."""
        if not self._needs_spark:
            raise JobDeclarationError(f"{self.job} is run with needs_spark=False: it must not start Spark")
        if self._spark is None:
            from pyspark.sql import SparkSession

            from spark_jobs.common.session import get_spark

            existing = SparkSession.getActiveSession()  # a caller's session (a test, a notebook) stays up
            self._spark = get_spark(self.config.session_config())
            self._owns_spark = existing is None
        return self._spark

    def elapsed(self) -> float:
        """Seconds since the run started (3 decimals)."""
        return round(time.monotonic() - self.started, 3)

    def close(self) -> None:
        """Stop the session this run created (never one it found running)."""
        spark, self._spark = self._spark, None
        if spark is None or not self._owns_spark:
            return
        try:
            spark.stop()
        except Exception as e:  # noqa: BLE001 - the result is out already; a failed stop changes nothing
            logger.warning("Stopping the Spark session of %s failed: %s: %s", self.job, type(e).__name__, e)


def _is_spark_error(error: BaseException) -> bool:
    return any(c.__module__.startswith(("pyspark", "py4j")) for c in type(error).__mro__)


def _fail(ctx: JobContext[Any] | None, job: str, error: BaseException) -> int:
    """The error line and exit code of a run that raised ``error``; one log line."""
    if isinstance(error, UsageError):
        return emit_error(job, error, exit_code=EXIT_USAGE)
    target = ctx.target if ctx is not None else "its arguments"
    if isinstance(error, PaimonError | OSError):
        logger.info("%s on %s failed: %s", job, target, error)
    elif _is_spark_error(error):
        # the line names the root cause (the Python worker's exception, Spark's condition); the
        # JVM stack trace stays at DEBUG
        logger.info("%s on %s failed: %s", job, target, type(error).__name__)
        logger.debug("%s on %s failed", job, target, exc_info=True)
    else:
        logger.exception("%s on %s failed", job, target)
    return emit_error(job, error)


def _result_line(ctx: JobContext[Any], payload: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    line: dict[str, Any] = {**payload, "job": ctx.job, "status": payload.get("status") or "ok"}
    if ctx.config.table != NO_TABLE:
        line["table"] = ctx.config.table
    if line["status"] == "error":
        return line, exit_code_for(bool(line.get("retryable", True)))
    return line, EXIT_OK


def run_job(
    job: str,
    argv: Sequence[str] | None,
    parse: Callable[[Sequence[str]], A],
    body: Callable[[JobContext[A]], Mapping[str, Any]],
    *,
    needs_spark: bool = False,
    ledger: LedgerMode = "table",
    action: Callable[[A], str] | None = None,
) -> int:
    """Run one job: parse ``argv``, run ``body`` (see the module docstring), print one JSON line;
    returns the exit code (0 ok, 2 usage, 3 terminal, 75 transient).

    ``needs_spark``: the body may call :meth:`JobContext.spark` (else that is an error: a
    metadata job never starts a JVM). ``ledger``: who records the run (``table``, ``tables``,
    ``off``). ``action``: the ledger action of the parsed arguments (default: ``job``)."""
    configure_logging()
    args_list = list(sys.argv[1:] if argv is None else argv)
    set_result_file(None)  # a result file of an earlier run in this process is not this run's
    use_result_file(args_list)
    ctx: JobContext[A] | None = None
    try:
        try:
            args = parse(args_list)
            ctx = JobContext(job, args, needs_spark=needs_spark, ledger=ledger, action=action(args) if action else job)
            payload = _run_body(ctx, body, ledger)
        except Exception as e:  # noqa: BLE001 - every error becomes the JSON line and its exit code
            return _fail(ctx, job, e)
        line, code = _result_line(ctx, payload)
        emit(line)
        return code
    finally:
        if ctx is not None:
            ctx.close()


def _run_body(ctx: JobContext[A], body: Callable[[JobContext[A]], Mapping[str, Any]], ledger: LedgerMode) -> Mapping[str, Any]:
    if ledger != "table":
        return body(ctx)
    with job_recording(ctx.config, ctx.config.table, ctx.action, catalog=ctx.catalog, dry_run=ctx.dry_run) as recording:
        ctx.recording = recording
        payload = body(ctx)
        recording.set_result(payload)
    return payload
