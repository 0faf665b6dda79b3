"""Data-evolution tables written by pypaimon 2.1.0, read by paimon_core (Java ``DataEvolutionSplitRead``).

pypaimon writes a ``row-tracking.enabled`` + ``data-evolution.enabled`` append table over three
commits, then updates columns by ``_ROW_ID`` (``update_by_arrow_with_row_id``) several times: each
update is a file holding only the updated columns (``write_cols``) over the row-id range of the
file it updates. Before paimon_core merged such files, every read raised ``SchemaMismatchError``
("Columns [...] are not in data file ..."). At every snapshot our ``to_arrow`` equals pypaimon's
read and ``$row_tracking`` gives the same ``_ROW_ID`` -> (row, ``_SEQUENCE_NUMBER``) mapping; with
projections and filters on updated columns; after a column added by schema evolution and updated
by row id; with deletion vectors (``delete_by_predicate``); through ``python -m paimon_core read``;
an incremental read of an update. pypaimon-rust 0.4.0 reads the same rows. A filter prunes whole
row-id groups on each column's newest statistics, never on an updated column's stale ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from peers import Peer

from paimon_core import FileSystemCatalog
from paimon_core.predicate import PredicateBuilder
from paimon_core.table.data_evolution_read import merge_ranges_and_sort
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())])
ROWS = 30
SYSTEM = ["_ROW_ID", "_SEQUENCE_NUMBER"]

#: Runs in the peer venv: ``argv[1]`` warehouse, ``argv[2]`` JSON list of updates, each
#: ``{"cols": [...], "row_ids": [...], "values": {col: [...]}}``, one commit each.
UPDATE_SCRIPT = r"""
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory
NATIVE_OFF = {"scan.native-plan.enabled": "false", "read.native.enabled": "false",
              "commit.native.enabled": "false", "write.native.enabled": "false"}
TYPES = {"a": "int32", "b": "string", "c": "float64", "e": "int64"}
cat = CatalogFactory.create({"warehouse": sys.argv[1]})
for u in json.loads(sys.argv[2]):
    t = cat.get_table("db.t").copy(NATIVE_OFF)
    data = {"_ROW_ID": pa.array(u["row_ids"], pa.int64())}
    for col in u["cols"]:
        data[col] = pa.array(u["values"][col], getattr(pa, TYPES[col])())
    wb = t.new_batch_write_builder()
    messages = wb.new_update().with_update_type(u["cols"]).update_by_arrow_with_row_id(pa.table(data))
    c = wb.new_commit()
    c.commit(messages)
    c.close()
"""


def batch(start: int, n: int = ROWS) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": ids,
            "dt": [f"d{i % 2}" for i in ids],
            "a": list(ids),
            "b": [None if i % 7 == 0 else f"b{i}" for i in ids],
            "c": [i / 4 for i in ids],
        },
        schema=SCHEMA,
    )


def update(peer_python: str, wh: str, *updates: dict[str, Any]) -> None:
    proc = subprocess.run(
        [peer_python, "-c", UPDATE_SCRIPT, wh, json.dumps(list(updates))], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


def mapping(t: pa.Table, columns: list[str]) -> dict[int, tuple[Any, ...]]:
    """``_ROW_ID`` -> (row, ``_SEQUENCE_NUMBER``); ids unique and non-null."""
    rows = t.select(["_ROW_ID", *columns, "_SEQUENCE_NUMBER"]).to_pylist()
    out = {r["_ROW_ID"]: tuple(r[c] for c in [*columns, "_SEQUENCE_NUMBER"]) for r in rows}
    assert None not in out and len(out) == len(rows), "null or duplicate _ROW_IDs"
    return out


def rows(t: pa.Table, columns: list[str] | None = None) -> list[tuple[Any, ...]]:
    t = t.select(columns) if columns is not None else t
    return sorted((tuple(r.values()) for r in t.to_pylist()), key=repr)


def check_snapshot(peer: Peer, wh: str, t: FileStoreTable, sid: int) -> dict[int, tuple[Any, ...]]:
    """Our reads of snapshot ``sid`` equal pypaimon's: rows, and the row-id mapping."""
    columns = [f.name for f in t.schema.fields]
    opts = {"scan.snapshot-id": str(sid)}
    theirs = peer.read(wh, "db.t", options=opts, projection=[*columns, *SYSTEM])
    at = t.copy(opts)
    assert rows(at.to_arrow()) == rows(theirs, columns), f"rows at snapshot {sid}"
    expected = mapping(theirs, columns)
    assert mapping(at.inspect.system_table("row_tracking"), columns) == expected, f"$row_tracking at snapshot {sid}"
    return expected


def merged_groups(t: FileStoreTable) -> int:
    """How many row-id groups of the latest snapshot merge two or more files."""
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    groups = merge_ranges_and_sort([e.file for e in entries])
    return sum(len(g) > 1 for g in groups)


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_updates_by_row_id_read_as_pypaimon(
    pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str, partitioned: bool, tmp_path: Any
) -> None:
    wh = warehouse
    pypaimon_peer.create_table(
        wh,
        "db.t",
        SCHEMA,
        partition_keys=["dt"] if partitioned else (),
        options={"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"},
    )
    for k in range(3):
        pypaimon_peer.write(wh, "db.t", batch(k * ROWS))  # snapshots 1-3; partitioned: two files each
    n = 3 * ROWS
    update(
        peer_python,
        wh,
        # 4: column a of some rows of the first two commits (files' other rows keep their value)
        {"cols": ["a"], "row_ids": list(range(0, 40, 3)), "values": {"a": [1000 + i for i in range(0, 40, 3)]}},
        # 5: two columns at once, one of them to null
        {
            "cols": ["b", "c"],
            "row_ids": list(range(20, 70)),
            "values": {"b": [None if i % 5 == 0 else f"u{i}" for i in range(20, 70)], "c": [-i / 2 for i in range(20, 70)]},
        },
        # 6: column a again, over rows the first update set and rows it did not
        {"cols": ["a"], "row_ids": list(range(0, n, 2)), "values": {"a": [2000 + i for i in range(0, n, 2)]}},
    )
    t = FileSystemCatalog(wh).get_table("db.t")
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == 6
    assert merged_groups(t) >= 2, "the updates should have written partial-column files"
    partial = [e.file for e in t.new_file_store_scan().live_entries(latest) if e.file.write_cols is not None]
    assert {tuple(f.write_cols or ()) for f in partial} == {("a",), ("b", "c")}

    maps = {sid: check_snapshot(pypaimon_peer, wh, t, sid) for sid in range(1, 7)}
    assert sorted(maps[6]) == list(range(n))
    cols = [f.name for f in t.schema.fields]
    if not partitioned:  # one file a commit: row id == id; every update landed on its rows
        a_of = {rid: v[cols.index("a")] for rid, v in maps[6].items()}
        assert a_of == {i: 2000 + i if i % 2 == 0 else 1000 + i if i < 40 and i % 3 == 0 else i for i in range(n)}
    assert {v[-1] for v in maps[6].values()} == {6}  # the newest file of every range (update 6 touches all)
    if not partitioned:  # update 4 touched the first two files only
        assert {rid: v[-1] for rid, v in maps[4].items()} == {i: 4 if i < 2 * ROWS else 3 for i in range(n)}

    # projections and filters on updated columns: evaluated after the merge
    pb = PredicateBuilder(t.schema.fields)
    for projection, flt, ours_pred in [
        (["c", "a"], {"op": ">=", "field": "a", "value": 1000}, pb.greater_or_equal("a", 1000)),
        (["id", "b"], {"op": "is_null", "field": "b"}, pb.is_null("b")),
        (["b", "c"], {"op": "<", "field": "c", "value": 0.0}, pb.less_than("c", 0.0)),
        (["id", "dt"], {"op": "=", "field": "dt", "value": "d1"}, pb.equal("dt", "d1")),
    ]:
        theirs = pypaimon_peer.read(wh, "db.t", projection=projection, filter=flt)
        rb = t.new_read_builder().with_projection(projection).with_filter(ours_pred)
        ours = rb.new_read().to_arrow(rb.plan().splits)
        assert ours.num_rows > 0 and rows(ours) == rows(theirs), f"{projection} where {flt}"
        # the filter column left out of the projection (pypaimon refuses that): the same rows
        rb = t.new_read_builder().with_projection(projection[:1]).with_filter(ours_pred)
        assert rows(rb.new_read().to_arrow(rb.plan().splits)) == rows(theirs, projection[:1])

    # a column added later, then updated by row id: files of the old schema lack it
    pypaimon_peer.alter_table(wh, "db.t", [{"action": "add_column", "name": "e", "type": pa.int64()}])
    update(peer_python, wh, {"cols": ["e"], "row_ids": [1, 2, ROWS + 5], "values": {"e": [11, 22, 33]}})
    t = FileSystemCatalog(wh).get_table("db.t")
    seven = check_snapshot(pypaimon_peer, wh, t, 7)
    assert sorted(v[-2] for v in seven.values() if v[-2] is not None) == [11, 22, 33]

    # pypaimon-rust 0.4.0 reads the merged rows too
    assert rows(rust_peer.read(wh, "db.t")) == rows(t.to_arrow())
    # an incremental read of an update: its partial-column files alone, the other columns null
    # (Java reads a lone file with the full read type; pypaimon ignores snapshot-id ranges)
    delta = t.copy({"incremental-between": "4,5"}).to_arrow()
    assert rows(rust_peer.read(wh, "db.t", options={"incremental-between": "4,5"})) == rows(delta)
    assert delta.num_rows >= 50 and delta.column("id").null_count == delta.num_rows  # files span whole ranges

    # the command line
    out = tmp_path / "out.parquet"
    proc = subprocess.run(
        [sys.executable, "-m", "paimon_core", "read", wh, "db.t", "--where", "a >= 1000", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = pypaimon_peer.read(wh, "db.t", filter={"op": ">=", "field": "a", "value": 1000})
    assert rows(pq.read_table(out)) == rows(theirs) and theirs.num_rows > 0


def test_deletion_vectors_of_updated_rows(pypaimon_peer: Peer, rust_peer: Peer, peer_python: str, warehouse: str) -> None:
    """``delete_by_predicate`` on a data-evolution table writes the deletion vector of each row-id
    group's anchor file (Java ``DataEvolutionUtils.retrieveAnchorFile``); we drop those rows from
    the merged group, also when the predicate matched updated values."""
    wh = warehouse
    opts = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "deletion-vectors.enabled": "true"}
    pypaimon_peer.create_table(wh, "db.t", SCHEMA, options={**opts, "bucket": "-1"})
    pypaimon_peer.write(wh, "db.t", batch(0))
    pypaimon_peer.write(wh, "db.t", batch(ROWS))
    update(peer_python, wh, {"cols": ["a"], "row_ids": list(range(10, 50)), "values": {"a": [-i for i in range(10, 50)]}})
    sid = pypaimon_peer.delete_where(wh, "db.t", {"op": "<", "field": "a", "value": -40})  # updated values only
    assert sid == 4
    sid = pypaimon_peer.delete_where(wh, "db.t", {"op": "=", "field": "id", "value": 3})
    t = FileSystemCatalog(wh).get_table("db.t")
    assert t.latest_snapshot() is not None and t.latest_snapshot().index_manifest is not None  # type: ignore[union-attr]
    for s in range(1, (sid or 5) + 1):
        check_snapshot(pypaimon_peer, wh, t, s)
    ours = t.to_arrow()
    assert sorted(ours.column("id").to_pylist()) == [i for i in range(2 * ROWS) if i != 3 and not 41 <= i < 50]
    assert rows(rust_peer.read(wh, "db.t")) == rows(ours)


def test_group_stats_prune_on_the_newest_file_of_each_column(
    pypaimon_peer: Peer, peer_python: str, warehouse: str
) -> None:
    """Our writer writes value statistics (pypaimon 2.1.0 writes none on these tables): a filter
    prunes whole row-id groups on the statistics of the newest file of each column (Java
    ``DataEvolutionFileStoreScan.evolutionStats``), never on the stale statistics of a column a
    later file updated (a per-file stats filter would drop the group where ``a`` became 1000+)."""
    wh = warehouse
    opts = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
    pypaimon_peer.create_table(wh, "db.t", SCHEMA, options=opts)
    t = FileSystemCatalog(wh).get_table("db.t")
    t.write_arrow(batch(0))
    t.write_arrow(batch(ROWS))
    update(peer_python, wh, {"cols": ["a"], "row_ids": list(range(5)), "values": {"a": [1000 + i for i in range(5)]}})
    t = FileSystemCatalog(wh).get_table("db.t")
    pb = PredicateBuilder(t.schema.fields)

    def read(pred: Any) -> tuple[int, pa.Table]:
        rb = t.new_read_builder().with_filter(pred)
        splits = rb.plan().splits
        return sum(len(s.files) for s in splits), rb.new_read().to_arrow(splits)

    files, got = read(pb.greater_or_equal("a", 1000))  # base stats of group 0 say a <= 29: stale
    theirs = pypaimon_peer.read(wh, "db.t", filter={"op": ">=", "field": "a", "value": 1000})
    assert files == 2 and rows(got) == rows(theirs) and got.num_rows == 5
    files, got = read(pb.greater_or_equal("id", ROWS))  # id's newest file is the base: group 0 pruned
    assert files == 1 and sorted(got.column("id").to_pylist()) == list(range(ROWS, 2 * ROWS))
    files, got = read(pb.greater_or_equal("a", 2000))  # a's newest file in group 0 has no stats: kept
    assert files == 2 and got.num_rows == 0
