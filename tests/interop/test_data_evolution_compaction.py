"""Compaction of data-evolution tables written by pypaimon 2.1.0 (Java ``DataEvolutionCompactCoordinator``
/ ``DataEvolutionNormalCompactTask``), read back by pypaimon and pypaimon-rust 0.4.0.

pypaimon writes a ``row-tracking.enabled`` + ``data-evolution.enabled`` table over three commits
and updates columns by ``_ROW_ID`` (partial-column files over the row-id ranges of the files they
update). We compact: the files of each continuous row-id run are merged into one file holding
every column, with the run's ``first_row_id``. At every snapshot before and after, pypaimon's
``_ROW_ID`` -> row mapping equals ours (``$row_tracking``) and pypaimon-rust reads the same rows;
the compacted snapshot reads the same rows with the same ids as the one before it, each row's
``_SEQUENCE_NUMBER`` becoming its merged file's max (Java's output has no sequence column).
pypaimon keeps updating and appending after our compaction; tags, expiry and rollback keep what
they name. Deletion vectors written by pypaimon (``delete_by_predicate``) move to the merged file.
A partial-column update landing while our compaction runs makes our commit conflict (Java's
row-id range check) and the compaction re-plans; nothing is lost. ``spark_jobs compact`` and the
maintenance planner compact these tables too; refusals change nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from peers import Peer
from test_data_evolution_read import UPDATE_SCRIPT, update  # pypaimon's updates by _ROW_ID

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidOptionError
from paimon_core.manifest.entries import DataFileMeta, FileSource
from paimon_core.operation.data_evolution_split_read import merge_ranges_and_sort
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())])
ROWS = 30
SYSTEM = ["_ROW_ID", "_SEQUENCE_NUMBER"]
OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}

def batch(start: int, n: int = ROWS, *, dt: str | None = None) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": ids,
            "dt": [dt or f"d{i % 2}" for i in ids],
            "a": list(ids),
            "b": [None if i % 7 == 0 else f"b{i}" for i in ids],
            "c": [i / 4 for i in ids],
        },
        schema=SCHEMA,
    )


def update_a(row_ids: Sequence[int], base: int) -> dict[str, Any]:
    return {"cols": ["a"], "row_ids": list(row_ids), "values": {"a": [base + i for i in row_ids]}}


def mapping(t: pa.Table) -> dict[int, tuple[Any, ...]]:
    """``_ROW_ID`` -> (row, ``_SEQUENCE_NUMBER``); ids unique and non-null."""
    rows = t.select(["_ROW_ID", *SCHEMA.names, "_SEQUENCE_NUMBER"]).to_pylist()
    out = {r["_ROW_ID"]: tuple(r[c] for c in [*SCHEMA.names, "_SEQUENCE_NUMBER"]) for r in rows}
    assert None not in out and len(out) == len(rows), "null or duplicate _ROW_IDs"
    return out


def rows_of(m: dict[int, tuple[Any, ...]]) -> dict[int, tuple[Any, ...]]:
    """The id -> row mapping without the sequence numbers."""
    return {k: v[:-1] for k, v in m.items()}


def sorted_rows(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in t.select(SCHEMA.names).to_pylist()), key=repr)


def peer_mapping(peer: Peer, wh: str, options: dict[str, Any] | None = None) -> dict[int, tuple[Any, ...]]:
    return mapping(peer.read(wh, "db.t", options=options, projection=[*SCHEMA.names, *SYSTEM]))


def ours(t: FileStoreTable, options: dict[str, Any] | None = None) -> dict[int, tuple[Any, ...]]:
    at = t.copy({k: str(v) for k, v in options.items()}) if options else t
    return mapping(at.inspect.system_table("row_tracking"))


def check(peer: Peer, rust: Peer, wh: str, t: FileStoreTable, options: dict[str, Any]) -> dict[int, tuple[Any, ...]]:
    """pypaimon's id -> (row, sequence) mapping equals ours, pypaimon-rust reads the same rows."""
    want = peer_mapping(peer, wh, options)
    assert ours(t, options) == want, f"$row_tracking at {options}"
    assert sorted_rows(rust.read(wh, "db.t", options=options)) == sorted(
        (v[:-1] for v in want.values()), key=repr
    ), f"pypaimon-rust at {options}"
    return want


def live_files(t: FileStoreTable) -> list[DataFileMeta]:
    latest = t.latest_snapshot()
    assert latest is not None
    return [e.file for e in t.new_file_store_scan().live_entries(latest)]


def merged_groups(t: FileStoreTable) -> int:
    """How many row-id groups of the latest snapshot still merge two or more files."""
    return sum(len(g) > 1 for g in merge_ranges_and_sort(live_files(t)))


def new_table(
    peer: Peer, wh: str, *, partitioned: bool = False, options: dict[str, str] | None = None
) -> FileStoreTable:
    peer.create_table(
        wh, "db.t", SCHEMA, partition_keys=["dt"] if partitioned else (), options={**OPTIONS, **(options or {})}
    )
    return FileSystemCatalog(wh).get_table("db.t")


def write_and_update(peer: Peer, peer_python: str, wh: str) -> None:
    """Snapshots 1-3: three commits of ROWS rows; 4-6: updates of a, (b, c), a by row id."""
    for k in range(3):
        peer.write(wh, "db.t", batch(k * ROWS))
    n = 3 * ROWS
    update(
        peer_python,
        wh,
        update_a(range(0, 40, 3), 1000),
        {
            "cols": ["b", "c"],
            "row_ids": list(range(20, 70)),
            "values": {"b": [None if i % 5 == 0 else f"u{i}" for i in range(20, 70)], "c": [-i / 2 for i in range(20, 70)]},
        },
        update_a(range(0, n, 2), 2000),
    )


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_compaction_merges_column_files_keeping_row_ids(
    pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str, partitioned: bool
) -> None:
    wh = warehouse
    # compaction.min.file-num 2: partitioned, each partition's row-id ranges interleave with the
    # other's, so every range (a base file and its column files) is a run of its own
    t = new_table(pypaimon_peer, wh, partitioned=partitioned, options={"compaction.min.file-num": "2"})
    write_and_update(pypaimon_peer, peer_python, wh)
    n = 3 * ROWS
    before = live_files(t)
    assert merged_groups(t) >= 2 and any(f.write_cols for f in before)
    at = {sid: check(pypaimon_peer, rust_peer, wh, t, {"scan.snapshot-id": sid}) for sid in range(1, 7)}
    assert sorted(at[6]) == list(range(n))

    t.maintenance.create_tag("updated", 6)
    result = t.maintenance.compact()
    assert result.snapshot_id == 7 and result.files_read == len(before)
    latest = t.latest_snapshot()
    assert latest is not None and latest.next_row_id == n  # no new ids
    after = live_files(t)
    assert merged_groups(t) == 0
    assert all(f.file_source == FileSource.COMPACT and f.write_cols is None for f in after)
    ranges = sorted((f.first_row_id, f.row_count) for f in after)
    if partitioned:  # one file per range (no neighbour in its partition)
        assert ranges == sorted((f.first_row_id, f.row_count) for f in before if f.write_cols is None)
    else:  # the whole table is one continuous run: one file
        assert ranges == [(0, n)]
    seven = check(pypaimon_peer, rust_peer, wh, t, {"scan.snapshot-id": 7})
    assert rows_of(seven) == rows_of(at[6])
    # a merged file's rows read its max sequence number: every range's newest file was update 6
    assert {v[-1] for v in seven.values()} == {6}
    for sid in range(1, 7):  # the old snapshots still read as before
        assert peer_mapping(pypaimon_peer, wh, {"scan.snapshot-id": sid}) == at[sid] == ours(t, {"scan.snapshot-id": sid})

    # pypaimon keeps updating (over a merged file's range) and appending; we compact again
    update(peer_python, wh, update_a([1, 2, n - 1], 5000))  # 8
    pypaimon_peer.write(wh, "db.t", batch(n, 10, dt="d0" if partitioned else None))  # 9: ids from next_row_id
    nine = check(pypaimon_peer, rust_peer, wh, t, {})
    assert sorted(nine) == list(range(n + 10))
    assert [nine[i][2] for i in (1, 2, n - 1)] == [5001, 5002, 5000 + n - 1]
    t.maintenance.compact()  # 10
    ten = check(pypaimon_peer, rust_peer, wh, t, {})
    assert rows_of(ten) == rows_of(nine) and merged_groups(t) == 0

    # tags, expiry and rollback keep what they name
    t.maintenance.create_tag("compacted", 7)
    t.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    assert t.snapshot_manager.earliest_snapshot_id() == 9
    assert check(pypaimon_peer, rust_peer, wh, t, {"scan.tag-name": "updated"}) == at[6]
    assert check(pypaimon_peer, rust_peer, wh, t, {"scan.tag-name": "compacted"}) == seven
    assert check(pypaimon_peer, rust_peer, wh, t, {"scan.snapshot-id": 9}) == nine
    t.maintenance.rollback_to("compacted", dry_run=False)
    assert peer_mapping(pypaimon_peer, wh) == seven == ours(t)
    pypaimon_peer.write(wh, "db.t", batch(500, 5, dt="d1" if partitioned else None))
    again = check(pypaimon_peer, rust_peer, wh, t, {})
    assert sorted(set(again) - set(seven)) == list(range(n, n + 5))


def test_rewrite_row_ids_option_is_refused(pypaimon_peer: Peer, peer_python: str, warehouse: str) -> None:
    """Java ``validateOptions``: 'data-evolution.compaction.rewrite-row-ids' = true is refused
    before anything is read; the table is unchanged."""
    wh = warehouse
    t = new_table(pypaimon_peer, wh)
    for k in range(2):
        pypaimon_peer.write(wh, "db.t", batch(k * ROWS))
    update(peer_python, wh, update_a(range(5), 1000))
    files = {f.file_name for f in live_files(t)}
    with pytest.raises(InvalidOptionError, match="materialize_deletion_vectors") as err:
        t.maintenance.compact(options={"data-evolution.compaction.rewrite-row-ids": "true"})
    assert err.value.key == "data-evolution.compaction.rewrite-row-ids"
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == 3 and {f.file_name for f in live_files(t)} == files
    proc = subprocess.run(
        [sys.executable, "-m", "spark_jobs", "compact", "--warehouse", wh, "--table", "db.t", "--mode", "local",
         "--options", "data-evolution.compaction.rewrite-row-ids=true"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 3 and "rewrite-row-ids" in proc.stderr, proc.stderr[-2000:]
    assert t.latest_snapshot().id == 3  # type: ignore[union-attr]


def test_deletion_vectors_move_to_the_merged_file(
    pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str
) -> None:
    """pypaimon's ``delete_by_predicate`` marks rows in each row-id group's anchor file; the merged
    file holds the deleted rows too (their positions are row ids), and the vectors of the anchors
    move onto it, shifted to its range (Java ``DataEvolutionCompactDeletionVectorRewriter``)."""
    from paimon_core.append.append_deletion_index import DeletionIndex
    from paimon_core.deletionvectors import read_deletion_vector

    wh = warehouse
    t = new_table(pypaimon_peer, wh, options={"deletion-vectors.enabled": "true", "compaction.min.file-num": "2"})
    for k in range(3):
        pypaimon_peer.write(wh, "db.t", batch(k * ROWS))
    update(peer_python, wh, {"cols": ["a"], "row_ids": list(range(10, 50)), "values": {"a": [-1000 - i for i in range(10, 50)]}})  # 4
    assert pypaimon_peer.delete_where(wh, "db.t", {"op": "<", "field": "a", "value": -1040}) == 5  # updated rows 41..49
    assert pypaimon_peer.delete_where(wh, "db.t", {"op": "=", "field": "id", "value": 3}) == 6
    assert pypaimon_peer.delete_where(wh, "db.t", {"op": ">=", "field": "id", "value": 85}) == 7  # the last range
    want = check(pypaimon_peer, rust_peer, wh, t, {})
    gone = {3, *range(41, 50), *range(85, 90)}
    assert sorted(want) == [i for i in range(3 * ROWS) if i not in gone]
    before = live_files(t)
    t.maintenance.compact()
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == 8
    after = live_files(t)
    assert [(f.first_row_id, f.row_count) for f in after] == [(0, 3 * ROWS)]  # deleted rows kept, as positions
    index = DeletionIndex.load(t.store, t.partition_codec.encode([]), 0)
    assert set(index.deletion_files) == {after[0].file_name}  # the inputs' vectors left with them
    dv = read_deletion_vector(t.file_io, index.deletion_files[after[0].file_name])
    assert dv.deleted_positions().tolist() == sorted(gone)
    # the same rows and ids; sequence numbers: the merged file's max (update 4), as Java's output
    assert check(pypaimon_peer, rust_peer, wh, t, {}) == {k: (*v[:-1], 4) for k, v in want.items()}
    for sid in range(1, 8):  # the snapshots before read as before (their vectors are still there)
        assert peer_mapping(pypaimon_peer, wh, {"scan.snapshot-id": sid}) == ours(t, {"scan.snapshot-id": sid})
    assert {f.file_name for f in before}.isdisjoint(f.file_name for f in after)


def test_update_landing_during_compaction_makes_it_replan(
    pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str
) -> None:
    """pypaimon updates rows 1 and 2 by row id while our tasks run: its partial-column file over
    range 0..29 would overlap our merged 0..89 without spanning it (an unreadable table), so our
    commit conflicts (Java ``DataEvolutionConflictDetection.checkRowIdRangeConflicts``), deletes
    what it wrote, re-plans on the new snapshot and merges the update in."""
    from paimon_core.operation.compact.compact_planner import CompactRequest
    from paimon_core.operation.compact.table_compact import TableCompact, local_executor

    wh = warehouse
    t = new_table(pypaimon_peer, wh)
    for k in range(3):
        pypaimon_peer.write(wh, "db.t", batch(k * ROWS))
    update(peer_python, wh, update_a(range(0, 3 * ROWS, 3), 1000), update_a(range(1, 3 * ROWS, 3), 2000))  # 4, 5
    inner = local_executor(1)
    runs: list[list[str]] = []

    def racing(table: Any, tasks: Any) -> Any:
        out = inner(table, tasks)
        runs.append([f.file_name for m in out for f in m.compact_after])
        if len(runs) == 1:
            update(peer_python, wh, update_a([1, 2], 7000))  # 6: lands before our commit
        return out

    result = TableCompact(t.store, executor=racing).run(CompactRequest())
    assert result.conflict_rounds == 1 and len(runs) == 2 and result.snapshot_id == 7
    first_try = runs[0][0]
    path = t.paths.data_file_path(t.partition_path(t.partition_codec.encode([])), 0, first_try)
    assert not t.file_io.exists(path)  # the conflicting round's file was deleted
    got = check(pypaimon_peer, rust_peer, wh, t, {})
    assert [got[i][2] for i in (0, 1, 2, 3, 4)] == [1000, 7001, 7002, 1003, 2004]
    assert rows_of(got) == rows_of(peer_mapping(pypaimon_peer, wh, {"scan.snapshot-id": 6}))
    assert [(f.first_row_id, f.row_count) for f in live_files(t)] == [(0, 3 * ROWS)]


def test_spark_jobs_compact_local_dry_run_then_compacts(
    pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str
) -> None:
    """``python -m spark_jobs compact --mode local``: the dry run shows the data-evolution task
    and changes nothing; the run merges the files (one COMPACT snapshot), rows and ids kept."""
    wh = warehouse
    t = new_table(pypaimon_peer, wh)
    for k in range(3):
        pypaimon_peer.write(wh, "db.t", batch(k * ROWS))
    update(peer_python, wh, update_a(range(5, 70), 3000))  # 4
    want = peer_mapping(pypaimon_peer, wh)
    base = [sys.executable, "-m", "spark_jobs", "compact", "--warehouse", wh, "--table", "db.t", "--mode", "local"]
    proc = subprocess.run([*base, "--dry-run"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    plan = json.loads(proc.stdout.strip().splitlines()[-1])["plan"]
    assert [(p["kind"], p["input_files"], p["input_rows"]) for p in plan] == [("data-evolution", 6, 2 * 3 * ROWS)]  # partial files span whole ranges
    assert t.latest_snapshot().id == 4  # type: ignore[union-attr]
    proc = subprocess.run(base, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["snapshot_id"] == 5 and out["files_read"] == 6 and out["files_written"] == 1
    assert rows_of(check(pypaimon_peer, rust_peer, wh, t, {})) == rows_of(want)


def test_reassign_row_id_makes_partitions_compactable(
    pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str
) -> None:
    """pypaimon's commits write both partitions, so their row ids interleave and no partition has
    follow-on ranges to compact. ``python -m spark_jobs reassign_row_id`` (Java's
    ``DataEvolutionRowIdReassigner``) moves each partition's rows to contiguous new ids, metadata
    only: pypaimon and pypaimon-rust read the same rows, each partition's ids in the old order from
    the old ``nextRowId``; the old snapshot keeps the old ids; the compaction then merges each
    partition; pypaimon updates by the new ids, and an update by an old id fails in pypaimon
    (Java's row-id existence check) without touching another row."""
    wh = warehouse
    t = new_table(pypaimon_peer, wh, partitioned=True, options={"compaction.min.file-num": "2"})
    for k in range(3):
        pypaimon_peer.write(wh, "db.t", batch(k * ROWS))  # each commit: a d0 file and a d1 file
    update(peer_python, wh, update_a(range(0, 3 * ROWS, 4), 1000))  # 4: column files over every range
    old = check(pypaimon_peer, rust_peer, wh, t, {})
    n = 3 * ROWS
    base = [sys.executable, "-m", "spark_jobs", "reassign_row_id", "--warehouse", wh, "--table", "db.t"]
    proc = subprocess.run([*base, "--dry-run"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    plan = json.loads(proc.stdout.strip().splitlines()[-1])
    assert plan["result"].startswith("Dry run.") and plan["row_count"] == n and t.latest_snapshot().id == 4  # type: ignore[union-attr]
    # interleaved: a compaction could only merge each range's own files (6 tasks of 2), never ranges
    assert [p["input_files"] for p in t.maintenance.compact(dry_run=True).plan] == [2] * 6
    proc = subprocess.run(base, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["result"].startswith("Success.") and out["new_snapshot_id"] == 5, out
    assert (out["first_assigned_row_id"], out["next_row_id"], out["partitions"]) == (n, 2 * n, ["dt=d0", "dt=d1"])

    new = check(pypaimon_peer, rust_peer, wh, t, {})
    by_row = {v: k for k, v in new.items()}
    moved = {k: by_row[v] for k, v in old.items()}  # old id -> new id, rows and sequence numbers kept
    for dt, first in (("d0", n), ("d1", n + n // 2)):
        olds = sorted(k for k, v in old.items() if v[1] == dt)
        assert [moved[k] for k in olds] == list(range(first, first + len(olds))), dt
    assert peer_mapping(pypaimon_peer, wh, {"scan.snapshot-id": 4}) == old == ours(t, {"scan.snapshot-id": 4})

    t.maintenance.compact()  # 6: now each partition is one run: one file each
    files = live_files(t)
    assert sorted((f.first_row_id, f.row_count) for f in files) == [(n, n // 2), (n + n // 2, n // 2)]
    assert check(pypaimon_peer, rust_peer, wh, t, {}) == new

    target = moved[5]
    update(peer_python, wh, update_a([target], 9000))  # 7: by the new id
    seven = check(pypaimon_peer, rust_peer, wh, t, {})
    assert seven[target][2] == 9000 + target and rows_of(seven) == {
        k: (v if k != target else (*v[:2], 9000 + target, *v[3:])) for k, v in rows_of(new).items()
    }
    proc = subprocess.run(
        [peer_python, "-c", UPDATE_SCRIPT, wh, json.dumps([update_a([5], 7000)])], capture_output=True, text=True, timeout=300
    )  # an old id: no longer any row's
    assert proc.returncode != 0 and "Row ID 5 does not belong to any valid range" in proc.stderr, proc.stderr[-2000:]
    assert t.latest_snapshot().id == 7 and check(pypaimon_peer, rust_peer, wh, t, {}) == seven  # type: ignore[union-attr]
