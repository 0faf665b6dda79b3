"""Options of the ``paimon`` data source (Spark lower-cases option keys).

Everything not listed here is a Paimon table option for this read or write only
(``scan.snapshot-id``, ``scan.tag-name``, ``scan.timestamp-millis``, ``incremental-between``,
``source.split.target-size``, ``dynamic-partition-overwrite`` ...); unknown keys are an error.

Streaming reads also take Paimon Spark's ``read.stream.maxFilesPerTrigger``,
``read.stream.maxRowsPerTrigger``, ``read.stream.maxBytesPerTrigger``,
``read.stream.minRowsPerTrigger`` + ``read.stream.maxTriggerDelayMs`` and ``read.changelog``;
``catalog`` names the catalog that session options (``paimon.<catalog>.<db>.<table>.<key>``,
see :mod:`.dynamic_options`) are matched against.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError

__all__ = [
    "CATALOG",
    "CHECKPOINT_LOCATION",
    "COMMIT_IDENTIFIER",
    "COMMIT_USER",
    "FILTER",
    "FILTER_PUSHDOWN",
    "OVERWRITE_PARTITION",
    "OWN_KEYS",
    "PATH",
    "READ_CHANGELOG",
    "SESSION_SETTABLE_KEYS",
    "SourceOptions",
    "StreamLimits",
    "STORAGE_PREFIX",
    "TABLE",
    "WAREHOUSE",
    "WRITE_BATCH_ROWS",
    "parse_partition_spec",
]

#: Warehouse path or URL (required).
WAREHOUSE = "warehouse"
#: ``db.table``; ``load("db.t")`` / ``save("db.t")`` set ``path`` instead.
TABLE = "table"
PATH = "path"
#: ``storage.<key>`` options are fsspec storage options (``storage.endpoint_url`` ...).
STORAGE_PREFIX = "storage."
#: Reads: a SQL condition (paimon_core's grammar) that is part of this DataFrame's definition:
#: exact, with partition and stats pruning, and safe with any reuse of the DataFrame.
FILTER = "filter"
#: Reads: accept Spark's pushed filters (prune + apply exactly). Off by default: in Spark 4.3.0 the
#: planned read of one query leaks into later queries on the same DataFrame (see paimon_source).
FILTER_PUSHDOWN = "filter-pushdown"
FILTER_PUSHDOWN_DEFAULT = False
#: Writes: commit user and identifier; a (user, identifier) already committed is a no-op.
COMMIT_USER = "commit-user"
COMMIT_IDENTIFIER = "commit-identifier"
#: Writes with ``mode("overwrite")``: replace only this partition, ``k=v[,k2=v2]``.
OVERWRITE_PARTITION = "overwrite-partition"
#: Writes: rows handed to paimon_core per call (Spark's Arrow batches are small).
WRITE_BATCH_ROWS = "write.batch-rows"
WRITE_BATCH_ROWS_DEFAULT = 262_144
#: Catalog name that session (dynamic) options are matched against (Paimon: the Spark catalog name).
CATALOG = "catalog"
CATALOG_DEFAULT = "paimon"
#: Streaming reads: add a first column ``rowkind`` (+I/-U/+U/-D), as Paimon Spark's ``read.changelog``.
READ_CHANGELOG = "read.changelog"
#: Given by ``writeStream.option("checkpointLocation", ...)``; never a table option.
CHECKPOINT_LOCATION = "checkpointlocation"
#: Streaming read limits (Paimon Spark's SparkConnectorOptions; keys lower-cased as Spark passes them).
MAX_FILES_PER_TRIGGER = "read.stream.maxfilespertrigger"
MAX_ROWS_PER_TRIGGER = "read.stream.maxrowspertrigger"
MAX_BYTES_PER_TRIGGER = "read.stream.maxbytespertrigger"
MIN_ROWS_PER_TRIGGER = "read.stream.minrowspertrigger"
MAX_TRIGGER_DELAY_MS = "read.stream.maxtriggerdelayms"
_LIMIT_KEYS = (
    MAX_FILES_PER_TRIGGER,
    MAX_ROWS_PER_TRIGGER,
    MAX_BYTES_PER_TRIGGER,
    MIN_ROWS_PER_TRIGGER,
    MAX_TRIGGER_DELAY_MS,
)

_OWN_KEYS = frozenset(
    {
        WAREHOUSE,
        TABLE,
        PATH,
        FILTER,
        FILTER_PUSHDOWN,
        COMMIT_USER,
        COMMIT_IDENTIFIER,
        OVERWRITE_PARTITION,
        WRITE_BATCH_ROWS,
        CATALOG,
        READ_CHANGELOG,
        CHECKPOINT_LOCATION,
        *_LIMIT_KEYS,
    }
)
#: The data source's own keys (never Paimon table options).
OWN_KEYS = _OWN_KEYS
#: Our keys that session (dynamic) options may set: the ones that tune a read, not what it reads.
SESSION_SETTABLE_KEYS = frozenset({FILTER_PUSHDOWN, WRITE_BATCH_ROWS, READ_CHANGELOG, *_LIMIT_KEYS})


@dataclass(frozen=True)
class StreamLimits:
    """Admission limits of one micro-batch (None: no limit)."""

    max_files: int | None = None
    max_rows: int | None = None
    max_bytes: int | None = None
    min_rows: int | None = None
    max_trigger_delay_ms: int | None = None

    @property
    def any_max(self) -> bool:
        return self.max_files is not None or self.max_rows is not None or self.max_bytes is not None


@dataclass(frozen=True)
class SourceOptions:
    """The data source's options, split into ours and Paimon table options."""

    warehouse: str
    table: str
    storage_options: dict[str, str] = field(default_factory=dict)
    table_options: dict[str, str] = field(default_factory=dict)
    filter: str | None = None
    filter_pushdown: bool = FILTER_PUSHDOWN_DEFAULT
    commit_user: str | None = None
    commit_identifier: int | None = None
    overwrite_partition: dict[str, str] | None = None
    write_batch_rows: int = WRITE_BATCH_ROWS_DEFAULT
    catalog: str = CATALOG_DEFAULT
    read_changelog: bool = False
    stream_limits: StreamLimits = field(default_factory=StreamLimits)
    checkpoint_location: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SourceOptions:
        """Parse Spark's (case-insensitive) options; raises InvalidOptionError naming the key."""
        opts = {str(k).lower(): str(v) for k, v in options.items() if v is not None}
        warehouse = opts.get(WAREHOUSE, "").strip()
        if not warehouse:
            raise InvalidOptionError(
                "The paimon data source needs .option('warehouse', <path or URL>)", key=WAREHOUSE
            )
        table = (opts.get(TABLE) or opts.get(PATH) or "").strip()
        if not table:
            raise InvalidOptionError(
                "The paimon data source needs a table: .load('db.table') / .save('db.table') "
                "or .option('table', 'db.table')",
                key=TABLE,
            )
        ident = opts.get(COMMIT_IDENTIFIER)
        pushdown = opts.get(FILTER_PUSHDOWN, str(FILTER_PUSHDOWN_DEFAULT)).strip().lower()
        if pushdown not in ("true", "false"):
            raise InvalidOptionError(
                f"Option '{FILTER_PUSHDOWN}' must be true or false, got {pushdown!r}", key=FILTER_PUSHDOWN
            )
        batch_rows = opts.get(WRITE_BATCH_ROWS)
        changelog = opts.get(READ_CHANGELOG, "false").strip().lower()
        if changelog not in ("true", "false"):
            raise InvalidOptionError(
                f"Option '{READ_CHANGELOG}' must be true or false, got {changelog!r}", key=READ_CHANGELOG
            )
        return cls(
            warehouse=warehouse,
            table=table,
            storage_options={
                k[len(STORAGE_PREFIX) :]: v for k, v in opts.items() if k.startswith(STORAGE_PREFIX)
            },
            table_options={
                k: v for k, v in opts.items() if k not in _OWN_KEYS and not k.startswith(STORAGE_PREFIX)
            },
            filter=opts.get(FILTER) or None,
            filter_pushdown=pushdown == "true",
            commit_user=opts.get(COMMIT_USER) or None,
            commit_identifier=_int(ident, COMMIT_IDENTIFIER) if ident else None,
            overwrite_partition=parse_partition_spec(opts[OVERWRITE_PARTITION])
            if opts.get(OVERWRITE_PARTITION)
            else None,
            write_batch_rows=_int(batch_rows, WRITE_BATCH_ROWS, minimum=1)
            if batch_rows
            else WRITE_BATCH_ROWS_DEFAULT,
            catalog=(opts.get(CATALOG) or CATALOG_DEFAULT).strip(),
            read_changelog=changelog == "true",
            stream_limits=_stream_limits(opts),
            checkpoint_location=opts.get(CHECKPOINT_LOCATION) or None,
        )

    @property
    def database_and_table(self) -> tuple[str, str]:
        """``(db, table)`` of :attr:`table` (``default`` when no database is given)."""
        db, sep, name = self.table.rpartition(".")
        return (db if sep else "default"), name


def _stream_limits(opts: Mapping[str, str]) -> StreamLimits:
    values = {k: _int(opts[k], k, minimum=1) if opts.get(k) else None for k in _LIMIT_KEYS}
    if (values[MIN_ROWS_PER_TRIGGER] is None) != (values[MAX_TRIGGER_DELAY_MS] is None):
        raise InvalidOptionError(
            "Can't provide only one of read.stream.minRowsPerTrigger and read.stream.maxTriggerDelayMs",
            key=MIN_ROWS_PER_TRIGGER,
        )
    return StreamLimits(
        max_files=values[MAX_FILES_PER_TRIGGER],
        max_rows=values[MAX_ROWS_PER_TRIGGER],
        max_bytes=values[MAX_BYTES_PER_TRIGGER],
        min_rows=values[MIN_ROWS_PER_TRIGGER],
        max_trigger_delay_ms=values[MAX_TRIGGER_DELAY_MS],
    )


def _int(value: str, key: str, *, minimum: int = 0) -> int:
    try:
        n = int(value)
    except ValueError:
        raise InvalidOptionError(f"Option '{key}' must be an integer, got {value!r}", key=key) from None
    if n < minimum:
        raise InvalidOptionError(f"Option '{key}' must be >= {minimum}, got {n}", key=key)
    return n


def parse_partition_spec(text: str) -> dict[str, str]:
    """``dt=2024-01-01,hr=3`` -> ``{"dt": "2024-01-01", "hr": "3"}``."""
    spec: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise InvalidArgumentError(f"Partition spec must be 'key=value[,key=value]', got {text!r}")
        spec[key.strip()] = value.strip()
    return spec
