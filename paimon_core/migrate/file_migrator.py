"""Adopt a directory of plain Parquet files (Hive-style ``key=value`` partitions) as a Paimon append table.

Java's ``migrate_table`` / ``migrate_file`` (``HiveMigrator``, ``FileMetaUtils``) for a directory
instead of a metastore table: no row is copied. Each file keeps its name and moves (a rename; on an
object store a server-side copy) into ``<partition>/bucket-0/`` of the table; its
:class:`DataFileMeta` comes from the Parquet footer (row count, min/max/null counts; only FLOAT,
DOUBLE, DECIMAL and TIMESTAMP columns are read back, see :mod:`paimon_core.stats.footer_stats`);
one APPEND snapshot then publishes all of them. Partition columns the files do not hold (the Hive
layout) are read from the partition, as Java's and pypaimon's readers do.

Before anything moves, every file is checked (Parquet, same columns and types as the table, the
same partition keys in every path): a problem is an error naming the file and nothing changes. A
failure while moving or committing moves every file back.

A source that is, or lies inside, a Paimon table (a directory with ``schema/schema-N`` at it or
any ancestor), or inside the warehouse's own metadata (``_maintenance``, the ledger database),
is refused before anything moves, and so is a symbolic link under the source.

Marker files (``_SUCCESS``, ``.crc`` and other names starting with ``_`` or ``.``) are skipped, as
Hive and Spark skip them.
"""

from __future__ import annotations

import functools
import logging
import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core.catalog.filesystem_catalog import FileSystemCatalog
from paimon_core.exceptions import (
    CommitStateUnknownError,
    CorruptFileError,
    InvalidArgumentError,
    SchemaMismatchError,
)
from paimon_core.io.file_io import FileIO, join
from paimon_core.io.uri import parse_path
from paimon_core.ledger.record import LEDGER_DATABASE
from paimon_core.maintenance.state_store import STATE_DIR
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.append_writer import stats_to_simple
from paimon_core.paths import DB_SUFFIX, SCHEMA_DIR, enclosing_table, is_table_dir
from paimon_core.stats.collector import ColumnStats, apply_modes, stats_modes_for
from paimon_core.stats.footer_stats import raw_file_stats
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable

__all__ = [
    "MigrateResult",
    "SourceFile",
    "check_source",
    "migrate_directory",
    "scan_source",
]

logger = logging.getLogger(__name__)

#: Hive's name for a null partition value (Paimon's own is ``partition.default-name``).
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class SourceFile:
    """One Parquet file of the source directory and the partition its path names."""

    path: str
    size: int
    partition: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class MigrateResult:
    """What a migration did (or, with ``dry_run``, would do)."""

    table: str
    source: str
    files: int
    rows: int
    partitions: list[str]
    created_table: bool
    snapshot_id: int | None
    dry_run: bool
    moved: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "source": self.source,
            "files": self.files,
            "rows": self.rows,
            "partitions": self.partitions,
            "created_table": self.created_table,
            "snapshot_id": self.snapshot_id,
            "dry_run": self.dry_run,
        }


def _skipped(name: str) -> bool:
    return name.startswith(("_", "."))


#: Directories of the warehouse's own metadata (the planner state and the ledger database).
WAREHOUSE_METADATA_DIRS = frozenset({STATE_DIR, f"{LEDGER_DATABASE}{DB_SUFFIX}", "_airflow"})


def check_source(file_io: FileIO, source: str) -> None:
    """:class:`InvalidArgumentError` when ``source`` is, or lies inside, a Paimon table (a
    directory with ``schema/schema-N``, checked at ``source`` and every ancestor) or the
    warehouse's own metadata: migrating moves files, and moving a table's files out of it breaks
    that table."""
    parsed = parse_path(source)
    absolute = posixpath.normpath(parsed.path) if parsed.path.startswith("/") else os.path.abspath(parsed.path)
    for name in absolute.split("/"):
        if name in WAREHOUSE_METADATA_DIRS:
            raise InvalidArgumentError(
                f"Refusing to migrate {source}: it is inside {name}, the warehouse's own metadata; nothing was changed",
                path=source,
            )
    table = enclosing_table(file_io, source)
    if table is not None:
        raise InvalidArgumentError(
            f"Refusing to migrate {source}: it is inside the Paimon table at {table} (it has {SCHEMA_DIR}/), "
            "whose files would leave that table; nothing was changed",
            path=source,
        )


def scan_source(file_io: FileIO, source: str) -> list[SourceFile]:
    """Every data file under ``source`` with its ``key=value`` path segments, in path order.
    Symbolic links are refused: migrating moves files, and never through a link."""
    out: list[SourceFile] = []

    def walk(directory: str, partition: tuple[tuple[str, str], ...]) -> None:
        for st in sorted(file_io.list_status(directory), key=lambda s: s.name):
            if _skipped(st.name):
                continue
            if file_io.is_symlink(st.path):
                raise InvalidArgumentError(
                    f"{st.path} is a symbolic link: migrate_table moves files and never follows a link "
                    "(copy the file or directory in its place); nothing was changed",
                    path=st.path,
                )
            if st.is_dir and is_table_dir(file_io, st.path):
                raise InvalidArgumentError(
                    f"Refusing to migrate {source}: {st.path} is a Paimon table, whose files would leave it; "
                    "nothing was changed",
                    path=st.path,
                )
            if st.is_dir:
                if "=" not in st.name:
                    raise InvalidArgumentError(
                        f"Directory {st.path} is not a Hive-style partition directory (key=value)",
                        path=st.path,
                    )
                key, value = st.name.split("=", 1)
                walk(st.path, (*partition, (key, value)))
            else:
                out.append(SourceFile(st.path, st.size, partition))

    walk(source.rstrip("/"), ())
    if not out:
        raise InvalidArgumentError(f"No data file under {source}", path=source)
    keys = {tuple(k for k, _ in f.partition) for f in out}
    if len(keys) > 1:
        raise InvalidArgumentError(
            f"Files under {source} are partitioned by different keys: {sorted(keys)}", path=source
        )
    return out


def _footer(file_io: FileIO, path: str) -> pq.FileMetaData:
    try:
        with file_io.open_input(path) as f:
            return pq.read_metadata(f)
    except (pa.ArrowInvalid, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise CorruptFileError(f"{path} is not a Parquet file: {e}", path=path) from e


def _partition_type(values: Sequence[str | None]) -> pa.DataType:
    """INT or BIGINT when every value is an integer, else STRING (Hive paths carry no types)."""
    present = [v for v in values if v is not None]
    try:
        ints = [int(v) for v in present]
    except ValueError:
        return pa.string()
    if not ints:
        return pa.string()
    return pa.int32() if all(-(2**31) <= i < 2**31 for i in ints) else pa.int64()


def _null_value(value: str, default_name: str) -> str | None:
    from paimon_core.data.internal import unescape_path_name

    text = unescape_path_name(value)
    return None if text in (HIVE_DEFAULT_PARTITION, default_name) else text


def migrate_directory(
    catalog: FileSystemCatalog,
    source: str,
    identifier: str,
    *,
    options: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> MigrateResult:
    """Adopt the Parquet files under ``source`` as table ``identifier`` (created if missing,
    else it must be an empty unaware-bucket append table with matching columns)."""
    file_io = catalog.file_io
    check_source(file_io, source)
    files = scan_source(file_io, source)
    keys = [k for k, _ in files[0].partition]
    footers = {f.path: _footer(file_io, f.path) for f in files}
    default_name = dict(options or {}).get("partition.default-name", "__DEFAULT_PARTITION__")
    exists = catalog.table_exists(identifier)
    if exists:
        table = catalog.get_table(identifier)
        _check_target(table, keys)
        default_name = table.options.partition_default_name
    file_schemas = {p: md.schema.to_arrow_schema() for p, md in footers.items()}
    try:
        data_schema = pa.unify_schemas(list(file_schemas.values()))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise SchemaMismatchError(
            f"The files under {source} do not share one schema: {e}", path=source
        ) from e
    part_values = {f.path: [_null_value(v, default_name) for _, v in f.partition] for f in files}
    if not exists:
        _check_new_options(options or {})
        fields = list(data_schema)
        for i, key in enumerate(keys):
            if key not in data_schema.names:
                fields.append(pa.field(key, _partition_type([vals[i] for vals in part_values.values()])))
        arrow_schema = pa.schema(fields)
    else:
        arrow_schema = table.arrow_schema
    for path, schema in file_schemas.items():
        _check_file_columns(path, schema, arrow_schema, keys)
    rows = sum(md.num_rows for md in footers.values())
    partitions = sorted({"/".join(f"{k}={v}" for k, v in f.partition) for f in files})
    if dry_run:
        return MigrateResult(identifier, source, len(files), rows, partitions, not exists, None, True)
    if not exists:
        table = catalog.create_table(
            identifier, arrow_schema, partition_keys=keys, options={**(options or {}), "bucket": "-1"}
        )
    try:
        messages, moves = _plan_messages(table, files, footers, part_values)
    except BaseException:
        if not exists:  # a failed migration leaves no table behind
            catalog.drop_table(identifier)
        raise
    moved: list[tuple[str, str]] = []
    try:
        for src, dst in moves:
            file_io.rename(src, dst)
            moved.append((src, dst))
        result = table.new_batch_write_builder().new_commit().commit(messages)
    except CommitStateUnknownError:
        raise  # the snapshot may name the moved files: leave them where it expects them
    except BaseException:
        stuck = 0
        for src, dst in reversed(moved):
            try:
                file_io.rename(dst, src)
            except OSError as e:  # pragma: no cover - reported; the file is still in the table directory
                stuck += 1
                logger.error("Could not move %s back to %s: %s", dst, src, e)
        if not exists and not stuck:  # every file is back: leave no table behind
            catalog.drop_table(identifier)
        raise
    logger.info("Migrated %d file(s), %d row(s) from %s into %s", len(files), rows, source, identifier)
    return MigrateResult(
        identifier, source, len(files), rows, partitions, not exists, result.snapshot_id, False, moved
    )


def _check_new_options(options: Mapping[str, str]) -> None:
    if options.get("primary-key"):
        raise InvalidArgumentError("migrate_table makes an append table: 'primary-key' cannot be set")
    if options.get("bucket", "-1") != "-1":
        raise InvalidArgumentError(
            f"migrate_table makes an unaware-bucket append table: 'bucket' must be -1, got {options['bucket']!r}"
        )


def _check_target(table: FileStoreTable, keys: Sequence[str]) -> None:
    if table.primary_keys or table.options.bucket != -1:
        raise InvalidArgumentError(
            f"Table {table.name} is not an unaware-bucket append table: files cannot be migrated into it"
        )
    if list(table.partition_keys) != list(keys):
        raise SchemaMismatchError(
            f"Table {table.name} is partitioned by {list(table.partition_keys)}, the files by {list(keys)}"
        )
    if table.latest_snapshot() is not None:
        raise InvalidArgumentError(
            f"Table {table.name} already holds data: migrate into a new or empty table"
        )


def _check_file_columns(
    path: str, file_schema: pa.Schema, table_schema: pa.Schema, keys: Sequence[str]
) -> None:
    for f in file_schema:
        if f.name not in table_schema.names:
            raise SchemaMismatchError(f"Column '{f.name}' of {path} is not a column of the table", path=path)
        want = table_schema.field(f.name).type
        if not f.type.equals(want):
            raise SchemaMismatchError(
                f"Column '{f.name}' of {path} is {f.type}, the table's is {want}", path=path, column=f.name
            )
    missing = [n for n in table_schema.names if n not in file_schema.names and n not in keys]
    if missing:
        raise SchemaMismatchError(f"{path} lacks the table's columns {missing}", path=path)


def _plan_messages(
    table: FileStoreTable,
    files: Sequence[SourceFile],
    footers: Mapping[str, pq.FileMetaData],
    part_values: Mapping[str, list[str | None]],
) -> tuple[list[CommitMessage], list[tuple[str, str]]]:
    """One commit message per partition (bucket 0) and the (source, destination) of every file."""
    from paimon_core.data.internal import partition_string_to_value

    fields = list(table.schema.fields)
    part_fields = table.schema.partition_fields
    modes = stats_modes_for(fields, table.schema.options)
    by_partition: dict[bytes, list[DataFileMeta]] = {}
    next_seq: dict[bytes, int] = {}
    moves: list[tuple[str, str]] = []
    sources: dict[str, str] = {}
    for f in files:
        md = footers[f.path]
        values = [
            None if v is None else partition_string_to_value(v, pf.type)
            for v, pf in zip(part_values[f.path], part_fields, strict=True)
        ]
        partition = table.partition_codec.encode(values)
        in_file = set(md.schema.to_arrow_schema().names)
        readable = [fld for fld in fields if fld.name in in_file]
        raw = raw_file_stats(md, readable, functools.partial(_read, table.file_io, f.path))
        for pf, v in zip(part_fields, values, strict=True):
            if pf.name not in in_file:
                raw[pf.name] = ColumnStats(v, v, 0) if v is not None else ColumnStats(None, None, md.num_rows)
        stats = apply_modes([raw[fld.name] for fld in fields], modes)
        disabled = all(m.kind == "none" for m in modes)
        name = f.path.rsplit("/", 1)[-1]
        if not name.endswith(".parquet"):
            name += ".parquet"
        seq = next_seq.get(partition, 0)
        next_seq[partition] = seq + md.num_rows
        meta = DataFileMeta.new_level0(
            name,
            f.size,
            md.num_rows,
            value_stats=None if disabled else stats_to_simple(stats, fields),
            min_sequence_number=seq,
            max_sequence_number=seq + md.num_rows - 1,
            schema_id=table.schema.id,
        )
        by_partition.setdefault(partition, []).append(meta)
        target = join(table.bucket_path(partition, 0), name)
        if target in sources:
            raise InvalidArgumentError(
                f"{sources[target]} and {f.path} would both become {target} (same partition and file name): "
                "rename one of them first",
                path=f.path,
            )
        sources[target] = f.path
        moves.append((f.path, target))
    messages = [CommitMessage(p, 0, -1, new_files=tuple(metas)) for p, metas in by_partition.items()]
    return messages, moves


def _read(file_io: FileIO, path: str, names: list[str]) -> pa.Table:
    with file_io.open_input(path) as f:
        return pq.read_table(f, columns=names)
