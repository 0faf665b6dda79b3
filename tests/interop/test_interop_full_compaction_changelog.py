"""``changelog-producer = full-compaction`` across engines: we write (and compact on every commit),
pypaimon and pypaimon-rust read the table, and pypaimon's streaming read (changelog follow-up
scanner over the COMPACT snapshots' changelog manifests; its planning goes through
pypaimon-rust's incremental changelog plan when available) returns the changelog we read."""

from __future__ import annotations

import json
import subprocess

import pyarrow as pa
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.string())]
)

# pypaimon: stream from snapshot 1 (no initial full scan) until the last snapshot, with row kinds
STREAM = """
import json, sys
from pypaimon import CatalogFactory
from pypaimon.read.streaming_table_scan import AsyncStreamingTableScan
wh, name, last, native = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
t = CatalogFactory.create({"warehouse": wh}).get_table(name).copy({"scan.native-plan.enabled": native})
read = t.new_stream_read_builder().with_include_row_kind(True).new_read()
scan = AsyncStreamingTableScan(t, prefetch_enabled=False, diff_threshold=10**9)
scan.next_snapshot_id = 1
planned = []
python_plan = scan._try_native_plan
def counted(*args, **kwargs):
    plan = python_plan(*args, **kwargs)
    planned.append(plan is not None)
    return plan
scan._try_native_plan = counted
out = {}
for plan in scan.stream_sync():
    got = read.to_arrow(plan.splits())
    out[plan.snapshot_id] = [] if got is None else got.to_pylist()
    if scan.next_snapshot_id > last:
        break
print(json.dumps({"changes": out, "native_plans": sum(planned)}))
"""

Change = tuple[str, str, int, str | None]


def _key(c: Change) -> tuple[str, int, bool]:
    return (c[1], c[2], c[0] != "-U")


def _write(t: FileStoreTable, rows: list[tuple[int, str | None]], kinds: list[int]) -> None:
    b = t.new_batch_write_builder()
    w = b.new_write()
    data = pa.table(
        {"k": [r[0] for r in rows], "dt": [f"d{r[0] % 2}" for r in rows], "v": [r[1] for r in rows]}, schema=SCHEMA
    )
    w.write_arrow(data, row_kinds=pa.array(kinds, pa.int8()))
    b.new_commit().commit(w.prepare_commit())


def _our_changelog(t: FileStoreTable) -> dict[int, list[Change]]:
    out: dict[int, list[Change]] = {}
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    for sid in t.snapshot_manager.list_snapshot_ids():
        units = scan.plan_delta(t.snapshot_manager.snapshot(sid))
        if units is not None:
            got = TableRead(t, row_kind=True).to_arrow(units)
            rows = zip(*(got[c].to_pylist() for c in ("_ROW_KIND", "dt", "k", "v")), strict=True)
            out[sid] = sorted(rows, key=_key)
    return out


@pytest.mark.parametrize("native", ["false", "true"], ids=["pypaimon-plan", "pypaimon-rust-plan"])
def test_peers_read_the_full_compaction_changelog(peer: Peer, peer_python: str, warehouse: str, native: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table(
        "db.fc",
        SCHEMA,
        primary_keys=["dt", "k"],
        partition_keys=["dt"],
        options={"bucket": "2", "changelog-producer": "full-compaction"},
    )
    _write(t, [(i, f"a{i}") for i in range(20)], [0] * 20)
    _write(t, [(1, "b1"), (2, None), (21, "n"), (3, "a3")], [0, 3, 0, 0])
    _write(t, [(21, None), (4, "c4")], [3, 0])
    kinds = [t.snapshot_manager.snapshot(s).commit_kind for s in t.snapshot_manager.list_snapshot_ids()]
    assert kinds == [CommitKind.APPEND, CommitKind.COMPACT] * 3
    ours = _our_changelog(t)
    assert sorted(ours) == [2, 4, 6] and len(ours[2]) == 20
    assert ours[6] == [("-U", "d0", 4, "a4"), ("+U", "d0", 4, "c4"), ("-D", "d1", 21, "n")]
    # both peers read the compacted table
    got = peer.read(warehouse, "db.fc").sort_by("k")
    want = t.to_arrow().sort_by("k")
    assert got.select(["k", "dt", "v"]).to_pylist() == want.select(["k", "dt", "v"]).to_pylist()
    # pypaimon streams the same changelog from the COMPACT snapshots' changelog manifests
    proc = subprocess.run(
        [peer_python, "-c", STREAM, warehouse, "db.fc", str(t.snapshot_manager.latest_snapshot_id()), native],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    theirs = {
        int(sid): sorted(((r["_row_kind"], r["dt"], r["k"], r["v"]) for r in rows), key=_key)
        for sid, rows in answer["changes"].items()
    }
    assert theirs == ours
    # with the native plan on, pypaimon-rust planned every changelog frame (no silent fallback)
    assert answer["native_plans"] == (len(ours) if native == "true" else 0)
