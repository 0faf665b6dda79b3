"""Manifest sort (Paimon 2.0, Java ``ManifestFileSorter``): with ``manifest-sort.enabled`` the
commit's merge keeps manifests sorted by a partition field, and ``compact_manifest`` does a full
sort (``dry_run`` reports it); rows stay the same at every snapshot, a single-partition scan reads
fewer manifests, ``manifest-sort.max-rewrite-size`` bounds a rewrite, and bad options are refused
naming the option with the table unchanged."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidOptionError
from paimon_core.manifest.entries import FileKind, ManifestFileMeta, SimpleStats
from paimon_core.manifest.partition_stats import PartitionCodec
from paimon_core.manifest.sorter import (
    ManifestSortKey,
    ManifestSortOptions,
    build_level_sorted_runs,
    manifests_per_value,
    pick_runs,
)
from paimon_core.operation.scan import FileStoreScan
from paimon_core.schema.data_types import IntType
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.int32(), nullable=False), ("v", pa.int64())])
PARTS = 24
COMMITS = 20
SMALL = {"manifest.target-file-size": "3kb", "manifest.merge-min-count": "3", "write-only": "true"}


def _table(wh: str, name: str, options: dict[str, str]) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table(
        f"db.{name}", SCHEMA, primary_keys=["id", "p"], partition_keys=["p"], options={"bucket": "1", **SMALL, **options}
    )
    rnd = random.Random(7)
    for c in range(COMMITS):  # random partitions per commit; some keys rewritten (DELETE entries on compaction)
        parts = rnd.sample(range(PARTS), 4)
        ids = [c % 5 * 100 + i for i in range(len(parts))]
        t.write_arrow(pa.table({"id": ids, "p": parts, "v": [c] * len(parts)}, schema=SCHEMA))
        if c % 10 == 9:
            t.maintenance.compact()
    return t


def _rows(t: FileStoreTable, snapshot_id: int | None = None) -> list[tuple[int, int, int]]:
    h = t if snapshot_id is None else t.copy({"scan.snapshot-id": str(snapshot_id)})
    got = h.to_arrow().sort_by([("p", "ascending"), ("id", "ascending")])
    return list(zip(got["id"].to_pylist(), got["p"].to_pylist(), got["v"].to_pylist(), strict=True))


def _overlap(t: FileStoreTable) -> int:
    snap = t.latest_snapshot()
    assert snap is not None
    metas = t.new_file_store_scan().data_manifests(snap)
    return manifests_per_value(metas, ManifestSortKey(PartitionCodec([IntType()]), 0))


def _manifests_read(t: FileStoreTable, monkeypatch: pytest.MonkeyPatch, p: int) -> int:
    read: list[int] = []
    orig = FileStoreScan._read_all

    def spy(self: FileStoreScan, paths: Sequence[str]) -> list[bytes]:
        read.append(len(paths))
        return orig(self, paths)

    monkeypatch.setattr(FileStoreScan, "_read_all", spy)
    rb = t.new_read_builder()
    rb.with_filter(rb.new_predicate_builder().equal("p", p)).plan()
    monkeypatch.undo()
    return sum(read)


@pytest.mark.parametrize(
    ("full_threshold", "budget"), [(None, None), ("2kb", None), (None, "2kb"), ("2kb", "2kb")],
    ids=["minor", "full", "minor-budget", "full-budget"],
)  # fmt: skip
def test_commit_keeps_manifests_sorted(local_warehouse: str, full_threshold: str | None, budget: str | None) -> None:
    """Minor passes (DELETEs cancelled in a section or kept after their ADDs) and full passes
    (every DELETE cancelled) on commit, within ``manifest-sort.max-rewrite-size`` or beyond it
    (split heads, unsorted merges): the same rows as the ordinary merge at every snapshot."""
    extra = {} if full_threshold is None else {"manifest.full-compaction-threshold-size": full_threshold}
    plain = _table(local_warehouse, "plain", extra)
    sort_opts = {"manifest-sort.enabled": "true"} | ({} if budget is None else {"manifest-sort.max-rewrite-size": budget})
    sorted_ = _table(local_warehouse, "sorted", {**extra, **sort_opts})
    assert _rows(plain) == _rows(sorted_)
    snap = sorted_.latest_snapshot()
    assert snap is not None
    assert all(_rows(sorted_, i) == _rows(plain, i) for i in range(1, snap.id + 1))
    if full_threshold is None and budget is None:  # (full passes leave the plain table few manifests
        # too, and a 2 KB budget sorts little by design: there only the rows are checked)
        assert _overlap(sorted_) < _overlap(plain), (_overlap(sorted_), _overlap(plain))


def test_compact_manifest_full_sort(local_warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(local_warehouse, "t", {})
    before = t.latest_snapshot()
    assert before is not None
    history = {i: _rows(t, i) for i in range(1, before.id + 1)}
    live = sorted(e.file.file_name for e in t.new_file_store_scan().live_entries(before))
    reads_before = _manifests_read(t, monkeypatch, 5)
    h = t.copy({"manifest-sort.enabled": "true"})

    dry = h.maintenance.compact_manifest(dry_run=True)
    assert t.latest_snapshot() == before and dry.snapshot_id is None
    assert dry.manifest_sort and dry.sort_field == "p" and dry.sort_levels is not None
    assert dry.manifests_sorted > 0 and dry.bytes_sorted > 0 and dry.max_manifests_per_partition_after is None
    assert dry.manifests_with_deletes > 0 and 0 < dry.manifests_undersized <= dry.manifests_before  # Java's summary
    assert dry.max_manifests_per_partition_before == _overlap(t)

    result = h.maintenance.compact_manifest()
    snap = t.latest_snapshot()
    assert snap is not None and result.snapshot_id == snap.id == before.id + 1
    assert result.manifests_sorted == dry.manifests_sorted and result.bytes_sorted == dry.bytes_sorted
    after = t.new_file_store_scan().data_manifests(snap)
    entries = [e for m in after for e in t.new_file_store_scan().read_manifest(m)]
    assert all(e.kind == FileKind.ADD for e in entries)
    assert sorted(e.file.file_name for e in entries) == live
    assert result.max_manifests_per_partition_after == _overlap(t) <= 2 < (result.max_manifests_per_partition_before or 0)
    assert all(_rows(t, i) == rows for i, rows in history.items())
    assert _rows(t) == history[before.id]
    assert _manifests_read(t, monkeypatch, 5) < reads_before
    again = h.maintenance.compact_manifest()  # already sorted: nothing to commit
    assert again.snapshot_id is None and t.latest_snapshot() == snap


def test_max_rewrite_size_bounds_the_sort(local_warehouse: str) -> None:
    t = _table(local_warehouse, "t", {})
    metas = t.new_file_store_scan().data_manifests(t.latest_snapshot())  # type: ignore[arg-type]
    budget = 4 * 1024
    h = t.copy({"manifest-sort.enabled": "true", "manifest-sort.max-rewrite-size": "4kb"})
    dry = h.maintenance.compact_manifest(dry_run=True)
    biggest = max(m.file_size for m in metas)
    assert 2 <= dry.manifests_sorted < len(metas)
    assert dry.bytes_sorted <= budget + 2 * biggest  # the head may take the crossing file, and 2 files at least
    rows = _rows(t)
    h.maintenance.compact_manifest()
    assert _rows(t) == rows


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"manifest-sort.partition-field": "v"}, "'manifest-sort.partition-field' = 'v' is not a partition field"),
        ({"manifest-sort.max-rewrite-size": "0 b"}, "'manifest-sort.max-rewrite-size' must be positive"),
    ],
)
def test_bad_sort_options_are_refused(local_warehouse: str, options: dict[str, str], says: str) -> None:
    t = _table(local_warehouse, "t", {})
    before = t.latest_snapshot()
    h = t.copy({"manifest-sort.enabled": "true", **options})
    for dry_run in (True, False):
        with pytest.raises(InvalidOptionError, match="manifest-sort") as info:
            h.maintenance.compact_manifest(dry_run=dry_run)
        assert says in str(info.value)
    assert t.latest_snapshot() == before


def test_non_partitioned_table_is_refused(local_warehouse: str) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table("db.np", pa.schema([("v", pa.int64())]))
    t.write_arrow(pa.table({"v": [1]}))
    before = t.latest_snapshot()
    with pytest.raises(InvalidOptionError, match="Cannot enable 'manifest-sort.enabled' for non-partition table"):
        t.copy({"manifest-sort.enabled": "true"}).maintenance.compact_manifest()
    assert t.latest_snapshot() == before


def _meta(name: str, lo: int, hi: int, size: int) -> ManifestFileMeta:
    codec = PartitionCodec([IntType()])
    return ManifestFileMeta(name, size, 1, 0, SimpleStats(codec.encode([lo]), codec.encode([hi]), (0,)), 0)


def test_runs_levels_and_pick_as_java() -> None:
    """``buildLevelSortedRuns``: non-overlapping runs (boundary equality joins), 4 largest at
    levels 1..4; ``ManifestPickStrategy``: nothing with at most 4 runs, all on size amplification."""
    key = ManifestSortKey(PartitionCodec([IntType()]), 0)
    files = [_meta("a", 0, 9, 100), _meta("b", 9, 20, 100), _meta("c", 5, 15, 10), _meta("d", 30, 40, 100)]
    runs = build_level_sorted_runs(files, key)
    assert sorted(sorted(m.file_name for m in r.files) for r in runs) == [["a", "b"], ["c", "d"]]  # Java: a file joins the run ending first
    assert [r.level for r in runs] == [3, 4]  # two runs: the smaller at level 3, the larger at 4
    assert pick_runs(runs, size_amp_percent=200, size_ratio=1) == []
    many = [_meta(f"m{i}", 0, 10, 10 + i) for i in range(6)]  # six overlapping files: six runs
    runs = build_level_sorted_runs(many, key)
    assert [r.level for r in runs] == [0, 0, 1, 2, 3, 4]
    assert len(pick_runs(runs, size_amp_percent=200, size_ratio=1)) == 6  # lower levels > 2x the top: all
    picked = pick_runs(runs, size_amp_percent=10_000, size_ratio=1)
    assert {r.level for r in picked} >= {0, 1}
    assert manifests_per_value(many, key) == 6 and manifests_per_value(files, key) == 3


def test_oversized_manifest_is_split_before_writing(local_warehouse: str) -> None:
    """A commit whose manifest would pass 2x ``manifest.target-file-size`` writes it split (it
    used to write it whole, delete it and split, and the commit's deferred fsync then failed on
    the deleted file: no commit of a large manifest, nor a large full merge, could land)."""
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table("db.big", SCHEMA, partition_keys=["p"], options={"manifest.target-file-size": "1kb"})
    t.write_arrow(pa.table({"id": list(range(60)), "p": pa.array(range(60), pa.int32()), "v": [1] * 60}, schema=SCHEMA))
    snap = t.latest_snapshot()
    assert snap is not None
    delta = t.new_file_store_scan().delta_manifests(snap)
    assert len(delta) > 1 and sum(m.num_added_files for m in delta) == 60
    assert t.to_arrow().num_rows == 60


def test_create_and_alter_refuse_a_bad_sort_field(local_warehouse: str) -> None:
    """Java's ``SchemaValidation.validateManifestSort`` at create and alter: the table unchanged."""
    from paimon_core.schema.schema_change import SetOption

    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db", ignore_if_exists=True)
    with pytest.raises(InvalidOptionError, match="Cannot enable 'manifest-sort.enabled' for non-partition table"):
        cat.create_table("db.x", SCHEMA, options={"manifest-sort.enabled": "true"})
    with pytest.raises(InvalidOptionError, match="'manifest-sort.partition-field' = 'v' is not a partition field"):
        cat.create_table("db.x", SCHEMA, partition_keys=["p"],
                         options={"manifest-sort.enabled": "true", "manifest-sort.partition-field": "v"})  # fmt: skip
    t = cat.create_table("db.ok", SCHEMA, partition_keys=["p"], options={"manifest-sort.enabled": "true"})
    with pytest.raises(InvalidOptionError, match="is not a partition field"):
        cat.alter_table("db.ok", [SetOption("manifest-sort.partition-field", "id")])
    assert cat.get_table("db.ok").schema.id == t.schema.id
    cat.alter_table("db.ok", [SetOption("manifest-sort.partition-field", "p")])


def _simulate(seed: int, opts: ManifestSortOptions, *, full_sort_every: int) -> dict[str, int]:
    """A random history of ADDs and DELETEs merged as commits merge (base = merge(base + delta)),
    manifests in memory; after every merge the list must replay (every DELETE after its ADD, no
    ADD twice) to the model's live files. Returns how often each rewrite path ran."""
    from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
    from paimon_core.manifest.merger import merge_entries
    from paimon_core.manifest.sorter import sort_merge_manifests

    codec = PartitionCodec([IntType()])
    store: dict[str, list[ManifestEntry]] = {}
    rnd = random.Random(seed)
    counter = iter(range(10**9))

    def write(entries: list[ManifestEntry]) -> list[ManifestFileMeta]:
        name = f"manifest-{next(counter)}"
        store[name] = list(entries)
        stats = codec.stats([e.partition for e in entries])
        added = sum(1 for e in entries if e.kind == FileKind.ADD)
        return [ManifestFileMeta(name, 40 * len(entries), added, len(entries) - added, stats, 0)]

    def entry(kind: FileKind, name: str, p: int) -> ManifestEntry:
        f = DataFileMeta.new_level0(name, 1, 1, value_stats=None, min_sequence_number=0, max_sequence_number=0,
                                    schema_id=0)  # fmt: skip
        return ManifestEntry(kind, codec.encode([p]), 0, 1, f)

    live: dict[str, int] = {}
    base: list[ManifestFileMeta] = []
    delta: list[ManifestFileMeta] = []
    paths = {"sorted": 0, "merges": 0}
    for step in range(60):
        previous = base + delta
        if step and step % full_sort_every == 0:
            merged, _, plan = sort_merge_manifests(
                previous, read=lambda m: store[m.file_name], write=write, codec=codec, partition_keys=["p"],
                opts=opts, full_sort=True)  # fmt: skip
        else:
            merged, _, plan = sort_merge_manifests(
                previous, read=lambda m: store[m.file_name], write=write, codec=codec, partition_keys=["p"], opts=opts
            )
        paths["sorted"] += plan.sorted_inputs
        paths["merges"] += merged != previous
        changes = [entry(FileKind.ADD, f"f{step}-{i}", rnd.randrange(30)) for i in range(rnd.randrange(1, 12))]
        for name in rnd.sample(sorted(live), min(len(live), rnd.randrange(0, 6))):
            changes.append(entry(FileKind.DELETE, name, live.pop(name)))
        live.update({e.file.file_name: codec.decode(e.partition)[0] for e in changes if e.kind == FileKind.ADD})  # type: ignore[misc]
        base, delta = merged, write(changes)
        replay = merge_entries(e for m in base + delta for e in store[m.file_name])
        assert all(e.kind == FileKind.ADD for e in replay), (seed, step)
        assert sorted(e.file.file_name for e in replay) == sorted(live), (seed, step)
    return paths


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    ("target", "budget", "full_threshold"),
    [(400, 1 << 30, 1 << 30), (400, 600, 1 << 30), (400, 1 << 30, 300), (400, 500, 300), (4000, 1 << 30, 1 << 30)],
    ids=["minor", "minor-budget", "full", "full-budget", "all-small"],
)
def test_merge_replays_to_the_live_files(seed: int, target: int, budget: int, full_threshold: int) -> None:
    """Every path of the sort merge (minor with ADDs at the first slot and unmatched DELETEs at
    the last, full, split at the budget, unsorted beyond it, the compact_manifest full sort)
    keeps the manifest list replayable to exactly the live files."""
    opts = ManifestSortOptions(enabled=True, partition_field=None, max_rewrite_size=budget, target_size=target,
                               min_count=3, full_compaction_threshold=full_threshold)  # fmt: skip
    paths = _simulate(seed, opts, full_sort_every=17)
    assert paths["sorted"] > 0 and paths["merges"] > 0
