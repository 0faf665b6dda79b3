"""Pure parts of row tracking (:mod:`paimon_core.append.row_tracking`), against Java's
``RowTrackingCommitUtils.assignRowTracking`` cases, and the commit that applies them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.append.row_tracking import assign_row_tracking, compact_file_meta, row_id_runs
from paimon_core.manifest.entries import DataFileMeta, FileKind, FileSource, ManifestEntry


def entry(name: str, rows: int, *, seq: tuple[int, int] = (0, 0), first: int | None = None,
          source: FileSource = FileSource.APPEND, write_cols: tuple[str, ...] | None = None,
          partition: bytes = b"p0") -> ManifestEntry:  # fmt: skip
    f = DataFileMeta.new_level0(
        name, 10, rows, value_stats=None, min_sequence_number=seq[0], max_sequence_number=seq[1], schema_id=0
    ).copy(file_source=int(source), first_row_id=first, write_cols=write_cols)
    return ManifestEntry(FileKind.ADD, partition, 0, -1, f)


def test_assign_follows_javas_cases() -> None:
    entries = [
        entry("new", 5),  # case 1: min 0 -> (snapshot, snapshot), fresh ids
        entry("modified", 3, seq=(4, 0)),  # case 2: max 0 -> (min, snapshot)
        entry("compact", 7, seq=(2, 6), first=100, source=FileSource.COMPACT),  # case 3: kept, no new ids
        entry("has-id", 4, seq=(3, 3), write_cols=("id", "_ROW_ID")),  # physical _ROW_ID: no first_row_id
        entry("assigned", 2, seq=(3, 3), first=50),  # already assigned: kept
        entry("new2", 6),
    ]
    out = assign_row_tracking(9, 20, entries)
    got = {e.file.file_name: (e.file.min_sequence_number, e.file.max_sequence_number, e.file.first_row_id)
           for e in out.entries}  # fmt: skip
    assert got == {
        "new": (9, 9, 20),
        "modified": (4, 9, 25),
        "compact": (2, 6, 100),
        "has-id": (3, 3, None),
        "assigned": (3, 3, 50),
        "new2": (9, 9, 28),
    }
    assert out.next_row_id == 34 and out.to_dict() == {"next_row_id": 34, "entries": 6}


def test_partition_group_on_commit_numbers_a_partition_together() -> None:
    entries = [entry("a0", 1, partition=b"a"), entry("b0", 2, partition=b"b"), entry("a1", 3, partition=b"a")]
    out = assign_row_tracking(1, 0, entries, partition_group=True)
    assert [(e.file.file_name, e.file.first_row_id) for e in out.entries] == [("a0", 0), ("a1", 1), ("b0", 4)]
    plain = assign_row_tracking(1, 0, entries)
    assert [(e.file.file_name, e.file.first_row_id) for e in plain.entries] == [("a0", 0), ("b0", 1), ("a1", 3)]


def test_runs_follow_on_ranges_only() -> None:
    files = [entry(n, c, first=f).file for n, c, f in [("c", 5, 10), ("a", 5, 0), ("b", 5, 5), ("z", 5, None),
                                                     ("d", 5, 20), ("e", 5, 25)]]  # fmt: skip
    runs = row_id_runs(files, {"e": True})
    assert [[f.file_name for f in r] for r in runs] == [["a", "b", "c"], ["d"], ["e"], ["z"]]


def test_compact_meta_sets_first_row_id_only_for_contiguous_ids() -> None:
    meta = entry("out", 3, seq=(0, 2), source=FileSource.COMPACT).file
    m = compact_file_meta(meta, np.array([7, 8, 9]), np.array([4, 2, 3]))
    assert (m.first_row_id, m.min_sequence_number, m.max_sequence_number, m.write_cols) == (7, 2, 4, None)
    assert compact_file_meta(meta, np.array([7, 9, 10]), np.array([1, 1, 1])).first_row_id is None


def test_our_commit_assigns_row_ids(tmp_path: Path) -> None:
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_database("db")
    schema = pa.schema([("id", pa.int64())])
    t = cat.create_table("db.t", schema, options={"row-tracking.enabled": "true", "bucket": "-1"})
    t.write_arrow(pa.table({"id": list(range(7))}, schema=schema))
    t.write_arrow(pa.table({"id": list(range(3))}, schema=schema))
    latest = t.latest_snapshot()
    assert latest is not None and latest.next_row_id == 10
    files = sorted((e.file.first_row_id, e.file.row_count, e.file.min_sequence_number, e.file.max_sequence_number)
                   for e in t.new_file_store_scan().live_entries(latest))  # fmt: skip
    assert files == [(0, 7, 1, 1), (7, 3, 2, 2)]
    rows = t.inspect.system_table("row_tracking").to_pylist()
    assert sorted((r["_ROW_ID"], r["id"], r["_SEQUENCE_NUMBER"]) for r in rows) == [
        *((i, i, 1) for i in range(7)),
        *((7 + i, i, 2) for i in range(3)),
    ]
    plain = cat.create_table("db.p", schema)
    plain.write_arrow(pa.table({"id": [1]}, schema=schema))
    assert plain.latest_snapshot().next_row_id is None  # type: ignore[union-attr]  # unchanged without row tracking
