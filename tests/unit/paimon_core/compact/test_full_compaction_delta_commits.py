"""``full-compaction.delta-commits = N``: writers (``write-only = false``) fully compact a bucket on
every N-th commit that writes it, counted from the table's metadata (so separate batch jobs,
each with its own commit user and table handle, keep the count); any full compaction restarts
it. With ``changelog-producer = full-compaction`` the changelog comes with those compactions."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.mergetree.compact.compact_options import num_levels
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])
# a high compaction trigger: no minor compaction gets in the way of the counted ones
OPTIONS = {"bucket": "1", "num-sorted-run.compaction-trigger": "20", "full-compaction.delta-commits": "3"}


def _write(catalog: FileSystemCatalog, rows: dict[int, str | None]) -> list[Snapshot]:
    """One batch job: a fresh table handle and writer; ``None`` deletes the key."""
    t = catalog.get_table("db.dc")
    b = t.new_batch_write_builder()
    w = b.new_write()
    keys = list(rows)
    w.write_arrow(
        pa.table({"k": keys, "v": [rows[k] or "" for k in keys]}, schema=SCHEMA),
        row_kinds=pa.array([3 if rows[k] is None else 0 for k in keys], pa.int8()),
    )
    result = b.new_commit().commit(w.prepare_commit())
    return [t.snapshot_manager.snapshot(s) for s in result.snapshot_ids]


def _changes(t: FileStoreTable, snapshot: Snapshot) -> list[tuple[str, int, str]]:
    from paimon_core.table.stream_scan import StreamTableScan
    from paimon_core.table.table_read import TableRead

    units = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}).plan_delta(snapshot)
    assert units is not None
    got = TableRead(t, row_kind=True).to_arrow(units)
    return list(zip(got["_ROW_KIND"].to_pylist(), got["k"].to_pylist(), got["v"].to_pylist(), strict=True))


def _fully_compacted(t: FileStoreTable) -> bool:
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    max_level = num_levels(t.options.options) - 1  # 20 here
    return bool(live) and all(e.file.level == max_level for e in live)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_full_compaction_every_n_commits(catalog: FileSystemCatalog, n: int) -> None:
    t = catalog.create_table(
        "db.dc", SCHEMA, primary_keys=["k"], options={**OPTIONS, "full-compaction.delta-commits": str(n)}
    )
    compacted = []
    for i in range(1, 10):
        snaps = _write(catalog, {i: f"v{i}", 0: f"latest{i}"})
        kinds = [s.commit_kind for s in snaps]
        compacted.append(kinds == [CommitKind.APPEND, CommitKind.COMPACT])
        assert kinds in ([CommitKind.APPEND], [CommitKind.APPEND, CommitKind.COMPACT])
        assert _fully_compacted(t) == compacted[-1]
    assert compacted == [i % n == 0 for i in range(1, 10)]
    assert t.to_arrow().sort_by("k").to_pylist()[0] == {"k": 0, "v": "latest9"}


def test_any_full_compaction_restarts_the_count(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.dc", SCHEMA, primary_keys=["k"], options=OPTIONS)
    _write(catalog, {1: "a"})
    _write(catalog, {2: "b"})
    assert t.maintenance.compact(compact_strategy="full").snapshot_id is not None  # the dedicated job
    kinds = [[s.commit_kind for s in _write(catalog, {i: "x"})] for i in range(3, 9)]
    assert [len(k) == 2 for k in kinds] == [False, False, True, False, False, True]


def test_without_the_option_writers_do_not_fully_compact(catalog: FileSystemCatalog) -> None:
    opts = {k: v for k, v in OPTIONS.items() if k != "full-compaction.delta-commits"}
    t = catalog.create_table("db.dc", SCHEMA, primary_keys=["k"], options=opts)
    for i in range(6):
        assert [s.commit_kind for s in _write(catalog, {i: "x"})] == [CommitKind.APPEND]
    assert not _fully_compacted(t)


def test_full_compaction_changelog_every_n_commits(catalog: FileSystemCatalog) -> None:
    """The changelog arrives with every 3rd commit and is the diff since the previous one."""
    t = catalog.create_table(
        "db.dc", SCHEMA, primary_keys=["k"], options={**OPTIONS, "changelog-producer": "full-compaction"}
    )
    rounds: list[dict[int, str | None]] = [
        {1: "a", 2: "b"}, {3: "c"}, {2: "b2", 4: "d"},  # full compaction 1
        {1: None, 5: "e"}, {5: None}, {3: "c"},  # full compaction 2: 1 deleted, 5 came and went, 3 same
        {6: "f"}, {3: "c3"}, {6: "f6", 2: None},  # full compaction 3
    ]  # fmt: skip
    got = []
    for i, rows in enumerate(rounds, start=1):
        snaps = _write(catalog, rows)
        assert snaps[0].changelog_manifest_list is None  # APPEND: never a changelog
        got.append(_changes(t, snaps[1]) if len(snaps) == 2 else None)
        assert (len(snaps) == 2) == (i % 3 == 0)
    assert got[2] == [("+I", 1, "a"), ("+I", 2, "b2"), ("+I", 3, "c"), ("+I", 4, "d")]
    assert got[5] == [("-D", 1, "a"), ("-U", 3, "c"), ("+U", 3, "c")]
    assert got[8] == [("-D", 2, "b2"), ("-U", 3, "c"), ("+U", 3, "c3"), ("+I", 6, "f6")]
    assert t.to_arrow().sort_by("k").to_pylist() == [
        {"k": 3, "v": "c3"}, {"k": 4, "v": "d"}, {"k": 6, "v": "f6"},
    ]  # fmt: skip
