"""One row of the maintenance ledger (:class:`LedgerRecord`) and the ledger table's Arrow schema.

The ledger is the Paimon append table ``paimon_maintenance.ledger``: one row per maintenance
action (compaction, expiry, orphan clean, tag, rollback...), from every entry point. Its columns
follow the anchors' run histories (AWS Glue ``TableOptimizerRun``, Databricks'
``predictive_optimization_operations_history``): what ran on which table, when, how it ended and
what it read, wrote and deleted. See README "The maintenance ledger".
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import pyarrow as pa

__all__ = [
    "ACTIONS",
    "COMPACTION_ACTIONS",
    "ENTRY_POINTS",
    "LEDGER_DATABASE",
    "LEDGER_OPTIONS",
    "LEDGER_SCHEMA",
    "LEDGER_TABLE",
    "LEDGER_TABLE_NAME",
    "STATUSES",
    "LedgerRecord",
    "new_record_id",
    "records_from_arrow",
    "records_to_arrow",
    "utc_day",
]

LEDGER_DATABASE = "paimon_maintenance"
LEDGER_TABLE_NAME = "ledger"
LEDGER_TABLE = f"{LEDGER_DATABASE}.{LEDGER_TABLE_NAME}"

#: The procedure names an ``action`` takes (Paimon's procedure names), plus ``assess``: a
#: planner pass looked at the table (health columns filled, nothing changed).
ACTIONS = (
    "compact",
    "sort_compact",
    "compact_manifest",
    "compact_database",
    "expire_snapshots",
    "expire_changelogs",
    "expire_partitions",
    "expire_tags",
    "remove_orphan_files",
    "remove_unexisting_files",
    "create_tag",
    "create_tag_from_timestamp",
    "delete_tag",
    "rename_tag",
    "replace_tag",
    "trigger_tag_automatic_creation",
    "rollback_to",
    "rollback_to_timestamp",
    "rollback_to_as_latest",
    "merge_into",
    "rescale",
    "mark_partition_done",
    "reset_consumer",
    "clear_consumers",
    "create_branch",
    "delete_branch",
    "fast_forward",
    "migrate_table",
    "migrate_database",
    "purge_files",
    "repair",
    "repair_earliest_snapshot",
    "rename_branch",
    "merge_branch",
    "create_tag_from_watermark",
    "rollback_to_watermark",
    "drop_partition",
    "remove_unexisting_manifests",
    "rewrite_file_index",
    "reassign_row_id",
    "assess",
)
#: The actions that rewrite data files into bigger ones (what "last compaction" means).
COMPACTION_ACTIONS = ("compact", "sort_compact", "compact_database")
STATUSES = ("success", "failed", "no_op", "skipped", "dry_run")
ENTRY_POINTS = ("airflow", "spark_job", "python")

#: The ledger table's options: an unaware-bucket append table partitioned by day, with its own
#: retention (partitions older than 90 days dropped by the ledger's writers, snapshots kept 1 h
#: and at most 100), and room for many writers committing at once.
LEDGER_OPTIONS: dict[str, str] = {
    "bucket": "-1",
    "file.format": "parquet",
    "partition.expiration-time": "90 d",
    "partition.timestamp-formatter": "yyyy-MM-dd",
    "partition.expiration-check-interval": "1 h",
    "snapshot.num-retained.min": "10",
    "snapshot.num-retained.max": "100",
    "snapshot.time-retained": "1 h",
    "commit.max-retries": "50",
    "commit.max-retry-wait": "2 s",
}

_NOT_NULL = ("record_id", "table_name", "action", "status", "start_time", "end_time", "dt")

LEDGER_SCHEMA = pa.schema(
    [
        pa.field("record_id", pa.string(), nullable=False),
        pa.field("table_name", pa.string(), nullable=False),
        pa.field("action", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string()),
        pa.field("start_time", pa.timestamp("ms"), nullable=False),
        pa.field("end_time", pa.timestamp("ms"), nullable=False),
        pa.field("duration_ms", pa.int64()),
        pa.field("snapshot_before", pa.int64()),
        pa.field("snapshot_after", pa.int64()),
        pa.field("files_read", pa.int64()),
        pa.field("bytes_read", pa.int64()),
        pa.field("files_written", pa.int64()),
        pa.field("bytes_written", pa.int64()),
        pa.field("files_deleted", pa.int64()),
        pa.field("bytes_deleted", pa.int64()),
        pa.field("rows_written", pa.int64()),
        pa.field("cpu_seconds", pa.float64()),
        pa.field("table_files", pa.int64()),
        pa.field("table_bytes", pa.int64()),
        pa.field("health_score", pa.float64()),
        pa.field("entry_point", pa.string()),
        pa.field("dag_id", pa.string()),
        pa.field("run_id", pa.string()),
        pa.field("task_id", pa.string()),
        pa.field("map_index", pa.int32()),
        pa.field("try_number", pa.int32()),
        pa.field("host", pa.string()),
        pa.field("details", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)


def new_record_id() -> str:
    return uuid.uuid4().hex


def utc_day(millis: int) -> str:
    """``YYYY-MM-DD`` of epoch ``millis`` in UTC (the ``dt`` partition)."""
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d")


@dataclass(frozen=True)
class LedgerRecord:
    """One maintenance action. Times are epoch millis (``start_time``/``end_time`` in the table);
    the rows one process records have increasing ``start_millis`` (1 ms apart at least)."""

    record_id: str
    table_name: str
    action: str
    status: str
    start_millis: int
    end_millis: int
    error: str | None = None
    duration_ms: int | None = None
    snapshot_before: int | None = None
    snapshot_after: int | None = None
    files_read: int | None = None
    bytes_read: int | None = None
    files_written: int | None = None
    bytes_written: int | None = None
    files_deleted: int | None = None
    bytes_deleted: int | None = None
    rows_written: int | None = None
    cpu_seconds: float | None = None
    table_files: int | None = None
    table_bytes: int | None = None
    health_score: float | None = None
    entry_point: str | None = None
    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    map_index: int | None = None
    try_number: int | None = None
    host: str | None = None
    details: str | None = None

    def __post_init__(self) -> None:
        from paimon_core.exceptions import InvalidArgumentError

        for name in ("record_id", "table_name", "action"):
            if not getattr(self, name):
                raise InvalidArgumentError(f"LedgerRecord.{name} must not be empty", argument=name)
        if self.status not in STATUSES:
            raise InvalidArgumentError(
                f"LedgerRecord.status must be one of {STATUSES}, got {self.status!r}", argument="status"
            )
        if self.end_millis < self.start_millis:
            raise InvalidArgumentError(
                f"LedgerRecord ends ({self.end_millis}) before it starts ({self.start_millis})",
                argument="end_millis",
            )

    @property
    def dt(self) -> str:
        """The partition: the UTC day of ``start_millis``."""
        return utc_day(self.start_millis)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: every field plus ``dt``."""
        return {**asdict(self), "dt": self.dt}

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> LedgerRecord:
        """The record of :meth:`to_dict` (unknown keys, such as ``dt``, ignored)."""
        names = {f.name for f in fields(LedgerRecord)}
        return LedgerRecord(**{k: v for k, v in raw.items() if k in names})

    def details_dict(self) -> dict[str, Any]:
        """``details`` parsed (``{}`` when empty or not JSON)."""
        try:
            out = json.loads(self.details or "{}")
        except json.JSONDecodeError:
            return {}
        return out if isinstance(out, dict) else {}


def records_to_arrow(records: Sequence[LedgerRecord]) -> pa.Table:
    """The records as a table of :data:`LEDGER_SCHEMA`.

    Built by Arrow's JSON reader: converting Python lists with ``pa.array`` would import pandas
    (~0.5 s) into processes that never need it (a metadata job records its row)."""
    import io

    import pyarrow.json as pj

    lines = []
    for r in records:
        row = r.to_dict()
        row["start_time"] = row.pop("start_millis")
        row["end_time"] = row.pop("end_millis")
        lines.append(json.dumps(row, separators=(",", ":"), allow_nan=False))
    parsed = pj.read_json(
        io.BytesIO("\n".join(lines).encode()),
        parse_options=pj.ParseOptions(explicit_schema=_JSON_SCHEMA, unexpected_field_behavior="error"),
        read_options=pj.ReadOptions(use_threads=False),
    )
    columns = [parsed.column(f.name).cast(f.type) for f in LEDGER_SCHEMA]
    return pa.Table.from_arrays(columns, schema=LEDGER_SCHEMA)


#: The JSON reader's view of the schema: times as epoch millis, every column nullable.
_JSON_SCHEMA = pa.schema(
    [pa.field(f.name, pa.int64() if pa.types.is_timestamp(f.type) else f.type) for f in LEDGER_SCHEMA]
)


def records_from_arrow(table: pa.Table) -> list[LedgerRecord]:
    """Ledger rows (any column order; missing optional columns are null) as records."""
    names = set(table.column_names)
    cols: dict[str, list[Any]] = {}
    for c in names:
        col = table.column(c)
        if pa.types.is_timestamp(col.type):
            col = col.cast(pa.timestamp("ms")).cast(pa.int64())
        cols[c] = col.to_pylist()
    out: list[LedgerRecord] = []
    for i in range(table.num_rows):
        raw = {c: cols[c][i] for c in names}
        raw["start_millis"] = raw.pop("start_time")
        raw["end_millis"] = raw.pop("end_time")
        out.append(LedgerRecord.from_dict(raw))
    return out
