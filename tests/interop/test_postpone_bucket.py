"""Postpone-bucket tables (``bucket = -2``) written by pypaimon 2.1.0, compacted by us.

* pypaimon writes a partitioned primary-key table into ``bucket-postpone`` (upserts, a key twice
  in one commit, ``-D`` rows through ``rowkind.field``): until a compaction assigns buckets,
  batch reads see no row of it (Java's ``AbstractBatchTableScan.onlyReadRealBuckets``); ours
  agree with pypaimon's at every snapshot.
* Our compaction (the Python API, then the Spark job) replays the postpone files into real
  buckets: one COMPACT snapshot, the bucket count per partition as Java's
  ``PostponeBucketNumResolver`` (an estimate from ``postpone.target-row-num-per-bucket`` for a
  new partition, the existing count otherwise), rows placed with Paimon's bucket hash (a
  pypaimon fixed-bucket write into the same buckets duplicates no key). pypaimon and
  pypaimon-rust then read exactly the merged rows, pypaimon keeps writing, and the second
  compaction's postpone rows win over the bucketed rows they update.
* ``postpone.merge-on-read`` (Java's engine-side merge of the real buckets with bucket-postpone):
  our read with it equals what the next compaction makes.
* Two compactions planned on one snapshot: the second commit fails (strict mode,
  ``commit.strict-mode.last-safe-snapshot``) and deletes what it wrote; rows appended to
  ``bucket-postpone`` meanwhile are not lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import REPO_ROOT, Peer, peer_venv_python

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, InvalidArgumentError
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.postpone_bucket_compact import (
    PostponeBucketCompact,
    local_postpone_executor,
)
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string()), ("op", pa.string())])
OPTIONS = {"bucket": "-2", "rowkind.field": "op", "postpone.target-row-num-per-bucket": "40"}
Model = dict[tuple[str, int], str]


def _rows(keys: Iterable[tuple[str, int]], tag: str) -> pa.Table:
    ks = list(keys)
    return pa.table(
        {
            "id": [k for _, k in ks],
            "dt": [d for d, _ in ks],
            "v": [f"{tag}-{d}{k}-{i}" for i, (d, k) in enumerate(ks)],
            "op": ["+I"] * len(ks),
        },
        schema=SCHEMA,
    )


def _upsert(peer: Peer, wh: str, model: Model, keys: Iterable[tuple[str, int]], tag: str) -> int:
    data = _rows(keys, tag)
    sid = peer.write(wh, "db.t", data)
    for d, k, v in zip(data.column("dt").to_pylist(), data.column("id").to_pylist(), data.column("v").to_pylist(), strict=True):
        model[(d, k)] = v  # a key twice in one commit: the later row wins
    return sid


def _delete(peer: Peer, wh: str, model: Model, keys: Iterable[tuple[str, int]]) -> int:
    ks = list(keys)
    sid = peer.delete(wh, "db.t", pa.table({"id": [k for _, k in ks], "dt": [d for d, _ in ks]}))
    for key in ks:
        model.pop(key, None)
    return sid


def _state(t: pa.Table) -> Model:
    keys = list(zip(t.column("dt").to_pylist(), t.column("id").to_pylist(), strict=True))
    assert len(set(keys)) == len(keys), "duplicate keys"
    return dict(zip(keys, t.column("v").to_pylist(), strict=True))


def _table(wh: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table("db.t")


def _ours(wh: str, snapshot_id: int | None = None) -> Model:
    t = _table(wh)
    if snapshot_id is not None:
        t = t.copy({"scan.snapshot-id": str(snapshot_id)})
    return _state(t.to_arrow())


def _merge_on_read(wh: str) -> Model:
    """Our read with ``postpone.merge-on-read`` (Java's Flink/Spark sources; pypaimon 2.1.0 has no
    such read): the real buckets merged with the rows still in bucket-postpone."""
    return _state(_table(wh).copy({"postpone.merge-on-read": "true"}).to_arrow())


def _layout(wh: str) -> tuple[dict[str, set[int]], int]:
    """Per partition the total-buckets values of its real-bucket files; live postpone files."""
    t = _table(wh)
    counts: dict[str, set[int]] = {}
    postpone = 0
    for e in t.new_file_store_scan().live_entries(t.latest_snapshot()):
        if e.bucket == -2:
            postpone += 1
            continue
        assert 0 <= e.bucket < e.total_buckets
        counts.setdefault(t.partition_path(e.partition), set()).add(e.total_buckets)
    return counts, postpone


def _all_snapshots_agree(wh: str, peer: Peer) -> int:
    t = _table(wh)
    latest = t.latest_snapshot()
    assert latest is not None
    for sid in range(1, latest.id + 1):
        assert _ours(wh, sid) == _state(peer.read(wh, "db.t", options={"scan.snapshot-id": str(sid)})), sid
    return latest.id


def _spark_compact(wh: str, *args: str) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "spark_jobs", "compact", "--warehouse", wh, "--table", "db.t", "--no-ledger", *args],
        capture_output=True, text=True, timeout=300, cwd="/", env=env, check=False,
    )  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (proc.stdout, proc.stderr[-3000:])
    return proc.returncode, json.loads(lines[0])


def _fixed_bucket_write(wh: str, data: pa.Table) -> None:
    """pypaimon's fixed-bucket batch write of a postpone table (``postpone.batch-write-fixed-bucket``):
    rows go straight into the partitions' existing real buckets, placed by pypaimon's hash."""
    path = os.path.join(wh, "fixed.parquet")
    pq.write_table(data, path)
    script = (
        "import sys, pyarrow.parquet as pq\n"
        "from pypaimon import CatalogFactory\n"
        "t = CatalogFactory.create({'warehouse': sys.argv[1]}).get_table('db.t')\n"
        "t = t.copy({'scan.native-plan.enabled': 'false', 'read.native.enabled': 'false',\n"
        "            'commit.native.enabled': 'false', 'write.native.enabled': 'false'})\n"
        "wb = t.new_postpone_fixed_bucket_write_builder()\n"
        "w = wb.new_write(); c = wb.new_commit()\n"
        "w.write_arrow(pq.read_table(sys.argv[2]))\n"
        "c.commit(w.prepare_commit()); w.close(); c.close()\n"
    )
    python = peer_venv_python()
    assert python is not None
    proc = subprocess.run([python, "-c", script, wh, path], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    os.remove(path)


def test_pypaimon_postpone_table_compacted_by_us(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    wh, peer = warehouse, pypaimon_peer
    peer.create_table(wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS)
    model: Model = {}
    _upsert(peer, wh, model, [(d, k) for d in "ab" for k in range(60)], "c1")
    _upsert(peer, wh, model, [*[("a", k) for k in range(30)], ("a", 5)], "c2")  # ("a", 5) twice: the last wins
    _delete(peer, wh, model, [*[("a", k) for k in range(10, 15)], ("b", 0)])
    _upsert(peer, wh, model, [*[("c", k) for k in range(20)], ("a", 10)], "c4")  # a deleted key comes back
    assert len(model) == 56 + 59 + 20
    # Nothing is in a real bucket yet: every reader (Java's rule) sees no row, at every snapshot.
    assert _all_snapshots_agree(wh, peer) == 4
    assert _ours(wh) == {} == _state(peer.read(wh, "db.t"))
    assert _state(rust_peer.read(wh, "db.t")) == {}
    assert _merge_on_read(wh) == model  # what the compaction below will make

    # Compaction 1, the Python API: one COMPACT snapshot; bucket counts estimated from the
    # postpone rows (ceil(rows / 40): a 97 rows, b 61, c 20).
    t = _table(wh)
    with pytest.raises(InvalidArgumentError, match="does not support specifying partitions"):
        t.maintenance.compact(partitions="dt=a")
    assert _table(wh).latest_snapshot().id == 4  # type: ignore[union-attr]
    dry = t.maintenance.compact(dry_run=True)
    assert dry.snapshot_id is None and {p["partition"]: p["num_buckets"] for p in dry.plan} == {"dt=a": 3, "dt=b": 2, "dt=c": 1}
    result = t.maintenance.compact()
    assert result.snapshot_id == 5 and result.rows_read == 97 + 61 + 20 and result.files_read == 7
    snap = _table(wh).latest_snapshot()
    assert snap is not None and snap.commit_kind == CommitKind.COMPACT
    assert _layout(wh) == ({"dt=a": {3}, "dt=b": {2}, "dt=c": {1}}, 0)
    assert _ours(wh) == model
    assert _state(peer.read(wh, "db.t")) == model
    assert _state(rust_peer.read(wh, "db.t")) == model

    # pypaimon keeps writing: upserts (into bucket-postpone again, invisible until compacted), a
    # delete, a new partition; and a fixed-bucket batch write straight into the real buckets.
    before = dict(model)
    pending: Model = dict(model)
    _upsert(peer, wh, pending, [("a", k) for k in range(0, 50, 2)], "c6")
    _delete(peer, wh, pending, [("b", k) for k in range(1, 6)])
    _upsert(peer, wh, pending, [*[("d", k) for k in range(45)], ("a", 0), ("b", 1)], "c8")
    assert _ours(wh) == before == _state(peer.read(wh, "db.t"))
    fixed = _rows([("b", k) for k in range(40, 60)], "fixed")
    _fixed_bucket_write(wh, fixed)
    for d, k, v in zip(fixed.column("dt").to_pylist(), fixed.column("id").to_pylist(), fixed.column("v").to_pylist(), strict=True):
        before[(d, k)] = v
        pending[(d, k)] = v
    assert _ours(wh) == before == _state(peer.read(wh, "db.t"))  # same buckets as ours: no key twice
    assert _layout(wh)[0]["dt=b"] == {2}
    assert _merge_on_read(wh) == pending

    # Compaction 2, the Spark job (one task per partition, one commit on the driver): existing
    # partitions keep their bucket count, the new one gets the estimate (45 rows: 2).
    rc, out = _spark_compact(wh)
    assert rc == 0 and out["mode"] == "distributed" and out["snapshot_id"] == 10, out
    # dt=c: no postpone file, but a real level-0 bucket (Java's getLevel0Buckets), also planned
    assert {p["partition"]: p["num_buckets"] for p in out["plan"]} == {"dt=a": 3, "dt=b": 2, "dt=c": 1, "dt=d": 2}
    assert _layout(wh) == ({"dt=a": {3}, "dt=b": {2}, "dt=c": {1}, "dt=d": {2}}, 0)
    assert _ours(wh) == pending
    assert _state(peer.read(wh, "db.t")) == pending
    assert _state(rust_peer.read(wh, "db.t")) == pending
    assert _all_snapshots_agree(wh, peer) == 10
    assert _merge_on_read(wh) == pending

    # Nothing left in bucket-postpone: the job has nothing to do (real level-0 buckets get the
    # table's own compaction rules, which pick nothing here).
    rc, out = _spark_compact(wh, "--mode", "local")
    assert rc == 0 and out["snapshot_id"] is None, out
    assert _ours(wh) == pending


def test_concurrent_compactions_conflict_and_appends_survive(pypaimon_peer: Peer, warehouse: str) -> None:
    wh, peer = warehouse, pypaimon_peer
    peer.create_table(
        wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
        options={**OPTIONS, "postpone.default-bucket-num": "2"},
    )  # fmt: skip
    model: Model = {}
    _upsert(peer, wh, model, [(d, k) for d in "ab" for k in range(30)], "c1")
    _upsert(peer, wh, model, [("a", k) for k in range(10)], "c2")

    # A and B both plan on snapshot 2 and write their files; A commits first.
    t = _table(wh)
    a, b = PostponeBucketCompact(t), PostponeBucketCompact(t)
    plan_a, plan_b = a.plan(), b.plan()
    assert plan_a.snapshot_id == plan_b.snapshot_id == 2
    run = local_postpone_executor(1)
    written_a = [m for ms in run(t, plan_a.tasks) for m in ms]
    written_b = [m for ms in run(t, plan_b.tasks) for m in ms]
    b_files = [t.bucket_path(m.partition, m.bucket) + "/" + f.file_name for m in written_b for f in m.compact_after]
    assert b_files and all(os.path.exists(p) for p in b_files)
    assert a.commit(plan_a, a.removal_messages(plan_a) + written_a, 1).snapshot_id == 3
    with pytest.raises(CommitConflictError, match="commit.strict-mode.last-safe-snapshot"):
        b.commit(plan_b, b.removal_messages(plan_b) + written_b, 1)
    assert not any(os.path.exists(p) for p in b_files)  # the loser deleted what it wrote
    assert _table(wh).latest_snapshot().id == 3  # type: ignore[union-attr]
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))

    # C plans on snapshot 4; pypaimon appends to bucket-postpone before C commits: no conflict
    # (appends of new files), and the appended rows stay pending, then win at the next compaction.
    _upsert(peer, wh, model, [("b", k) for k in range(5)], "c4")
    c = PostponeBucketCompact(_table(wh))
    plan_c = c.plan()
    written_c = [m for ms in run(_table(wh), plan_c.tasks) for m in ms]
    pending = dict(model)
    _upsert(peer, wh, pending, [("b", k) for k in range(3)], "c5")
    assert c.commit(plan_c, c.removal_messages(plan_c) + written_c, 1).snapshot_id == 6
    assert _layout(wh)[1] == 1  # snapshot 5's postpone file is still there
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))
    assert _table(wh).maintenance.compact().snapshot_id == 7
    assert _ours(wh) == pending == _state(peer.read(wh, "db.t"))
    assert _layout(wh) == ({"dt=a": {2}, "dt=b": {2}}, 0)


def test_the_maintenance_planner_compacts_pending_postpone_files(pypaimon_peer: Peer, warehouse: str) -> None:
    from paimon_core.maintenance.executor import execute_action
    from paimon_core.maintenance.planner import plan_table
    from paimon_core.maintenance.settings import MaintenanceSettings
    from paimon_core.maintenance.table_state import collect_table_state

    wh, peer = warehouse, pypaimon_peer
    peer.create_table(wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS)
    model: Model = {}
    _upsert(peer, wh, model, [(d, k) for d in "ab" for k in range(20)], "c1")
    _upsert(peer, wh, model, [("a", k) for k in range(5)], "c2")
    now = _table(wh).latest_snapshot().time_millis + 1000  # type: ignore[union-attr]
    settings = MaintenanceSettings.from_mapping({})

    def compact_need() -> Any:
        state = collect_table_state(_table(wh), now_millis=now)
        return plan_table(state, settings, now_millis=now, last_success={})

    plan = compact_need()
    action = plan.action("compact")
    assert action is not None and action.urgent and "bucket-postpone" in action.reason, plan
    result = execute_action(_table(wh), "compact", action.args, commit_user="maint-1", now_millis=now)
    assert result["snapshot_id"] == 3 and result["strategy"] == "postpone"
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))
    # the same run again (a retried task): already committed, nothing written
    again = execute_action(_table(wh), "compact", action.args, commit_user="maint-1", now_millis=now)
    assert again["already_committed"] and _table(wh).latest_snapshot().id == 3  # type: ignore[union-attr]
    assert compact_need().skipped_reasons["compact"].startswith("no postpone files (bucket = -2)")


def test_we_write_bucket_postpone_as_java_and_peers_read_after_compaction(
    pypaimon_peer: Peer, rust_peer: Peer, warehouse: str
) -> None:
    """Our writer on a postpone-bucket table with ``postpone.batch-write-fixed-bucket = false``
    (Java's ``PostponeBucketFileStoreWrite``, as its streaming writers always do): Avro files
    in ``bucket-postpone``, rows as they came (unmerged, sequence numbers from 0), named by
    writer (``-u-<user>-s-<write id>-w-``); invisible until compacted, with pypaimon's writes in
    between."""
    import re

    wh, peer = warehouse, pypaimon_peer
    peer.create_table(wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS)
    model: Model = {}
    t = _table(wh).copy({"postpone.batch-write-fixed-bucket": "false"})  # a batch staged as a stream would be
    ours = _rows([*[(d, k) for d in "ab" for k in range(10)], ("a", 3)], "w1")  # ("a", 3) twice
    t.write_arrow(ours)
    for d, k, v in zip(ours.column("dt").to_pylist(), ours.column("id").to_pylist(), ours.column("v").to_pylist(), strict=True):
        model[(d, k)] = v
    _upsert(peer, wh, model, [("a", k) for k in range(5)], "p2")
    t.write_arrow(pa.table({"id": [7, 8], "dt": ["b", "b"], "v": [None, None], "op": ["-D", "-D"]}, schema=SCHEMA))
    model.pop(("b", 7))
    model.pop(("b", 8))
    entries = _table(wh).new_file_store_scan().live_entries(_table(wh).latest_snapshot())
    mine = [e for e in entries if "-u-" in e.file.file_name and e.file.file_name.endswith(".avro")]
    assert len(mine) == len(entries) and all(e.bucket == e.total_buckets == -2 and e.file.level == 0 for e in entries)
    pattern = re.compile(r"^data--u-[0-9a-f-]+-s-\d+-w-[0-9a-f-]+-\d+\.avro$")
    assert all(pattern.match(e.file.file_name) for e in entries), [e.file.file_name for e in entries]
    assert all(e.file.min_sequence_number == 0 for e in entries)  # every writer's sequence starts at 0
    assert sorted(e.file.row_count for e in entries) == [2, 5, 10, 11]  # unmerged: ("a", 3) twice
    assert _ours(wh) == {} == _state(peer.read(wh, "db.t"))
    assert _merge_on_read(wh) == model
    assert _table(wh).maintenance.compact().snapshot_id == 4
    assert _ours(wh) == model == _state(peer.read(wh, "db.t")) == _state(rust_peer.read(wh, "db.t"))


MODES = {
    "partial-update": ({"merge-engine": "partial-update"}, {1: ("a1", 5), 2: ("a2b", 25), 3: ("a3b", 1), 4: ("a4", 2)}),
    "aggregation": (
        {"merge-engine": "aggregation", "fields.b.aggregate-function": "sum"},
        {1: ("a1", 15), 2: ("a2b", 46), 3: ("a3b", 31), 4: ("a4", 2)},
    ),
    "first-row": ({"merge-engine": "first-row"}, {1: ("a1", 10), 2: (None, 20), 3: ("a3", 30), 4: ("a4", 2)}),
    "sequence.field": ({"sequence.field": "b"}, {1: ("a1", 10), 2: ("a2b", 25), 3: ("a3", 30), 4: ("a4", 2)}),
    # lookup compaction: the writer's compaction upgrades or rewrites the new level-0 files at once
    "deletion-vectors": ({"deletion-vectors.enabled": "true"}, {1: (None, 5), 2: ("a2b", 25), 3: ("a3b", 1), 4: ("a4", 2)}),
    "changelog lookup": ({"changelog-producer": "lookup"}, {1: (None, 5), 2: ("a2b", 25), 3: ("a3b", 1), 4: ("a4", 2)}),
}


def test_merge_engines_and_lookup_tables(pypaimon_peer: Peer, rust_peer: Peer, tmp_path: Any) -> None:
    """Every merge engine, ``sequence.field``, and the tables whose writers compact with lookup:
    after each compaction every reader (and our merge-on-read before it) sees the engine's rows."""
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("a", pa.string()), ("b", pa.int64())])

    def rows(ids: list[int], a: list[str | None], b: list[int]) -> pa.Table:
        return pa.table({"id": ids, "dt": ["x"] * len(ids), "a": a, "b": b}, schema=schema)

    for name, (options, want) in MODES.items():
        wh = str(tmp_path / name.replace(" ", "-"))
        peer = pypaimon_peer
        peer.create_table(wh, "db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "-2", **options})
        peer.write(wh, "db.t", rows([1, 2, 3], ["a1", None, "a3"], [10, 20, 30]))
        peer.write(wh, "db.t", rows([1, 2, 2], [None, "a2", "a2b"], [5, 1, 25]))
        _table(wh).maintenance.compact()
        peer.write(wh, "db.t", rows([3, 4], ["a3b", "a4"], [1, 2]))
        merged = _table(wh).copy({"postpone.merge-on-read": "true"}).to_arrow()
        assert _table(wh).maintenance.compact().snapshot_id is not None, name
        readers = {
            "ours": _table(wh).to_arrow(),
            "merge-on-read before": merged,
            "pypaimon": peer.read(wh, "db.t"),
            "rust": rust_peer.read(wh, "db.t"),
        }
        for reader, out in readers.items():
            got = {r["id"]: (r["a"], r["b"]) for r in out.to_pylist()}
            assert got == want, (name, reader, got)


def test_batch_write_fixed_bucket_and_rescale(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """``postpone.batch-write-fixed-bucket`` (default on): our batch writes go straight into real
    buckets, their count decided as Java's ``PostponeUtils.decideFixedBucketNum`` (new partition:
    ceil(rows / target) rounded up to a power of two; existing: kept until the batch needs more
    than ``rescale-load-factor`` times as many, then the partition is rescaled first, an OVERWRITE
    in strict mode); the staged files are gone; pypaimon's postpone rows merge in afterwards."""
    wh, peer = warehouse, pypaimon_peer
    options = {
        **OPTIONS,
        "postpone.target-row-num-per-bucket": "10",
        "postpone.batch-write-fixed-bucket.rescale-load-factor": "2",
    }
    peer.create_table(wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=options)
    model: Model = {}

    def write(keys: list[tuple[str, int]], tag: str) -> int | None:
        data = _rows(keys, tag)
        sid = _table(wh).write_arrow(data).snapshot_id
        for d, k, v in zip(data.column("dt").to_pylist(), data.column("id").to_pylist(), data.column("v").to_pylist(), strict=True):
            model[(d, k)] = v
        return sid

    assert write([("a", k) for k in range(25)], "w1") == 1  # 25 rows: 3 buckets, rounded up to 4
    assert _layout(wh) == ({"dt=a": {4}}, 0)
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))  # visible at once
    write([("a", k) for k in range(30)], "w2")  # 3 <= 4 x 2: kept
    write([("b", 1), ("b", 2)], "w2b")  # a new partition of 2 rows: 1 bucket
    assert _layout(wh) == ({"dt=a": {4}, "dt=b": {1}}, 0)
    before = _table(wh).latest_snapshot().id  # type: ignore[union-attr]
    write([("a", k) for k in range(100)], "w3")  # 10 > 4 x 2: rescaled to 16 first
    kinds = [_table(wh).snapshot_manager.snapshot(i).commit_kind for i in range(before + 1, before + 3)]
    assert kinds == [CommitKind.OVERWRITE, CommitKind.APPEND]
    assert _layout(wh) == ({"dt=a": {16}, "dt=b": {1}}, 0)
    assert not os.listdir(os.path.join(wh, "db.db", "t", "dt=a", "bucket-postpone"))  # staged files deleted
    assert _ours(wh) == model == _state(peer.read(wh, "db.t")) == _state(rust_peer.read(wh, "db.t"))
    # pypaimon's rows into bucket-postpone, then our compaction into the 16 buckets
    _upsert(peer, wh, model, [("a", k) for k in range(0, 120, 3)], "p4")
    assert _table(wh).maintenance.compact().snapshot_id is not None
    assert _layout(wh) == ({"dt=a": {16}, "dt=b": {1}}, 0)
    assert _ours(wh) == model == _state(peer.read(wh, "db.t")) == _state(rust_peer.read(wh, "db.t"))
    # INSERT OVERWRITE of dt=b replaces its rows, the pending bucket-postpone ones too (as Java's
    # overwrite through the postpone table), with a layout of its own (default: 1 bucket here)
    _upsert(peer, wh, model, [("b", 7)], "p5")
    builder = _table(wh).new_batch_write_builder().overwrite({"dt": "b"})
    write = builder.new_write()
    write.write_arrow(_rows([("b", k) for k in range(20, 45)], "o6"))
    assert builder.new_commit().commit(write.prepare_commit()).commit_kind == "OVERWRITE"
    model = {k: v for k, v in model.items() if k[0] != "b"} | _state(_rows([("b", k) for k in range(20, 45)], "o6"))
    assert _layout(wh) == ({"dt=a": {16}, "dt=b": {4}}, 0)  # 25 rows / 10: 3, rounded up to 4
    assert _ours(wh) == model == _state(peer.read(wh, "db.t")) == _state(rust_peer.read(wh, "db.t"))


def test_rescale_and_compaction_racing_lose_no_row(pypaimon_peer: Peer, warehouse: str) -> None:
    """Paimon 1.2's data-loss fix (``commit.strict-mode.last-safe-snapshot``): a rescale that read
    snapshot S must not overwrite rows a postpone compaction committed after S, and a compaction
    planned on S must not add files in the old bucket count after a rescale; either loser fails
    with a conflict, deletes what it wrote, and the table keeps every row."""
    from paimon_core.table.fixed_bucket_commit import PostponeFixedBucketCommit

    wh, peer = warehouse, pypaimon_peer
    peer.create_table(wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS)
    model: Model = {}
    _upsert(peer, wh, model, [("a", k) for k in range(40)], "p1")
    assert _table(wh).maintenance.compact().snapshot_id == 2  # dt=a: 1 bucket
    _upsert(peer, wh, model, [("a", k) for k in range(30, 60)], "p3")  # pending in bucket-postpone
    s = 3

    # A rescale that read S = 3 ...
    rescale = PostponeFixedBucketCommit(_table(wh), "rescaler", None)
    # ... and a compaction that commits first (snapshot 4): the rescale's OVERWRITE must fail.
    assert _table(wh).maintenance.compact().snapshot_id == 4
    after_compaction = _all_files(wh)
    with pytest.raises(CommitConflictError, match="commit.strict-mode.last-safe-snapshot"):
        rescale._rescale({_partition(wh, "a"): 4}, s)
    assert _all_files(wh) == after_compaction  # its files are gone again
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))

    # The other order: a compaction planned on S = 5, a rescale (snapshot 6), then its commit.
    _upsert(peer, wh, model, [("a", k) for k in range(50, 70)], "p5")
    c = PostponeBucketCompact(_table(wh))
    plan = c.plan()
    written = [m for ms in local_postpone_executor(1)(_table(wh), plan.tasks) for m in ms]
    rescaled = PostponeFixedBucketCommit(_table(wh), "rescaler", None)._rescale({_partition(wh, "a"): 4}, plan.snapshot_id)  # type: ignore[arg-type]
    assert rescaled == 6 and _layout(wh)[0] == {"dt=a": {4}}
    with pytest.raises(CommitConflictError, match="commit.strict-mode.last-safe-snapshot"):
        c.commit(plan, c.removal_messages(plan) + written, 1)
    assert not any(os.path.exists(t) for t in _written_paths(wh, written))
    assert _table(wh).maintenance.compact().snapshot_id == 7  # the next compaction merges into the 4 buckets
    assert _layout(wh) == ({"dt=a": {4}}, 0)
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))


def _partition(wh: str, dt: str) -> bytes:
    t = _table(wh)
    return next(e.partition for e in t.new_file_store_scan().live_entries(t.latest_snapshot()) if t.partition_path(e.partition) == f"dt={dt}")


def _all_files(wh: str) -> set[str]:
    root = os.path.join(wh, "db.db", "t")
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if os.sep + "dt=" in d}


def _written_paths(wh: str, messages: list[Any]) -> list[str]:
    t = _table(wh)
    return [t.bucket_path(m.partition, m.bucket) + "/" + f.file_name for m in messages for f in m.compact_after]


def test_postpone_files_of_older_schemas(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """pypaimon adds a column between two postpone writes: the compaction (and merge-on-read)
    reads each file in its own schema (missing column null) and writes the current one."""
    wh, peer = warehouse, pypaimon_peer
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])
    peer.create_table(wh, "db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "-2"})
    peer.write(wh, "db.t", pa.table({"id": [1, 2, 3], "dt": ["a"] * 3, "v": ["x"] * 3}, schema=schema))
    peer.alter_table(wh, "db.t", [{"action": "add_column", "name": "w", "type": "BIGINT"}])
    wider = schema.append(pa.field("w", pa.int64()))
    peer.write(wh, "db.t", pa.table({"id": [2, 4], "dt": ["a"] * 2, "v": ["y"] * 2, "w": [7, 8]}, schema=wider))
    want = [(1, "x", None), (2, "y", 7), (3, "x", None), (4, "y", 8)]

    def rows(t: pa.Table) -> list[tuple[Any, ...]]:
        return sorted((r["id"], r["v"], r["w"]) for r in t.to_pylist())

    assert rows(_table(wh).copy({"postpone.merge-on-read": "true"}).to_arrow()) == want
    assert _table(wh).maintenance.compact().snapshot_id == 3
    assert rows(_table(wh).to_arrow()) == rows(peer.read(wh, "db.t")) == rows(rust_peer.read(wh, "db.t")) == want


def test_rescale_procedure_of_a_postpone_table(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """Java's ``RescaleAction`` on a postpone-bucket table: the bucket number is required, the real
    buckets of the partition are rewritten into it (OVERWRITE, strict mode), rows pending in
    ``bucket-postpone`` stay and the next compaction puts them into the new buckets."""
    from paimon_core.table.rescale import rescale

    wh, peer = warehouse, pypaimon_peer
    peer.create_table(wh, "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS)
    model: Model = {}
    _upsert(peer, wh, model, [(d, k) for d in "ab" for k in range(30)], "p1")
    _table(wh).maintenance.compact()
    assert _layout(wh) == ({"dt=a": {1}, "dt=b": {1}}, 0)
    pending = dict(model)
    _upsert(peer, wh, pending, [("a", k) for k in range(20, 40)], "p3")
    with pytest.raises(InvalidArgumentError, match="you must provide the resulting bucket number"):
        rescale(_table(wh), partition={"dt": "a"})
    result = rescale(_table(wh), bucket_num=4, partition={"dt": "a"})
    assert result.from_buckets == [1] and result.to_buckets == 4 and result.rows == 30
    assert _table(wh).schema.options["bucket"] == "-2"
    assert _layout(wh) == ({"dt=a": {4}, "dt=b": {1}}, 1)  # the pending file stays
    assert _ours(wh) == model == _state(peer.read(wh, "db.t"))
    _table(wh).maintenance.compact()
    assert _layout(wh) == ({"dt=a": {4}, "dt=b": {1}}, 0)
    assert _ours(wh) == pending == _state(peer.read(wh, "db.t")) == _state(rust_peer.read(wh, "db.t"))
