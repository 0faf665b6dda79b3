"""Drop manifest entries whose data file is gone (Java's ``ListUnexistingFiles`` and the
``remove_unexisting_files`` procedure / ``RemoveUnexistingFilesAction``).

For a table damaged outside our control: a data file deleted by hand or by a too eager orphan
cleanup, or a file a restarted writer committed again after it had been compacted away and
expired (Java's action doc). Reading such a table fails on the missing file; this removes the
files from the table's state so the rest can be read again. The rows of those files are lost
(they already were): run it only for the cases above, and look at the dry run first.

* The latest snapshot's live data files are checked for existence in bulk: one listing per
  directory (bucket directory, or the directory of files with an external path) holding two or
  more of them, one ``exists`` for a directory's single file. A file a listing misses is checked
  again by itself before it counts as gone (a listing is never the only evidence), and a
  directory that lists empty must itself be gone.
* The missing files are removed in ONE commit: DELETE entries per (partition, bucket), which
  (as in Java, whose increment deletes files) makes an OVERWRITE snapshot. The commit checks
  that every removed file is still live in the latest snapshot; a concurrent commit that
  compacted one away fails it with :class:`CommitConflictError` and the table is unchanged
  (run again). Nothing on the file system is touched: only new manifests and the snapshot
  are written.
* ``dry_run`` lists the files per partition and changes nothing.
* Tables with deletion vectors: a missing file that still has a vector is refused (its index
  file would have to be rewritten, which this does not do), before anything is written.
"""

from __future__ import annotations

import dataclasses
import logging
import posixpath
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO
    from paimon_core.manifest.entries import ManifestEntry
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)

#: Directories with at least this many referenced files are listed; fewer are probed one by one.
LIST_THRESHOLD = 2
DEFAULT_PARALLELISM = 8
COMMIT_USER_PREFIX = "remove-unexisting-files-"


@dataclass(frozen=True)
class UnexistingPartitionFiles(_ToDict):
    """The missing data files of one partition (``partition`` as ``k=v/k2=v2``; '' unpartitioned)."""

    partition: str
    files: tuple[str, ...]
    row_count: int


@dataclass(frozen=True)
class RemoveUnexistingFilesResult(_ToDict):
    """What was (or, with ``dry_run``, would be) removed from the table's state."""

    table: str
    dry_run: bool
    snapshot_id: int | None  # the snapshot whose files were checked
    checked_files: int
    removed_files: int
    removed_rows: int
    partitions: tuple[UnexistingPartitionFiles, ...] = ()
    committed_snapshot_id: int | None = None
    commit_kind: str | None = None


class RemoveUnexistingFiles:
    """Finds the live data files of a table that no longer exist, and drops them in one commit."""

    def __init__(self, store: FileStore, *, parallelism: int | None = None) -> None:
        if parallelism is not None and (
            isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 1
        ):
            raise InvalidArgumentError(
                f"parallelism must be a positive integer, got {parallelism!r}", argument="parallelism"
            )
        self.store = store
        self.file_io: FileIO = store.file_io
        self.parallelism = parallelism or DEFAULT_PARALLELISM

    def run(self, *, dry_run: bool = False) -> RemoveUnexistingFilesResult:
        store = self.store
        snapshot = store.snapshot_manager.latest_snapshot()
        if snapshot is None:
            return RemoveUnexistingFilesResult(store.name, dry_run, None, 0, 0, 0)
        entries = store.new_scan().live_entries(snapshot)
        missing = self._not_in_orphan_trash(self.list_missing(entries), dry_run=dry_run)
        partitions = self._by_partition(missing)
        result = RemoveUnexistingFilesResult(
            table=store.name,
            dry_run=dry_run,
            snapshot_id=snapshot.id,
            checked_files=len(entries),
            removed_files=len(missing),
            removed_rows=sum(e.file.row_count for e, _ in missing),
            partitions=partitions,
        )
        if not missing:
            logger.info("All %d data files of %s (snapshot %d) exist", len(entries), store.name, snapshot.id)
            return result
        self._check_no_deletion_vectors(snapshot, [e for e, _ in missing])
        if dry_run:
            logger.info(
                "Would remove %d missing data file(s) from %s (snapshot %d)",
                len(missing),
                store.name,
                snapshot.id,
            )
            return result
        commit = store.new_commit(f"{COMMIT_USER_PREFIX}{uuid.uuid4()}")
        committed = commit.commit(
            _messages(e for e, _ in missing), BATCH_COMMIT_IDENTIFIER, check_committed=False
        )
        logger.warning(
            "Removed %d missing data file(s) (%d rows) from %s in snapshot %s",
            len(missing),
            result.removed_rows,
            store.name,
            committed.snapshot_id,
        )
        return dataclasses.replace(
            result, committed_snapshot_id=committed.snapshot_id, commit_kind=committed.commit_kind
        )

    # --- existence --------------------------------------------------------------------------
    def data_file_path(self, e: ManifestEntry) -> str:
        return self.store.paths.file_in_dir(
            self.store.bucket_path(e.partition, e.bucket), e.file.file_name, e.file.external_path
        )

    def list_missing(self, entries: Sequence[ManifestEntry]) -> list[tuple[ManifestEntry, str]]:
        """The entries whose data file does not exist, with its path (in entry order)."""
        by_dir: dict[str, list[tuple[ManifestEntry, str]]] = defaultdict(list)
        for e in entries:
            path = self.data_file_path(e)
            by_dir[posixpath.dirname(path)].append((e, path))
        groups = list(by_dir.items())
        with ThreadPoolExecutor(max_workers=max(1, min(self.parallelism, len(groups)))) as pool:
            found = list(pool.map(lambda g: self._missing_in(g[0], g[1]), groups))
        gone = {id(e) for chunk in found for e, _ in chunk}
        return [(e, p) for group in by_dir.values() for e, p in group if id(e) in gone]

    def _missing_in(
        self, directory: str, files: list[tuple[ManifestEntry, str]]
    ) -> list[tuple[ManifestEntry, str]]:
        if len(files) < LIST_THRESHOLD:
            return [(e, p) for e, p in files if not self.file_io.exists(p)]
        present = {s.name for s in self.file_io.list_status(directory) if not s.is_dir}
        absent = [(e, p) for e, p in files if posixpath.basename(p) not in present]
        if absent and not present and not self.file_io.exists(directory):
            return absent  # an empty listing of a directory that is itself gone
        return [(e, p) for e, p in absent if not self.file_io.exists(p)]

    def _not_in_orphan_trash(
        self, missing: list[tuple[ManifestEntry, str]], *, dry_run: bool
    ) -> list[tuple[ManifestEntry, str]]:
        """Less the files an orphan clean only moved aside (see :func:`.orphan_trash.not_missing`)."""
        from paimon_core.operation.orphan_trash import not_missing

        back = not_missing(self.file_io, (self.store.path,), [p for _, p in missing], dry_run=dry_run)
        return [(e, p) for e, p in missing if p not in back]

    # --- result / commit ----------------------------------------------------------------------
    def _by_partition(
        self, missing: Sequence[tuple[ManifestEntry, str]]
    ) -> tuple[UnexistingPartitionFiles, ...]:
        grouped: dict[bytes, list[tuple[ManifestEntry, str]]] = defaultdict(list)
        for e, p in missing:
            grouped[e.partition].append((e, p))
        out = [
            UnexistingPartitionFiles(
                partition=self.store.partition_path(part),
                files=tuple(sorted(p for _, p in items)),
                row_count=sum(e.file.row_count for e, _ in items),
            )
            for part, items in grouped.items()
        ]
        return tuple(sorted(out, key=lambda x: x.partition))

    def _check_no_deletion_vectors(self, snapshot: Snapshot, missing: Sequence[ManifestEntry]) -> None:
        if snapshot.index_manifest is None:
            return
        from paimon_core.manifest.entries import FileKind
        from paimon_core.manifest.index_manifest import read_index_manifest
        from paimon_core.operation.commit.conflicts import DELETION_VECTORS

        index = read_index_manifest(self.file_io, self.store.paths.manifest_path(snapshot.index_manifest))
        dropped = {e.index_file.file_name for e in index if e.kind == FileKind.DELETE}
        with_vectors = {
            (e.partition, r.data_file_name)
            for e in index
            if e.kind == FileKind.ADD
            and e.index_file.index_type == DELETION_VECTORS
            and e.index_file.file_name not in dropped
            for r in e.index_file.dv_ranges or ()
        }
        blocked = sorted(e.file.file_name for e in missing if (e.partition, e.file.file_name) in with_vectors)
        if blocked:
            raise InvalidArgumentError(
                f"Cannot remove missing data files {blocked} from {self.store.name}: they still have deletion "
                "vectors, whose index files this procedure does not rewrite; nothing was changed",
                argument="table",
            )


def _messages(entries: Iterable[ManifestEntry]) -> list[CommitMessage]:
    grouped: dict[tuple[bytes, int], list[ManifestEntry]] = defaultdict(list)
    for e in entries:
        grouped[(e.partition, e.bucket)].append(e)
    return [
        CommitMessage(part, bucket, es[0].total_buckets, deleted_files=tuple(e.file for e in es))
        for (part, bucket), es in grouped.items()
    ]
