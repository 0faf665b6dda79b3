"""``rewrite_file_index`` (Java's ``RewriteFileIndexProcedure`` / ``FileIndexProcessor``): rebuild
the data-file indexes of a table after its ``file-index.*`` options changed.

As Java: every live data file of the selected partitions (``partitions``, Flink's argument) of the
latest snapshot is read again and its index rebuilt from the table's current options by
:class:`~paimon_core.fileindex.file_index_processor.FileIndexProcessor` (embedded in the manifest
entry under ``file-index.in-manifest-threshold``, else a new ``.index`` file next to the data
file; an index no longer configured is dropped). The files whose index changed are committed in
ONE snapshot of kind COMPACT: each is a compact-before (the old entry) and compact-after (the same
data file with its new index) of its bucket, so the data files, their rows, sequence numbers,
row ids and deletion vectors stay as they are. A file whose index is already what the options
say is left alone (Java writes a copy of an unchanged index file under a new name; we keep it).

The old index files stay with the snapshots and tags that name them: expiry keeps a file a live
snapshot re-adds (so an index file replaced here is not deleted by expiry) and orphan clean
removes it once no snapshot or tag names it, as in Java.

Refused, changing nothing (:class:`~paimon_core.exceptions.InvalidOptionError` /
:class:`~paimon_core.exceptions.InvalidArgumentError` naming the problem): partitions that are not
partition keys; ``file-index.*`` options Java refuses (an unknown index type, a column not in the
table, a type the index does not support); index types paimon_core does not write
(:data:`UNSUPPORTED_TYPES`: ``bsi``, ``range-bitmap``: run Java's procedure for
those); data-evolution tables (their files hold some columns of shared row-id ranges, which
Java's processor does not index per file either). A commit that conflicts (a concurrent
compaction replaced a file) deletes the index files this run wrote and raises the retryable
:class:`~paimon_core.exceptions.CommitConflictError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflictError, CommitRetriesExhaustedError, InvalidArgumentError
from paimon_core.fileindex.file_index_options import JAVA_INDEX_TYPES, FileIndexOptions, check_file_index
from paimon_core.fileindex.file_indexer import supported_index_types
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.results import CommitResult, _ToDict

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = [
    "INDEX_TYPES",
    "UNSUPPORTED_TYPES",
    "FileIndexColumns",
    "RewriteFileIndexResult",
    "file_index_columns",
    "rewrite_file_index",
]

logger = logging.getLogger(__name__)

#: Java's file index types (``FileIndexerFactory`` identifiers).
INDEX_TYPES = tuple(JAVA_INDEX_TYPES)
#: Java's index types paimon_core does not write: a rewrite asking for one is refused.
UNSUPPORTED_TYPES = tuple(t for t in INDEX_TYPES if t not in supported_index_types())
MISSING_FEATURE = "writing Paimon's {types} data-file index is not supported by paimon_core"


@dataclass(frozen=True)
class FileIndexColumns(_ToDict):
    """The columns one index type covers (``file-index.<type>.columns``)."""

    index_type: str
    columns: tuple[str, ...]


def file_index_columns(options: FileIndexOptions) -> tuple[FileIndexColumns, ...]:
    """The configured columns of each index type, by type name."""
    by_type: dict[str, list[str]] = {}
    for column, types in options.columns:
        for index_type, _ in types:
            by_type.setdefault(index_type, []).append(column.full_name)
    return tuple(FileIndexColumns(t, tuple(sorted(cs))) for t, cs in sorted(by_type.items()))


@dataclass(frozen=True)
class RewriteFileIndexResult(_ToDict):
    """What a rewrite did. ``written_partitions`` / ``written_indexes`` are the two numbers Java's
    procedure returns (partitions committed, files whose index was rewritten)."""

    table: str
    files: int  # live data files of the selected partitions
    rewritten_files: int = 0
    written_partitions: int = 0
    written_indexes: int = 0
    index_files_written: int = 0  # new ``.index`` files next to data files
    embedded_indexes: int = 0  # rewritten files whose index is now in the manifest
    dropped_indexes: int = 0  # rewritten files that no longer have an index
    indexes: tuple[FileIndexColumns, ...] = ()
    snapshot_id: int | None = None
    commit_user: str | None = None
    expired_snapshots: int = 0
    maintenance_error: str | None = None
    note: str = ""
    result: str = "Success"
    dry_run: bool = False


def _partition_filter(
    store: FileStore, partitions: str | Sequence[Mapping[str, str]]
) -> Callable[[bytes], bool]:
    from paimon_core.data.internal import partition_value_to_string
    from paimon_core.operation.partition_drop import parse_partition_specs

    specs = parse_partition_specs(partitions)
    keys = list(store.schema.partition_keys)
    for spec in specs:
        unknown = [k for k in spec if k not in keys]
        if unknown:
            raise InvalidArgumentError(
                f"partitions names {unknown}, which are not partition keys of {store.name} (partition keys: {keys}); "
                "nothing was changed",
                argument="partitions",
            )
    default = store.options.partition_default_name
    fields = store.schema.partition_fields
    cache: dict[bytes, bool] = {}

    def keep(partition: bytes) -> bool:
        hit = cache.get(partition)
        if hit is None:
            values = store.partition_codec.decode(partition)
            spec_of = {
                f.name: default if v is None else partition_value_to_string(v, f.type, legacy_name=False)
                for f, v in zip(fields, values, strict=True)
            }
            hit = cache[partition] = any(all(spec_of.get(k) == v for k, v in spec.items()) for spec in specs)
        return hit

    return keep


def rewrite_file_index(
    store: FileStore,
    partitions: str | Sequence[Mapping[str, str]] | None = None,
    *,
    dry_run: bool = False,
    commit_user: str | None = None,
    after_commit: Callable[[CommitResult], CommitResult] | None = None,
) -> RewriteFileIndexResult:
    """Rebuild the indexes of the live files of ``partitions`` (default: all) in one COMPACT
    snapshot (see the module docstring). ``after_commit``: the table's post-commit maintenance.

    ``dry_run``: read the files and compute their indexes as a run would, report what it would
    rewrite, and write and commit nothing (default False: a rewrite keeps every row and file a
    snapshot names, as compaction)."""
    from paimon_core.operation.commit.commit_message import CommitMessage
    from paimon_core.operation.commit.committer import new_commit_user
    from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

    keep = _partition_filter(store, partitions) if partitions is not None else None
    options = check_file_index(
        store.schema.fields,
        store.options.options,
        action=f"rewrite the file index of {store.name}",
        table=store.name,
    )
    configured = file_index_columns(options)
    unsupported = sorted(c.index_type for c in configured if c.index_type in UNSUPPORTED_TYPES)
    if unsupported:
        what = "; ".join(f"{c.index_type} on {', '.join(c.columns)}" for c in configured)
        raise InvalidArgumentError(
            f"rewrite_file_index on {store.name} ({what}): "
            f"{MISSING_FEATURE.format(types=', '.join(unsupported))} (it writes {', '.join(supported_index_types())}); "
            "nothing was changed. Run CALL sys.rewrite_file_index in Flink or Spark for this table.",
            feature="file-index writer",
            argument="rewrite_file_index",
        )
    opts = store.options.options
    if (
        not store.schema.primary_keys
        and opts.get("data-evolution.enabled", "false").strip().lower() == "true"
    ):
        raise InvalidArgumentError(
            f"rewrite_file_index on {store.name}: it is a data-evolution table (data-evolution.enabled = true), whose "
            "files hold some columns of shared row-id ranges; paimon_core does not index them; nothing was changed",
            feature="data evolution",
            argument="rewrite_file_index",
        )
    latest = store.latest_snapshot()
    entries = store.new_scan().live_entries(latest) if latest is not None else []
    if keep is not None:
        entries = [e for e in entries if keep(e.partition)]
    from paimon_core.fileindex.file_index_processor import FileIndexProcessor

    processor = FileIndexProcessor(store, options)
    written: list[str] = []
    planned = 0
    changed: dict[tuple[bytes, int, int], list[tuple[DataFileMeta, DataFileMeta]]] = {}
    try:
        for e in entries:
            out = processor.process(e, write=not dry_run)
            if out.written_index is not None:
                written.append(out.written_index)
            elif out.planned_index is not None:
                planned += 1
            if out.changed(e.file):
                changed.setdefault((e.partition, e.bucket, e.total_buckets), []).append((e.file, out.meta))
    except BaseException:
        _delete(store, written)
        raise
    pairs = [p for ps in changed.values() for p in ps]
    base = RewriteFileIndexResult(
        store.name,
        len(entries),
        rewritten_files=len(pairs),
        written_partitions=len({k[0] for k in changed}),
        written_indexes=len(pairs),
        index_files_written=len(written) + planned,
        embedded_indexes=sum(1 for _, new in pairs if new.embedded_index is not None),
        dropped_indexes=sum(
            1
            for _, new in pairs
            if new.embedded_index is None and not any(x.endswith(".index") for x in new.extra_files)
        ),
        indexes=configured,
        dry_run=dry_run,
    )
    if not pairs:
        return _with_note(
            base, "every file's index already matches the file-index options: nothing to rewrite"
        )
    if dry_run:
        return _with_note(
            base, f"dry run: would rewrite the index of {len(pairs)} file(s) ({len(entries)} checked); nothing was written"
        )
    messages = [
        CommitMessage(
            partition,
            bucket,
            total,
            compact_before=tuple(o for o, _ in ps),
            compact_after=tuple(n for _, n in ps),
        )
        for (partition, bucket, total), ps in changed.items()
    ]
    user = commit_user or new_commit_user(opts.get("commit.user-prefix"))
    try:
        commit = store.new_commit(user).commit(messages, BATCH_COMMIT_IDENTIFIER)
    except (CommitConflictError, CommitRetriesExhaustedError):  # surely not committed: ours to remove
        _delete(store, written)
        raise
    if after_commit is not None:
        commit = after_commit(commit)
    logger.info(
        "Rewrote the file index of %d of %d file(s) of %s in snapshot %s",
        len(pairs),
        len(entries),
        store.name,
        commit.snapshot_id,
    )
    return _with_note(
        base,
        f"rewrote the index of {len(pairs)} file(s)",
        snapshot_id=commit.snapshot_id,
        commit_user=user,
        expired_snapshots=commit.expired_snapshots,
        maintenance_error=commit.maintenance_error,
    )


def _with_note(base: RewriteFileIndexResult, note: str, **changes: object) -> RewriteFileIndexResult:
    import dataclasses

    return dataclasses.replace(base, note=note, **changes)  # type: ignore[arg-type]


def _delete(store: FileStore, paths: Sequence[str]) -> None:
    """Remove index files this run wrote that no snapshot names (the run failed)."""
    for p in paths:
        try:
            store.file_io.delete(p)
        except Exception:  # noqa: BLE001 - an orphan clean removes what is left
            logger.warning("Could not delete the unused index file %s", p, exc_info=True)
