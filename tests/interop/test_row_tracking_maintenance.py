"""Row-tracking append tables written by pypaimon 2.1.0, maintained by paimon_core.

pypaimon writes a ``row-tracking.enabled`` table over several commits (and we write one commit
ourselves: our commit must assign ``first_row_id`` and advance ``next_row_id`` as Java's
``RowTrackingCommitUtils`` does). We compact, tag, expire and roll back; at every retained
snapshot and tag pypaimon reads the same rows with the same ``_ROW_ID`` and ``_SEQUENCE_NUMBER``
(the id -> row mapping), ``$row_tracking`` gives the same, pypaimon-rust reads the rows, and
pypaimon keeps writing after our maintenance with ids continuing from ``next_row_id``.
Data-evolution tables compact keeping ids. Refusals: sort compaction and rescale of a row-tracking table, and
``$row_tracking`` of a table without row tracking: a clear error, the table unchanged.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import Peer
from pyroaring import BitMap

from paimon_core import FileSystemCatalog
from paimon_core.deletionvectors import BITMAP32_MAGIC
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import DeletionVectorMeta, FileSource, IndexFileMeta
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])
ROWS = 40
SYSTEM = ["_ROW_ID", "_SEQUENCE_NUMBER"]


def batch(start: int, n: int = ROWS, *, dt: str | None = None) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": ids,
            "dt": [dt or f"d{i % 2}" for i in ids],
            "v": [None if i % 7 == 0 else i / 3 for i in ids],
            "s": [f"s{i}-" + "x" * (i % 9) for i in ids],
        },
        schema=SCHEMA,
    )


def mapping(t: pa.Table) -> dict[int, tuple[Any, ...]]:
    """``_ROW_ID`` -> (row, ``_SEQUENCE_NUMBER``); ids must be unique and non-null."""
    rows = t.select(["_ROW_ID", "id", "dt", "v", "s", "_SEQUENCE_NUMBER"]).to_pylist()
    out = {r["_ROW_ID"]: (r["id"], r["dt"], r["v"], r["s"], r["_SEQUENCE_NUMBER"]) for r in rows}
    assert None not in out and len(out) == len(rows), "null or duplicate _ROW_IDs"
    return out


def rows_only(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in t.select([f.name for f in SCHEMA]).to_pylist())


def rows_only_of(m: dict[int, tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(v[:4] for v in m.values())


def check_physical_ids(t: FileStoreTable) -> int:
    """Every compacted file holds ``_ROW_ID`` (what Java's reader takes) equal to
    ``first_row_id + position`` (what pypaimon and pypaimon-rust take); the number of such files."""
    latest = t.latest_snapshot()
    assert latest is not None
    n = 0
    for e in t.new_file_store_scan().live_entries(latest):
        if e.file.file_source != FileSource.COMPACT:
            continue
        path = t.paths.data_file_path(t.partition_path(e.partition), e.bucket, e.file.file_name)
        column = pq.read_table(path, columns=["_ROW_ID", "_SEQUENCE_NUMBER"])
        first = e.file.first_row_id
        assert first is not None
        assert column.column(0).to_pylist() == list(range(first, first + e.file.row_count))
        seqs = column.column(1).to_pylist()
        assert (min(seqs), max(seqs)) == (e.file.min_sequence_number, e.file.max_sequence_number)
        n += 1
    return n


def peer_mapping(peer: Peer, wh: str, options: dict[str, Any] | None = None) -> dict[int, tuple[Any, ...]]:
    return mapping(peer.read(wh, "db.t", options=options, projection=[f.name for f in SCHEMA] + SYSTEM))


def ours(t: FileStoreTable, options: dict[str, str] | None = None) -> dict[int, tuple[Any, ...]]:
    return mapping((t.copy(options) if options else t).inspect.system_table("row_tracking"))


def new_table(pypaimon_peer: Peer, wh: str, partitioned: bool, **options: str) -> FileStoreTable:
    opts = {"row-tracking.enabled": "true", "bucket": "-1", "compaction.min.file-num": "2", **options}
    pypaimon_peer.create_table(wh, "db.t", SCHEMA, partition_keys=["dt"] if partitioned else (), options=opts)
    return FileSystemCatalog(wh).get_table("db.t")


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_compact_tag_expire_rollback_keep_row_ids(
    pypaimon_peer: Peer, rust_peer: Peer, warehouse: str, partitioned: bool
) -> None:
    wh = warehouse
    t = new_table(pypaimon_peer, wh, partitioned)
    # partitioned: commits 1-2 and 3-4 write one partition each (follow-on ids in a partition),
    # commit 5 a lone range of d0; commit 4 is ours (Java's row-id assignment on commit)
    dts = ["d0", "d0", "d1", "d1", "d0"] if partitioned else [None] * 5
    for i in range(5):
        if i == 3:
            t.write_arrow(batch(i * ROWS, dt=dts[i]))
        else:
            pypaimon_peer.write(wh, "db.t", batch(i * ROWS, dt=dts[i]))
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == 5 and latest.next_row_id == 5 * ROWS
    live = t.new_file_store_scan().live_entries(latest)
    assert all(e.file.first_row_id is not None for e in live)

    at: dict[int, dict[int, tuple[Any, ...]]] = {}
    for sid in range(1, 6):
        at[sid] = peer_mapping(pypaimon_peer, wh, {"scan.snapshot-id": sid})
        assert ours(t, {"scan.snapshot-id": str(sid)}) == at[sid], f"$row_tracking at snapshot {sid}"
    assert sorted(at[5]) == list(range(5 * ROWS))
    assert {v[4] for v in at[5].values()} == {1, 2, 3, 4, 5}  # each row's writing snapshot

    t.maintenance.create_tag("before", 2)
    t.maintenance.compact()
    compacted = t.latest_snapshot()
    assert compacted is not None and compacted.id == 6 and compacted.next_row_id == 5 * ROWS  # no new ids
    after = t.new_file_store_scan().live_entries(compacted)
    assert len(after) == (3 if partitioned else 1)  # partitioned: d0's lone range (commit 5) stays
    assert sum(e.file.file_source == FileSource.COMPACT for e in after) == (2 if partitioned else 1)
    assert all(e.file.first_row_id is not None for e in after)
    assert check_physical_ids(t) == (2 if partitioned else 1)
    assert peer_mapping(pypaimon_peer, wh) == at[5] == ours(t)
    assert rust_peer.read(wh, "db.t").num_rows == 5 * ROWS
    t.maintenance.create_tag("compacted", 6)

    new_ids = list(range(5 * ROWS, 5 * ROWS + 10))
    pypaimon_peer.write(wh, "db.t", batch(5 * ROWS, 10, dt="d0" if partitioned else None))  # snapshot 7
    seven = peer_mapping(pypaimon_peer, wh)
    assert sorted(set(seven) - set(at[5])) == new_ids and {seven[i][4] for i in new_ids} == {7}
    assert ours(t) == seven

    t.maintenance.compact()  # snapshot 8: partitioned, d0's range of commit 5 and snapshot 7's follow on
    eight = t.latest_snapshot()
    assert eight is not None and eight.id == 8
    ranges = sorted((e.file.first_row_id, e.file.row_count) for e in t.new_file_store_scan().live_entries(eight))
    assert ranges == ([(0, 2 * ROWS), (2 * ROWS, 2 * ROWS), (4 * ROWS, ROWS + 10)] if partitioned else [(0, 5 * ROWS + 10)])
    assert peer_mapping(pypaimon_peer, wh) == seven == ours(t)

    t.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    assert t.snapshot_manager.earliest_snapshot_id() == 7
    for options, want in (
        ({"scan.tag-name": "before"}, at[2]),
        ({"scan.tag-name": "compacted"}, at[5]),
        ({"scan.snapshot-id": 7}, seven),
        ({"scan.snapshot-id": 8}, seven),
    ):
        assert peer_mapping(pypaimon_peer, wh, options) == want == ours(t, {k: str(v) for k, v in options.items()})
        assert rust_peer.read(wh, "db.t", options=options).num_rows == len(want), options

    # Java's rollback_to: later snapshots go, next_row_id is the tag's again
    t.maintenance.rollback_to("compacted", dry_run=False)
    back = t.latest_snapshot()
    assert back is not None and back.id == 6 and back.next_row_id == 5 * ROWS
    assert peer_mapping(pypaimon_peer, wh) == at[5] == ours(t)
    pypaimon_peer.write(wh, "db.t", batch(1000, 5))
    again = peer_mapping(pypaimon_peer, wh)
    assert sorted(set(again) - set(at[5])) == list(range(5 * ROWS, 5 * ROWS + 5)) and again == ours(t)
    assert rust_peer.read(wh, "db.t").num_rows == 5 * ROWS + 5


def test_compaction_keeps_ids_of_non_contiguous_files(pypaimon_peer: Peer, warehouse: str) -> None:
    """A big file between small ones is no candidate: the small files after it (follow-on ids)
    are compacted, the one before it stays (no neighbour), every file keeps a first_row_id."""
    wh = warehouse
    t = new_table(pypaimon_peer, wh, False)
    pypaimon_peer.write(wh, "db.t", batch(0, 5))
    pypaimon_peer.write(wh, "db.t", batch(5, 3000))  # large: not a compaction candidate
    pypaimon_peer.write(wh, "db.t", batch(3005, 5))
    pypaimon_peer.write(wh, "db.t", batch(3010, 5))
    want = peer_mapping(pypaimon_peer, wh)
    t.maintenance.compact(options={"target-file-size": "20 kb", "source.split.open-file-cost": "1"})  # one task: 3 small files
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == 5
    live = t.new_file_store_scan().live_entries(latest)
    assert check_physical_ids(t) == 1
    assert sorted((e.file.first_row_id, e.file.row_count, e.file.file_source) for e in live) == [
        (0, 5, FileSource.APPEND),
        (5, 3000, FileSource.APPEND),
        (3005, 10, FileSource.COMPACT),
    ]
    assert peer_mapping(pypaimon_peer, wh) == want == ours(t)


def _unchanged(t: FileStoreTable, sid: int, files: set[str]) -> None:
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == sid
    assert {e.file.file_name for e in t.new_file_store_scan().live_entries(latest)} == files


#: pypaimon 2.1.0 updates column ``s`` of rows 1, 2 and 41 by ``_ROW_ID``: partial-column files
#: (``write_cols = ['s']``) over the row-id ranges of the first two files.
_UPDATE_BY_ROW_ID = """
import sys
import pyarrow as pa
from pypaimon import CatalogFactory
t = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table("db.t")
wb = t.new_batch_write_builder()
update = wb.new_update().with_update_type(["s"])
rows = pa.table({"_ROW_ID": pa.array([1, 2, 41], pa.int64()), "s": ["u1", "u2", "u41"]})
wb.new_commit().commit(update.update_by_arrow_with_row_id(rows))
"""


def test_data_evolution_compaction_keeps_row_ids(pypaimon_peer: Peer, warehouse: str) -> None:
    """Data-evolution tables compact as Java's DataEvolutionCompactCoordinator (more in
    tests/interop/test_data_evolution_compaction.py): the base and column files of the
    follow-on ranges become one file from row id 0, every row keeps its id."""
    from tests.peer_python import run_peer_script

    wh = warehouse
    t = new_table(pypaimon_peer, wh, False, **{"data-evolution.enabled": "true"})
    for i in range(3):
        pypaimon_peer.write(wh, "db.t", batch(i * ROWS))
    run_peer_script(_UPDATE_BY_ROW_ID, wh)
    want = peer_mapping(pypaimon_peer, wh)
    assert want[41][3] == "u41"
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert any(e.file.write_cols == ("s",) for e in live)
    assert ours(t) == want  # partial-column files merged by row id (tests/interop/test_data_evolution_read.py)
    t.maintenance.compact()
    compacted = t.latest_snapshot()
    assert compacted is not None and compacted.id == 5 and compacted.next_row_id == 3 * ROWS
    live = t.new_file_store_scan().live_entries(compacted)
    assert [(e.file.first_row_id, e.file.row_count, e.file.write_cols) for e in live] == [(0, 3 * ROWS, None)]
    assert {k: v[:4] for k, v in peer_mapping(pypaimon_peer, wh).items()} == {k: v[:4] for k, v in want.items()}
    assert ours(t) == peer_mapping(pypaimon_peer, wh)


@pytest.mark.parametrize("order", ["order", "zorder"])
def test_sort_compaction_is_refused(pypaimon_peer: Peer, warehouse: str, order: str) -> None:
    from paimon_core.operation.compact.sort_compact import SortCompaction
    from paimon_core.sort.table_sorter import SortSpec

    wh = warehouse
    t = new_table(pypaimon_peer, wh, False)
    for i in range(2):
        pypaimon_peer.write(wh, "db.t", batch(i * ROWS))
    files = {e.file.file_name for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}
    with pytest.raises(InvalidArgumentError, match="row-tracking.enabled"):
        SortCompaction(t.store, SortSpec.of(order, "id,v", t.options.options)).run()
    _unchanged(t, 2, files)


def test_rescale_is_refused(pypaimon_peer: Peer, warehouse: str) -> None:
    from paimon_core.table.rescale import rescale

    wh = warehouse
    t = new_table(pypaimon_peer, wh, False)
    pypaimon_peer.write(wh, "db.t", batch(0))
    files = {e.file.file_name for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}
    with pytest.raises(InvalidArgumentError, match="row-tracking table"):
        rescale(t, bucket_num=2)
    _unchanged(t, 1, files)


def test_row_tracking_table_of_a_plain_table_is_refused(warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA)
    t.write_arrow(batch(0, 3))
    with pytest.raises(InvalidArgumentError, match="does not support row tracking"):
        t.inspect.system_table("$row_tracking")


def commit_deletion_vector(t: FileStoreTable, name: str, positions: list[int]) -> None:
    """One DV index file in Java's layout (version byte; BE length, BE magic + portable bitmap,
    BE CRC) deleting ``positions`` of data file ``name``, committed to the table."""
    data = struct.pack(">I", BITMAP32_MAGIC) + BitMap(positions).serialize()
    out = b"\x01" + struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    t.file_io.write_bytes(join(t.paths.index_dir, "index-rt-0"), out)
    meta = IndexFileMeta(
        "DELETION_VECTORS", "index-rt-0", len(out), 1, (DeletionVectorMeta(name, 1, len(data), len(positions)),)
    )
    t.new_file_store_commit("dv").commit([CommitMessage(b"\x00" * 12, 0, -1, new_index_files=(meta,))], 1)


def test_deletion_vectors_keep_ids_and_leave_the_file(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """Rows deleted by a vector take their ids with them; a file with deleted rows would leave
    gaps in a rewritten range, so it is not compacted (the follow-on files after it are)."""
    wh = warehouse
    t = new_table(pypaimon_peer, wh, False, **{"deletion-vectors.enabled": "true"})
    for i in range(4):
        pypaimon_peer.write(wh, "db.t", batch(i * ROWS))
    by_first = {e.file.first_row_id: e.file for e in t.new_file_store_scan().live_entries(t.latest_snapshot())}
    commit_deletion_vector(t, by_first[ROWS].file_name, [1, 3])
    want = peer_mapping(pypaimon_peer, wh)
    assert sorted(want) == [i for i in range(4 * ROWS) if i not in (ROWS + 1, ROWS + 3)]
    assert ours(t) == want
    t.maintenance.compact()
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert sorted((e.file.first_row_id, e.file.file_source) for e in live) == [
        (0, FileSource.APPEND),
        (ROWS, FileSource.APPEND),
        (2 * ROWS, FileSource.COMPACT),
    ]
    assert peer_mapping(pypaimon_peer, wh) == want == ours(t)
    assert rust_peer.read(wh, "db.t").num_rows == len(want)
