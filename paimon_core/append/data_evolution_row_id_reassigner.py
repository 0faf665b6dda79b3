"""Reassign row ids of a data-evolution table so each partition's are contiguous (Paimon's
``reassign_row_id`` procedure; Java ``DataEvolutionRowIdReassigner`` and
``DataEvolutionRowIdAssignmentPlanner``).

Row ids are assigned at commit in commit order (:func:`paimon_core.append.row_tracking.assign_row_tracking`),
so a table whose commits write several partitions interleaves them: partition ``a`` holds ids
0, 2, 4 and ``b`` 1, 3. The data-evolution compaction only merges follow-on ranges
(:mod:`.data_evolution_compact_coordinator`), so such partitions never compact. This moves every
fragmented partition's rows to fresh, contiguous ids, metadata only (no data file is read or
written), as Java does:

* **Plan.** Per partition (narrowed by ``partitions``), the live files' row-id groups are its
  *logical ranges* (every file of a group must span the same range). A partition whose ranges
  leave a gap is *fragmented*. Runs of follow-on ranges of more than
  ``data-evolution.reassign.skip-contiguous-row-count`` rows (default 1,000,000,000; 0: none) stay
  where they are; a partition with no gap left then is not fragmented any more. Fragmented
  partitions, in partition order (typed, nulls first; then by their smallest id), get their ranges
  mapped one after another onto ids from the latest snapshot's ``nextRowId``; a file's new
  ``first_row_id`` is its range's new start.
* **Commit** (Java ``FileStoreCommitImpl.replaceManifestList``): one OVERWRITE snapshot
  ``latest + 1`` with the same files: the data manifests holding a remapped entry are rewritten
  (each into one new manifest, entries in order, ADD and DELETE alike), the others kept; the delta
  list is empty; ``nextRowId`` advances by the rows remapped; schema, index manifest (deletion
  vectors are by file name and position: unchanged), watermark, statistics, properties and the
  record count are the latest's. Older snapshots and tags keep the old ids. If another commit
  takes the snapshot id first, the plan is made again on the new latest snapshot (three
  attempts, as Java's ``MAX_COMMIT_ATTEMPTS``); nothing is left behind by a lost attempt.

Safety: rows keep their data and order, only their ``_ROW_ID`` changes, to ids no file used
before (all >= the old ``nextRowId``). A row-id reference taken before (an update by ``_ROW_ID``
planned on an older snapshot) therefore never lands on another row: pypaimon's commit checks that
the ranges it updates still exist (``RowIdExistenceConflict``) and fails, as Java's
``DataEvolutionConflictDetection.checkRowIdExistence`` does. Refused, nothing changed: a table
without ``row-tracking.enabled`` / ``data-evolution.enabled`` or without a snapshot (Java's
messages), blob and vector files (paimon_core refuses those tables), a file without
``first_row_id``, and a file that physically stores ``_ROW_ID`` (Java checks ``write_cols``; a
COMPACT file is also checked for the column itself, since row-tracking compaction
(:mod:`.row_tracking`) writes it without listing it: those ids would not move). Global indexes,
which Java remaps, are refused with the table kind. Unpartitioned tables are skipped, as in Java.

``dry_run`` returns the plan (partitions, files, rows, the ids they would get) and changes nothing.
"""

from __future__ import annotations

import bisect
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.append.row_tracking import (
    DATA_EVOLUTION_ENABLED,
    ROW_ID,
    ROW_TRACKING_ENABLED,
    data_evolution_enabled,
    row_tracking_enabled,
)
from paimon_core.exceptions import (
    CommitConflictError,
    CorruptFileError,
    InvalidArgumentError,
    InvalidOptionError,
    SchemaMismatchError,
)
from paimon_core.manifest.entries import FileSource
from paimon_core.manifest.manifest_file import write_manifest_file
from paimon_core.operation.commit.replace_manifest_list import delete_manifests, replace_manifest_list
from paimon_core.operation.data_evolution_split_read import row_id_range, same_range_groups
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import Snapshot

if TYPE_CHECKING:
    from paimon_core.manifest.entries import DataFileMeta, ManifestEntry, ManifestFileMeta
    from paimon_core.store.file_store import FileStore

__all__ = [
    "SKIP_CONTIGUOUS_ROW_COUNT",
    "DataEvolutionRowIdReassigner",
    "ReassignRowIdResult",
    "RowRangeMapping",
]

logger = logging.getLogger(__name__)

#: Java ``CoreOptions.DATA_EVOLUTION_REASSIGN_SKIP_CONTIGUOUS_ROW_COUNT``.
SKIP_CONTIGUOUS_ROW_COUNT = "data-evolution.reassign.skip-contiguous-row-count"
SKIP_CONTIGUOUS_ROW_COUNT_DEFAULT = 1_000_000_000
#: Java's ``MAX_COMMIT_ATTEMPTS``.
MAX_COMMIT_ATTEMPTS = 3
COMMIT_USER_PREFIX = "reassign-row-id"


@dataclass(frozen=True)
class ReassignRowIdResult(_ToDict):
    """What ``reassign_row_id`` did (Java ``DataEvolutionRowIdReassigner.Result``); ``result`` is
    the procedure's output line."""

    table: str
    dry_run: bool
    reassigned: bool
    previous_snapshot_id: int
    new_snapshot_id: int  # the OVERWRITE snapshot (= previous when skipped or a dry run)
    file_count: int = 0  # live files whose first_row_id moved
    row_count: int = 0  # ids assigned
    index_file_count: int = 0  # global index files remapped (always 0: refused tables)
    first_assigned_row_id: int = 0
    next_row_id: int = 0
    partitions: tuple[str, ...] = ()  # the partitions remapped, in id order
    skip_reason: str | None = None
    result: str = ""


@dataclass(frozen=True)
class RowRangeMapping:
    """One partition's old logical ranges onto new starts (Java ``RowRangeMappingIndex``)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]  # inclusive
    new_starts: tuple[int, ...]

    def map(self, start: int, end: int) -> int | None:
        """The new start of range ``[start, end]`` when it lies in one old range, else None."""
        i = bisect.bisect_right(self.starts, start) - 1
        if i < 0 or end > self.ends[i]:
            return None
        return self.new_starts[i] + (start - self.starts[i])


@dataclass(frozen=True)
class _Plan:
    mappings: Mapping[bytes, RowRangeMapping]
    partitions: tuple[str, ...]
    total: int
    files: int


class DataEvolutionRowIdReassigner:
    """Reassigns row ids of one table (see the module docstring)."""

    def __init__(self, store: FileStore, *, partitions: Sequence[Mapping[str, str]] | None = None) -> None:
        self.store = store
        self.partitions = tuple(partitions) if partitions else None

    def _check(self) -> None:
        store = self.store
        options = store.options.options
        if store.schema.primary_keys or not row_tracking_enabled(options):
            raise InvalidOptionError(
                f"Table '{store.name}' must enable '{ROW_TRACKING_ENABLED}=true' before reassigning row IDs.",
                key=ROW_TRACKING_ENABLED,
            )
        if not data_evolution_enabled(options):
            raise InvalidOptionError(
                f"Table '{store.name}' must enable '{DATA_EVOLUTION_ENABLED}=true' before reassigning row IDs.",
                key=DATA_EVOLUTION_ENABLED,
            )
        self._skip_threshold()
        self._partition_filter()  # bad specs are refused even on an empty or unpartitioned table

    def _skip_threshold(self) -> int:
        raw = self.store.options.options.get(SKIP_CONTIGUOUS_ROW_COUNT)
        try:
            value = SKIP_CONTIGUOUS_ROW_COUNT_DEFAULT if raw is None else int(raw.strip())
        except ValueError:
            raise InvalidOptionError(
                f"Option '{SKIP_CONTIGUOUS_ROW_COUNT}' must be a long, got {raw!r}", key=SKIP_CONTIGUOUS_ROW_COUNT
            ) from None
        if value < 0:
            raise InvalidOptionError(f"The option {SKIP_CONTIGUOUS_ROW_COUNT} cannot be negative.", key=SKIP_CONTIGUOUS_ROW_COUNT)
        return value

    def _partition_filter(self) -> list[dict[int, object]] | None:
        """``partitions`` as (column index -> internal value) conditions, any of which may match."""
        if self.partitions is None:
            return None
        from paimon_core.data.partition_spec import partition_spec_value

        fields = self.store.schema.partition_fields
        index = {f.name: i for i, f in enumerate(fields)}
        default_name = self.store.options.partition_default_name
        out: list[dict[int, object]] = []
        for spec in self.partitions:
            unknown = sorted(set(spec) - set(index))
            if unknown:
                raise InvalidArgumentError(
                    f"Partition spec {dict(spec)} names non-partition column(s) {unknown}; partition keys of "
                    f"{self.store.name} are {[f.name for f in fields]}"
                )
            out.append(
                {
                    index[k]: partition_spec_value(v, fields[index[k]].type, column=k, default_partition_name=default_name)
                    for k, v in spec.items()
                }
            )
        return out

    def reassign(self, *, dry_run: bool = False, commit_user: str | None = None) -> ReassignRowIdResult:
        """Plan, and unless ``dry_run`` commit, the reassignment (see the module docstring).

        Raises:
            InvalidOptionError: the table has no row tracking or data evolution, or a bad option.
            InvalidArgumentError: no snapshot, or a bad ``partitions`` spec.
            CorruptFileError / UnsupportedTableKindError: files the reassignment cannot move.
            CommitConflictError: other commits won every attempt (nothing changed; retry).
        """
        self._check()
        store = self.store
        user = commit_user or f"{COMMIT_USER_PREFIX}-{uuid.uuid4()}"
        for attempt in range(1, MAX_COMMIT_ATTEMPTS + 1):
            latest = store.snapshot_manager.latest_snapshot()
            if latest is None:
                raise InvalidArgumentError(f"Cannot reassign row IDs for empty table '{store.name}'.")
            if latest.next_row_id is None:
                raise CorruptFileError(f"Next row id cannot be null for row-tracking table '{store.name}'.")
            if not store.schema.partition_keys:
                return self._skipped(latest, "table is not partitioned", dry_run)
            entries, metas = self._live_entries(latest)
            plan = self._plan(entries)
            if plan is None:
                return self._skipped(latest, "no partition requires row-id reassignment", dry_run)
            first, nxt = latest.next_row_id, latest.next_row_id + plan.total
            done = ReassignRowIdResult(
                table=store.name,
                dry_run=dry_run,
                reassigned=not dry_run,
                previous_snapshot_id=latest.id,
                new_snapshot_id=latest.id if dry_run else latest.id + 1,
                file_count=plan.files,
                row_count=plan.total,
                first_assigned_row_id=first,
                next_row_id=nxt,
                partitions=plan.partitions,
            )
            if dry_run:
                return _with_message(done)
            if self._commit(latest, metas, plan, user):
                logger.info(
                    "Reassigned row IDs for table %s from %d to %d, partitions=%d, files=%d",
                    store.name,
                    first,
                    nxt,
                    len(plan.partitions),
                    plan.files,
                )
                return _with_message(done)
            logger.info(
                "Row-id reassignment of %s based on snapshot %d lost to another commit; attempt %d/%d",
                store.name,
                latest.id,
                attempt + 1,
                MAX_COMMIT_ATTEMPTS,
            )
        raise CommitConflictError(
            f"Failed to reassign row IDs of {store.name} because a newer snapshot has been committed "
            f"({MAX_COMMIT_ATTEMPTS} attempts); nothing was changed, retry",
            conflict="snapshot",
        )

    def _skipped(self, latest: Snapshot, reason: str, dry_run: bool) -> ReassignRowIdResult:
        nxt = latest.next_row_id or 0
        return _with_message(
            ReassignRowIdResult(
                table=self.store.name,
                dry_run=dry_run,
                reassigned=False,
                previous_snapshot_id=latest.id,
                new_snapshot_id=latest.id,
                first_assigned_row_id=nxt,
                next_row_id=nxt,
                skip_reason=reason,
            )
        )

    # --- plan -----------------------------------------------------------------------------
    def _live_entries(self, latest: Snapshot) -> tuple[list[ManifestEntry], list[ManifestFileMeta]]:
        scan = self.store.new_scan()
        metas = scan.data_manifests(latest)
        return scan.live_entries(latest), metas

    def _selected(self, partition: bytes, conditions: list[dict[int, object]] | None) -> bool:
        if conditions is None:
            return True
        values = self.store.partition_codec.decode(partition)
        return any(all(values[i] == v for i, v in cond.items()) for cond in conditions)

    def _plan(self, entries: Sequence[ManifestEntry]) -> _Plan | None:
        conditions = self._partition_filter()
        threshold = self._skip_threshold()
        by_partition: dict[bytes, list[DataFileMeta]] = {}
        for e in entries:
            if self._selected(e.partition, conditions):
                by_partition.setdefault(e.partition, []).append(e.file)
        chosen: list[tuple[tuple[object, ...], int, bytes, list[tuple[int, int]], list[DataFileMeta]]] = []
        for partition, files in by_partition.items():
            ranges = [row_id_range(g[0]) for g in same_range_groups(files)]
            if not _fragmented(ranges):
                continue
            if threshold > 0:
                ranges = _without_long_runs(ranges, threshold)
                if not _fragmented(ranges):
                    continue
            moved = [f for f in files if _contained(ranges, row_id_range(f))]
            self._check_movable(partition, moved)
            values = self.store.partition_codec.decode(partition)
            key = tuple((v is not None, v) for v in values)
            chosen.append((key, min(r[0] for r in ranges), partition, ranges, moved))
        if not chosen:
            return None
        chosen.sort(key=lambda c: (c[0], c[1]))
        mappings: dict[bytes, RowRangeMapping] = {}
        offset = 0
        file_count = 0
        names: list[str] = []
        for _, _, partition, ranges, moved in chosen:
            new_starts = []
            for start, end in ranges:
                new_starts.append(offset)  # relative to the snapshot's nextRowId (added at commit)
                offset += end - start + 1
            mappings[partition] = RowRangeMapping(
                tuple(r[0] for r in ranges), tuple(r[1] for r in ranges), tuple(new_starts)
            )
            file_count += len(moved)
            names.append(self.store.partition_path(partition))
        return _Plan(mappings, tuple(names), offset, file_count)

    def _check_movable(self, partition: bytes, files: Sequence[DataFileMeta]) -> None:
        """Java ``validatePlanningEntry``, and the physical ``_ROW_ID`` of COMPACT files."""
        from paimon_core.format.file_format import file_format_from_name, read_file

        bucket_path = self.store.bucket_path(partition, 0)
        for f in files:
            if f.write_cols is not None and ROW_ID.name in f.write_cols:
                raise CorruptFileError(
                    f"Cannot reassign row IDs for file '{f.file_name}' because it physically stores the row-id field."
                )
            if f.file_source != FileSource.COMPACT:
                continue
            path = self.store.paths.file_in_dir(bucket_path, f.file_name, f.external_path)
            try:
                for _ in read_file(self.store.file_io, path, file_format_from_name(f.file_name), columns=[ROW_ID.name]):
                    break
            except SchemaMismatchError:
                continue  # no such column: ids are first_row_id + position
            raise CorruptFileError(
                f"Cannot reassign row IDs for file '{f.file_name}' because it physically stores the row-id field "
                "(a row-tracking compaction's output): its stored ids would not move"
            )

    # --- commit ---------------------------------------------------------------------------
    def _commit(self, latest: Snapshot, metas: Sequence[ManifestFileMeta], plan: _Plan, user: str) -> bool:
        """Publish the OVERWRITE snapshot (Java ``replaceManifestList``); False: lost the id."""
        store = self.store
        assert latest.next_row_id is not None
        base_id = latest.next_row_id
        scan = store.new_scan()
        written: list[str] = []
        try:
            new_metas: list[ManifestFileMeta] = []
            for meta in metas:
                entries = scan.read_manifest(meta)
                changed = False
                out: list[ManifestEntry] = []
                for e in entries:
                    mapping = plan.mappings.get(e.partition)
                    new_first = None
                    if mapping is not None and e.file.first_row_id is not None:
                        start, end = row_id_range(e.file)
                        new_first = mapping.map(start, end)
                    if new_first is None:
                        out.append(e)
                    else:
                        changed = True
                        f = e.file.copy(first_row_id=base_id + new_first)
                        out.append(type(e)(e.kind, e.partition, e.bucket, e.total_buckets, f))
                if not changed:
                    new_metas.append(meta)
                    continue
                name = store.paths.new_manifest_name()
                written.append(name)
                new_metas.append(
                    write_manifest_file(
                        store.file_io,
                        store.paths.manifest_path(name),
                        out,
                        partition_stats=store.partition_codec.stats([e.partition for e in out]),
                        schema_id=store.schema.id,
                    )
                )
        except BaseException:
            delete_manifests(store, written)
            raise
        return replace_manifest_list(
            store,
            latest,
            new_metas,
            commit_user=user,
            total_record_count=latest.total_record_count,
            next_row_id=base_id + plan.total,
            written=written,
            purpose="reassign_row_id",
        )


def _fragmented(ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether sorted logical ranges leave a gap (Java ``hasFragmentedLogicalRanges``)."""
    return any(b[0] != a[1] + 1 for a, b in zip(ranges, ranges[1:], strict=False))


def _without_long_runs(ranges: Sequence[tuple[int, int]], threshold: int) -> list[tuple[int, int]]:
    """``ranges`` without the runs of follow-on ranges holding more than ``threshold`` rows (Java
    ``removeLargeContiguousRuns``)."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(ranges):
        j = i
        while j + 1 < len(ranges) and ranges[j + 1][0] == ranges[j][1] + 1:
            j += 1
        if ranges[j][1] - ranges[i][0] + 1 <= threshold:
            out += ranges[i : j + 1]
        i = j + 1
    return out


def _contained(ranges: Sequence[tuple[int, int]], r: tuple[int, int]) -> bool:
    i = bisect.bisect_right([x[0] for x in ranges], r[0]) - 1
    return i >= 0 and r[1] <= ranges[i][1]


def _with_message(r: ReassignRowIdResult) -> ReassignRowIdResult:
    """The procedure's output line (Java ``ReassignRowIdProcedure.formatResult``)."""
    import dataclasses

    if r.dry_run and r.skip_reason is None:
        text = (
            f"Dry run. Row IDs for table '{r.table}' would be reassigned: snapshot {r.previous_snapshot_id} "
            f"unchanged, nextRowId {r.first_assigned_row_id} -> {r.next_row_id}, files={r.file_count}, "
            f"rows={r.row_count}, partitions={len(r.partitions)}."
        )
    elif not r.reassigned:
        reason = r.skip_reason or "row IDs are already partition-contiguous"
        text = (
            f"Skipped. Row IDs for table '{r.table}' were not reassigned because {reason}: "
            f"snapshot {r.previous_snapshot_id} unchanged, nextRowId={r.next_row_id}."
        )
    else:
        text = (
            f"Success. Reassigned row IDs for table '{r.table}': snapshot {r.previous_snapshot_id} -> "
            f"{r.new_snapshot_id}, nextRowId {r.first_assigned_row_id} -> {r.next_row_id}, files={r.file_count}, "
            f"rows={r.row_count}, indexFiles={r.index_file_count}."
        )
    return dataclasses.replace(r, result=text)
