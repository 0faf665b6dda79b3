"""FileStoreCommit: turn commit messages into one atomically published snapshot.

Each attempt reads the latest snapshot, writes the new manifests and manifest
lists, and races for ``snapshot-(latest+1)`` with a no-overwrite publish. A lost
race deletes what the attempt wrote and retries with backoff (``commit.max-retries``,
``commit.min-retry-wait``, ``commit.max-retry-wait``, ``commit.timeout``). Data
files are never deleted here. A commit user + identifier already in the history
is a no-op, so a retried job cannot commit twice. Before publishing, the files the commit
adds must exist and its base snapshot must not be expired (see :mod:`.commit_guard`); a base
whose files vanish while an attempt reads them (expired meanwhile) is a lost race.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from paimon_core.append.row_tracking import (
    ROW_TRACKING_PARTITION_GROUP_ON_COMMIT,
    assign_row_tracking,
    data_evolution_enabled,
    row_tracking_enabled,
)
from paimon_core.exceptions import (
    CommitConflictError,
    CommitRetriesExhaustedError,
    CommitStateUnknownError,
    FileIOError,
    InvalidArgumentError,
    is_explained,
)
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import FileKind, IndexManifestEntry, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.index_manifest import read_index_manifest, write_index_manifest
from paimon_core.manifest.manifest_file import encode_manifest_entries, write_manifest_file
from paimon_core.manifest.manifest_list import write_manifest_list
from paimon_core.manifest.merger import merge_entries
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.manifest.sorter import merge_manifests_on_commit
from paimon_core.operation.commit.changes import Changes, collect_changes, row_delta
from paimon_core.operation.commit.commit_guard import (
    base_expired,
    check_added_files,
    check_files_after_publish,
    is_ghost,
    retries_exhausted_error,
)
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.commit.conflicts import (
    KeyOf,
    check_deletion_vector_conflicts,
    check_index_conflicts,
    check_no_conflicts,
)
from paimon_core.operation.commit.pending_commits import announce, withdraw
from paimon_core.operation.commit.strict_mode import StrictModeChecker
from paimon_core.operation.scan import FileStoreScan, ScanFilter
from paimon_core.operation.stale_snapshot import damaged_error, is_superseded, missing_path
from paimon_core.options import CoreOptions
from paimon_core.paths import PathFactory
from paimon_core.predicate import Predicate
from paimon_core.results import CommitResult
from paimon_core.schema.table_schema import TableSchema
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.snapshot.snapshot_commit import RenamingSnapshotCommit, SnapshotCommit
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock
from paimon_core.version import WRITER_VERSION

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OverwriteSpec:
    """Which existing files an overwrite replaces.

    ``static_partition``: a (possibly partial) partition spec, values as internal
    values; files in matching partitions are replaced. ``None`` with
    ``dynamic=True``: only the partitions the new data touches are replaced.
    ``None`` with ``dynamic=False``: the whole table is replaced.
    ``partitions``: exactly these partitions (BinaryRows) are replaced, whatever the
    other fields say (Java's ``dropPartitions``: an OR of full partition specs).
    """

    static_partition: Mapping[str, object] | None = None
    dynamic: bool = True
    partitions: frozenset[bytes] | None = None


class FileStoreCommit:
    """Commits to one table as one commit user."""

    def __init__(
        self,
        *,
        file_io: FileIO,
        paths: PathFactory,
        snapshot_manager: SnapshotManager,
        schema: TableSchema,
        commit_user: str,
        table_name: str,
        options: CoreOptions | None = None,
        clock: Clock = SYSTEM_CLOCK,
        snapshot_commit: SnapshotCommit | None = None,
        sleep: Callable[[float], None] = time.sleep,
        added_file_paths: Callable[[Changes], list[str]] | None = None,
        schema_of: Callable[[int], TableSchema] | None = None,
    ) -> None:
        """``options``: the table's resolved options (schema + dynamic; default: the schema's).
        ``sleep``: how the retry loop waits (seconds), injectable for tests. ``schema_of``: the
        table's cached schema loader (schema files never change), so commits do not re-read them."""
        self.file_io = file_io
        self.paths = paths
        self.snapshot_manager = snapshot_manager
        self.schema = schema
        self.options = options if options is not None else CoreOptions(schema.options)
        self.sleep = sleep
        #: where the files a commit adds live (the table's layout); None: not checked
        self.added_file_paths = added_file_paths
        self.schema_of = schema_of
        self.commit_user = commit_user
        self.table_name = table_name
        self.clock = clock
        self.snapshot_commit = snapshot_commit or RenamingSnapshotCommit(snapshot_manager)
        self.codec = PartitionCodec([f.type for f in schema.partition_fields])
        self.scan = FileStoreScan(file_io, paths, self.codec)
        bucket = self.options.bucket
        self.total_buckets = bucket if bucket > 0 else -1
        self._deletion_vectors = self.options.deletion_vectors_enabled
        #: data-evolution tables: a COMPACT commit checks row-id ranges (Java DataEvolutionConflictDetection)
        self._data_evolution = not schema.primary_keys and data_evolution_enabled(self.options.options)
        self._bucket_history: bool | None = None
        last_safe = self.options.commit_strict_mode_last_safe_snapshot
        self._strict = (
            StrictModeChecker(snapshot_manager, self.scan, commit_user, last_safe) if last_safe is not None else None
        )
        self._prefixes: tuple[str, ...] | None = None
        self._key_of: KeyOf | None = None
        if schema.primary_keys:
            from paimon_core.mergetree.keys import binary_key_of

            self._key_of = binary_key_of([f.type for f in schema.fields_of(schema.trimmed_primary_keys)])

    # --- idempotency ----------------------------------------------------------------
    def is_committed(self, commit_identifier: int) -> bool:
        """Whether this commit user already committed this identifier (or a later one)."""
        snap = self.snapshot_manager.latest_snapshot_of_user(self.commit_user)
        return snap is not None and snap.commit_identifier >= commit_identifier

    # --- entry points ------------------------------------------------------------------
    def commit(
        self,
        messages: Sequence[CommitMessage],
        commit_identifier: int,
        *,
        overwrite: OverwriteSpec | None = None,
        properties: Mapping[str, str] | None = None,
        watermark: int | None = None,
        check_committed: bool = True,
        check_append_conflicts: bool = False,
    ) -> CommitResult:
        """Publish the messages as one snapshot (two when compaction results come along).

        Commits that delete files always check that those files are still live. Pure
        appends add fresh uniquely named files, so (as in Java) they are only checked
        against the latest snapshot when ``check_append_conflicts`` is set.
        """
        if check_committed and self.is_committed(commit_identifier):
            logger.info(
                "Commit %s/%d of %s already in the history: nothing to do",
                self.commit_user,
                commit_identifier,
                self.table_name,
            )
            return self._result(None, None, commit_identifier, already=True)
        changes = collect_changes(messages)
        added = self.added_file_paths(changes) if self.added_file_paths is not None else []
        # Announce the files before checking them, and keep the announcement until the snapshot
        # names them: an orphan clean then never deletes them (see .pending_commits).
        announcement = announce(
            self.file_io,
            self.paths.table_path,
            names=[p[p.rfind("/") + 1 :] for p in added],
            prefixes=self._manifest_prefixes(),
            commit_user=self.commit_user,
        )
        try:
            if self.added_file_paths is not None:
                check_added_files(
                    self.file_io, added, table=self.table_name, commit_user=self.commit_user, identifier=commit_identifier
                )
            result = self._commit_changes(
                changes, commit_identifier, overwrite, properties, watermark, check_append_conflicts
            )
            if result.snapshot_ids:
                try:
                    check_files_after_publish(
                        self.file_io,
                        added,
                        announcement=announcement,
                        roots=(self.paths.table_path,),
                        table=self.table_name,
                        snapshot_ids=result.snapshot_ids,
                        commit_user=self.commit_user,
                        identifier=commit_identifier,
                    )
                except CommitStateUnknownError:
                    raise
                except Exception as e:  # published: a failed check must not read as "nothing landed"
                    raise CommitStateUnknownError(
                        f"Snapshots {list(result.snapshot_ids)} of {self.table_name} were published, but checking "
                        f"that the files they add are still there failed ({type(e).__name__}: {e}): keep the "
                        "commit's files; a retry with the same commit user and identifier commits nothing twice",
                        snapshot_id=result.snapshot_ids[-1],
                        landed_snapshot_ids=result.snapshot_ids,
                        commit_user=self.commit_user,
                        commit_identifier=commit_identifier,
                    ) from e
            return result
        finally:
            withdraw(self.file_io, announcement)

    def _manifest_prefixes(self) -> tuple[str, ...]:
        """Name prefixes of the manifests, manifest lists and index manifests this commit writes
        (its path factory's uuid)."""
        if self._prefixes is None:
            names = (
                self.paths.new_manifest_name(),
                self.paths.new_manifest_list_name(),
                self.paths.new_index_manifest_name(),
            )
            self._prefixes = tuple(n[: n.rfind("-") + 1] for n in names)
        return self._prefixes

    def _commit_changes(
        self,
        changes: Changes,
        commit_identifier: int,
        overwrite: OverwriteSpec | None,
        properties: Mapping[str, str] | None,
        watermark: int | None,
        check_append_conflicts: bool,
    ) -> CommitResult:
        """Publish ``changes`` (one snapshot, two with compaction results)."""
        snapshot_ids: list[int] = []
        attempts = 0
        kind: CommitKind | None = None
        all_entries: list[ManifestEntry] = []
        steps: list[tuple[list[ManifestEntry], CommitKind, OverwriteSpec | None]] = []
        if overwrite is not None:
            self._check_overwrite_partitions(changes, overwrite)
            steps.append((changes.append, CommitKind.OVERWRITE, overwrite))
        elif changes.append or changes.index:
            # Java's containsFileDeletionOrDeletionVectors: an increment that removes data files
            # (a copy-on-write rewrite such as merge_into on an append table) is an OVERWRITE, which
            # streaming readers skip instead of re-reading the rewritten rows as new ones.
            removes = any(e.kind == FileKind.DELETE for e in changes.append)
            steps.append((changes.append, CommitKind.OVERWRITE if removes else CommitKind.APPEND, None))
        if changes.compact or changes.compact_index or changes.compact_changelog:
            steps.append((changes.compact, CommitKind.COMPACT, None))
        for entries, step_kind, spec in steps:
            try:
                sid, n, committed = self._try_commit(
                    entries,
                    step_kind,
                    commit_identifier,
                    spec,
                    properties,
                    watermark,
                    check_append_conflicts,
                    changes.compact_index if step_kind == CommitKind.COMPACT else changes.index,
                    changes.compact_changelog if step_kind == CommitKind.COMPACT else changes.changelog,
                )
            except (CommitConflictError, CommitRetriesExhaustedError) as e:
                if not snapshot_ids:
                    raise
                # the first half landed; this half did not (lost to a conflict or to other commits)
                raise CommitConflictError(
                    f"Snapshot {snapshot_ids[-1]} ({kind.value if kind else '?'}) of {self.table_name} was committed, "
                    f"but its {step_kind.value} half was not: {e}",
                    landed_snapshot_ids=tuple(snapshot_ids),
                    landed_kind=kind.value if kind else None,
                    commit_user=self.commit_user,
                    commit_identifier=commit_identifier,
                    failed_kind=step_kind.value,
                    snapshot_id=e.snapshot_id,
                    file_name=e.file_name,
                ) from e
            except CommitStateUnknownError:
                raise
            except Exception as e:
                if not snapshot_ids:
                    raise
                # The first half landed and references the new files: the caller must not delete them.
                raise CommitStateUnknownError(
                    f"Snapshot {snapshot_ids[-1]} ({kind.value if kind else '?'}) of {self.table_name} was committed, "
                    f"but its {step_kind.value} half failed: {type(e).__name__}: {e}; keep the written files",
                    snapshot_id=snapshot_ids[-1],
                    landed_snapshot_ids=tuple(snapshot_ids),
                ) from e
            snapshot_ids.append(sid)
            attempts += n
            all_entries += committed
            kind = kind or step_kind
        added_files = sum(1 for e in all_entries if e.kind == FileKind.ADD)
        deleted_files = sum(1 for e in all_entries if e.kind == FileKind.DELETE)
        added_rows, deleted_rows = row_delta(all_entries)
        return CommitResult(
            table=self.table_name,
            snapshot_id=snapshot_ids[-1] if snapshot_ids else None,
            commit_kind=kind.value if kind else None,
            commit_user=self.commit_user,
            commit_identifier=commit_identifier,
            added_files=added_files,
            deleted_files=deleted_files,
            added_rows=added_rows,
            deleted_rows=deleted_rows,
            attempts=attempts,
            snapshot_ids=tuple(snapshot_ids),
        )

    def truncate(self, commit_identifier: int) -> CommitResult:
        """Remove every row (an OVERWRITE snapshot with no new files)."""
        return self.commit([], commit_identifier, overwrite=OverwriteSpec(None, dynamic=False))

    def drop_partitions(
        self, partitions: Sequence[bytes], commit_identifier: int, *, check_committed: bool = True
    ) -> CommitResult:
        """Drop whole partitions: one OVERWRITE snapshot deleting all their files (Java's
        ``dropPartitions``). Old snapshots and tags still hold the files."""
        if not partitions:
            raise InvalidArgumentError("drop_partitions needs at least one partition")
        spec = OverwriteSpec(None, dynamic=False, partitions=frozenset(partitions))
        return self.commit([], commit_identifier, overwrite=spec, check_committed=check_committed)

    # --- internals -----------------------------------------------------------------------
    def _result(self, sid: int | None, kind: CommitKind | None, ident: int, *, already: bool) -> CommitResult:
        return CommitResult(
            table=self.table_name,
            snapshot_id=sid,
            commit_kind=kind.value if kind else None,
            commit_user=self.commit_user,
            commit_identifier=ident,
            already_committed=already,
        )

    def _check_overwrite_partitions(self, changes: Changes, spec: OverwriteSpec) -> None:
        if spec.partitions is not None:
            stray = [e.file.file_name for e in changes.append if e.kind == FileKind.ADD and e.partition not in spec.partitions]
            if stray:
                raise InvalidArgumentError(f"Overwriting given partitions but new file {stray[0]} is in another one")
            return
        if not spec.static_partition:
            return
        names = [f.name for f in self.schema.partition_fields]
        unknown = [k for k in spec.static_partition if k not in names]
        if unknown:
            raise InvalidArgumentError(
                f"Overwrite partition spec names non-partition column(s) {unknown}; partition keys are {names}"
            )
        pred = self._static_partition_predicate(spec.static_partition)
        for e in changes.append:
            if e.kind == FileKind.ADD and not pred.test_values(self.codec.decode(e.partition)):
                raise InvalidArgumentError(
                    f"Overwriting partition {dict(spec.static_partition)} but new file {e.file.file_name} "
                    f"belongs to partition {dict(zip(names, self.codec.decode(e.partition), strict=True))}"
                )

    def _static_partition_predicate(self, spec: Mapping[str, object]) -> Predicate:
        from paimon_core.predicate import PredicateBuilder  # local: avoid an import cycle at load

        builder = PredicateBuilder(self.schema.partition_fields)
        preds = [builder.is_null(k) if v is None else builder.equal(k, v) for k, v in spec.items()]
        return builder.and_(*preds)

    def _overwrite_deletes(self, latest: Snapshot | None, spec: OverwriteSpec, new: Sequence[ManifestEntry]) -> list[ManifestEntry]:
        if latest is None:
            return []
        if spec.partitions is not None:
            flt = ScanFilter(partitions=spec.partitions)
        elif spec.static_partition:
            flt = ScanFilter(partition_predicate=self._static_partition_predicate(spec.static_partition))
        elif spec.dynamic and self.schema.partition_keys:
            flt = ScanFilter(partitions=frozenset(e.partition for e in new))
            if not flt.partitions:
                return []
        else:
            flt = ScanFilter()
        if self.options.bucket != -2:
            # Java's OverwriteChangesProvider: only a postpone-bucket table's own overwrite removes
            # bucket-postpone files; a rewrite into real buckets (a rescale) leaves pending rows
            flt = dataclasses.replace(flt, only_real_buckets=True)
        return [
            ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
            for e in self.scan.live_entries(latest, flt)
        ]

    def _overwrite_index_deletes(
        self, latest: Snapshot | None, spec: OverwriteSpec, new: Sequence[ManifestEntry]
    ) -> list[IndexManifestEntry]:
        """Index files (HASH, deletion vectors) of the overwritten partitions, as DELETE entries
        (Java's ``OverwriteChangesProvider``): their keys and rows are gone with the data."""
        if latest is None or latest.index_manifest is None:
            return []
        entries = read_index_manifest(self.file_io, self.paths.manifest_path(latest.index_manifest))
        if spec.partitions is not None:
            entries = [e for e in entries if e.partition in spec.partitions]
        elif spec.static_partition:
            pred = self._static_partition_predicate(spec.static_partition)
            entries = [e for e in entries if pred.test_values(self.codec.decode(e.partition))]
        elif spec.dynamic and self.schema.partition_keys:
            written = {e.partition for e in new}
            entries = [e for e in entries if e.partition in written]
        return [IndexManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.index_file) for e in entries]

    def _try_commit(
        self,
        entries: list[ManifestEntry],
        kind: CommitKind,
        identifier: int,
        overwrite: OverwriteSpec | None,
        properties: Mapping[str, str] | None,
        watermark: int | None,
        check_append: bool = False,
        index_changes: Sequence[IndexManifestEntry] = (),
        changelog: Sequence[ManifestEntry] = (),
    ) -> tuple[int, int, list[ManifestEntry]]:
        """Commit until published; returns (snapshot id, attempts, the entries committed)."""
        max_retries = self.options.commit_max_retries
        min_wait = self.options.commit_min_retry_wait_ms
        max_wait = self.options.commit_max_retry_wait_ms
        timeout = self.options.commit_timeout_ms
        started = time.monotonic()
        attempt = 0
        lost_to: list[int] = []  # snapshot ids other commits took first
        while True:
            attempt += 1
            latest = self.snapshot_manager.latest_snapshot()
            changes = list(entries)
            index = index_changes
            try:
                if overwrite is not None:
                    changes = self._overwrite_deletes(latest, overwrite, entries) + changes
                    index = [*self._overwrite_index_deletes(latest, overwrite, entries), *index_changes]
                sid = self._attempt(latest, changes, kind, identifier, properties, watermark, check_append, index, changelog)
            except FileNotFoundError as e:
                # A file of `latest` is gone: it was superseded and expired while this attempt read
                # it (a lost race: retry on the new latest), or the table is damaged (typed error).
                if is_explained(e):
                    raise
                if latest is None:
                    raise FileIOError(f"Commit to {self.table_name}: {e}", path=missing_path(e)) from e
                if not is_superseded(self.snapshot_manager, latest.id):
                    raise damaged_error(e, table=self.table_name, snapshot_id=latest.id, what="Commit") from e
                logger.info("Snapshot %d of %s expired while a commit read it; retrying", latest.id, self.table_name)
                sid = None
            if sid is not None:
                if self._strict is not None:
                    self._strict.update(sid)
                return sid, attempt, changes
            lost_to.append(latest.id + 1 if latest is not None else 1)
            elapsed_ms = (time.monotonic() - started) * 1000
            if attempt > max_retries or (timeout is not None and elapsed_ms > timeout):
                raise retries_exhausted_error(
                    table=self.table_name,
                    attempts=attempt,
                    elapsed_ms=elapsed_ms,
                    lost_to=lost_to,
                    entries=[*entries, *changelog],
                    commit_user=self.commit_user,
                    identifier=identifier,
                )
            wait = min(max_wait, min_wait * (2 ** min(attempt - 1, 20)))
            self.sleep(random.uniform(wait / 2, wait) / 1000.0)

    def _attempt(
        self,
        latest: Snapshot | None,
        changes: list[ManifestEntry],
        kind: CommitKind,
        identifier: int,
        properties: Mapping[str, str] | None,
        watermark: int | None,
        check_append: bool = False,
        index_changes: Sequence[IndexManifestEntry] = (),
        changelog: Sequence[ManifestEntry] = (),
    ) -> int | None:
        """One try; the new snapshot id, or None if another commit took the id first."""
        merge_entries(changes)  # the commit itself must not add a file twice
        if self._strict is not None:
            self._strict.check((latest.id if latest is not None else 0) + 1, kind, {e.partition for e in changes})
        # A table whose bucket count was ever changed (ALTER + rescale): a writer planned on the old
        # count may race a rescale of its partition, so appends are checked too (Java's checkBucketKeepSame).
        check_append = check_append or (kind != CommitKind.OVERWRITE and self._bucket_count_changed())
        if latest is not None and (check_append or any(e.kind == FileKind.DELETE for e in changes)):
            base = self.scan.live_entries(latest, ScanFilter(partitions=frozenset(e.partition for e in changes)))
            check_no_conflicts(
                base,
                changes,
                snapshot_id=latest.id,
                key_of=self._key_of,
                check_buckets=kind != CommitKind.OVERWRITE,
                check_row_id_ranges=self._data_evolution and kind == CommitKind.COMPACT,
            )
            if self._deletion_vectors and latest.index_manifest is not None:
                latest_index = read_index_manifest(self.file_io, self.paths.manifest_path(latest.index_manifest))
                check_deletion_vector_conflicts(latest_index, changes, index_changes, snapshot_id=latest.id)
        new_id = latest.id + 1 if latest is not None else 1
        next_row_id = latest.next_row_id if latest is not None else None
        if row_tracking_enabled(self.options.options):  # Java RowTrackingCommitUtils.assignRowTracking
            assigned = assign_row_tracking(
                new_id,
                next_row_id or 0,
                changes,
                partition_group=self.options.options.get(ROW_TRACKING_PARTITION_GROUP_ON_COMMIT, "").lower() == "true",
            )
            changes, next_row_id = list(assigned.entries), assigned.next_row_id
        written: list[str] = []
        try:
            # manifests, lists and index: each must be durable before snapshot-N names it, in any
            # order: synced together at the block's end (concurrently on a local disk)
            with self.file_io.durable_together():
                delta_metas = self._write_manifests(changes)
                written += [m.file_name for m in delta_metas]
                previous = self.scan.data_manifests(latest) if latest is not None else []
                base_metas, merged_new = merge_manifests_on_commit(  # manifest-sort.enabled: sorted
                    previous,
                    read=self.scan.read_manifest,
                    write=self._write_manifests,
                    codec=self.codec,
                    partition_keys=self.schema.partition_keys,
                    options=self.options,
                )
                written += [m.file_name for m in merged_new]
                base_list = self.paths.new_manifest_list_name()
                base_size = write_manifest_list(self.file_io, self.paths.manifest_path(base_list), base_metas)
                written.append(base_list)
                delta_list = self.paths.new_manifest_list_name()
                delta_size = write_manifest_list(self.file_io, self.paths.manifest_path(delta_list), delta_metas)
                written.append(delta_list)
                changelog_list: str | None = None
                changelog_size: int | None = None
                changelog_rows: int | None = None
                if changelog:  # Java's changelog manifests: the changelog files of this commit (producer 'input')
                    changelog_metas = self._write_manifests(list(changelog))
                    written += [m.file_name for m in changelog_metas]
                    changelog_list = self.paths.new_manifest_list_name()
                    changelog_size = write_manifest_list(
                        self.file_io, self.paths.manifest_path(changelog_list), changelog_metas
                    )
                    written.append(changelog_list)
                    changelog_rows = sum(e.file.row_count for e in changelog)
                index_manifest = latest.index_manifest if latest is not None else None
                if index_changes:
                    index_manifest = self._write_index_manifest(
                        index_manifest, index_changes, snapshot_id=latest.id if latest is not None else None
                    )
                    written.append(index_manifest)
            added, deleted = row_delta(changes)
            delta_rows = added - deleted
            snapshot = Snapshot(
                id=new_id,
                schema_id=self.schema.id,
                base_manifest_list=base_list,
                base_manifest_list_size=base_size,
                delta_manifest_list=delta_list,
                delta_manifest_list_size=delta_size,
                changelog_manifest_list=changelog_list,
                changelog_manifest_list_size=changelog_size,
                changelog_record_count=changelog_rows,
                index_manifest=index_manifest,
                commit_user=self.commit_user,
                commit_identifier=identifier,
                commit_kind=kind,
                time_millis=self.clock.now_millis(),
                total_record_count=(latest.total_record_count if latest is not None else 0) + delta_rows,
                delta_record_count=delta_rows,
                watermark=_watermark(latest, watermark),
                properties=dict(properties) if properties else None,
                next_row_id=next_row_id,
                writer_version=WRITER_VERSION,
            )
        except BaseException:
            self._cleanup(written)
            raise
        if base_expired(self.snapshot_manager, latest):  # new_id may be an expired id: never re-create it
            logger.info("Snapshot %d of %s expired before the publish; retrying", new_id - 1, self.table_name)
            self._cleanup(written)
            return None
        try:
            published = self.snapshot_commit.commit(snapshot)
        except Exception as e:
            return self._after_failed_publish(new_id, snapshot, written, e)
        if not published:
            # "Taken" may be our own publish: an HTTP client retrying a conditional PUT whose first
            # try landed gets 412 (or S3's 409 while it is in flight). Never clean up a landed snapshot.
            existing = self.snapshot_manager.try_snapshot(new_id)
            if existing is None and not self.file_io.publish_taken_is_definite:
                existing = self._await_snapshot(new_id)  # our own publish may still be in flight
            if existing is not None and existing.uuid == snapshot.uuid:
                logger.warning("Publish of snapshot %d reported 'taken' but the snapshot is ours", new_id)
                return new_id
            if existing is None and not self.file_io.publish_taken_is_definite:
                raise CommitStateUnknownError(
                    f"Publishing snapshot {new_id} of {self.table_name} reported 'taken', but no snapshot-{new_id} "
                    "can be read (expired meanwhile, or this commit's own publish still in flight on a store whose "
                    "client retries): the commit may have landed, so its files are kept; check the table "
                    "(a retry with the same commit user and identifier commits nothing twice)",
                    snapshot_id=new_id,
                )
            logger.debug("Snapshot %d of %s taken by another commit; retrying", new_id, self.table_name)
            self._cleanup(written)
            return None
        try:
            ghost = is_ghost(
                self.snapshot_manager,
                self.scan,
                new_id=new_id,
                base=latest,
                delta_manifests=[m.file_name for m in delta_metas],
                entries=changes,
                table=self.table_name,
            )
        except Exception as e:  # published: a failed check must not read as "nothing landed"
            raise CommitStateUnknownError(
                f"Snapshot {new_id} of {self.table_name} was published, but checking that it does not re-create "
                f"an expired snapshot id failed ({type(e).__name__}: {e}): keep the commit's files; a retry with "
                "the same commit user and identifier commits nothing twice",
                snapshot_id=new_id,
            ) from e
        if ghost:
            logger.warning("Snapshot %d of %s re-created an expired id; deleted it, retrying", new_id, self.table_name)
            self.file_io.delete(self.snapshot_manager.snapshot_path(new_id))
            self._cleanup(written)
            return None
        logger.info(
            "Committed snapshot %d (%s) to %s: %d entries, %+d rows",
            new_id,
            kind.value,
            self.table_name,
            len(changes),
            snapshot.delta_record_count,
        )
        return new_id

    def _write_index_manifest(
        self, previous: str | None, changes: Sequence[IndexManifestEntry], *, snapshot_id: int | None = None
    ) -> str:
        """A full listing: the previous index files minus deleted ones, plus new ones.

        For HASH indexes a new file replaces the previous file of its (partition, bucket).
        Deletion-vector changes that conflict with the previous listing fail the commit
        (:func:`~paimon_core.operation.commit.conflicts.check_index_conflicts`).
        """
        entries: list[IndexManifestEntry] = []
        if previous is not None:
            entries = read_index_manifest(self.file_io, self.paths.manifest_path(previous))
        check_index_conflicts(entries, changes, snapshot_id=snapshot_id)
        deleted = {e.index_file.file_name for e in changes if e.kind == FileKind.DELETE}
        new = [e for e in changes if e.kind == FileKind.ADD]
        replaced_hash = {(e.partition, e.bucket) for e in new if e.index_file.index_type == "HASH"}
        kept = [
            e
            for e in entries
            if e.index_file.file_name not in deleted
            and not (e.index_file.index_type == "HASH" and (e.partition, e.bucket) in replaced_hash)
        ]
        name = self.paths.new_index_manifest_name()
        write_index_manifest(self.file_io, self.paths.manifest_path(name), kept + new)
        return name

    def _write_manifests(self, entries: list[ManifestEntry]) -> list[ManifestFileMeta]:
        """Write entries into manifests of about ``manifest.target-file-size`` each."""
        if not entries:
            return []
        target = self.options.manifest_target_file_size
        data = encode_manifest_entries(entries)
        if len(data) <= target * 2 or len(entries) < 2:
            return [self._write_one(entries, data=data)]
        # Too big for one file: split evenly by the measured size (measured before writing: a
        # written-then-deleted file would break the durable_together sync of the commit).
        parts = -(-len(data) // target)
        step = -(-len(entries) // parts)
        return [self._write_one(entries[i : i + step]) for i in range(0, len(entries), step)]

    def _write_one(self, entries: list[ManifestEntry], *, data: bytes | None = None) -> ManifestFileMeta:
        name = self.paths.new_manifest_name()
        return write_manifest_file(
            self.file_io,
            self.paths.manifest_path(name),
            entries,
            partition_stats=self.codec.stats([e.partition for e in entries]),
            schema_id=self.schema.id,
            data=data,
        )

    def _bucket_count_changed(self) -> bool:
        """Whether any schema of the table has another fixed ``bucket`` than the current one (read once)."""
        if self._bucket_history is None:
            if self.total_buckets <= 0:
                self._bucket_history = False
            else:
                from paimon_core.schema.schema_manager import SchemaManager

                manager = SchemaManager(self.file_io, self.paths)
                load = self.schema_of or manager.schema
                counts = {load(i).options.get("bucket") for i in manager.list_ids()}
                self._bucket_history = len(counts - {str(self.total_buckets)}) > 0
        return self._bucket_history

    def _after_failed_publish(self, new_id: int, snapshot: Snapshot, written: list[str], error: Exception) -> int | None:
        """The publish raised, so it may or may not have landed: look before deciding. Any doubt
        (the look itself failing, or no snapshot yet while a slow PUT may still land) is a
        :class:`CommitStateUnknownError`, after which no caller deletes the commit's files."""
        try:
            existing = self.snapshot_manager.try_snapshot(new_id)
        except Exception as e:
            raise CommitStateUnknownError(
                f"Publishing snapshot {new_id} of {self.table_name} failed ({type(error).__name__}: {error}) and "
                f"checking whether it landed failed too ({type(e).__name__}: {e}); the commit may have landed: "
                "keep its files and check the table before retrying",
                snapshot_id=new_id,
            ) from error
        if existing is not None and existing.uuid == snapshot.uuid:
            logger.warning("Publish of snapshot %d reported %r but the snapshot is ours", new_id, error)
            return new_id
        if existing is not None:
            self._cleanup(written)
            return None
        raise CommitStateUnknownError(
            f"Publishing snapshot {new_id} of {self.table_name} failed: {error}; no snapshot-{new_id} is there "
            "now, but a slow write may still land it: keep the commit's files; a retry with the same commit "
            "user and identifier commits nothing twice",
            snapshot_id=new_id,
        ) from error

    def _await_snapshot(self, snapshot_id: int) -> Snapshot | None:
        """``snapshot-N`` once it can be read, waiting a little (a publish reported 'taken' while
        in flight lands shortly after); None if it never shows up."""
        for wait_ms in (10, 40, 160):
            self.sleep(wait_ms / 1000.0)
            existing = self.snapshot_manager.try_snapshot(snapshot_id)
            if existing is not None:
                return existing
        return None

    def _cleanup(self, names: list[str]) -> None:
        for name in names:
            try:
                self.file_io.delete(self.paths.manifest_path(name))
            except OSError as e:  # pragma: no cover - best effort; orphan clean removes leftovers
                logger.warning("Could not delete unused manifest %s: %s", name, e)


def _watermark(latest: Snapshot | None, new: int | None) -> int | None:
    old = latest.watermark if latest is not None else None
    if new is None:
        return old
    return new if old is None else max(old, new)


def new_commit_user(prefix: str | None = None) -> str:
    """A fresh commit user (one per batch job; streaming jobs keep theirs)."""
    u = str(uuid.uuid4())
    return f"{prefix}_{u}" if prefix else u


__all__ = ["FileStoreCommit", "OverwriteSpec", "new_commit_user", "CommitConflictError"]
