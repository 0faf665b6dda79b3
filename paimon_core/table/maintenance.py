"""Table maintenance calls of :class:`FileStoreTable` (a mixin, so table.py stays small).

Each call is a thin entry point over one short-lived operation, as in Java's
``FileStoreTable`` (expireSnapshots, createTag, rollbackTo, ...). Destructive calls take
``dry_run``; each returns a typed result with ``to_dict()``. Times are epoch millis, a
datetime or an ISO string; durations are millis, a timedelta or a Paimon duration ('1 d').

Each call records one row in the warehouse's maintenance ledger when the warehouse has one
(:mod:`paimon_core.ledger`); a call made inside another recorded action (a ``spark_jobs`` job, an
Airflow operator) adds to that action's row instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from paimon_core.ledger.recorder import recorded

if TYPE_CHECKING:
    import pyarrow as pa

    from paimon_core.consumer.consumer_manager import ConsumerManager
    from paimon_core.consumer.consumer_operations import ClearConsumersResult, ResetConsumerResult
    from paimon_core.operation.compact.table_compact import CompactResult
    from paimon_core.operation.expire_changelogs import ExpireChangelogsResult
    from paimon_core.operation.expire_snapshots import ExpireSnapshotsResult
    from paimon_core.operation.manifest_compact import CompactManifestResult
    from paimon_core.operation.orphan_files_clean import OrphanFilesCleanResult
    from paimon_core.operation.partition_drop import DropPartitionResult
    from paimon_core.operation.partition_expire import PartitionExpireResult
    from paimon_core.operation.purge_files import PurgeFilesResult
    from paimon_core.operation.remove_unexisting_files import RemoveUnexistingFilesResult
    from paimon_core.operation.remove_unexisting_manifests import RemoveUnexistingManifestsResult
    from paimon_core.operation.rewrite_file_index import RewriteFileIndexResult
    from paimon_core.operation.tag_deletion import DeleteTagResult
    from paimon_core.partition.mark_done import MarkPartitionDoneResult
    from paimon_core.snapshot.earliest_repair import RepairEarliestSnapshotResult
    from paimon_core.snapshot.snapshot import Snapshot
    from paimon_core.table.rollback_helper import RollbackResult
    from paimon_core.table.table import FileStoreTable
    from paimon_core.tag.tag_auto_creation import TagCreationResult
    from paimon_core.tag.tag_time_expire import ExpireTagsResult
    from paimon_core.utils.time_util import Duration, TimePoint


class TableMaintenance:
    """Snapshot/changelog expiry, orphan cleanup, tags, rollback, consumers, system tables."""

    # set by FileStoreTable.__init__
    consumer_manager: ConsumerManager

    @property
    def _table(self) -> FileStoreTable:
        return cast("FileStoreTable", self)  # the mixin is only ever part of FileStoreTable

    # --- expiry ------------------------------------------------------------------------
    @recorded("expire_snapshots")
    def expire_snapshots(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: TimePoint | None = None,
        max_deletes: int | None = None,
        dry_run: bool = False,
    ) -> ExpireSnapshotsResult:
        """Expire snapshots by the table's retention options (arguments override them)."""
        from paimon_core.operation.expire_snapshots import ExpireSnapshots

        return ExpireSnapshots(self._table.store).expire(
            retain_max=retain_max, retain_min=retain_min, older_than=older_than, max_deletes=max_deletes, dry_run=dry_run
        )

    @recorded("expire_changelogs")
    def expire_changelogs(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: TimePoint | None = None,
        max_deletes: int | None = None,
        delete_all: bool = False,
        dry_run: bool = False,
    ) -> ExpireChangelogsResult:
        """Expire long-lived changelogs (``changelog/changelog-N``) of a decoupled lifecycle."""
        from paimon_core.operation.expire_changelogs import ExpireChangelogs

        return ExpireChangelogs(self._table.store).expire(
            retain_max=retain_max,
            retain_min=retain_min,
            older_than=older_than,
            max_deletes=max_deletes,
            delete_all=delete_all,
            dry_run=dry_run,
        )

    @recorded("remove_orphan_files")
    def remove_orphan_files(
        self, *, older_than: TimePoint | None = None, dry_run: bool = False, force: bool = False
    ) -> OrphanFilesCleanResult:
        """Delete files nothing references that are older than ``older_than`` (default now - 1 day)."""
        from paimon_core.operation.orphan_files_clean import OrphanFilesClean

        return OrphanFilesClean(self._table.store).clean(older_than=older_than, dry_run=dry_run, force=force)

    @recorded("remove_unexisting_files")
    def remove_unexisting_files(
        self, *, dry_run: bool = False, parallelism: int | None = None
    ) -> RemoveUnexistingFilesResult:
        """Drop the latest snapshot's entries whose data file is gone, in one OVERWRITE commit
        (Paimon's ``remove_unexisting_files``; for a damaged table: those rows are lost).
        ``dry_run`` lists the missing files per partition; ``parallelism``: existence checks at once."""
        from paimon_core.operation.remove_unexisting_files import RemoveUnexistingFiles

        return RemoveUnexistingFiles(self._table.store, parallelism=parallelism).run(dry_run=dry_run)

    @recorded("remove_unexisting_manifests")
    def remove_unexisting_manifests(self, *, dry_run: bool = False) -> RemoveUnexistingManifestsResult:
        """Commit the latest snapshot without the manifests it names that are gone, as one
        OVERWRITE snapshot (Flink's ``remove_unexisting_manifests``; their rows are lost)."""
        from paimon_core.operation.remove_unexisting_manifests import RemoveUnexistingManifests

        return RemoveUnexistingManifests(self._table.store).run(dry_run=dry_run)

    @recorded("purge_files")
    def purge_files(self, *, dry_run: bool = False) -> PurgeFilesResult:
        """Delete every branch, tag, consumer, row and file of the table, keeping it (empty) with
        one snapshot (Java's ``purgeFiles``). ``dry_run`` lists what would go."""
        from paimon_core.operation.purge_files import PurgeFiles

        return PurgeFiles(self._table.store).run(dry_run=dry_run)

    @recorded("repair_earliest_snapshot")
    def repair_earliest_snapshot(self, snapshot_id: int, *, dry_run: bool = False) -> RepairEarliestSnapshotResult:
        """Move the EARLIEST hint to ``snapshot_id``, the start of the contiguous snapshots
        ending at the latest one (Java's ``SnapshotManager.repairEarliestSnapshot``)."""
        from paimon_core.snapshot.earliest_repair import repair_earliest_snapshot

        return repair_earliest_snapshot(self._table.snapshot_manager, snapshot_id, table=self._table.name, dry_run=dry_run)

    @recorded("rewrite_file_index")
    def rewrite_file_index(
        self, partitions: str | Sequence[Mapping[str, str]] | None = None
    ) -> RewriteFileIndexResult:
        """Rebuild the data-file indexes of the live files from the ``file-index.*`` options, in
        one COMPACT snapshot (Java's ``rewrite_file_index``; see
        :mod:`paimon_core.operation.rewrite_file_index`)."""
        from paimon_core.operation.commit_maintenance import maintain_after_commit
        from paimon_core.operation.rewrite_file_index import rewrite_file_index

        table = self._table
        return rewrite_file_index(table.store, partitions, after_commit=lambda r: maintain_after_commit(table.store, r))

    # --- compaction --------------------------------------------------------------------
    @recorded("compact")
    def compact(
        self,
        *,
        partitions: str | Sequence[Mapping[str, str]] | None = None,
        where: str | None = None,
        compact_strategy: str = "full",
        buckets: Sequence[int] | None = None,
        partition_idle_time: Duration | None = None,
        options: Mapping[str, str] | None = None,
        commit_user: str | None = None,
        commit_identifier: int | None = None,
        parallelism: int | None = None,
        dry_run: bool = False,
    ) -> CompactResult:
        """Compact the table now, in one COMPACT commit (Paimon's ``compact`` procedure).

        ``partitions`` (``'dt=a,hh=1;dt=b'`` or a list of dicts) or ``where`` (over partition
        columns) narrow it; ``compact_strategy`` is ``full`` (every bucket into its max level) or
        ``minor`` (the table's compaction strategy decides); ``buckets`` (fixed-bucket tables),
        ``partition_idle_time`` (only partitions with no new file for that long) and ``options``
        (dynamic table options for this run). With ``commit_user`` a retry with the same
        ``commit_identifier`` commits nothing twice. ``dry_run`` returns the plan only.
        """
        from paimon_core.operation.compact.compact_planner import CompactRequest, parse_partitions
        from paimon_core.operation.compact.table_compact import TableCompact, local_executor
        from paimon_core.paths import POSTPONE_BUCKET
        from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
        from paimon_core.utils.time_util import to_duration_millis

        table = self._table.copy(dict(options)) if options else self._table
        request = CompactRequest(
            strategy=compact_strategy,  # type: ignore[arg-type]  # validated by CompactRequest
            partitions=parse_partitions(partitions) if isinstance(partitions, str) else (tuple(partitions) if partitions else None),
            where=where,
            buckets=frozenset(buckets) if buckets is not None else None,
            partition_idle_time_ms=None
            if partition_idle_time is None
            else to_duration_millis(partition_idle_time, name="partition_idle_time"),
        )
        ident = BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier
        if table.options.bucket == POSTPONE_BUCKET:  # the compaction assigns the buckets (table-level)
            from paimon_core.table.postpone_bucket_compact import PostponeBucketCompact

            postpone = PostponeBucketCompact.for_request(table, request, commit_user=commit_user)
            return postpone.run(dry_run=dry_run, commit_identifier=ident)
        job = TableCompact(table.store, commit_user=commit_user, executor=local_executor(parallelism))
        return job.run(request, dry_run=dry_run, commit_identifier=ident)

    @recorded("compact_manifest")
    def compact_manifest(self, *, dry_run: bool = False) -> CompactManifestResult:
        """Merge the latest snapshot's manifests into few (ADD/DELETE pairs cancelled) and commit
        them as a COMPACT snapshot (Paimon's ``compact_manifest`` procedure); data is untouched."""
        from paimon_core.operation.manifest_compact import ManifestCompact

        return ManifestCompact(self._table.store).run(dry_run=dry_run)

    # --- partitions ----------------------------------------------------------------------
    @recorded("expire_partitions")
    def expire_partitions(
        self,
        expiration_time: Duration | None = None,
        *,
        timestamp_formatter: str | None = None,
        timestamp_pattern: str | None = None,
        expire_strategy: str | None = None,
        max_expires: int | None = None,
        dry_run: bool = False,
    ) -> PartitionExpireResult:
        """Drop the partitions older than ``expiration_time`` (default: the table's
        ``partition.expiration-time``) in one OVERWRITE commit (Paimon's ``expire_partitions``).
        Unset arguments come from the table's ``partition.*`` options. Old snapshots and tags keep
        the rows; their files go with snapshot expiry. ``dry_run`` lists the partitions only."""
        from paimon_core.exceptions import InvalidArgumentError
        from paimon_core.operation.partition_expire import PartitionExpire

        table = self._table
        expiration = expiration_time if expiration_time is not None else table.options.partition_expiration_time_ms
        if expiration is None:
            raise InvalidArgumentError(
                f"expire_partitions on {table.name} needs expiration_time (or partition.expiration-time)",
                argument="expiration_time",
            )
        return PartitionExpire(
            table.store,
            expiration_time=expiration,
            strategy=expire_strategy,
            timestamp_formatter=timestamp_formatter,
            timestamp_pattern=timestamp_pattern,
            max_expires=max_expires,
        ).expire(dry_run=dry_run)

    @recorded("mark_partition_done")
    def mark_partition_done(self, partitions: str | Sequence[Mapping[str, str]]) -> MarkPartitionDoneResult:
        """Mark partitions (``'dt=a,hh=1;dt=b'`` or specs) done by ``partition.mark-done-action``
        (``success-file``: a ``_SUCCESS`` file in each partition directory)."""
        from paimon_core.partition.mark_done import mark_partition_done

        return mark_partition_done(self._table.store, partitions)

    @recorded("drop_partition")
    def drop_partition(
        self, partitions: str | Sequence[str] | Sequence[Mapping[str, str]], *, dry_run: bool = False
    ) -> DropPartitionResult:
        """Drop partitions (``'dt=a,hh=1;dt=b'``, a list of such strings or of specs; partial specs
        match every partition below them) in one OVERWRITE commit (Flink's ``drop_partition``)."""
        from paimon_core.operation.partition_drop import drop_partitions

        return drop_partitions(self._table.store, partitions, dry_run=dry_run)

    # --- tags --------------------------------------------------------------------------
    @recorded("create_tag")
    def create_tag(
        self, name: str, snapshot_id: int | None = None, *, time_retained: Duration | None = None
    ) -> Snapshot:
        """Tag a snapshot (latest by default); TagAlreadyExistsError if the name is taken."""
        from paimon_core.tag.tag_operations import create_tag

        return create_tag(self._table.store, name, snapshot_id, time_retained=time_retained)

    @recorded("create_tag_from_timestamp")
    def create_tag_from_timestamp(
        self, name: str, timestamp: TimePoint, *, time_retained: Duration | None = None, dry_run: bool = False
    ) -> Snapshot:
        """Tag the first snapshot committed at or after ``timestamp`` (Java's createTagFromTimestamp).
        ``dry_run``: check everything, return the snapshot it would tag, write nothing."""
        from paimon_core.tag.tag_operations import create_tag_from_timestamp

        return create_tag_from_timestamp(self._table.store, name, timestamp, time_retained=time_retained, dry_run=dry_run)

    @recorded("create_tag_from_watermark")
    def create_tag_from_watermark(
        self, name: str, watermark: int, *, time_retained: Duration | None = None, dry_run: bool = False
    ) -> Snapshot:
        """Tag the first snapshot whose watermark is >= ``watermark`` (Flink's create_tag_from_watermark)."""
        from paimon_core.tag.watermark_procedures import create_tag_from_watermark

        return create_tag_from_watermark(self._table.store, name, watermark, time_retained=time_retained, dry_run=dry_run)

    @recorded("replace_tag")
    def replace_tag(
        self,
        name: str,
        snapshot_id: int | None = None,
        *,
        time_retained: Duration | None = None,
        dry_run: bool = False,
    ) -> Snapshot:
        """Point the existing tag ``name`` at ``snapshot_id`` (latest by default)."""
        from paimon_core.tag.tag_operations import replace_tag

        return replace_tag(self._table.store, name, snapshot_id, time_retained=time_retained, dry_run=dry_run)

    @recorded("rename_tag")
    def rename_tag(self, name: str, target: str, *, dry_run: bool = False) -> Snapshot:
        """Rename tag ``name`` to ``target``."""
        from paimon_core.tag.tag_operations import rename_tag

        return rename_tag(self._table.store, name, target, dry_run=dry_run)

    @recorded("delete_tag")
    def delete_tag(self, names: str | Sequence[str], *, dry_run: bool = False) -> DeleteTagResult:
        """Delete tags (a comma-separated string or a list) and the files only they used."""
        from paimon_core.operation.tag_deletion import delete_tags

        return delete_tags(self._table.store, names, dry_run=dry_run)

    @recorded("expire_tags")
    def expire_tags(self, *, older_than: TimePoint | None = None, dry_run: bool = False) -> ExpireTagsResult:
        """Delete tags past their time-retained (or created before ``older_than``)."""
        from paimon_core.tag.tag_time_expire import expire_tags

        return expire_tags(self._table.store, older_than=older_than, dry_run=dry_run)

    @recorded("trigger_tag_automatic_creation")
    def trigger_tag_automatic_creation(self, *, now: TimePoint | None = None) -> TagCreationResult:
        """Create the period tags ``tag.automatic-creation`` asks for, as of ``now`` (idempotent)."""
        from paimon_core.tag.tag_auto_creation import TagAutoCreation

        return TagAutoCreation(self._table.store).run(now=now)

    # --- rollback ----------------------------------------------------------------------
    @recorded("rollback_to")
    def rollback_to(self, target: int | str, *, dry_run: bool = False) -> RollbackResult:
        """Make a snapshot id or tag the latest state, metadata-only (Paimon 1.2+)."""
        from paimon_core.table.rollback_helper import RollbackHelper

        return RollbackHelper(self._table).rollback_to(target, dry_run=dry_run)

    @recorded("rollback_to_timestamp")
    def rollback_to_timestamp(self, timestamp: TimePoint, *, dry_run: bool = False) -> RollbackResult:
        from paimon_core.table.rollback_helper import RollbackHelper

        return RollbackHelper(self._table).rollback_to_timestamp(timestamp, dry_run=dry_run)

    @recorded("rollback_to_watermark")
    def rollback_to_watermark(self, watermark: int, *, dry_run: bool = False) -> RollbackResult:
        """Roll back to the newest snapshot whose watermark is <= ``watermark``."""
        from paimon_core.table.rollback_helper import RollbackHelper
        from paimon_core.tag.watermark_procedures import snapshot_for_rollback

        snapshot = snapshot_for_rollback(self._table.store, watermark)
        return RollbackHelper(self._table).rollback_to(snapshot.id, dry_run=dry_run)

    @recorded("rollback_to_as_latest")
    def rollback_to_as_latest(self, target: int | str, *, dry_run: bool = False) -> RollbackResult:
        """Non-destructive rollback: a new snapshot with the target's state; later ones stay."""
        from paimon_core.table.rollback_helper import RollbackHelper

        return RollbackHelper(self._table).rollback_to_as_latest(target, dry_run=dry_run)

    # --- consumers ---------------------------------------------------------------------
    @recorded("reset_consumer")
    def reset_consumer(self, consumer_id: str, next_snapshot_id: int | None = None) -> ResetConsumerResult:
        """Move a consumer to ``next_snapshot_id``; without one, delete the consumer."""
        from paimon_core.consumer.consumer_operations import reset_consumer

        return reset_consumer(self._table.store, consumer_id, next_snapshot_id)

    @recorded("clear_consumers")
    def clear_consumers(
        self, including: str = ".*", excluding: str | None = None, *, dry_run: bool = False
    ) -> ClearConsumersResult:
        from paimon_core.consumer.consumer_operations import clear_consumers

        return clear_consumers(self._table.store, including, excluding, dry_run=dry_run)

    # --- system tables -----------------------------------------------------------------
    def system_table(self, name: str) -> pa.Table:
        """A system table (``snapshots``, ``schemas``, ``options``, ``files``, ``manifests``,
        ``tags``, ``consumers``, ``partitions``) as an Arrow table with Paimon's columns."""
        from paimon_core.table.system import read_system_table

        return read_system_table(self._table, name)
