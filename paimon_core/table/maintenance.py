"""``table.maintenance``: the table's maintenance calls in one namespace (pyiceberg's shape).

:class:`MaintenanceTable` is what ``FileStoreTable.maintenance`` returns: each call is a thin
entry point over one short-lived operation, as Java's ``FileStoreTable`` (expireSnapshots,
createTag, rollbackTo, createBranch ...) and Paimon's procedures of the same names. Each returns a
typed frozen result with ``to_dict()`` (the tag calls a :class:`~paimon_core.tag.tag_result.TagResult`).
Times are epoch millis, a datetime or an ISO string; durations are millis, a timedelta or a
Paimon duration ('1 d').

``dry_run`` defaults, one per action on every entry point (this API, the ``spark_jobs`` job, the
Airflow operator; :data:`DRY_RUN_FIRST` names them):

* calls that delete or drop on request, beyond the table's declared retention (orphan files,
  purge, unexisting files and manifests, partitions, tags, branches, consumers, and the rollbacks
  and fast-forward that drop snapshots) default to ``dry_run=True``: pass ``dry_run=False`` to
  change the table. Paimon's procedures of those names that take ``dry_run`` default to false;
* the retention calls driven by the table's options (``expire_snapshots``, ``expire_changelogs``,
  ``expire_partitions``, ``expire_tags``) and the calls that add or rewrite without dropping
  anything a reader can see (compact, tags, merge_branch, rollback_to_as_latest ...) default to
  ``dry_run=False``, as Paimon's procedures do.

Each call records one row in the warehouse's maintenance ledger when the warehouse has one
(:mod:`paimon_core.ledger`); a call made inside another recorded action (a ``spark_jobs`` job, an
Airflow operator) adds to that action's row instead.

>>> from paimon_core.table.maintenance import dry_run_defaults
>>> dry_run_defaults()["remove_orphan_files"], dry_run_defaults()["expire_snapshots"]
(True, False)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.ledger.recorder import recorded

if TYPE_CHECKING:
    from paimon_core.append.data_evolution_row_id_reassigner import ReassignRowIdResult
    from paimon_core.branch.branch_manager import CreateBranchResult, DeleteBranchResult, FastForwardResult
    from paimon_core.branch.branch_merge import MergeBranchResult
    from paimon_core.branch.branch_rename import RenameBranchResult
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
    from paimon_core.table.rollback_helper import RollbackResult
    from paimon_core.table.table import FileStoreTable
    from paimon_core.tag.tag_auto_creation import TagCreationResult
    from paimon_core.tag.tag_result import TagResult
    from paimon_core.tag.tag_time_expire import ExpireTagsResult
    from paimon_core.utils.time_util import Duration, TimePoint

__all__ = ["DRY_RUN_FIRST", "MaintenanceTable", "dry_run_defaults"]


class MaintenanceTable:
    """``table.maintenance``: expiry, orphan cleanup, compaction, partitions, tags, rollback,
    branches and consumers of one table handle (its branch). See the module docstring for the
    ``dry_run`` defaults."""

    __slots__ = ("_table",)

    def __init__(self, table: FileStoreTable) -> None:
        self._table = table

    @property
    def table(self) -> FileStoreTable:
        """The table handle these calls act on."""
        return self._table

    def __repr__(self) -> str:
        return f"MaintenanceTable({self._table.name!r})"

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
        self, *, older_than: TimePoint | None = None, dry_run: bool = True, force: bool = False
    ) -> OrphanFilesCleanResult:
        """Delete files nothing references that are older than ``older_than`` (default now - 1 day).
        ``dry_run`` (default True: pass False to delete) lists them only."""
        from paimon_core.operation.orphan_files_clean import OrphanFilesClean

        return OrphanFilesClean(self._table.store).clean(older_than=older_than, dry_run=dry_run, force=force)

    @recorded("remove_unexisting_files")
    def remove_unexisting_files(
        self, *, dry_run: bool = True, parallelism: int | None = None
    ) -> RemoveUnexistingFilesResult:
        """Drop the latest snapshot's entries whose data file is gone, in one OVERWRITE commit
        (Paimon's ``remove_unexisting_files``; for a damaged table: those rows are lost).
        ``dry_run`` (default True) lists the missing files per partition; ``parallelism``: existence checks at once."""
        from paimon_core.operation.remove_unexisting_files import RemoveUnexistingFiles

        return RemoveUnexistingFiles(self._table.store, parallelism=parallelism).run(dry_run=dry_run)

    @recorded("remove_unexisting_manifests")
    def remove_unexisting_manifests(self, *, dry_run: bool = True) -> RemoveUnexistingManifestsResult:
        """Commit the latest snapshot without the manifests it names that are gone, as one
        OVERWRITE snapshot (Flink's ``remove_unexisting_manifests``; their rows are lost).
        ``dry_run`` (default True) lists them only."""
        from paimon_core.operation.remove_unexisting_manifests import RemoveUnexistingManifests

        return RemoveUnexistingManifests(self._table.store).run(dry_run=dry_run)

    @recorded("purge_files")
    def purge_files(self, *, dry_run: bool = True) -> PurgeFilesResult:
        """Delete every branch, tag, consumer, row and file of the table, keeping it (empty) with
        one snapshot (Java's ``purgeFiles``). ``dry_run`` (default True) lists what would go."""
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
        self, partitions: str | Sequence[Mapping[str, str]] | None = None, *, dry_run: bool = False
    ) -> RewriteFileIndexResult:
        """Rebuild the data-file indexes of the live files from the ``file-index.*`` options, in
        one COMPACT snapshot (Java's ``rewrite_file_index``; see
        :mod:`paimon_core.operation.rewrite_file_index`). ``dry_run``: compute and report, write
        nothing."""
        from paimon_core.operation.commit_maintenance import maintain_after_commit
        from paimon_core.operation.rewrite_file_index import rewrite_file_index

        table = self._table
        return rewrite_file_index(
            table.store, partitions, dry_run=dry_run, after_commit=lambda r: maintain_after_commit(table.store, r)
        )

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

    @recorded("reassign_row_id")
    def reassign_row_id(
        self, partitions: str | Sequence[Mapping[str, str]] | None = None, *, dry_run: bool = False
    ) -> ReassignRowIdResult:
        """Give each fragmented partition of a data-evolution table contiguous row ids, metadata
        only, in one OVERWRITE snapshot (Paimon's ``reassign_row_id``: rows keep their data, their
        ``_ROW_ID`` moves to ids never used before; see
        :mod:`paimon_core.append.data_evolution_row_id_reassigner`). ``partitions``
        (``'dt=a;dt=b'`` or a list of dicts) narrows it; ``dry_run`` returns the plan only."""
        from paimon_core.append.data_evolution_row_id_reassigner import DataEvolutionRowIdReassigner
        from paimon_core.operation.compact.compact_planner import parse_partitions

        specs = parse_partitions(partitions) if isinstance(partitions, str) else partitions
        return DataEvolutionRowIdReassigner(self._table.store, partitions=specs).reassign(dry_run=dry_run)

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
        self, partitions: str | Sequence[str] | Sequence[Mapping[str, str]], *, dry_run: bool = True
    ) -> DropPartitionResult:
        """Drop partitions (``'dt=a,hh=1;dt=b'``, a list of such strings or of specs; partial specs
        match every partition below them) in one OVERWRITE commit (Flink's ``drop_partition``).
        ``dry_run`` (default True) lists them only."""
        from paimon_core.operation.partition_drop import drop_partitions

        return drop_partitions(self._table.store, partitions, dry_run=dry_run)

    # --- tags --------------------------------------------------------------------------
    @recorded("create_tag")
    def create_tag(
        self, name: str, snapshot_id: int | None = None, *, time_retained: Duration | None = None
    ) -> TagResult:
        """Tag a snapshot (latest by default); TagAlreadyExistsError if the name is taken."""
        from paimon_core.tag.tag_operations import create_tag
        from paimon_core.tag.tag_result import TagResult

        tag = create_tag(self._table.store, name, snapshot_id, time_retained=time_retained)
        return TagResult.of(self._table.name, name, tag)

    @recorded("create_tag_from_timestamp")
    def create_tag_from_timestamp(
        self, name: str, timestamp: TimePoint, *, time_retained: Duration | None = None, dry_run: bool = False
    ) -> TagResult:
        """Tag the first snapshot committed at or after ``timestamp`` (Java's createTagFromTimestamp).
        ``dry_run``: check everything, report the snapshot it would tag, write nothing."""
        from paimon_core.tag.tag_operations import create_tag_from_timestamp
        from paimon_core.tag.tag_result import TagResult

        tag = create_tag_from_timestamp(self._table.store, name, timestamp, time_retained=time_retained, dry_run=dry_run)
        return TagResult.of(self._table.name, name, tag, dry_run=dry_run)

    @recorded("create_tag_from_watermark")
    def create_tag_from_watermark(
        self, name: str, watermark: int, *, time_retained: Duration | None = None, dry_run: bool = False
    ) -> TagResult:
        """Tag the first snapshot whose watermark is >= ``watermark`` (Flink's create_tag_from_watermark)."""
        from paimon_core.tag.tag_result import TagResult
        from paimon_core.tag.watermark_procedures import create_tag_from_watermark

        tag = create_tag_from_watermark(self._table.store, name, watermark, time_retained=time_retained, dry_run=dry_run)
        return TagResult.of(self._table.name, name, tag, dry_run=dry_run)

    @recorded("replace_tag")
    def replace_tag(
        self,
        name: str,
        snapshot_id: int | None = None,
        *,
        time_retained: Duration | None = None,
        dry_run: bool = False,
    ) -> TagResult:
        """Point the existing tag ``name`` at ``snapshot_id`` (latest by default)."""
        from paimon_core.tag.tag_operations import replace_tag
        from paimon_core.tag.tag_result import TagResult

        before = self._table.tag_manager.try_get(name)
        tag = replace_tag(self._table.store, name, snapshot_id, time_retained=time_retained, dry_run=dry_run)
        previous = None if before is None else before.id
        return TagResult.of(self._table.name, name, tag, dry_run=dry_run, previous_snapshot_id=previous)

    @recorded("rename_tag")
    def rename_tag(self, name: str, target: str, *, dry_run: bool = False) -> TagResult:
        """Rename tag ``name`` to ``target`` (the result names the tag by its new name)."""
        from paimon_core.tag.tag_operations import rename_tag
        from paimon_core.tag.tag_result import TagResult

        tag = rename_tag(self._table.store, name, target, dry_run=dry_run)
        return TagResult.of(self._table.name, target, tag, dry_run=dry_run, renamed_from=name)

    @recorded("delete_tag")
    def delete_tag(self, names: str | Sequence[str], *, dry_run: bool = True) -> DeleteTagResult:
        """Delete tags (a comma-separated string or a list) and the files only they used.
        ``dry_run`` (default True) lists what would go."""
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
    def rollback_to(self, target: int | str, *, dry_run: bool = True) -> RollbackResult:
        """Make a snapshot id or tag the latest state, metadata-only (Paimon 1.2+): the later
        snapshots, tags and changelogs are deleted. ``dry_run`` (default True) lists them only."""
        from paimon_core.table.rollback_helper import RollbackHelper

        return RollbackHelper(self._table).rollback_to(target, dry_run=dry_run)

    @recorded("rollback_to_timestamp")
    def rollback_to_timestamp(self, timestamp: TimePoint, *, dry_run: bool = True) -> RollbackResult:
        """Roll back to the newest snapshot committed at or before ``timestamp`` (as
        :meth:`rollback_to`; ``dry_run`` defaults to True)."""
        from paimon_core.table.rollback_helper import RollbackHelper

        return RollbackHelper(self._table).rollback_to_timestamp(timestamp, dry_run=dry_run)

    @recorded("rollback_to_watermark")
    def rollback_to_watermark(self, watermark: int, *, dry_run: bool = True) -> RollbackResult:
        """Roll back to the newest snapshot whose watermark is <= ``watermark`` (as
        :meth:`rollback_to`; ``dry_run`` defaults to True)."""
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
        self, including: str = ".*", excluding: str | None = None, *, dry_run: bool = True
    ) -> ClearConsumersResult:
        """Delete the consumers whose ids fully match ``including`` and not ``excluding``
        (Paimon's ``clear_consumers``); ``dry_run`` (default True) lists them only."""
        from paimon_core.consumer.consumer_operations import clear_consumers

        return clear_consumers(self._table.store, including, excluding, dry_run=dry_run)

    # --- branches --------------------------------------------------------------------
    @recorded("create_branch")
    def create_branch(
        self, name: str, tag: str | None = None, *, ignore_if_exists: bool = False
    ) -> CreateBranchResult:
        """Branch ``name`` from ``tag`` of this handle's branch, or empty (the latest schema only)."""
        return self._table.branch_manager().create_branch(name, tag, ignore_if_exists=ignore_if_exists)

    @recorded("delete_branch")
    def delete_branch(self, names: str | Sequence[str], *, dry_run: bool = True) -> DeleteBranchResult:
        """Remove branches (a name, ``"a,b"`` or a list): their metadata only; data files they
        shared stay, files only they referenced are left for ``remove_orphan_files``.
        ``dry_run`` (default True) lists what would go."""
        return self._table.branch_manager().delete_branch(names, dry_run=dry_run)

    @recorded("fast_forward")
    def fast_forward(self, name: str, *, dry_run: bool = True) -> FastForwardResult:
        """Replace this handle's branch, from ``name``'s earliest snapshot on, with branch ``name``
        (its later snapshots are deleted). ``dry_run`` (default True) reports the plan only."""
        return self._table.branch_manager().fast_forward(name, dry_run=dry_run)

    @recorded("rename_branch")
    def rename_branch(self, from_branch: str, to_branch: str, *, dry_run: bool = False) -> RenameBranchResult:
        """Rename branch ``from_branch`` to ``to_branch`` (Java's ``renameBranch``)."""
        from paimon_core.branch.branch_rename import rename_branch

        return rename_branch(self._table.store, from_branch, to_branch, dry_run=dry_run)

    @recorded("merge_branch")
    def merge_branch(
        self, source_branch: str, target_branch: str | None = None, *, dry_run: bool = False
    ) -> MergeBranchResult:
        """Commit the files of ``source_branch`` that ``target_branch`` (default ``main``) lacks
        to it, append-only tables only (Java's ``mergeBranch``)."""
        from paimon_core.branch.branch_merge import merge_branch

        return merge_branch(self._table.store, source_branch, target_branch, dry_run=dry_run)


def _actions() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(MaintenanceTable).items()
        if not name.startswith("_") and inspect.isfunction(member)
    }


def dry_run_defaults() -> dict[str, bool]:
    """Action -> the default of its ``dry_run`` (the maintenance calls that take one), read from
    the signatures above: the one default the jobs, operators and DAGs must agree with."""
    out: dict[str, bool] = {}
    for name, sig in _actions().items():
        param = sig.parameters.get("dry_run")
        if param is not None and isinstance(param.default, bool):
            out[name] = param.default
    return out


#: The actions whose ``dry_run`` defaults to True (they drop something on request).
DRY_RUN_FIRST: frozenset[str] = frozenset(a for a, d in dry_run_defaults().items() if d)
