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

__all__ = ["IngestEntry", "Registry", "TableSettings", "WatchSettings", "load"]

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
    return Registry(**{**registry.__dict__, "ingest": entries, "start_date": start_date, "watch": watch})


@lru_cache(maxsize=1)
def load() -> Registry:
    """Read and validate ``paimon_tables.yaml`` (once per process)."""
    import yaml

    with open(REGISTRY_FILE, encoding="utf-8") as f:
        raw = yaml.safe_load(f) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{REGISTRY_FILE.name} must be a mapping")
    return _parse(raw)
