"""The table registry (``paimon_tables.yaml`` next to this file) as typed, validated settings.

DAG files read it at parse time (the only I/O they do); which tables exist is asked at run time
by a ``list_tables`` task (:func:`select_tables` over the warehouse's ``db.table`` names).
Imports nothing but the standard library at module level (PyYAML inside :func:`load`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["AlertSettings", "IngestEntry", "PassSettings", "Registry", "TableSettings", "WatchSettings", "load"]

REGISTRY_FILE = Path(__file__).with_name("paimon_tables.yaml")
COMPACTIONS = ("full", "minor", "none")
COMPACTION_MODES = ("distributed", "local")
TAG_PERIODS = ("daily", "none")
#: A Paimon duration ('1 d', '12 h', '30 min', '500'): checked here without importing paimon_core.
_DURATION = re.compile(
    r"\s*\d+(\.\d+)?\s*(microseconds|milliseconds|nanoseconds|microsecond|millisecond|nanosecond|seconds"
    r"|minutes|micros|millis|second|minute|nanos|micro|milli|hours|nano|secs|hour|days|sec|min|day"
    r"|ns|us|µs|ms|s|m|h|d)?\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TableSettings:
    """One table's maintenance settings (registry defaults merged with its overrides)."""

    compaction: str = "minor"
    compaction_mode: str = "distributed"
    snapshot_retain_max: int | None = None
    snapshot_retain_min: int | None = None
    tag_period: str = "daily"
    tag_retention: str | None = "7 d"
    orphan_min_age_days: int = 2
    partition_idle_time: str | None = None  # compaction: only partitions idle this long ('1 d')
    # expire_partitions step: drop partitions older than this ('30 d'); null: only tables with
    # the option partition.expiration-time are expired (by it), the others skip the step
    partition_expiration_time: str | None = None
    # the planner of paimon_maintenance (paimon_core.maintenance.settings.MaintenanceSettings)
    orphan_clean_interval: str | None = "7 d"  # orphan cleanup when the last one is this old; null: never
    expire_interval: str = "1 h"  # expiry (snapshots, tags, partitions) at most this often
    max_compaction_debt: float = 0.8  # sorted runs / num-sorted-run.stop-trigger above which a table lags
    lag_grace: str = "1 d"  # how long debt or an overdue action may last before it is a lag alert
    respect_offpeak: bool = True  # compact only in compaction.offpeak hours (unless writers stall)
    manifest_compaction: bool = True  # merge manifests when they pile up (compact_manifest)

    @staticmethod
    def parse(raw: dict[str, Any], *, where: str) -> TableSettings:
        unknown = set(raw) - set(TableSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"{where}: unknown settings {sorted(unknown)}")
        s = TableSettings(**raw)
        if s.compaction not in COMPACTIONS:
            raise ValueError(f"{where}: compaction must be one of {COMPACTIONS}, got {s.compaction!r}")
        if s.compaction_mode not in COMPACTION_MODES:
            raise ValueError(
                f"{where}: compaction_mode must be one of {COMPACTION_MODES}, got {s.compaction_mode!r}"
            )
        if s.tag_period not in TAG_PERIODS:
            raise ValueError(f"{where}: tag_period must be one of {TAG_PERIODS}, got {s.tag_period!r}")
        if not isinstance(s.orphan_min_age_days, int) or s.orphan_min_age_days < 1:
            raise ValueError(f"{where}: orphan_min_age_days must be an integer >= 1")
        if s.partition_idle_time is not None and not _DURATION.fullmatch(str(s.partition_idle_time)):
            raise ValueError(
                f"{where}: partition_idle_time must be a duration like '1 d' or '12 h', got {s.partition_idle_time!r}"
            )
        expiration = s.partition_expiration_time
        if expiration is not None and not _DURATION.fullmatch(str(expiration)):
            raise ValueError(
                f"{where}: partition_expiration_time must be a duration like '30 d', got {expiration!r}"
            )
        for name in ("orphan_clean_interval", "expire_interval", "lag_grace"):
            value = getattr(s, name)
            if value is not None and not _DURATION.fullmatch(str(value)):
                raise ValueError(f"{where}: {name} must be a duration like '7 d' or '1 h', got {value!r}")
        debt = s.max_compaction_debt
        if isinstance(debt, bool) or not isinstance(debt, (int, float)) or debt <= 0:
            raise ValueError(f"{where}: max_compaction_debt must be a number > 0, got {debt!r}")
        for name in ("respect_offpeak", "manifest_compaction"):
            if not isinstance(getattr(s, name), bool):
                raise ValueError(f"{where}: {name} must be true or false, got {getattr(s, name)!r}")
        return s

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in TableSettings.__dataclass_fields__}


@dataclass(frozen=True)
class IngestEntry:
    """One ingested table: its source path pattern (``{ds}`` = the interval's date)."""

    table: str
    source: str
    date_column: str = "dt"


@dataclass(frozen=True)
class WatchSettings:
    """``paimon_on_new_snapshot``: the tables whose health an ``AssetWatcher`` watches, and the budget."""

    tables: tuple[str, ...] = ()
    poll_interval_seconds: float = 60.0
    max_compaction_debt: float = 0.8

    @staticmethod
    def parse(raw: dict[str, Any]) -> WatchSettings:
        unknown = set(raw) - set(WatchSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"watch: unknown settings {sorted(unknown)}")
        tables = tuple(str(t) for t in raw.get("tables") or ())
        bad = [t for t in tables if not _TABLE.fullmatch(t)]
        if bad:
            raise ValueError(f"watch.tables: expected db.table names, got {bad}")
        poll, debt = raw.get("poll_interval_seconds"), raw.get("max_compaction_debt")
        w = WatchSettings(
            tables=tables,
            poll_interval_seconds=60.0 if poll is None else float(poll),
            max_compaction_debt=0.8 if debt is None else float(debt),
        )
        if w.poll_interval_seconds <= 0 or w.max_compaction_debt <= 0:
            raise ValueError("watch: poll_interval_seconds and max_compaction_debt must be positive")
        return w


@dataclass(frozen=True)
class PassSettings:
    """``paimon_maintenance``'s pass: its budget, fairness and how work is batched."""

    policy: str = "balanced"  # balanced: longest since last maintenance first; quota: per-table share
    max_rewrite_gb: float = 100.0  # bytes the pass's compactions may rewrite (the rest: backlog)
    spark_slots: int = 2  # Spark applications at once (size the paimon_spark pool to it)
    max_minutes: int = 180  # the pass's end time: work estimated past it waits for the next pass (backlog)
    batch_size: int = 200  # tables per light-action task instance
    spark_group_size: int = 8  # tables per Spark application
    in_process_max_mb: int = 64  # compactions rewriting at most this run in the task process (no JVM)

    @staticmethod
    def parse(raw: dict[str, Any]) -> PassSettings:
        unknown = set(raw) - set(PassSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"maintenance_pass: unknown settings {sorted(unknown)}")
        defaults = PassSettings()
        values = {k: raw[k] if raw.get(k) is not None else getattr(defaults, k) for k in PassSettings.__dataclass_fields__}
        s = PassSettings(**values)
        if s.policy not in ("balanced", "quota"):
            raise ValueError(f"maintenance_pass.policy must be 'balanced' or 'quota', got {s.policy!r}")
        for name in ("spark_slots", "max_minutes", "batch_size", "spark_group_size"):
            value = getattr(s, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"maintenance_pass.{name} must be an integer >= 1, got {value!r}")
        for name in ("max_rewrite_gb", "in_process_max_mb"):
            value = getattr(s, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"maintenance_pass.{name} must be a number >= 0, got {value!r}")
        return s


@dataclass(frozen=True)
class AlertSettings:
    """Lag alerts: who hears of them."""

    callback: str | None = None  # dotted path of a callable(alerts: list[dict], context) (e.g. your notifier)
    fail_task: bool = True  # the lag_alerts task fails when there are alerts (failure callbacks fire)

    @staticmethod
    def parse(raw: dict[str, Any]) -> AlertSettings:
        unknown = set(raw) - set(AlertSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"alerts: unknown settings {sorted(unknown)}")
        callback = raw.get("callback")
        if callback is not None and not re.fullmatch(r"[A-Za-z_][\w.]*\.[A-Za-z_]\w*", str(callback)):
            raise ValueError(f"alerts.callback must be a dotted path like 'my_pkg.alerts.notify', got {callback!r}")
        fail = raw.get("fail_task", True)
        if not isinstance(fail, bool):
            raise ValueError(f"alerts.fail_task must be true or false, got {fail!r}")
        return AlertSettings(callback=None if callback is None else str(callback), fail_task=fail)


_TABLE = re.compile(r"[A-Za-z0-9_]+\.[A-Za-z0-9_$-]+")


@dataclass(frozen=True)
class Registry:
    """The whole registry file."""

    paimon_conn_id: str = "paimon_default"
    spark_conn_id: str = "spark_default"
    include: str = ".*"
    exclude: str = ""
    defaults: TableSettings = field(default_factory=TableSettings)
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    start_date: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    ingest: tuple[IngestEntry, ...] = ()
    watch: WatchSettings = field(default_factory=WatchSettings)
    maintenance_pass: PassSettings = field(default_factory=PassSettings)
    alerts: AlertSettings = field(default_factory=AlertSettings)

    def settings_for(self, table: str) -> TableSettings:
        """``table``'s settings: the defaults with its overrides applied."""
        merged = {**self.defaults.to_dict(), **self.overrides.get(table, {})}
        return TableSettings.parse(merged, where=f"tables.{table}")

    def select_tables(self, tables: list[str]) -> list[str]:
        """The ``db.table`` names that fully match ``include`` and not ``exclude``, sorted."""
        from paimon_airflow.utils.selection import select_tables

        return select_tables(tables, self.include, self.exclude)


def _parse(raw: dict[str, Any]) -> Registry:
    known = {
        "paimon_conn_id",
        "spark_conn_id",
        "start_date",
        "include",
        "exclude",
        "defaults",
        "tables",
        "ingest",
        "watch",
        "maintenance_pass",
        "alerts",
    }
    unknown = set(raw) - known
    if unknown:
        raise ValueError(f"{REGISTRY_FILE.name}: unknown keys {sorted(unknown)}")
    for key in ("include", "exclude"):
        re.compile(str(raw.get(key) or ""))  # a bad regex fails at parse time, visibly
    defaults = TableSettings.parse(dict(raw.get("defaults") or {}), where="defaults")
    overrides = {str(k): dict(v or {}) for k, v in (raw.get("tables") or {}).items()}
    registry = Registry(
        paimon_conn_id=str(raw.get("paimon_conn_id") or "paimon_default"),
        spark_conn_id=str(raw.get("spark_conn_id") or "spark_default"),
        include=str(raw.get("include") or ".*"),
        exclude=str(raw.get("exclude") or ""),
        defaults=defaults,
        overrides=overrides,
    )
    for table in overrides:
        registry.settings_for(table)  # validate every override now
    entries = tuple(
        IngestEntry(
            table=str(e["table"]), source=str(e["source"]), date_column=str(e.get("date_column") or "dt")
        )
        for e in raw.get("ingest") or ()
    )
    start = raw.get("start_date")
    start_date = (
        dt.datetime.fromisoformat(str(start)).replace(tzinfo=dt.UTC) if start else registry.start_date
    )
    watch = WatchSettings.parse(dict(raw.get("watch") or {}))
    return Registry(
        **{
            **registry.__dict__,
            "ingest": entries,
            "start_date": start_date,
            "watch": watch,
            "maintenance_pass": PassSettings.parse(dict(raw.get("maintenance_pass") or {})),
            "alerts": AlertSettings.parse(dict(raw.get("alerts") or {})),
        }
    )


@lru_cache(maxsize=1)
def load() -> Registry:
    """Read and validate ``paimon_tables.yaml`` (once per process)."""
    import yaml

    with open(REGISTRY_FILE, encoding="utf-8") as f:
        raw = yaml.safe_load(f) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{REGISTRY_FILE.name} must be a mapping")
    return _parse(raw)
