"""The levels a streaming read's full phase reads (Java's ``DataTableStreamScan.tryFirstPlan``).

Java reads every level, merged, unless the table has a changelog producer: ``lookup`` reads above
level 0 (the compaction that looks level-0 rows up emits them as changelog), ``full-compaction``
the top level only. The batch rule ``batchScanSkipLevel0`` (deletion-vector and first-row tables
read compacted files only) is not a streaming rule: our stream applied it, so a deletion-vector or
first-row table without a producer lost every row still in level 0 when the stream started (the
delta phase starts after that snapshot), and ``lookup`` / ``full-compaction`` tables streamed
their level-0 rows twice (in the full phase, then as the compaction's changelog).

Each case: a base compacted to the top level, then upserts and deletes left in level 0; a stream
starts in full at the latest snapshot; more writes and a full compaction follow. A consumer applying
the stream ends with the table's batch rows; with a changelog producer the stream is a strict
changelog (``+I`` only of an absent key, ``-U`` / ``+U`` / ``-D`` only of a present one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import ROW_KIND, TableRead

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])

CASES = {
    "deduplicate": {},
    "deletion-vectors": {"deletion-vectors.enabled": "true"},
    "first-row": {"merge-engine": "first-row"},
    "first-row-lookup": {"merge-engine": "first-row", "changelog-producer": "lookup"},
    "lookup": {"changelog-producer": "lookup"},
    "input": {"changelog-producer": "input"},  # every level: its changelog is the input, written once
    "deletion-vectors-lookup": {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    "full-compaction": {"changelog-producer": "full-compaction"},
}


def _write(t: FileStoreTable, ids: list[int], v: int, *, delete: bool = False) -> None:
    write = t.new_batch_write_builder().new_write()
    data = pa.table({"id": ids, "v": [v] * len(ids)}, schema=SCHEMA)
    if delete:
        write.delete_arrow(data)
    else:
        write.write_arrow(data)
    t.new_batch_write_builder().new_commit().commit(write.prepare_commit())


def _apply(
    state: dict[int, int], rows: list[dict[str, Any]], *, strict: bool, label: str, first: bool = False
) -> None:
    """Apply streamed rows; ``first``: a first-row consumer of raw input (a key keeps its first row)."""
    for r in rows:
        kind, key = r[ROW_KIND], r["id"]
        if kind in ("+I", "+U"):
            assert not (strict and kind == "+I" and key in state), f"{label}: +I of {key}, already streamed"
            if first:
                state.setdefault(key, r["v"])
            else:
                state[key] = r["v"]
        else:
            assert not strict or key in state, f"{label}: {kind} of {key}, never streamed"
            state.pop(key, None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_stream_started_over_level_0_sees_every_row_once(tmp_path: Path, case: str) -> None:
    options = CASES[case]
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    t = catalog.create_table(
        "db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true", **options}
    )
    first_row = options.get("merge-engine") == "first-row"
    _write(t, [1, 2, 3, 4], 1)
    t.maintenance.compact()  # the base: the top level
    _write(t, [5, 6], 2)  # new keys, level 0
    _write(t, [2], 3)  # an upsert of a compacted key, level 0
    if not first_row:
        _write(t, [3], 0, delete=True)  # a delete of a compacted key, level 0
    t = catalog.get_table("db.t")
    producer = options.get("changelog-producer", "none")
    strict = producer in ("lookup", "full-compaction")  # a compaction's changelog; none / input: the writes
    scan = StreamTableScan(t, options={})
    position = scan.starting_position()
    assert position.full
    latest = t.snapshot_manager.latest_snapshot_id()
    assert latest is not None and position.snapshot_id == latest
    state: dict[int, int] = {}
    read = TableRead(t, row_kind=True, parallelism=1)
    full = read.to_arrow(scan.plan_full(t.snapshot_manager.snapshot(latest))).to_pylist()
    _apply(state, full, strict=strict, label=f"{case} full phase")
    if not strict:  # the full phase is the table as of the snapshot, level 0 merged in (a batch
        # read of a deletion-vector or first-row table hides level 0 until it is compacted)
        model = {1: 1, 3: 1, 4: 1, 5: 2, 6: 2} | ({2: 1, 3: 1} if first_row else {2: 3})
        if not first_row:
            del model[3]
        assert state == model, case
    _write(t, [7], 4)
    _write(t, [1], 5)
    catalog.get_table("db.t").maintenance.compact()  # full: the lookup / full-compaction changelog
    t = catalog.get_table("db.t")
    now = t.snapshot_manager.latest_snapshot_id()
    assert now is not None
    for sid in range(latest + 1, now + 1):
        units = scan.plan_delta(t.snapshot_manager.snapshot(sid))
        rows = read.to_arrow(units or []).to_pylist()
        # without a producer a first-row table streams its input as written (Java too): +I of a kept key
        _apply(
            state,
            rows,
            strict=strict,
            label=f"{case} snapshot {sid}",
            first=first_row and not strict,
        )
    assert state == {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}, case
