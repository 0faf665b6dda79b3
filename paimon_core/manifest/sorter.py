"""Manifest sort (Paimon 2.0, Java ``ManifestFileSorter`` / ``ManifestPickStrategy`` /
``ManifestAdjacentSortedRun`` / ``ManifestCompactDryRun``).

With ``manifest-sort.enabled`` the commit's manifest merge keeps the data manifests sorted by one
partition field (``manifest-sort.partition-field``, default the first), so their partition min/max
stats do not overlap and a scan with a partition filter skips most manifests by their stats alone.

The algorithm is Java's, step by step:

1. **full or minor**: full when the manifests holding DELETE entries or smaller than
   ``manifest.target-file-size`` add up to ``manifest.full-compaction-threshold-size``
   (``reachesFullCompactionThreshold``); ``compact_manifest`` forces full with every run picked
   (master: "compact_manifest does a full manifest sort").
2. **classify** (``classifyManifests``): small manifests, and in a full pass every manifest whose
   partition range may hold a deleted file, are compacted in any case; the rest are the LSM files.
3. **runs and levels** (``buildLevelSortedRuns``): the LSM files sorted by (min, max) of the sort
   field are packed into non-overlapping sorted runs (interval colouring; a file whose min equals a
   run's max still joins it), the 4 largest runs get levels 4..1, the rest level 0.
4. **pick** (``ManifestPickStrategy``): all runs on size amplification
   (``compaction.max-size-amplification-percent``), else levels 0-1 plus runs the picked size
   covers by ``compaction.size-ratio``; nothing when there are at most 4 runs.
5. **sections** (``splitIntoSections``, ``mergeSmallAdjacentSections``): picked and classified files
   sorted by (min, max), cut where the next file starts at or after the section's max; adjacent
   sections merged while either is below the target size.
6. **rewrite with a budget** (``rewriteSections``): sections are sorted and rewritten while their
   input adds up to ``manifest-sort.max-rewrite-size``; the first overflowing section is split at
   the budget (at least two files), its tail handled after; beyond the budget a section with
   small / delete-range files is merged unsorted in target-size chunks (the trailing chunk only
   with deletes or ``manifest.merge-min-count`` files), other sections stay as they are.

A rewrite sorts the entries by (sort field value, kind, file name) (Java's external-sort row) and
writes them into target-size manifests in that order. A full pass drops every ADD some DELETE
names and every DELETE (each deleted file's ADD is in a rewritten manifest: step 2). A minor pass
cancels ADD/DELETE pairs inside the section and puts the sorted ADDs where the section's first
input was and the unmatched DELETEs where its last input was, so every DELETE still follows its
ADD (Java's ``MinorCompactOutput``).

Not ported: the row-id sort of data-evolution tables (they keep the ordinary merge:
:func:`can_use_manifest_sort`), Java's spill-to-disk external sort (entries are sorted in memory).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from paimon_core.exceptions import InvalidOptionError
from paimon_core.manifest.entries import FileIdentifier, FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.mergetree.compact.compact_options import (
    COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT,
    COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT_DEFAULT,
    COMPACTION_SIZE_RATIO,
    COMPACTION_SIZE_RATIO_DEFAULT,
)
from paimon_core.options import CoreOptions, parse_memory_size
from paimon_core.options_validation import parse_int_option

__all__ = [
    "MAX_LEVEL",
    "ManifestSortKey",
    "ManifestSortOptions",
    "ManifestSortPlan",
    "SortedRun",
    "build_level_sorted_runs",
    "can_use_manifest_sort",
    "manifests_per_value",
    "merge_manifests_on_commit",
    "pick_runs",
    "reaches_full_compaction_threshold",
    "sort_merge_manifests",
]

logger = logging.getLogger(__name__)

ReadManifest = Callable[[ManifestFileMeta], list[ManifestEntry]]
WriteManifests = Callable[[list[ManifestEntry]], list[ManifestFileMeta]]

#: Java ``ManifestPickStrategy.MAX_LEVEL``.
MAX_LEVEL = 4

#: Sorted output manifests are written a little over the target size, so none is "small".
_ROLL_MARGIN = 1.25

MANIFEST_SORT_ENABLED = "manifest-sort.enabled"
MANIFEST_SORT_PARTITION_FIELD = "manifest-sort.partition-field"
MANIFEST_SORT_MAX_REWRITE_SIZE = "manifest-sort.max-rewrite-size"
MANIFEST_SORT_MAX_REWRITE_SIZE_DEFAULT = 256 * 1024 * 1024


@dataclass(frozen=True)
class ManifestSortOptions:
    """The options manifest sort reads (Java ``CoreOptions`` defaults)."""

    enabled: bool
    partition_field: str | None
    max_rewrite_size: int
    target_size: int
    min_count: int
    full_compaction_threshold: int
    max_size_amplification_percent: int = 200
    sorted_run_size_ratio: int = 1
    data_evolution: bool = False

    @staticmethod
    def of(options: CoreOptions) -> ManifestSortOptions:
        def num(key: str, default: int) -> int:
            v = options.get(key)
            return default if v is None else parse_int_option(key, v)

        size = options.get(MANIFEST_SORT_MAX_REWRITE_SIZE)
        max_rewrite = (
            MANIFEST_SORT_MAX_REWRITE_SIZE_DEFAULT
            if size is None
            else parse_memory_size(size, key=MANIFEST_SORT_MAX_REWRITE_SIZE)
        )
        if max_rewrite <= 0:
            raise InvalidOptionError(
                f"Option '{MANIFEST_SORT_MAX_REWRITE_SIZE}' must be positive, got {size!r}",
                key=MANIFEST_SORT_MAX_REWRITE_SIZE,
            )
        field_name = (options.get(MANIFEST_SORT_PARTITION_FIELD) or "").strip() or None
        return ManifestSortOptions(
            enabled=(options.get(MANIFEST_SORT_ENABLED) or "false").strip().lower() == "true",
            partition_field=field_name,
            max_rewrite_size=max_rewrite,
            target_size=options.manifest_target_file_size,
            min_count=options.manifest_merge_min_count,
            full_compaction_threshold=options.manifest_full_compaction_size,
            max_size_amplification_percent=num(
                COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT, COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT_DEFAULT
            ),
            sorted_run_size_ratio=num(COMPACTION_SIZE_RATIO, COMPACTION_SIZE_RATIO_DEFAULT),
            data_evolution=(options.get("data-evolution.enabled") or "false").strip().lower() == "true",
        )


def sort_field_index(partition_keys: Sequence[str], partition_field: str | None) -> int:
    """The partition field manifests are sorted by (Java ``resolveSortField`` and
    ``SchemaValidation.validateManifestSort``): ``InvalidOptionError`` naming the option for a
    table without partition fields or a field that is not one of them."""
    if not partition_keys:
        raise InvalidOptionError(
            f"Cannot enable '{MANIFEST_SORT_ENABLED}' for non-partition table.", key=MANIFEST_SORT_ENABLED
        )
    name = partition_field or partition_keys[0]
    if name not in partition_keys:
        raise InvalidOptionError(
            f"'{MANIFEST_SORT_PARTITION_FIELD}' = '{name}' is not a partition field. "
            f"Available partition fields: {list(partition_keys)}.",
            key=MANIFEST_SORT_PARTITION_FIELD,
        )
    return list(partition_keys).index(name)


def can_use_manifest_sort(opts: ManifestSortOptions, partition_keys: Sequence[str]) -> bool:
    """Java ``ManifestFileMerger.canUseManifestSort`` for partition sort: enabled and partitioned.
    Data-evolution tables (Java sorts them by row id) keep the ordinary merge here."""
    return opts.enabled and bool(partition_keys) and not opts.data_evolution


# --- sort key -------------------------------------------------------------------------------------

_Key = tuple[int, Any]
_LOWEST: _Key = (0, 0)  # null first, as Java's RecordComparator
_HIGHEST: _Key = (2, 0)  # undecodable stats: overlap everything, never prune wrongly


def _key(v: object) -> _Key:
    return _LOWEST if v is None else (1, v)


class ManifestSortKey:
    """Java's ``PartitionSortKey``: compares manifests by the sort field's min/max stats."""

    def __init__(self, codec: PartitionCodec, index: int) -> None:
        self.codec = codec
        self.index = index
        self._bounds: dict[str, tuple[_Key, _Key]] = {}

    def bounds(self, m: ManifestFileMeta) -> tuple[_Key, _Key]:
        b = self._bounds.get(m.file_name)
        if b is None:
            try:
                lo = self.codec.decode(m.partition_stats.min_values)
                hi = self.codec.decode(m.partition_stats.max_values)
                b = (_key(lo[self.index]), _key(hi[self.index]))
            except Exception:  # stats we cannot read sort last and overlap everything
                b = (_LOWEST, _HIGHEST)
            self._bounds[m.file_name] = b
        return b

    def min_max(self, m: ManifestFileMeta) -> tuple[_Key, _Key]:
        return self.bounds(m)

    def is_after_max(self, m: ManifestFileMeta, max_file: ManifestFileMeta) -> bool:
        """``file.min >= maxFile.max``: boundary equality is no overlap (Java, partition sort)."""
        return self.bounds(m)[0] >= self.bounds(max_file)[1]

    def entry_key(self, e: ManifestEntry) -> tuple[_Key, int, str]:
        """Java's external-sort row: (sort field, kind, file name)."""
        return (_key(self.codec.decode(e.partition)[self.index]), int(e.kind), e.file.file_name)


# --- runs, levels, pick ---------------------------------------------------------------------------


@dataclass
class SortedRun:
    """Java ``ManifestAdjacentSortedRun``: manifests whose sort-field ranges do not overlap."""

    files: list[ManifestFileMeta]
    level: int = 0

    @property
    def total_size(self) -> int:
        return sum(m.file_size for m in self.files)


def build_level_sorted_runs(files: Sequence[ManifestFileMeta], key: ManifestSortKey) -> list[SortedRun]:
    """Java ``buildLevelSortedRuns``: runs by interval colouring, ordered by size, the 4 largest
    at levels 1..4 (largest highest), the rest at level 0."""
    import heapq

    ordered = sorted(files, key=key.min_max)
    heap: list[tuple[_Key, int, list[ManifestFileMeta]]] = []  # (max of the run's last file, tie, run)
    tie = 0
    for m in ordered:
        if heap and key.is_after_max(m, heap[0][2][-1]):
            _, t, run = heapq.heappop(heap)
            run.append(m)
            heapq.heappush(heap, (key.bounds(m)[1], t, run))
        else:
            tie += 1
            heapq.heappush(heap, (key.bounds(m)[1], tie, [m]))
    runs = [SortedRun(r) for _, _, r in sorted(heap, key=lambda x: (x[0], x[1]))]
    runs.sort(key=lambda r: r.total_size)
    n = len(runs)
    for i, sr in enumerate(runs):
        sr.level = i - (n - MAX_LEVEL) + 1 if i >= n - MAX_LEVEL else 0
    return runs


def pick_runs(runs: Sequence[SortedRun], *, size_amp_percent: int, size_ratio: int) -> list[SortedRun]:
    """Java ``ManifestPickStrategy.pick`` (runs ordered by level, as built)."""
    if len(runs) <= MAX_LEVEL:
        return []
    highest = runs[-1]
    if highest.level > 0:
        lower = sum(r.total_size for r in runs if r.level < highest.level)
        if lower * 100 > size_amp_percent * highest.total_size:
            return list(runs)
    picked = [runs[0]]
    size = runs[0].total_size
    for run in runs[1:]:
        if run.level <= 1 or size * (100 + size_ratio) >= run.total_size * 100:
            picked.append(run)
            size += run.total_size
    return picked if len(picked) > 1 else []


def reaches_full_compaction_threshold(metas: Sequence[ManifestFileMeta], *, target_size: int, threshold: int) -> bool:
    """Java ``ManifestFileSorter.reachesFullCompactionThreshold``."""
    delta = sum(m.file_size for m in metas if m.num_deleted_files > 0 or m.file_size < target_size)
    return delta >= threshold


def manifests_per_value(metas: Sequence[ManifestFileMeta], key: ManifestSortKey) -> int:
    """The most manifests one sort-field value falls in by their min/max stats: what a scan for
    a single partition must read at worst (1-2 once sorted; every manifest when unsorted)."""
    events: list[tuple[_Key, int]] = []
    for m in metas:
        lo, hi = key.bounds(m)
        events += [(lo, 0), (hi, 1)]  # starts before ends at an equal value: both hold it
    best = cur = 0
    for _, kind in sorted(events):
        cur += 1 if kind == 0 else -1
        best = max(best, cur)
    return best


# --- the merge ------------------------------------------------------------------------------------


@dataclass
class _Section:
    files: list[ManifestFileMeta]
    total_size: int
    has_default: bool


@dataclass
class ManifestSortPlan:
    """What one manifest sort did (or, dry, would do): Java's dry-run levels plus the rewrite."""

    full: bool = False
    levels: list[int] = field(default_factory=lambda: [0] * (MAX_LEVEL + 1))  # LSM files per level
    picked_runs: int = 0
    sections: int = 0
    sorted_inputs: int = 0  # manifests sorted and rewritten within the budget
    sorted_bytes: int = 0
    unsorted_inputs: int = 0  # manifests merged unsorted beyond the budget
    unsorted_bytes: int = 0
    kept_beyond_budget: int = 0  # manifests the budget left as they are


class _Sorter:
    def __init__(
        self,
        metas: Sequence[ManifestFileMeta],
        *,
        read: ReadManifest,
        write: WriteManifests | None,
        key: ManifestSortKey,
        opts: ManifestSortOptions,
        full: bool,
        pick_all: bool,
    ) -> None:
        self.metas = list(metas)
        self.read = read
        self.write = write  # None: dry run, nothing is read for rewriting nor written
        self.key = key
        self.opts = opts
        self.full = full
        self.pick_all = pick_all
        self.plan = ManifestSortPlan(full=full)
        self.new: list[ManifestFileMeta] = []
        self.deleted: set[FileIdentifier] = set()
        self.default: dict[str, bool] = {}  # file name -> in a deleted partition's range
        self._index: dict[str, int] = {}
        self._slots: list[list[ManifestFileMeta]] = []
        self._first = self._last = 0

    # step 2
    def classify(self) -> list[ManifestFileMeta]:
        deleted_parts: set[tuple[object | None, ...]] = set()
        if self.full:
            for m in self.metas:
                if m.num_deleted_files > 0:
                    for e in self.read(m):
                        if e.kind == FileKind.DELETE:
                            self.deleted.add(e.identifier())
                            deleted_parts.add(self.key.codec.decode(e.partition))
        lsm = []
        for m in self.metas:
            small = m.file_size < self.opts.target_size
            in_range = bool(deleted_parts) and self._may_hold(m, deleted_parts)
            if small or in_range:
                self.default[m.file_name] = in_range
            else:
                lsm.append(m)
        return lsm

    def _may_hold(self, m: ManifestFileMeta, parts: set[tuple[object | None, ...]]) -> bool:
        """Java ``PartitionPredicate.fromMultiple(...).test(stats)``: some deleted partition may
        lie in the manifest's partition ranges (undecodable stats: it may)."""
        try:
            lo = self.key.codec.decode(m.partition_stats.min_values)
            hi = self.key.codec.decode(m.partition_stats.max_values)
        except Exception:
            return True
        nulls = m.partition_stats.null_counts
        for p in parts:
            ok = True
            for i, v in enumerate(p):
                if v is None:
                    if nulls is not None and i < len(nulls) and nulls[i] == 0:
                        ok = False
                elif lo[i] is not None and hi[i] is not None and not (lo[i] <= v <= hi[i]):  # type: ignore[operator]
                    ok = False
                if not ok:
                    break
            if ok:
                return True
        return False

    # steps 3-6
    def run(self) -> list[ManifestFileMeta] | None:
        """The merged manifest list; None when nothing is picked (the caller keeps its input)."""
        lsm = self.classify()
        if self.pick_all and not self.deleted and self._already_sorted():
            return None
        runs = build_level_sorted_runs(lsm, self.key) if lsm else []
        for r in runs:
            self.plan.levels[r.level] += len(r.files)
        picked = (
            list(runs)
            if self.pick_all
            else pick_runs(
                runs,
                size_amp_percent=self.opts.max_size_amplification_percent,
                size_ratio=self.opts.sorted_run_size_ratio,
            )
        )
        self.plan.picked_runs = len(picked)
        if not picked and not self.default:
            return None
        picked_ids = {id(r) for r in picked}
        index = self._index = {m.file_name: i for i, m in enumerate(self.metas)}
        slots: list[list[ManifestFileMeta]] = [[] for _ in self.metas]
        for r in runs:
            if id(r) not in picked_ids:
                for m in r.files:
                    slots[index[m.file_name]].append(m)
        picked_files = [m for r in picked for m in r.files] + [m for m in self.metas if m.file_name in self.default]
        positions = [index[m.file_name] for m in picked_files]
        self._first, self._last = min(positions), max(positions)
        self._slots = slots
        sections = self._merge_small(self._split(picked_files))
        self.plan.sections = len(sections)
        self._rewrite_sections(sections)
        return [m for slot in slots for m in slot]

    def _already_sorted(self) -> bool:
        """A full sort has nothing to do: no DELETE entries, the manifests form one sorted run
        and at most one is below the target size (a sorted output's last file)."""
        if any(m.num_deleted_files > 0 for m in self.metas):
            return False
        if sum(1 for m in self.metas if m.file_size < self.opts.target_size) > 1:
            return False
        return len(build_level_sorted_runs(self.metas, self.key)) <= 1

    def _split(self, files: list[ManifestFileMeta]) -> list[_Section]:
        files = sorted(files, key=self.key.min_max)
        out: list[_Section] = []
        cur = _Section([files[0]], files[0].file_size, files[0].file_name in self.default)
        max_file = files[0]
        for m in files[1:]:
            if self.key.is_after_max(m, max_file):
                out.append(cur)
                cur = _Section([m], m.file_size, m.file_name in self.default)
                max_file = m
            else:
                cur.files.append(m)
                cur.total_size += m.file_size
                cur.has_default = cur.has_default or m.file_name in self.default
                if self.key.bounds(m)[1] > self.key.bounds(max_file)[1]:
                    max_file = m
        out.append(cur)
        return out

    def _merge_small(self, sections: list[_Section]) -> list[_Section]:
        out: list[_Section] = []
        pending: _Section | None = None
        for s in sections:
            if pending is None:
                pending = s
            elif pending.total_size < self.opts.target_size or s.total_size < self.opts.target_size:
                pending = _Section(
                    pending.files + s.files, pending.total_size + s.total_size, pending.has_default or s.has_default
                )
            else:
                out.append(pending)
                pending = s
        if pending is not None:
            out.append(pending)
        return out

    def _rewrite_sections(self, sections: list[_Section]) -> None:
        done = 0
        exhausted = False
        i = 0
        while i < len(sections):
            s = sections[i]
            i += 1
            if len(s.files) == 1:
                self._rewrite(s.files, sorted_=True)
            elif not exhausted:
                if done + s.total_size <= self.opts.max_rewrite_size:
                    done += s.total_size
                    self._rewrite(s.files, sorted_=True)
                else:  # first overflow: the head within budget (at least 2 files), the tail later
                    budget = self.opts.max_rewrite_size - done
                    done += s.total_size
                    head: list[ManifestFileMeta] = []
                    head_size = 0
                    tail = _Section([], 0, False)
                    for m in s.files:
                        if head_size <= budget or len(head) < 2:
                            head.append(m)
                            head_size += m.file_size
                        else:
                            tail.files.append(m)
                            tail.total_size += m.file_size
                            tail.has_default = tail.has_default or m.file_name in self.default
                    self._rewrite(head, sorted_=True)
                    if tail.files:
                        sections.append(tail)
                    exhausted = True
            elif s.has_default:
                self._unsorted(s.files)
            else:
                self._keep(s.files)
                self.plan.kept_beyond_budget += len(s.files)

    def _unsorted(self, files: list[ManifestFileMeta]) -> None:
        """Java ``unsortedCompactSection``: target-size chunks; the trailing chunk only with
        deletes or ``manifest.merge-min-count`` files."""
        chunk: list[ManifestFileMeta] = []
        size = 0
        for m in files:
            chunk.append(m)
            size += m.file_size
            if size >= self.opts.target_size:
                self._rewrite(chunk, sorted_=False)
                chunk, size = [], 0
        if chunk:
            if self.deleted or len(chunk) >= self.opts.min_count:
                self._rewrite(chunk, sorted_=False)
            else:
                self._keep(chunk)

    def _keep(self, files: list[ManifestFileMeta]) -> None:
        for m in files:
            self._slots[self._index[m.file_name]].append(m)

    def _rewrite(self, files: list[ManifestFileMeta], *, sorted_: bool) -> None:
        """Java ``rewriteSection``: a single manifest outside every deleted range stays."""
        if len(files) == 1 and not self.default.get(files[0].file_name, False):
            self._keep(files)
            return
        if sorted_:
            self.plan.sorted_inputs += len(files)
            self.plan.sorted_bytes += sum(m.file_size for m in files)
        else:
            self.plan.unsorted_inputs += len(files)
            self.plan.unsorted_bytes += sum(m.file_size for m in files)
        if self.write is None:
            return
        entries = [e for m in files for e in self.read(m)]
        if self.full or not any(m.num_deleted_files > 0 for m in files):
            gone = self.deleted
            adds = [e for e in entries if e.kind == FileKind.ADD and not (gone and e.identifier() in gone)]
            deletes: list[ManifestEntry] = []
        else:
            adds, deletes = _cancel(entries)
        adds.sort(key=self.key.entry_key)
        entries_in = sum(m.num_added_files + m.num_deleted_files for m in files)
        per_entry = max(1.0, sum(m.file_size for m in files) / max(1, entries_in))
        if adds:
            written = self._roll(adds, per_entry)
            self.new += written
            self._slots[self._first] += written
        if deletes:
            written = self._roll(deletes, per_entry)
            self.new += written
            self._slots[self._last] += written

    def _roll(self, entries: list[ManifestEntry], per_entry: float) -> list[ManifestFileMeta]:
        """Write ``entries`` in order into manifests of a little over the target size (Java's
        rolling writer), so the sorted output is not taken for small files by the next merge:
        chunk lengths from the input's bytes per entry, then from what was written."""
        assert self.write is not None
        out: list[ManifestFileMeta] = []
        i = 0
        while i < len(entries):
            n = max(1, int(self.opts.target_size * _ROLL_MARGIN / per_entry))
            chunk = entries[i : i + n]
            written = self.write(chunk)
            out += written
            i += len(chunk)
            per_entry = max(1.0, sum(m.file_size for m in written) / len(chunk))
        return out


def _cancel(entries: list[ManifestEntry]) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """ADDs and DELETEs left after cancelling the pairs inside one section."""
    adds: dict[FileIdentifier, ManifestEntry] = {}
    deletes: list[ManifestEntry] = []
    for e in entries:
        if e.kind == FileKind.ADD:
            adds[e.identifier()] = e
    for e in entries:
        if e.kind == FileKind.DELETE and adds.pop(e.identifier(), None) is None:
            deletes.append(e)
    return list(adds.values()), deletes


def sort_merge_manifests(
    metas: Sequence[ManifestFileMeta],
    *,
    read: ReadManifest,
    write: WriteManifests | None,
    codec: PartitionCodec,
    partition_keys: Sequence[str],
    opts: ManifestSortOptions,
    full_sort: bool = False,
) -> tuple[list[ManifestFileMeta], list[ManifestFileMeta], ManifestSortPlan]:
    """Java ``ManifestFileSorter.trySortCompaction``: (merged list, newly written manifests, plan).
    ``full_sort``: the full path with every manifest picked (``compact_manifest``). ``write=None``
    is a dry run: the plan only, nothing written, the merged list is the input."""
    key = ManifestSortKey(codec, sort_field_index(partition_keys, opts.partition_field))
    if not metas:
        return [], [], ManifestSortPlan()
    full = full_sort or reaches_full_compaction_threshold(
        metas, target_size=opts.target_size, threshold=opts.full_compaction_threshold
    )
    sorter = _Sorter(metas, read=read, write=write, key=key, opts=opts, full=full, pick_all=full_sort)
    merged = sorter.run()
    if merged is None and full and not full_sort:  # a full pass with nothing to do: the minor path
        sorter = _Sorter(metas, read=read, write=write, key=key, opts=opts, full=False, pick_all=False)
        merged = sorter.run()
    if merged is None or write is None:
        return list(metas), [], sorter.plan
    logger.debug("Manifest sort (%s): %d -> %d manifests", "full" if sorter.full else "minor", len(metas), len(merged))
    return merged, sorter.new, sorter.plan


def merge_manifests_on_commit(
    metas: Sequence[ManifestFileMeta],
    *,
    read: ReadManifest,
    write: WriteManifests,
    codec: PartitionCodec,
    partition_keys: Sequence[str],
    options: CoreOptions,
) -> tuple[list[ManifestFileMeta], list[ManifestFileMeta]]:
    """Java ``ManifestFileMerger.merge``: the sort merge with ``manifest-sort.enabled`` on a
    partitioned table, else the ordinary merge (:func:`paimon_core.manifest.merger.merge_manifests`)."""
    from paimon_core.manifest.merger import merge_manifests

    if (options.get(MANIFEST_SORT_ENABLED) or "false").strip().lower() == "true":
        opts = ManifestSortOptions.of(options)
        if can_use_manifest_sort(opts, partition_keys):
            merged, new, _ = sort_merge_manifests(
                metas, read=read, write=write, codec=codec, partition_keys=partition_keys, opts=opts
            )
            return merged, new
    return merge_manifests(
        metas,
        read=read,
        write=write,
        target_size=options.manifest_target_file_size,
        min_count=options.manifest_merge_min_count,
        full_compaction_threshold=options.manifest_full_compaction_size,
    )
