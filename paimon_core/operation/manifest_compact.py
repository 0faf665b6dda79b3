"""Full manifest compaction (Java ``FileStoreCommitImpl.compactManifest``; ``CALL sys.compact_manifest``).

The data manifests of the latest snapshot (base + delta) are merged as a full compaction
(:func:`paimon_core.manifest.merger.merge_manifests` with every size trigger at its minimum, as
Java passes ``suggestedMinMetaCount = 1`` and ``manifestFullCompactionSize = 1``): every ADD/DELETE
pair is cancelled, small manifests are rewritten together, large manifests no DELETE touches stay.
With ``manifest-sort.enabled`` (Paimon 2.0, master's "compact_manifest does a full manifest sort")
the merge is :func:`paimon_core.manifest.sorter.sort_merge_manifests` with ``full_sort``: every
DELETE cancelled and the manifests rewritten sorted by ``manifest-sort.partition-field`` into
non-overlapping partition ranges, bounded by ``manifest-sort.max-rewrite-size``; ``dry_run``
reports the sorted runs per level (Java's ``ManifestCompactDryRun``) and what would be rewritten.

The result is published as a COMPACT snapshot whose base manifest list is the merged one and
whose delta list is empty; data files, record counts, index manifest, watermark, properties and
next row id are the latest snapshot's. Nothing is committed when the merge changes nothing.

Safety: the new manifests only describe the live files of the snapshot they were read from, and
the snapshot is published with the no-overwrite race of every commit; a lost race deletes what
the attempt wrote and retries on the new latest snapshot (``commit.max-retries``). Old manifests
are never deleted here: older snapshots, tags and consumers still use them; expiry removes them.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitRetriesExhaustedError, CommitStateUnknownError, InvalidOptionError
from paimon_core.manifest.entries import FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.manifest_list import write_manifest_list
from paimon_core.manifest.merger import merge_entries, merge_manifests
from paimon_core.manifest.sorter import (
    ManifestSortKey,
    ManifestSortOptions,
    manifests_per_value,
    sort_field_index,
    sort_merge_manifests,
)
from paimon_core.operation.commit.committer import FileStoreCommit, new_commit_user
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind, Snapshot
from paimon_core.version import WRITER_VERSION

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["CompactManifestResult", "ManifestCompact"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactManifestResult(_ToDict):
    """What a manifest compaction did (with ``dry_run``: what it would read and keep)."""

    table: str
    dry_run: bool
    base_snapshot_id: int | None  # the snapshot whose manifests were merged
    snapshot_id: int | None = None  # the COMPACT snapshot (None: empty table, nothing to merge, dry run)
    commit_user: str = ""
    manifests_before: int = 0
    manifests_after: int | None = None  # None in a dry run (the merged sizes are not known unwritten)
    manifests_written: int = 0
    entries_before: int = 0  # ADD + DELETE entries in the manifests read
    delete_entries_before: int = 0
    live_files: int = 0  # ADD entries left after cancelling ADD/DELETE pairs
    bytes_before: int = 0
    bytes_after: int | None = None
    #: Java's dry-run summary: manifests holding DELETE entries, and below manifest.target-file-size
    manifests_with_deletes: int = 0
    manifests_undersized: int = 0
    attempts: int = 0
    elapsed_ms: int = 0
    #: ``manifest-sort.enabled`` (partitioned table): a full manifest sort by ``sort_field``
    manifest_sort: bool = False
    sort_field: str | None = None
    #: manifests per level of the sorted runs (L0..L4, Java's dry-run report), manifest sort only
    sort_levels: tuple[int, ...] | None = None
    #: manifests (and their bytes) sorted and rewritten within ``manifest-sort.max-rewrite-size``,
    #: and merged unsorted beyond it; with ``dry_run``: what would be
    manifests_sorted: int = 0
    bytes_sorted: int = 0
    manifests_merged_unsorted: int = 0
    manifests_kept_beyond_budget: int = 0
    #: the most manifests one value of the sort field falls in by their partition stats (what a
    #: single-partition scan reads at worst), before and after
    max_manifests_per_partition_before: int | None = None
    max_manifests_per_partition_after: int | None = None


class ManifestCompact:
    """One full manifest compaction of ``table`` (see the module docstring)."""

    def __init__(self, store: FileStore, *, commit_user: str | None = None) -> None:
        self.store = store
        self.commit_user = commit_user or new_commit_user(store.options.get("commit.user-prefix"))
        self.commit: FileStoreCommit = store.new_commit(self.commit_user)

    def run(self, *, dry_run: bool = False) -> CompactManifestResult:
        started = time.monotonic()
        options = self.store.options
        partition_keys = list(self.store.schema.partition_keys)
        sort_opts: ManifestSortOptions | None = ManifestSortOptions.of(options)
        sort_index = 0
        if sort_opts is not None and sort_opts.enabled:
            if sort_opts.data_evolution:
                raise InvalidOptionError(
                    f"Table {self.store.name}: 'manifest-sort.enabled' on a data-evolution table (Java sorts its "
                    "manifests by row id) is not supported; compact its manifests without manifest sort",
                    key="manifest-sort.enabled",
                )
            sort_index = sort_field_index(partition_keys, sort_opts.partition_field)  # the option's error
        else:
            sort_opts = None
        attempt = 0
        while True:
            attempt += 1
            latest = self.store.snapshot_manager.latest_snapshot()
            result = CompactManifestResult(
                table=self.store.name, dry_run=dry_run, base_snapshot_id=None, commit_user=self.commit_user
            )
            if latest is None:
                return _with(result, attempts=attempt, elapsed_ms=_ms(started))
            metas = self.commit.scan.data_manifests(latest)
            contents: dict[str, list[ManifestEntry]] = {m.file_name: self.commit.scan.read_manifest(m) for m in metas}
            entries = [e for m in metas for e in contents[m.file_name]]
            live = [e for e in merge_entries(entries) if e.kind == FileKind.ADD]
            result = _with(
                result,
                base_snapshot_id=latest.id,
                manifests_before=len(metas),
                entries_before=len(entries),
                delete_entries_before=sum(1 for e in entries if e.kind == FileKind.DELETE),
                live_files=len(live),
                bytes_before=sum(m.file_size for m in metas),
                manifests_with_deletes=sum(1 for m in metas if m.num_deleted_files > 0),
                manifests_undersized=sum(1 for m in metas if m.file_size < options.manifest_target_file_size),
                attempts=attempt,
            )
            if sort_opts is not None:
                key = ManifestSortKey(self.commit.codec, sort_index)
                merged, written, plan = sort_merge_manifests(
                    metas,
                    read=_reader(contents),
                    write=None if dry_run else self.commit._write_manifests,
                    codec=self.commit.codec,
                    partition_keys=partition_keys,
                    opts=sort_opts,
                    full_sort=True,
                )
                result = _with(
                    result,
                    manifest_sort=True,
                    sort_field=partition_keys[sort_index],
                    sort_levels=tuple(plan.levels),
                    manifests_sorted=plan.sorted_inputs,
                    bytes_sorted=plan.sorted_bytes,
                    manifests_merged_unsorted=plan.unsorted_inputs,
                    manifests_kept_beyond_budget=plan.kept_beyond_budget,
                    max_manifests_per_partition_before=manifests_per_value(metas, key),
                    max_manifests_per_partition_after=None if dry_run else manifests_per_value(merged, key),
                )
                if dry_run:
                    return _with(result, elapsed_ms=_ms(started))
            else:
                if dry_run:
                    return _with(result, elapsed_ms=_ms(started))
                merged, written = merge_manifests(
                    metas,
                    read=_reader(contents),
                    write=self.commit._write_manifests,
                    target_size=options.manifest_target_file_size,
                    min_count=1,
                    full_compaction_threshold=0,
                )
            names = [m.file_name for m in written]
            if not _changes_anything(metas, merged, result.delete_entries_before, sorted_=sort_opts is not None):
                self.commit._cleanup(names)
                logger.info("Manifests of %s (snapshot %d) are already compact", self.store.name, latest.id)
                return _with(result, manifests_after=len(metas), bytes_after=result.bytes_before, elapsed_ms=_ms(started))
            sid = self._publish(latest, merged, names)
            if sid is not None:
                logger.info(
                    "Compacted the manifests of %s: %d -> %d (snapshot %d)", self.store.name, len(metas), len(merged), sid
                )
                return _with(
                    result,
                    snapshot_id=sid,
                    manifests_after=len(merged),
                    manifests_written=len(written),
                    bytes_after=sum(m.file_size for m in merged),
                    elapsed_ms=_ms(started),
                )
            if attempt > options.commit_max_retries:
                raise CommitRetriesExhaustedError(
                    f"Gave up compacting the manifests of {self.store.name} after {attempt} attempts: "
                    "other commits kept taking the next snapshot id",
                    attempts=attempt,
                )
            wait = min(options.commit_max_retry_wait_ms, options.commit_min_retry_wait_ms * (2 ** min(attempt - 1, 20)))
            self.commit.sleep(random.uniform(wait / 2, wait) / 1000.0)

    def _publish(self, latest: Snapshot, merged: list[ManifestFileMeta], written: list[str]) -> int | None:
        """Write the manifest lists and race for ``latest.id + 1``; None when another commit won."""
        paths = self.store.paths
        io = self.store.file_io
        try:
            base_list = paths.new_manifest_list_name()
            base_size = write_manifest_list(io, paths.manifest_path(base_list), merged)
            written.append(base_list)
            delta_list = paths.new_manifest_list_name()
            delta_size = write_manifest_list(io, paths.manifest_path(delta_list), [])
            written.append(delta_list)
            snapshot = Snapshot(
                id=latest.id + 1,
                schema_id=latest.schema_id,
                base_manifest_list=base_list,
                base_manifest_list_size=base_size,
                delta_manifest_list=delta_list,
                delta_manifest_list_size=delta_size,
                index_manifest=latest.index_manifest,
                commit_user=self.commit_user,
                commit_identifier=BATCH_COMMIT_IDENTIFIER,
                commit_kind=CommitKind.COMPACT,
                time_millis=self.store.clock.now_millis(),
                total_record_count=latest.total_record_count,
                delta_record_count=0,
                watermark=latest.watermark,
                statistics=latest.statistics,
                properties=latest.properties,
                next_row_id=latest.next_row_id,
                writer_version=WRITER_VERSION,
            )
        except BaseException:
            self.commit._cleanup(written)
            raise
        try:
            published = self.commit.snapshot_commit.commit(snapshot)
        except Exception as e:
            existing = self.store.snapshot_manager.try_snapshot(snapshot.id)
            if existing is not None and existing.uuid == snapshot.uuid:
                return snapshot.id
            if existing is not None:
                self.commit._cleanup(written)
                return None
            raise CommitStateUnknownError(
                f"Publishing snapshot {snapshot.id} of {self.store.name} failed: {e}; the manifest compaction "
                f"did not land (no snapshot-{snapshot.id}), retry it",
                snapshot_id=snapshot.id,
            ) from e
        if not published:
            self.commit._cleanup(written)
            return None
        return snapshot.id


def _changes_anything(
    before: list[ManifestFileMeta], after: list[ManifestFileMeta], deletes: int, *, sorted_: bool = False
) -> bool:
    """Java commits only when the merged set differs; a rewrite of N manifests into as many, with
    no DELETE entry to cancel, is not worth a snapshot either, unless it sorted them."""
    if {m.file_name for m in before} == {m.file_name for m in after}:
        return False
    return sorted_ or deletes > 0 or len(after) < len(before)


def _reader(contents: dict[str, list[ManifestEntry]]) -> Callable[[ManifestFileMeta], list[ManifestEntry]]:
    return lambda m: contents[m.file_name]


def _with(result: CompactManifestResult, **changes: object) -> CompactManifestResult:
    import dataclasses

    return dataclasses.replace(result, **changes)  # type: ignore[arg-type]


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
