"""Recording maintenance actions in the ledger: :func:`record_action`, :func:`ledger_context`.

Every entry point wraps its action in :func:`record_action`: the table facade's maintenance
calls (:func:`recorded`), the ``spark_jobs`` runner, the Airflow operators. The outermost
recording writes ONE ledger row when the action ends; recordings nested inside it (a job calling
the facade) record nothing themselves, they only hand their result and CPU to the outer one.

Recording is on for a warehouse when its ledger table exists (checked once per process per
:data:`~paimon_core.ledger.ledger.EXISTS_CACHE_SECONDS`); ``ensure=True`` creates it first (the
jobs and operators do, unless told not to). ``PAIMON_LEDGER=off`` in the environment, or
:func:`ledger_disabled`, turns recording off.

A ledger failure never fails or changes the action: the action's result is returned and its
exception raised unchanged; the row's write is retried (:meth:`Ledger.append`), and when it still
fails the row is spooled locally (:mod:`paimon_core.ledger.spool`) and written with the next
successful ledger write to that warehouse.

Airflow ids come from :func:`ledger_context` (the task process) or from the JSON in
``$PAIMON_LEDGER_CONTEXT`` (a ``spark_jobs`` process the task started).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from paimon_core.ledger.metrics import METRIC_COLUMNS, metrics_of, status_of
from paimon_core.ledger.record import COMPACTION_ACTIONS, STATUSES, LedgerRecord, new_record_id

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog
    from paimon_core.table.table import FileStoreTable

__all__ = [
    "CONTEXT_ENV",
    "DISABLE_ENV",
    "ActionRecording",
    "airflow_ids",
    "current_recording",
    "deferred_ledger",
    "ledger_context",
    "ledger_disabled",
    "record_action",
    "recorded",
    "result_dict",
    "write_records",
]

logger = logging.getLogger(__name__)

CONTEXT_ENV = "PAIMON_LEDGER_CONTEXT"
DISABLE_ENV = "PAIMON_LEDGER"
#: Keys :func:`ledger_context` takes (the Airflow task instance's ids and the entry point).
CONTEXT_KEYS = ("dag_id", "run_id", "task_id", "map_index", "try_number", "entry_point")
#: ``details`` longer than this drop their long lists (per-bucket views, path samples).
MAX_DETAILS_CHARS = 32_000

_active: ContextVar[ActionRecording | None] = ContextVar("paimon_ledger_active", default=None)
_context: ContextVar[Mapping[str, Any]] = ContextVar("paimon_ledger_context", default={})  # noqa: B039 - never mutated
_disabled: ContextVar[bool] = ContextVar("paimon_ledger_disabled", default=False)
_deferred: ContextVar[dict[str, tuple[FileSystemCatalog, list[LedgerRecord]]] | None] = ContextVar(
    "paimon_ledger_deferred", default=None
)
_HOST = socket.gethostname()


# --- context ---------------------------------------------------------------------------------
@contextlib.contextmanager
def ledger_context(**ids: Any) -> Iterator[None]:
    """Airflow ids (``dag_id``, ``run_id``, ``task_id``, ``map_index``, ``try_number``) and
    ``entry_point`` for the rows recorded inside (merged over an enclosing context)."""
    unknown = set(ids) - set(CONTEXT_KEYS)
    if unknown:
        from paimon_core.exceptions import InvalidArgumentError

        raise InvalidArgumentError(f"ledger_context takes {CONTEXT_KEYS}, not {sorted(unknown)}")
    token = _context.set({**_context.get(), **{k: v for k, v in ids.items() if v is not None}})
    try:
        yield
    finally:
        _context.reset(token)


@contextlib.contextmanager
def ledger_disabled() -> Iterator[None]:
    """Record nothing inside (``spark_jobs ... --no-ledger``)."""
    token = _disabled.set(True)
    try:
        yield
    finally:
        _disabled.reset(token)


def airflow_ids() -> dict[str, Any]:
    """The context in effect: ``$PAIMON_LEDGER_CONTEXT`` (JSON), overridden by :func:`ledger_context`."""
    out: dict[str, Any] = {}
    raw = os.environ.get(CONTEXT_ENV, "").strip()
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            logger.warning("Ignoring $%s: not JSON: %.200s", CONTEXT_ENV, raw)
            parsed = {}
        if isinstance(parsed, dict):
            out.update({k: v for k, v in parsed.items() if k in CONTEXT_KEYS and v is not None})
    out.update(_context.get())
    return out


def _recording_off() -> bool:
    return _disabled.get() or os.environ.get(DISABLE_ENV, "").strip().lower() in ("off", "false", "0", "no")


@contextlib.contextmanager
def deferred_ledger() -> Iterator[None]:
    """Collect the rows recorded inside and write them at the end, ONE commit per warehouse (a
    batch executor running many tables' actions in one task)."""
    if _deferred.get() is not None:  # already collecting: the outer one writes
        yield
        return
    pending: dict[str, tuple[FileSystemCatalog, list[LedgerRecord]]] = {}
    token = _deferred.set(pending)
    try:
        yield
    finally:
        _deferred.reset(token)
        for catalog, records in pending.values():
            write_records(catalog, records)


# --- results ---------------------------------------------------------------------------------
def result_dict(result: object) -> dict[str, Any]:
    """A JSON-safe dict of an action's result: ``to_dict()``, a mapping, or a tag's snapshot summary."""
    if result is None:
        return {}
    from paimon_core.snapshot.snapshot import Snapshot

    if isinstance(result, Snapshot):
        return {
            "snapshot_id": result.id,
            "schema_id": result.schema_id,
            "commit_time_millis": result.time_millis,
            "record_count": result.total_record_count,
            "tag_create_time": result.tag_create_time,
            "tag_time_retained": result.tag_time_retained,
        }
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        out = to_dict()
        if isinstance(out, Mapping):
            return dict(out)
    if isinstance(result, Mapping):
        return dict(result)
    return {"result": result}


def _details(result: Mapping[str, Any]) -> str | None:
    if not result:
        return None
    text = json.dumps(result, default=str, separators=(",", ":"), sort_keys=True)
    if len(text) <= MAX_DETAILS_CHARS:
        return text
    short = {k: v for k, v in result.items() if not (isinstance(v, list | tuple | dict) and len(v) > 20)}
    short["details_truncated"] = True
    text = json.dumps(short, default=str, separators=(",", ":"), sort_keys=True)
    if len(text) <= MAX_DETAILS_CHARS:
        return text
    scalars = {
        k: v for k, v in short.items() if isinstance(v, int | float | bool | str) and len(str(v)) < 500
    }
    return json.dumps(scalars, default=str, separators=(",", ":"), sort_keys=True)


def _is_skip(error: BaseException) -> bool:
    """Airflow's skip (AirflowSkipException; no Airflow import here)."""
    return any(c.__name__.endswith("SkipException") for c in type(error).__mro__)


# --- recordings ------------------------------------------------------------------------------
class ActionRecording:
    """What the code inside :func:`record_action` tells the recording. A recording that records
    nothing (the ledger is off, or it is nested in another) accepts the same calls."""

    enabled = False
    action: str = ""
    table_name: str = ""

    def set_result(self, result: object) -> None:
        """The action's result (a typed result, its ``to_dict()``, a mapping, a snapshot)."""

    def set_status(self, status: str) -> None:
        """Override the status the result implies (``skipped``, ``no_op``...)."""

    def set_dry_run(self, dry_run: bool = True) -> None:
        """The call was a dry run (status ``dry_run``)."""

    def add_cpu(self, seconds: float) -> None:
        """CPU spent elsewhere for this action (Spark's Python workers)."""

    def set_metrics(self, **metrics: int | float | None) -> None:
        """Set metric columns directly (``files_read=...``, ``health_score=...``)."""

    def set_table(self, table: FileStoreTable) -> None:
        """The table, once opened (a recording started with its name only)."""


class _Nested(ActionRecording):
    """Inside another recording: hands results, metrics and CPU to the outer one."""

    def __init__(self, outer: ActionRecording, action: str) -> None:
        self.outer = outer
        self.action = action
        self.table_name = outer.table_name

    def set_result(self, result: object) -> None:
        if isinstance(self.outer, _Recording):
            self.outer.offer_result(result, self.action)

    def add_cpu(self, seconds: float) -> None:
        self.outer.add_cpu(seconds)


class _Recording(ActionRecording):
    """The outermost recording: writes the row at the end."""

    enabled = True

    def __init__(
        self,
        catalog: FileSystemCatalog,
        table: FileStoreTable | None,
        table_name: str,
        action: str,
        entry_point: str,
        dry_run: bool,
    ) -> None:
        self.catalog = catalog
        self.table: FileStoreTable | None = None
        self.table_name = table_name
        self.action = action
        self.entry_point = entry_point
        self.dry_run = dry_run
        self.start_millis = _next_start_millis()
        self._t0 = time.monotonic()
        self._cpu0 = time.process_time()
        self._extra_cpu = 0.0
        self._result: dict[str, Any] | None = None
        self._inner_result: dict[str, Any] | None = None
        self._status: str | None = None
        self._metrics: dict[str, int | float | None] = {}
        self.snapshot_before: int | None = None
        if table is not None:
            self.set_table(table)

    def set_table(self, table: FileStoreTable) -> None:
        self.table = table
        self.table_name = table.name
        try:
            self.snapshot_before = table.snapshot_manager.latest_snapshot_id()
        except Exception as e:  # noqa: BLE001 - the ledger never fails the action
            logger.debug("ledger: no snapshot id of %s: %s", table.name, e)

    def set_result(self, result: object) -> None:
        self._result = result_dict(result)

    def offer_result(self, result: object, action: str) -> None:
        if self._inner_result is None:
            self._inner_result = result_dict(result)

    def set_status(self, status: str) -> None:
        if status not in STATUSES:
            from paimon_core.exceptions import InvalidArgumentError

            raise InvalidArgumentError(f"status must be one of {STATUSES}, got {status!r}")
        self._status = status

    def set_dry_run(self, dry_run: bool = True) -> None:
        self.dry_run = bool(dry_run)

    def add_cpu(self, seconds: float) -> None:
        self._extra_cpu += max(0.0, float(seconds))

    def set_metrics(self, **metrics: int | float | None) -> None:
        unknown = set(metrics) - set(METRIC_COLUMNS)
        if unknown:
            from paimon_core.exceptions import InvalidArgumentError

            raise InvalidArgumentError(f"unknown ledger metrics {sorted(unknown)}; known: {METRIC_COLUMNS}")
        self._metrics.update(metrics)

    def build(self, error: BaseException | None) -> LedgerRecord:
        """The row (after the action ended)."""
        end_millis = max(self.start_millis, int(time.time() * 1000))
        duration = int((time.monotonic() - self._t0) * 1000)
        cpu = time.process_time() - self._cpu0 + self._extra_cpu
        result = self._result if self._result is not None else (self._inner_result or {})
        if error is not None:
            status = "skipped" if _is_skip(error) else "failed"
            error_text: str | None = f"{type(error).__name__}: {error}"
        else:
            status = self._status or status_of(self.action, result, dry_run=self.dry_run)
            error_text = None
        metrics: dict[str, int | float | None] = {"snapshot_before": self.snapshot_before}
        metrics.update(metrics_of(self.action, result))
        if self.table is not None:
            try:
                metrics["snapshot_after"] = self.table.snapshot_manager.latest_snapshot_id()
            except Exception as e:  # noqa: BLE001
                logger.debug("ledger: no snapshot id of %s after %s: %s", self.table_name, self.action, e)
            if (
                status == "success"
                and self.action in COMPACTION_ACTIONS
                and "health_score" not in self._metrics
            ):
                metrics.update(_health(self.table))
        metrics.update(self._metrics)
        ids = airflow_ids()
        return LedgerRecord(
            record_id=new_record_id(),
            table_name=self.table_name,
            action=self.action,
            status=status,
            start_millis=self.start_millis,
            end_millis=end_millis,
            error=error_text,
            duration_ms=duration,
            snapshot_before=_opt_int(metrics.get("snapshot_before")),
            snapshot_after=_opt_int(metrics.get("snapshot_after")),
            files_read=_opt_int(metrics.get("files_read")),
            bytes_read=_opt_int(metrics.get("bytes_read")),
            files_written=_opt_int(metrics.get("files_written")),
            bytes_written=_opt_int(metrics.get("bytes_written")),
            files_deleted=_opt_int(metrics.get("files_deleted")),
            bytes_deleted=_opt_int(metrics.get("bytes_deleted")),
            rows_written=_opt_int(metrics.get("rows_written")),
            cpu_seconds=round(cpu, 6),
            table_files=_opt_int(metrics.get("table_files")),
            table_bytes=_opt_int(metrics.get("table_bytes")),
            health_score=None
            if metrics.get("health_score") is None
            else float(metrics["health_score"] or 0.0),
            entry_point=self.entry_point,
            dag_id=_opt_str(ids.get("dag_id")),
            run_id=_opt_str(ids.get("run_id")),
            task_id=_opt_str(ids.get("task_id")),
            map_index=_opt_int(ids.get("map_index")),
            try_number=_opt_int(ids.get("try_number")),
            host=_HOST,
            details=_details(result),
        )


_last_start = 0
_start_lock = threading.Lock()


def _next_start_millis() -> int:
    """Now in epoch millis, but after the previous recording's start in this process: the rows of
    one process sort in the order their actions started (two in the same millisecond: +1 ms)."""
    global _last_start
    with _start_lock:
        _last_start = max(int(time.time() * 1000), _last_start + 1)
        return _last_start


def _opt_int(v: object) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return int(v)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _opt_str(v: object) -> str | None:
    return None if v is None else str(v)


def _health(table: FileStoreTable) -> dict[str, int | float | None]:
    """The table's live files, bytes and health score (metadata only; after a compaction)."""
    from paimon_core.table.health import table_health

    try:
        h = table_health(table)
    except Exception as e:  # noqa: BLE001 - the ledger never fails the action
        logger.info("ledger: no health of %s: %s", table.name, e)
        return {}
    return {
        "table_files": h.data_file_count,
        "table_bytes": h.total_bytes,
        "health_score": float(h.health_score),
    }


def current_recording() -> ActionRecording | None:
    """The recording in effect (None outside :func:`record_action`): deep code adds its CPU here."""
    return _active.get()


def warehouse_of(table: FileStoreTable) -> str | None:
    """The warehouse a catalog's table lives in (``<warehouse>/<db>.db/<table>``), else None."""
    from paimon_core.branch.branch_names import base_table_name
    from paimon_core.paths import DB_SUFFIX

    name = base_table_name(table.name)
    db, sep, t = name.partition(".")
    if not sep or not db or not t or "." in t:
        return None
    suffix = f"/{db}{DB_SUFFIX}/{t}"
    if not table.path.endswith(suffix):
        return None
    return table.path[: -len(suffix)] or "/"


def _catalog_of(table: FileStoreTable, warehouse: str) -> FileSystemCatalog:
    """A catalog of ``table``'s warehouse, on its FileIO, clock and commit lock (a lock keyed per
    table, :class:`~paimon_core.catalog.jdbc_lock.JdbcCatalogLock`, goes back to the catalog's
    key; the catalog keys the ledger's own lock from it)."""
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog

    lock: Any = table.commit_lock
    if lock is not None and type(lock).__name__ == "JdbcCatalogLock":
        suffix = f".{table.name}"
        if lock.lock_id.endswith(suffix):
            lock = type(lock)(
                lock.uri,
                lock_id=lock.lock_id[: -len(suffix)],
                acquire_timeout_ms=lock.acquire_timeout_ms,
                check_max_sleep_ms=lock.check_max_sleep_ms,
            )
    return FileSystemCatalog(warehouse, file_io=table.file_io, clock=table.clock, commit_lock=lock)


def _start(
    table: FileStoreTable | str,
    action: str,
    entry_point: str | None,
    catalog: FileSystemCatalog | None,
    dry_run: bool,
    ensure: bool,
) -> ActionRecording:
    """The recording of one action, or a disabled one (never raises)."""
    from paimon_core.ledger.ledger import Ledger, cached_existence

    if _recording_off():
        return ActionRecording()
    try:
        table_obj = None if isinstance(table, str) else table
        name = table if isinstance(table, str) else table.name
        if catalog is None:
            if table_obj is None:
                return ActionRecording()
            warehouse = warehouse_of(table_obj)
            if warehouse is None:
                return ActionRecording()  # a table opened by path, outside any catalog
            if not ensure and cached_existence(warehouse) is False:
                return ActionRecording()
            catalog = _catalog_of(table_obj, warehouse)
        ledger = Ledger(catalog)
        if ensure and cached_existence(catalog.warehouse) is not True:
            try:
                ledger.ensure()
            except Exception as e:  # noqa: BLE001 - the row is still built, and spooled if its write fails
                logger.warning(
                    "Cannot create the maintenance ledger of %s: %s: %s",
                    catalog.warehouse,
                    type(e).__name__,
                    e,
                )
        elif not ensure and not ledger.exists():
            return ActionRecording()
        point = entry_point or str(airflow_ids().get("entry_point") or "python")
        return _Recording(catalog, table_obj, name, action, point, dry_run)
    except Exception as e:  # noqa: BLE001 - the ledger never fails the action
        logger.warning(
            "Maintenance ledger unavailable for %s of %s: %s: %s", action, table, type(e).__name__, e
        )
        return ActionRecording()


@contextlib.contextmanager
def record_action(
    table: FileStoreTable | str,
    action: str,
    *,
    entry_point: str | None = None,
    catalog: FileSystemCatalog | None = None,
    dry_run: bool = False,
    ensure: bool = False,
) -> Iterator[ActionRecording]:
    """Record the action run inside as one ledger row (see the module docstring).

    ``table``: the table acted on, or its ``db.table`` name (``'*'`` for a warehouse-wide
    action; then ``catalog`` is needed). ``catalog``: the warehouse's catalog (default: derived
    from the table's path). ``entry_point``: ``airflow``, ``spark_job`` or ``python`` (default:
    the :func:`ledger_context`'s, else ``python``). ``ensure``: create the ledger if missing.
    """
    outer = _active.get()
    if outer is not None:
        yield _Nested(outer, action)
        return
    recording = _start(table, action, entry_point, catalog, dry_run, ensure)
    token = _active.set(recording)
    try:
        yield recording
    except BaseException as e:
        _active.reset(token)
        _finish(recording, e)
        raise
    _active.reset(token)
    _finish(recording, None)


def _finish(recording: ActionRecording, error: BaseException | None) -> None:
    if not isinstance(recording, _Recording):
        return
    try:
        record = recording.build(error)
    except Exception as e:  # noqa: BLE001 - the ledger never fails the action
        logger.error(
            "Could not build the ledger row of %s on %s: %s", recording.action, recording.table_name, e
        )
        return
    pending = _deferred.get()
    if pending is not None:
        key = recording.catalog.warehouse
        pending.setdefault(key, (recording.catalog, []))[1].append(record)
        return
    write_records(recording.catalog, [record])


def write_records(catalog: FileSystemCatalog, records: Sequence[LedgerRecord]) -> bool:
    """Write ``records`` (plus any spooled ones of this warehouse) in one commit; spool them
    when that fails. Never raises; returns whether they were written."""
    from paimon_core.ledger.ledger import Ledger
    from paimon_core.ledger.spool import Spool, SpoolClaim

    if not records:
        return True
    ledger = Ledger(catalog)
    spool = Spool(catalog.warehouse)
    claim = SpoolClaim((), ())
    try:
        claim = spool.claim()
        spooled = list(claim.records)
        if spooled:
            try:  # a spooled record may have landed after all (an unknown commit state)
                there = ledger.record_ids(sorted({r.dt for r in spooled}))
                spooled = [r for r in spooled if r.record_id not in there]
            except Exception as e:  # noqa: BLE001 - the write below decides
                logger.info("ledger: could not check spooled records of %s: %s", catalog.warehouse, e)
        ledger.append([*records, *spooled])
    except Exception as e:  # noqa: BLE001 - never fails the action (LedgerWriteError, a bad spool file...)
        logger.error(
            "Maintenance ledger write to %s failed; %d record(s) spooled for the next write: %s",
            catalog.warehouse,
            len(records),
            e,
        )
        spool.release(claim)
        spool.add(records)
        return False
    if claim.paths:
        logger.info("Flushed %d spooled ledger record(s) to %s", len(claim.records), catalog.warehouse)
        spool.done(claim)
    return True


F = TypeVar("F", bound=Callable[..., Any])


def recorded(action: str) -> Callable[[F], F]:
    """Decorate a ``table.maintenance`` method (its object's ``table`` is the table acted on):
    each call records one row (``action``), a dry run when ``dry_run`` (given or by its default)."""

    def decorate(fn: F) -> F:
        param = inspect.signature(fn).parameters.get("dry_run")
        default_dry_run = bool(param.default) if param is not None and isinstance(param.default, bool) else False

        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            table: FileStoreTable = self.table
            with record_action(table, action, dry_run=bool(kwargs.get("dry_run", default_dry_run))) as rec:
                result = fn(self, *args, **kwargs)
                rec.set_result(result)
                return result

        wrapper.__ledger_action__ = action  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
