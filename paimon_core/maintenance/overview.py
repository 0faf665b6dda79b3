"""What an operator sees of a whole warehouse: every table's health and maintenance, cheaply.

:func:`warehouse_overview` reads two things, never the tables themselves:

* the planner state document (:mod:`~paimon_core.maintenance.state_store`), which every maintenance
  pass writes: each table's health score, compaction debt, files, snapshots, as of the last pass,
  and what that pass planned but deferred (its budget or deadline: the backlog, with why);
* the maintenance ledger (``paimon_maintenance.ledger``), the last :data:`HISTORY_DAYS` days of it:
  when each kind of maintenance last succeeded per table, the failures of the last 7 days (with
  their error and Airflow ids, for a link to the task log), and per day the bytes compactions
  rewrote and the files maintenance deleted.

It adds each table's lag alerts (:func:`~paimon_core.maintenance.lag.lag_alerts`) and the
planner's view of what the next pass would do. The result is cached per (state document, ledger
snapshot, minute), so a page over 1,000 tables costs one state read and one ledger read at most
once a minute. :func:`table_history` is one table's ledger rows, for its charts.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog
    from paimon_core.maintenance.settings import MaintenanceSettings

__all__ = [
    "HISTORY_DAYS",
    "TableOverview",
    "WarehouseOverview",
    "last_successes",
    "table_history",
    "warehouse_overview",
]

DAY_MILLIS = 86_400_000
#: How far back the overview reads the ledger.
HISTORY_DAYS = 30
FAILURE_DAYS = 7
DONE = ("success", "no_op")
COMPACTIONS = ("compact", "sort_compact", "compact_database")
_LEDGER_COLUMNS = (
    "status",
    "error",
    "end_time",
    "dag_id",
    "run_id",
    "task_id",
    "map_index",
    "try_number",
    "bytes_read",
    "bytes_written",
    "files_deleted",
    "cpu_seconds",
    "snapshot_before",
    "snapshot_after",
)


@dataclass(frozen=True)
class TableOverview(_ToDict):
    """One table's line of the overview."""

    table: str
    assessed_at_millis: int | None  # when a pass last looked at it, on the pass's clock (None: never)
    snapshot_id: int | None
    snapshot_time_millis: int | None
    snapshot_count: int
    data_files: int
    total_bytes: int
    small_files: int
    health_score: int | None
    compaction_debt: float | None
    penalties: Mapping[str, float]
    last_success: Mapping[str, int]  # action -> end millis
    last_compaction_millis: int | None
    failures_7d: int
    last_failure: Mapping[str, Any] | None
    alerts: tuple[Mapping[str, Any], ...] = ()
    # the newest action that changed the table after the pass measured it ({action, end_millis}):
    # its health, files and snapshots are then older than the table (the next pass measures again)
    changed_after_assessed: Mapping[str, Any] | None = None
    # what the last pass planned for the table but deferred (its budget or deadline): {action, why}
    deferred: tuple[Mapping[str, str], ...] = ()
    # when it was last measured, on the wall clock (its newest ``assess`` row; a backfill's pass
    # clock is its data interval's end, days back)
    measured_at_millis: int | None = None


@dataclass(frozen=True)
class WarehouseOverview(_ToDict):
    """The whole warehouse (see the module docs)."""

    computed_at_millis: int
    state_saved_millis: int | None
    last_pass: Mapping[str, Any]
    tables: tuple[TableOverview, ...]
    failures: tuple[Mapping[str, Any], ...]  # last 7 days, newest first (at most 200)
    daily: tuple[Mapping[str, Any], ...]  # per UTC day: bytes rewritten, files deleted, actions, failures
    read_seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)


_cache: dict[tuple[str, tuple[int, int] | None, int | None, int], WarehouseOverview] = {}
_cache_lock = threading.Lock()


def _millis(value: Any) -> int | None:
    """Epoch millis of a ledger time (a naive UTC datetime as read, or millis)."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    return int(value.replace(tzinfo=value.tzinfo or dt.UTC).timestamp() * 1000)


def warehouse_overview(
    catalog: FileSystemCatalog,
    *,
    now_millis: int | None = None,
    settings_of: Callable[[str], MaintenanceSettings] | None = None,
    tables: list[str] | None = None,
) -> WarehouseOverview:
    """The overview of ``catalog``'s warehouse (see the module docs); ``tables`` limits it to
    those names (tables the last pass has not seen show without health); ``settings_of`` gives
    each table's maintenance settings for its lag alerts (default: the defaults)."""
    from paimon_core.io.file_io import join
    from paimon_core.maintenance.state_store import STATE_DIR, STATE_FILE, PlannerStateStore

    now = int(time.time() * 1000) if now_millis is None else now_millis
    started = time.monotonic()
    store = PlannerStateStore(catalog.file_io, catalog.warehouse)
    # the document's version for the cache: its size and modification time (one listing; parsing
    # it would cost as much as the overview at 10,000 tables, and a pass saves it twice per run)
    version: tuple[int, int] | None = None
    try:
        for st in catalog.file_io.list_status(join(catalog.warehouse, STATE_DIR)):
            if st.name == STATE_FILE:
                version = (st.size, st.mtime_millis)
    except OSError:
        version = None
    from paimon_core.ledger import Ledger

    ledger = Ledger(catalog)
    ledger_snapshot = ledger.table().snapshot_manager.latest_snapshot_id() if ledger.exists() else None
    key = (catalog.warehouse, version, ledger_snapshot, now // 60_000)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and tables is None:
        return hit
    saved = store.load()
    since = now - HISTORY_DAYS * DAY_MILLIS
    rows = ledger.read(since_millis=since, columns=_LEDGER_COLUMNS) if ledger_snapshot else None
    last_success, last_change, failures, daily = _fold_ledger(rows, now_millis=now)
    failures.sort(key=lambda f: -int(f["end_millis"]))
    by_table: dict[str, list[dict[str, Any]]] = {}
    for f in failures:
        by_table.setdefault(str(f["table"]), []).append(f)

    names = sorted(set(tables) if tables is not None else set(saved.states) | set(last_success))
    debt_since = saved.extra.get("debt_over_since") or {}
    deferred: dict[str, list[dict[str, str]]] = {}
    for item in saved.extra.get("deferred") or ():
        if isinstance(item, Mapping) and item.get("table"):
            deferred.setdefault(str(item["table"]), []).append(
                {"action": str(item.get("action")), "why": str(item.get("why") or "")}
            )
    from paimon_core.maintenance.settings import MaintenanceSettings

    default_settings = MaintenanceSettings()
    out: list[TableOverview] = []
    for name in names:
        state = saved.states.get(name)
        done = last_success.get(name, {})
        alerts: list[dict[str, Any]] = []
        if state is not None:
            from paimon_core.maintenance.lag import lag_alerts

            settings = settings_of(name) if settings_of is not None else default_settings
            over_since = debt_since.get(name)
            alerts = [
                a.to_dict()
                for a in lag_alerts(
                    state,
                    settings,
                    now_millis=now,
                    last_success=done,
                    debt_over_since_millis=int(over_since) if isinstance(over_since, int) else None,
                )
            ]
        health = dict(state.health) if state is not None else {}
        compactions = [done[a] for a in COMPACTIONS if a in done]
        fails = by_table.get(name, [])
        change = last_change.get(name)
        stale = None
        measured = None
        if state is not None:
            # the measurement's wall time: its ``assess`` row (the state's own time is the run's
            # clock, the data interval's end, which a run's actions always come after)
            measured = max(state.checked_at_millis, done.get("assess", 0))
            if change is not None and change["end_millis"] > measured:
                stale = change
        out.append(
            TableOverview(
                table=name,
                assessed_at_millis=state.checked_at_millis if state is not None else None,
                snapshot_id=state.snapshot_id if state is not None else None,
                snapshot_time_millis=state.snapshot_time_millis if state is not None else None,
                snapshot_count=state.snapshot_count if state is not None else 0,
                data_files=state.data_file_count if state is not None else 0,
                total_bytes=state.total_bytes if state is not None else 0,
                small_files=int(health.get("small_file_count") or 0),
                health_score=state.health_score if state is not None else None,
                compaction_debt=state.compaction_debt if state is not None else None,
                penalties=dict(health.get("penalties") or {}),
                last_success=dict(done),
                last_compaction_millis=max(compactions) if compactions else None,
                failures_7d=len(fails),
                last_failure=fails[0] if fails else None,
                alerts=tuple(alerts),
                changed_after_assessed=stale,
                deferred=tuple(deferred.get(name, ())),
                measured_at_millis=measured,
            )
        )
    result = WarehouseOverview(
        computed_at_millis=now,
        state_saved_millis=saved.saved_millis,
        last_pass=dict(saved.extra.get("last_pass") or {}),
        tables=tuple(out),
        failures=tuple(failures[:200]),
        daily=tuple(daily[d] for d in sorted(daily)),
        read_seconds=round(time.monotonic() - started, 3),
        notes=() if saved.saved_millis else ("no maintenance pass has run yet: health shows after the first one",),
    )
    if tables is None:
        with _cache_lock:
            if len(_cache) > 16:
                _cache.clear()
            _cache[key] = result
    return result


def _with_end_ms(rows: pa.Table) -> pa.Table:
    """``rows`` with ``end_ms`` (epoch millis of ``end_time``), rows without an end dropped."""
    import pyarrow.compute as pc

    end = pc.cast(pc.cast(rows.column("end_time"), pa.timestamp("ms")), pa.int64())
    return rows.append_column("end_ms", end).filter(pc.is_valid(end))


def _last_successes(rows: pa.Table) -> dict[str, dict[str, int]]:
    """``{table: {action: end millis}}`` of the newest successful or no-op row per table and
    action of ``rows`` (with ``end_ms``), one Arrow group-by."""
    import pyarrow.compute as pc

    done = rows.filter(pc.is_in(rows.column("status"), value_set=pa.array(DONE)))
    best = done.group_by(["table_name", "action"]).aggregate([("end_ms", "max")])
    out: dict[str, dict[str, int]] = {}
    for name, act, ms in zip(
        best.column("table_name").to_pylist(), best.column("action").to_pylist(), best.column("end_ms_max").to_pylist(),
        strict=True,
    ):
        out.setdefault(str(name), {})[str(act)] = int(ms)
    return out


def last_successes(rows: pa.Table | None) -> dict[str, dict[str, int]]:
    """``{table: {action: end millis}}``: each table's last successful (or no-op) end per action in
    ledger ``rows`` (``table_name``, ``action``, ``status``, ``end_time``), as the planner and the
    lag alerts read them."""
    if rows is None or rows.num_rows == 0:
        return {}
    return _last_successes(_with_end_ms(rows))


def _fold_ledger(
    rows: pa.Table | None, *, now_millis: int
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The ledger rows folded, vectorised (a 10,000-table warehouse has ~140,000 rows a week):
    per table its last successful (or no-op) end per action and its newest change (a success
    that committed a snapshot, or expired snapshots or changelogs; a tag, an orphan clean, a
    ``no_op`` and a dry run change nothing the overview shows), the failures of the last :data:`FAILURE_DAYS` days, and per UTC day
    the bytes compactions rewrote, files deleted, actions, failures and CPU seconds."""
    import numpy as np
    import pyarrow.compute as pc

    last_success: dict[str, dict[str, int]] = {}
    last_change: dict[str, dict[str, Any]] = {}
    failures: list[dict[str, Any]] = []
    daily: dict[str, dict[str, Any]] = {}
    if rows is None or rows.num_rows == 0:
        return last_success, last_change, failures, daily
    rows = _with_end_ms(rows)
    action, status = rows.column("action"), rows.column("status")
    last_success = _last_successes(rows)
    # the newest change per table: a success that committed a snapshot, or expired snapshots
    before, after = rows.column("snapshot_before"), rows.column("snapshot_after")
    moved = pc.and_(pc.is_valid(after), pc.fill_null(pc.not_equal(after, before), True))
    changed = pc.and_(
        pc.and_(pc.equal(status, "success"), pc.not_equal(action, "assess")),
        pc.or_(moved, pc.is_in(action, value_set=pa.array(_EXPIRIES))),
    )
    ch = rows.filter(changed).select(["table_name", "action", "end_ms"])
    if ch.num_rows:
        ch = ch.sort_by([("table_name", "ascending"), ("end_ms", "descending")])
        names = ch.column("table_name").to_numpy(zero_copy_only=False)
        first = np.ones(len(names), dtype=bool)
        first[1:] = names[1:] != names[:-1]
        top = ch.filter(pa.array(first))
        for name, act, ms in zip(
            top.column("table_name").to_pylist(), top.column("action").to_pylist(), top.column("end_ms").to_pylist(),
            strict=True,
        ):
            last_change[str(name)] = {"action": str(act), "end_millis": int(ms)}
    # failures of the last days (few: row by row)
    failed = pc.equal(status, "failed")
    recent = rows.filter(pc.and_(failed, pc.greater_equal(rows.column("end_ms"), now_millis - FAILURE_DAYS * DAY_MILLIS)))
    for r in recent.to_pylist():
        failures.append(
            {
                "table": str(r["table_name"]),
                "action": str(r["action"]),
                "error": r.get("error"),
                "end_millis": int(r["end_ms"]),
                **{k: r.get(k) for k in ("dag_id", "run_id", "task_id", "map_index", "try_number")},
            }
        )
    # per UTC day
    not_assess = pc.not_equal(action, "assess")
    compaction_ok = pc.and_(pc.is_in(action, value_set=pa.array(COMPACTIONS)), pc.equal(status, "success"))
    zero_i, zero_f = pa.scalar(0, pa.int64()), pa.scalar(0.0, pa.float64())
    per_day = pa.table(
        {
            "day": pc.strftime(pc.cast(rows.column("end_ms"), pa.timestamp("ms", tz="UTC")), format="%Y-%m-%d"),
            "bytes_rewritten": pc.if_else(compaction_ok, pc.fill_null(pc.cast(rows.column("bytes_read"), pa.int64()), 0), zero_i),
            "files_deleted": pc.fill_null(pc.cast(rows.column("files_deleted"), pa.int64()), 0),
            "actions": pc.cast(not_assess, pa.int64()),
            "failures": pc.cast(failed, pa.int64()),
            "cpu_seconds": pc.if_else(not_assess, pc.fill_null(pc.cast(rows.column("cpu_seconds"), pa.float64()), 0.0), zero_f),
        }
    )
    sums = per_day.group_by("day").aggregate([(c, "sum") for c in per_day.column_names if c != "day"])
    for r in sums.to_pylist():
        daily[str(r["day"])] = {
            "day": str(r["day"]),
            "bytes_rewritten": int(r["bytes_rewritten_sum"]),
            "files_deleted": int(r["files_deleted_sum"]),
            "actions": int(r["actions_sum"]),
            "failures": int(r["failures_sum"]),
            "cpu_seconds": float(r["cpu_seconds_sum"]),
        }
    return last_success, last_change, failures, daily


#: Actions that change what the overview shows without a new snapshot (the snapshot count).
_EXPIRIES = ("expire_snapshots", "expire_changelogs", "purge_files")


def table_history(catalog: FileSystemCatalog, table: str, *, since_millis: int) -> list[dict[str, Any]]:
    """``table``'s ledger rows since ``since_millis``, oldest first (JSON-safe; times in millis)."""
    from paimon_core.ledger import Ledger

    ledger = Ledger(catalog)
    if not ledger.exists():
        return []
    out = []
    for r in ledger.read(table=table, since_millis=since_millis).to_pylist():
        r["start_millis"] = _millis(r.pop("start_time", None))
        r["end_millis"] = _millis(r.pop("end_time", None))
        out.append(r)
    return out
