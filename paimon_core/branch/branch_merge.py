"""Merge one branch into another (Java's ``FileSystemBranchManager.mergeBranch`` and
``BranchMergeHandler``, procedure ``merge_branch(table, source_branch, target_branch)``).

Java's merge is a conservative file-level merge for append-only tables: the data files live in
the source branch's latest snapshot and not in the target's are committed to the target as one
APPEND snapshot (same partition, bucket and total buckets; shared data files, nothing is
copied). It refuses, with Java's messages:

* blank names, a branch merged into itself (``BranchManager.mergeValidate``);
* a branch that does not exist, or has no snapshot (``validateMergeBranches``);
* a branch whose history is not complete and append-only: its earliest snapshot is not 1, a
  snapshot in ``1..latest`` is missing, or one is not APPEND/ANALYZE (``validateAppendOnlyHistory``:
  without fork metadata the fork point cannot be inferred once snapshots expire);
* primary-key tables (``validateAppendOnly``), data-evolution tables (``validateNoDataEvolution``),
  different ``row-tracking.enabled`` settings (``validateRowTrackingConsistent``) and different
  latest fields (``validateLatestSchema``);
* source files whose schema id the target lacks or whose schema differs (``validateMergeFileSchemas``).

With row tracking Java clears the merged files' ``first_row_id`` so the target's commit assigns
fresh row ids (``prepareFileForTargetCommit``); paimon_core's commit does not assign row ids yet, so
a row-tracking table is refused here (the clearing is kept for when it does). Nothing to merge:
nothing is committed. The
commit checks append conflicts (``appendCommitCheckConflict(true)``).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.branch.branch_names import check_branch_ref
from paimon_core.exceptions import BranchNotFoundError, InvalidArgumentError, SnapshotNotFoundError
from paimon_core.manifest.entries import FileKind, ManifestEntry
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.paths import MAIN_BRANCH, PathFactory
from paimon_core.results import _ToDict
from paimon_core.schema.schema_manager import SchemaManager
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind
from paimon_core.snapshot.snapshot_manager import SnapshotManager

if TYPE_CHECKING:
    from paimon_core.schema.table_schema import TableSchema
    from paimon_core.store.file_store import FileStore

__all__ = ["MergeBranchResult", "merge_branch"]

logger = logging.getLogger(__name__)

FIRST_SNAPSHOT_ID = 1
_HISTORY = "Branch merge requires complete append-only snapshot history."


@dataclass(frozen=True)
class MergeBranchResult(_ToDict):
    """What ``merge_branch`` committed to the target (``dry_run``: would commit)."""

    table: str
    source_branch: str
    target_branch: str
    dry_run: bool
    merged_files: int = 0
    merged_rows: int = 0
    merged_bytes: int = 0
    snapshot_id: int | None = None  # the target's APPEND snapshot; None: nothing to merge or dry run
    commit_kind: str | None = None
    result: bool = True  # Java's procedure output


class _BranchMerge:
    def __init__(self, store: FileStore, source: str, target: str) -> None:
        self.store = store
        self.source = source
        self.target = target

    def _paths(self, branch: str) -> PathFactory:
        return PathFactory(self.store.path, branch=branch)

    def _schema(self, branch: str) -> TableSchema:
        schema = SchemaManager(self.store.file_io, self._paths(branch)).latest()
        if schema is None:
            raise BranchNotFoundError(f"Branch '{branch}' doesn't exist.", branch=branch)
        return schema

    def _snapshots(self, branch: str) -> SnapshotManager:
        return SnapshotManager(self.store.file_io, self._paths(branch))

    def validate(self) -> None:
        s, t = self.source, self.target
        if s == t:
            raise InvalidArgumentError(f"Cannot merge branch '{s}' into itself.", branch=s)
        manager = self.store.branch_manager()
        for b in (s, t):
            if b != MAIN_BRANCH and not manager.branch_exists(b):
                raise BranchNotFoundError(f"Branch '{b}' doesn't exist in {self.store.name}.", branch=b)
        if self._snapshots(s).latest_snapshot_id() is None:
            raise SnapshotNotFoundError(f"Cannot merge branch '{s}', because it does not have snapshot.", branch=s)
        if self._snapshots(t).latest_snapshot_id() is None:
            raise SnapshotNotFoundError(f"Cannot merge into branch '{t}', because it does not have snapshot.", branch=t)
        for b in (s, t):
            self._complete_append_only(b)
        src, dst = self._schema(s), self._schema(t)
        for b, schema in ((s, src), (t, dst)):
            if schema.primary_keys:
                raise InvalidArgumentError(
                    f"Branch merge is only supported for append-only tables, but branch '{b}' has primary keys.",
                    branch=b,
                )
        for b, schema in ((s, src), (t, dst)):
            if _enabled(schema, "data-evolution.enabled"):
                raise InvalidArgumentError(
                    f"Branch merge is not supported for data-evolution tables (branch '{b}').", branch=b
                )
        s_rt, t_rt = _enabled(src, "row-tracking.enabled"), _enabled(dst, "row-tracking.enabled")
        if s_rt != t_rt:
            raise InvalidArgumentError(
                f"Cannot merge branch '{s}' into '{t}': row-tracking settings must match "
                f"(source={str(s_rt).lower()}, target={str(t_rt).lower()}).",
                branch=s,
            )
        if s_rt:
            # Java clears the merged files' first_row_id so that the target's commit assigns fresh
            # row ids; paimon_core's commit does not assign row ids yet, so the merge would leave
            # files without them (and nextRowId behind): refused, naming the feature.
            raise InvalidArgumentError(
                f"Cannot merge branch '{s}' into '{t}': row-tracking tables (row-tracking.enabled) need the "
                "commit to assign fresh row ids to the merged files, which paimon_core does not do yet; "
                "nothing was changed",
                branch=s,
                feature="row-tracking commit",
            )
        if src.fields != dst.fields:
            raise InvalidArgumentError(f"Cannot merge branch '{s}' into '{t}', schema mismatch.", branch=s)

    def _complete_append_only(self, branch: str) -> None:
        sm = self._snapshots(branch)
        earliest, latest = sm.earliest_snapshot_id(), sm.latest_snapshot_id()
        if earliest is None or latest is None:
            return
        if earliest != FIRST_SNAPSHOT_ID:
            raise InvalidArgumentError(
                f"Cannot merge: branch '{branch}' does not start at snapshot {FIRST_SNAPSHOT_ID} "
                f"(earliest is {earliest}). {_HISTORY}",
                branch=branch,
            )
        for sid in range(FIRST_SNAPSHOT_ID, latest + 1):
            snap = sm.try_snapshot(sid)
            if snap is None:
                raise InvalidArgumentError(
                    f"Cannot merge: snapshot {sid} is missing on branch '{branch}'. {_HISTORY}", branch=branch
                )
            if snap.commit_kind not in (CommitKind.APPEND, CommitKind.ANALYZE):
                raise InvalidArgumentError(
                    f"Cannot merge: snapshot {sid} on branch '{branch}' has commit kind '{snap.commit_kind}'. {_HISTORY}",
                    branch=branch,
                )

    def _live(self, branch: str) -> list[ManifestEntry]:
        store = self.store.switch_to_branch(branch)
        latest = store.snapshot_manager.latest_snapshot()
        return store.new_scan().live_entries(latest)

    def diff(self) -> list[ManifestEntry]:
        """Java's ``computeMergeDiff``: live ADDs of the source the target does not have."""
        target_ids = {e.identifier() for e in self._live(self.target)}
        return [e for e in self._live(self.source) if e.kind == FileKind.ADD and e.identifier() not in target_ids]

    def check_file_schemas(self, files: list[ManifestEntry]) -> None:
        src = SchemaManager(self.store.file_io, self._paths(self.source))
        dst = SchemaManager(self.store.file_io, self._paths(self.target))
        dst_ids = set(dst.list_ids())
        for sid in sorted({e.file.schema_id for e in files}):
            if sid not in dst_ids:
                raise InvalidArgumentError(
                    f"Cannot merge branch '{self.source}' into '{self.target}', because target branch does not "
                    f"contain schema id {sid} required by source files.",
                    branch=self.source,
                )
            if src.schema(sid) != dst.schema(sid):
                raise InvalidArgumentError(
                    f"Cannot merge branch '{self.source}' into '{self.target}', schema history mismatch for schema id {sid}.",
                    branch=self.source,
                )

    def commit(self, files: list[ManifestEntry]) -> int | None:
        target_store = self.store.switch_to_branch(self.target)
        row_tracking = _enabled(target_store.schema, "row-tracking.enabled")
        grouped: dict[tuple[bytes, int, int], list[ManifestEntry]] = {}
        for e in files:
            grouped.setdefault((e.partition, e.bucket, e.total_buckets), []).append(e)
        messages = [
            CommitMessage(
                partition=p,
                bucket=b,
                total_buckets=n,
                new_files=tuple(
                    e.file.copy(first_row_id=None) if row_tracking and e.file.first_row_id is not None else e.file
                    for e in entries
                ),
            )
            for (p, b, n), entries in grouped.items()
        ]
        committer = target_store.new_commit(f"merge-branch-{uuid.uuid4()}")
        result = committer.commit(messages, BATCH_COMMIT_IDENTIFIER, check_committed=False, check_append_conflicts=True)
        return result.snapshot_id


def _enabled(schema: TableSchema, key: str) -> bool:
    return str(schema.options.get(key, "false")).strip().lower() == "true"


def merge_branch(
    store: FileStore, source_branch: str, target_branch: str | None = None, *, dry_run: bool = False
) -> MergeBranchResult:
    """Merge ``source_branch`` into ``target_branch`` (default ``main``); see the module docstring."""
    if not isinstance(source_branch, str) or not source_branch.strip():
        raise InvalidArgumentError(f"Source branch name '{source_branch}' is blank.", branch=source_branch)
    if target_branch is not None and (not isinstance(target_branch, str) or not target_branch.strip()):
        raise InvalidArgumentError(f"Target branch name '{target_branch}' is blank.", branch=target_branch)
    source = check_branch_ref(source_branch)
    target = check_branch_ref(target_branch if target_branch is not None else MAIN_BRANCH)
    job = _BranchMerge(store, source, target)
    job.validate()
    files = job.diff()
    rows = sum(e.file.row_count for e in files)
    size = sum(e.file.file_size for e in files)
    if files:
        job.check_file_schemas(files)
    if dry_run or not files:
        return MergeBranchResult(store.name, source, target, dry_run, len(files), rows, size)
    snapshot_id = job.commit(files)
    logger.info(
        "Merged branch %s into %s of %s: %d file(s), %d row(s), snapshot %s",
        source, target, store.name, len(files), rows, snapshot_id,
    )  # fmt: skip
    return MergeBranchResult(
        store.name, source, target, False, len(files), rows, size, snapshot_id, CommitKind.APPEND.value
    )
