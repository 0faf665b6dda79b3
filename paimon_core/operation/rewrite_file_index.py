"""``rewrite_file_index`` (Java's ``RewriteFileIndexProcedure`` / ``FileIndexProcessor``): rebuild
the data-file indexes of a table after its ``file-index.*`` options changed.

Java reads every live data file of the selected partitions, writes its index in Paimon's file-index
format (``FileIndexFormat``: bloom filter, bitmap, BSI, range bitmap, per column, as
``file-index.<type>.columns`` and ``file-index.<type>.<column>.<option>`` configure) into a
``<data file>.index`` extra file or, below ``file-index.in-manifest-threshold``, into the manifest
entry (``_EMBEDDED_FILE_INDEX``), and commits the rewritten entries.

paimon_core cannot write that format yet (no ``FileIndexFormat`` writer, no bloom-filter / bitmap /
BSI / range-bitmap index writers), so :func:`rewrite_file_index` checks the table and the
arguments Java takes (``table``, ``partitions``) and the file-index options. When there is nothing
to write (no ``file-index.<type>.columns`` option) and no live file of the selected partitions has
an index to drop, Java's rewrite changes nothing either: it returns a result saying so. Otherwise it
refuses with :class:`InvalidArgumentError` naming the missing feature. Nothing is changed. Tables keep their
existing index files: every operation here carries ``extra_files`` and ``embedded_index`` over, and
expiry and orphan clean keep the index files live entries name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.manifest.entries import DataFileMeta
    from paimon_core.table.table import FileStoreTable

__all__ = ["INDEX_TYPES", "FileIndexColumns", "RewriteFileIndexResult", "file_index_columns", "rewrite_file_index"]

#: Java's file index types (``FileIndexerFactory`` identifiers).
INDEX_TYPES = ("bloom-filter", "bitmap", "bsi", "range-bitmap")
FILE_INDEX_PREFIX = "file-index."
#: Java's ``DataFilePathFactory.INDEX_PATH_SUFFIX``: a data file's index extra file
INDEX_SUFFIX = ".index"
MISSING_FEATURE = (
    "writing Paimon's data-file index (FileIndexFormat with bloom-filter, bitmap, bsi and range-bitmap "
    "index writers) is not supported by paimon_core yet"
)


@dataclass(frozen=True)
class FileIndexColumns(_ToDict):
    """The columns one index type covers (``file-index.<type>.columns``)."""

    index_type: str
    columns: tuple[str, ...]


def file_index_columns(table: FileStoreTable) -> tuple[FileIndexColumns, ...]:
    """The table's ``file-index.<type>.columns`` options, checked: a known type, existing columns."""
    out = []
    names = set(table.schema.field_names)
    for key, value in sorted(table.options.options.items()):
        if not key.startswith(FILE_INDEX_PREFIX) or not key.endswith(".columns"):
            continue
        index_type = key[len(FILE_INDEX_PREFIX) : -len(".columns")]
        if index_type not in INDEX_TYPES:
            raise InvalidArgumentError(
                f"Option '{key}' of {table.name} names an unknown file index type '{index_type}' "
                f"(types: {', '.join(INDEX_TYPES)})",
                option=key,
            )
        columns = tuple(c.strip() for c in str(value).split(",") if c.strip())
        unknown = [c for c in columns if c.split("[", 1)[0] not in names]
        if unknown:
            raise InvalidArgumentError(
                f"Option '{key}' of {table.name} names columns {unknown} that are not in its schema", option=key
            )
        out.append(FileIndexColumns(index_type, columns))
    return tuple(out)


@dataclass(frozen=True)
class RewriteFileIndexResult(_ToDict):
    """A rewrite that had nothing to do (no index configured, none to drop)."""

    table: str
    files: int  # live data files of the selected partitions
    rewritten_files: int = 0
    note: str = "no file-index.<type>.columns option and no existing index: nothing to rewrite"
    result: str = "Success"


def _has_index(f: DataFileMeta) -> bool:
    return bool(f.embedded_index) or any(x.endswith(INDEX_SUFFIX) for x in f.extra_files)


def rewrite_file_index(
    table: FileStoreTable, partitions: str | Sequence[Mapping[str, str]] | None = None
) -> RewriteFileIndexResult:
    """Check the table, ``partitions`` and the file-index options; nothing to do: the result,
    else refuse (see the module docstring)."""
    specs: list[dict[str, str]] | None = None
    if partitions is not None:
        from paimon_core.operation.partition_drop import parse_partition_specs

        specs = parse_partition_specs(partitions)
        keys = set(table.schema.partition_keys)
        for spec in specs:
            unknown = [k for k in spec if k not in keys]
            if unknown:
                raise InvalidArgumentError(
                    f"partitions names {unknown}, which are not partition keys of {table.name}", argument="partitions"
                )
    configured = file_index_columns(table)
    latest = table.snapshot_manager.latest_snapshot()
    entries = table.new_file_store_scan().live_entries(latest) if latest is not None else []
    if specs is not None:
        from paimon_core.partition.partition_expire_strategy import partition_entries

        default = table.options.partition_default_name
        names = table.schema.partition_keys
        wanted = {
            p.partition
            for p in partition_entries(table, entries)
            if any(
                all(({k: default if v is None else v for k, v in zip(names, p.values, strict=True)}).get(k) == v
                    for k, v in spec.items())
                for spec in specs
            )
        }  # fmt: skip
        entries = [e for e in entries if e.partition in wanted]
    indexed = sum(1 for e in entries if _has_index(e.file))
    if not configured and not indexed:
        return RewriteFileIndexResult(table.name, len(entries))
    what = (
        "; ".join(f"{c.index_type} on {', '.join(c.columns)}" for c in configured)
        if configured
        else f"no file-index.<type>.columns option is set, which would drop the index of {indexed} file(s)"
    )
    raise InvalidArgumentError(
        f"rewrite_file_index on {table.name} ({what}): {MISSING_FEATURE}; nothing was changed. Run "
        "CALL sys.rewrite_file_index in Flink or Spark for this table.",
        feature="file-index writer",
        argument="rewrite_file_index",
    )
