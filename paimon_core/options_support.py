"""Table options Paimon defines whose values paimon_core cannot honour (yet).

``validate_options`` accepts every key and value Paimon defines. Some values change what a
writer must produce (a changelog, a compaction every N commits, expiring records), and a
writer that silently ignored them would leave a table that Flink or Spark read differently
from what the option promises. Such values are refused when a table is created or altered
here, and when a table that has them (written by another engine) is written here, with an
error that names the option and what to use instead. Reads are never refused for such values.

Table kinds are another matter (:data:`UNSUPPORTED_TABLE_KINDS`, :data:`UNSUPPORTED_TYPES`,
:func:`check_table_kind`, :func:`check_global_index`): a chain table, blob or vector columns,
primary-key indexes, a global index and the like store rows, files or index entries paimon_core
does not understand, so it can neither read them right nor maintain them without losing what
they hold. Such a table is refused when it is opened (its schema is read, or a
:class:`~paimon_core.table.table.FileStoreTable` is built; the catalog also looks for a global
index), and its options are refused at create and alter, with an
:class:`~paimon_core.exceptions.UnsupportedTableKindError` naming the feature. Nothing is read
from or written to the table's data before the refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidOptionError, UnsupportedTableKindError

if TYPE_CHECKING:
    from paimon_core.schema.data_types import DataField
    from paimon_core.store.file_store import FileStore

__all__ = [
    "UNSUPPORTED_OPTIONS",
    "UNSUPPORTED_TABLE_KINDS",
    "UNSUPPORTED_TYPES",
    "TableKind",
    "check_batch_read",
    "check_file_index_options",
    "check_global_index",
    "check_lookup_merge_engine",
    "check_supported_options",
    "check_table_kind",
    "name_table",
    "unsupported_table_kind",
    "unsupported_type_error",
]


@dataclass(frozen=True)
class Unsupported:
    """A refused option value: ``applies(value)`` says whether the value is one we cannot honour."""

    applies: Callable[[str], bool]
    reason: str


def _not(*ok: str) -> Callable[[str], bool]:
    return lambda v: v.strip().lower() not in ok


def _always(_: str) -> bool:
    return True


UNSUPPORTED_OPTIONS: dict[str, Unsupported] = {
    "changelog-producer": Unsupported(
        _not("none", "input", "full-compaction", "lookup"),
        "use 'none', 'input', 'full-compaction' or 'lookup', or write this table with Flink",
    ),
    "full-compaction.delta-commits": Unsupported(
        lambda v: not v.strip().isdigit() or int(v) < 1,
        "it must be a positive number of commits",
    ),
    "record-level.expire-time": Unsupported(_always, "record-level expiry is not implemented by paimon_core"),
}


def check_supported_options(options: Mapping[str, str], *, action: str) -> None:
    """Raise :class:`InvalidOptionError` naming the first option whose value we cannot honour.

    ``action`` says what was refused ("create or alter the table", "write"). A table kind we do
    not support (:func:`check_table_kind`) is refused first.
    """
    check_table_kind(options, action=action)
    for key, spec in UNSUPPORTED_OPTIONS.items():
        value = options.get(key)
        if value is not None and spec.applies(value):
            raise InvalidOptionError(
                f"Cannot {action}: option '{key}' = '{value}' is not supported: {spec.reason}", key=key
            )
    producer = (options.get("changelog-producer") or "none").strip().lower()
    engine = (options.get("merge-engine") or "deduplicate").strip().lower()
    if engine == "first-row" and producer == "full-compaction":  # Java's SchemaValidation
        raise InvalidOptionError(
            f"Cannot {action}: the first-row merge engine supports only 'none' and 'lookup' changelog-producer, "
            "not 'full-compaction'",
            key="changelog-producer",
        )
    dv = (options.get("deletion-vectors.enabled") or "false").strip().lower() == "true"
    if producer == "full-compaction" and dv:  # Java's SchemaValidation.validateForDeletionVectors
        raise InvalidOptionError(
            f"Cannot {action}: deletion vectors mode is only supported for the 'none', 'input' and 'lookup' "
            "changelog-producer, not 'full-compaction'",
            key="changelog-producer",
        )
    if engine == "first-row" and dv:  # Java's SchemaValidation.validateForDeletionVectors
        raise InvalidOptionError(
            f"Cannot {action}: merge-engine = 'first-row' cannot be combined with deletion-vectors.enabled = true "
            "(the first-row merge engine never deletes old rows, so it does not need deletion vectors); "
            "set deletion-vectors.enabled = false",
            key="deletion-vectors.enabled",
        )
    check_lookup_merge_engine(options, action=action)


def check_file_index_options(
    fields: Sequence[DataField], options: Mapping[str, str], *, action: str, table: str | None = None
) -> None:
    """Refuse ``file-index.*`` options Java refuses (``SchemaValidation.validateFileIndex``): an
    unknown index type, a column that is not in the table, a nested column on a non-map, a column
    type the index does not support, an option for a column its type does not list. Checked on
    create/alter and before a write; the :class:`InvalidOptionError` names the option. Index types
    Java writes and paimon_core does not (``bsi``, ``range-bitmap``) pass: data files are then
    written without that index (reads stay correct), and ``rewrite_file_index`` refuses them."""
    if not any(k.startswith("file-index.") for k in options):
        return
    from paimon_core.fileindex.file_index_options import check_file_index

    check_file_index(fields, options, action=action, table=table)


def check_lookup_merge_engine(options: Mapping[str, str], *, action: str) -> None:
    """Refuse ``changelog-producer = lookup`` without deletion vectors for engines other than
    deduplicate and first-row (checked on create/alter/write and before a lookup compaction).

    Without deletion vectors, Java reads lookup tables with ``LookupMergeFunction`` (only the
    newest high-level row of a key counts); paimon_core's reads merge every level, which equals
    that only for the deduplicate and first-row engines.
    """
    producer = (options.get("changelog-producer") or "none").strip().lower()
    engine = (options.get("merge-engine") or "deduplicate").strip().lower()
    dv = (options.get("deletion-vectors.enabled") or "false").strip().lower() == "true"
    if producer == "lookup" and not dv and engine not in ("deduplicate", "first-row"):
        raise InvalidOptionError(
            f"Cannot {action}: changelog-producer = 'lookup' without deletion-vectors.enabled = true is supported "
            f"by paimon_core for the deduplicate and first-row merge engines only, not '{engine}' (its reads merge "
            "every level, which would count values a lookup compaction already merged); enable deletion vectors "
            "or write this table with Flink",
            key="changelog-producer",
        )


# --------------------------------------------------------------------------------------------
# table kinds (Paimon 2.x) paimon_core cannot read, write or maintain
# --------------------------------------------------------------------------------------------

#: The advice every table-kind refusal ends with.
USE_INSTEAD = "read and maintain it with Paimon's Java engines (Flink or Spark with Paimon 2.x)"

#: Paimon column types (Java ``DataTypeRoot``) paimon_core cannot read or write, and the feature
#: each belongs to.
UNSUPPORTED_TYPES: dict[str, str] = {
    "BLOB": "blob columns",
    "VECTOR": "vector columns",
    "VARIANT": "variant columns",
    "GEOMETRY": "geometry columns",
    "GEOGRAPHY": "geography columns",
}


def _true(value: str) -> bool:
    return value.strip().lower() == "true"


def _set(value: str) -> bool:
    return bool(value.strip())


@dataclass(frozen=True)
class TableKind:
    """A table kind we refuse: it is present when one of ``options`` has a value ``applies`` to."""

    feature: str
    options: tuple[str, ...]
    applies: Callable[[str], bool]


#: Table kinds Java's CoreOptions defines that paimon_core cannot honour, by the options that
#: make them (column types: :data:`UNSUPPORTED_TYPES`; a global index: :func:`check_global_index`).
UNSUPPORTED_TABLE_KINDS: tuple[TableKind, ...] = (
    TableKind(
        "chain table",
        ("chain-table.enabled",),
        _true,
    ),
    TableKind(
        "chain table",  # the chain's snapshot and delta branches, read only by chain tables
        ("scan.fallback-snapshot-branch", "scan.fallback-delta-branch"),
        _set,
    ),
    TableKind(
        "blob columns",
        ("blob-field", "blob-descriptor-field", "blob.stored-descriptor-fields", "blob-view-field"),
        _set,
    ),
    TableKind("vector columns", ("vector-field", "vector.file.format"), _set),
    TableKind("vector index", ("pk-vector.index.columns",), _set),
    TableKind(
        "primary-key index",
        (
            "pk-btree.index.columns",
            "pk-bitmap.index.columns",
            "pk-multivalue.index.columns",
            "pk-full-text.index.columns",
        ),
        _set,
    ),
    TableKind("primary-key clustering override", ("pk-clustering-override",), _true),
    # layouts and orders paimon_core's writers, pruning and file paths do not follow: writing,
    # pruning by key or cleaning files of such a table would give wrong answers or lose files
    # (``mod`` is assigned as Java does: paimon_core.bucket; ``hive`` hashes as Hive does)
    TableKind("bucket function", ("bucket-function.type",), lambda v: v.strip().lower() not in ("default", "mod")),
    TableKind("data file path directory", ("data-file.path-directory",), _set),
    TableKind("snapshot ordering", ("sequence.snapshot-ordering",), _true),
    TableKind(
        "table type",  # format, object, lance, iceberg tables: not Paimon's file store
        ("type",),
        lambda v: v.strip().lower() not in ("table", "materialized-table"),
    ),
)


def unsupported_table_kind(options: Mapping[str, str]) -> tuple[str, str] | None:
    """``(feature, "option = 'value'")`` of the first unsupported table kind ``options`` make,
    or None."""
    for kind in UNSUPPORTED_TABLE_KINDS:
        for key in kind.options:
            value = options.get(key)
            if value is not None and kind.applies(value):
                return kind.feature, f"{key} = '{value}'"
    return None


def _kind_error(
    feature: str, what: str, *, action: str, table: str | None, key: str | None, type_name: str | None = None
) -> UnsupportedTableKindError:
    subject = f"table {table}" if table else "the table"
    return UnsupportedTableKindError(
        f"Cannot {action}: unsupported table kind '{feature}' in {subject} ({what}); paimon_core cannot read, "
        f"write or maintain such a table; {USE_INSTEAD}",
        feature=feature,
        key=key,
        type_name=type_name,
        what=what,
        action=action,
    )


def name_table(error: UnsupportedTableKindError, table: str) -> UnsupportedTableKindError:
    """``error`` again, naming ``table`` (a column type is refused before the table's name is known)."""
    return _kind_error(
        error.feature,
        error.what,
        action=error.action,
        table=table,
        key=error.key,
        type_name=error.type_name,
    )


def check_table_kind(options: Mapping[str, str], *, action: str, table: str | None = None) -> None:
    """Raise :class:`UnsupportedTableKindError` naming the feature if ``options`` make a table
    kind paimon_core does not support (:data:`UNSUPPORTED_TABLE_KINDS`)."""
    found = unsupported_table_kind(options)
    if found is not None:
        feature, what = found
        raise _kind_error(feature, what, action=action, table=table, key=what.split(" = ", 1)[0])


def unsupported_type_error(type_name: str, *, column: str | None = None) -> UnsupportedTableKindError:
    """The refusal of a column of type ``type_name`` (a key of :data:`UNSUPPORTED_TYPES`)."""
    feature = UNSUPPORTED_TYPES[type_name]
    what = f"column '{column}' of type {type_name}" if column else f"type {type_name}"
    return _kind_error(feature, what, action="open the table", table=None, key=None, type_name=type_name)


#: Options by which Java's batch reads take partitions from another branch
#: (``FallbackReadFileStoreTable``), which paimon_core's reads do not.
FALLBACK_READ_OPTIONS = ("scan.fallback-branch", "scan.primary-branch")


def check_batch_read(options: Mapping[str, str], *, table: str | None = None) -> None:
    """Refuse a batch read of a table whose reads fall back to another branch (Java reads the
    partitions the current branch lacks, or has elsewhere, from that branch; a read of the current
    branch alone would miss or misplace rows). Writes and maintenance of the branch are unaffected."""
    for key in FALLBACK_READ_OPTIONS:
        value = options.get(key)
        if value is not None and _set(value):
            raise _kind_error(
                "fallback branch", f"{key} = '{value}'", action="read the table", table=table, key=key
            )


#: Index types of Paimon's vector global indexes (vindex: IVF and DiskANN; Lumina).
VECTOR_INDEX_TYPE_PREFIXES = ("ivf-", "diskann", "lumina")


def check_global_index(store: FileStore, *, action: str = "open the table") -> None:
    """Raise :class:`UnsupportedTableKindError` if the latest snapshot of the table's ``store`` has global
    index files (Paimon 2.x ``create_global_index``: btree, bitmap, vector or full-text indexes
    over row ids). Java builds them only on row-tracking tables, so other tables cost no read."""
    if not _true(store.options.options.get("row-tracking.enabled", "false")):
        return
    snapshot = store.latest_snapshot()
    if snapshot is None or not snapshot.index_manifest:
        return
    from paimon_core.manifest.index_manifest import read_index_manifest

    entries = read_index_manifest(store.file_io, store.paths.manifest_path(snapshot.index_manifest))
    for e in entries:
        if e.index_file.global_index is not None:
            vector = e.index_file.index_type.lower().startswith(VECTOR_INDEX_TYPE_PREFIXES)
            raise _kind_error(
                "vector index" if vector else "global index",
                f"{e.index_file.index_type} index file {e.index_file.file_name} in snapshot {snapshot.id}",
                action=action,
                table=store.name,
                key=None,
            )
