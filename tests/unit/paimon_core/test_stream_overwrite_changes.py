"""Streaming reads of a primary-key overwrite with ``streaming-read-overwrite``: the changes
between the bucket's rows before and after (Java's ``readChanges`` + ``IncrementalDiffSplitRead``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table_read import TableRead

SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("n", pa.list_(pa.int32())),
    ]
)


def _rows(dt: str, kv: dict[int, str | None]) -> pa.Table:
    return pa.table(
        {"dt": [dt] * len(kv), "k": list(kv), "v": list(kv.values()), "n": [[k] for k in kv]}, schema=SCHEMA
    )


def _catalog(path: Path) -> FileSystemCatalog:
    c = FileSystemCatalog(str(path))
    c.create_database("db")
    return c


def _changes(t, snapshot_id: int, *, row_kind: bool = True) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    scan = StreamTableScan(t, options={"streaming-read-overwrite": "true"})
    units = scan.plan_delta(t.snapshot_manager.snapshot(snapshot_id))
    assert units is not None
    got = TableRead(t, row_kind=row_kind).to_arrow(units)
    cols = ["_ROW_KIND", "dt", "k", "v"] if row_kind else ["dt", "k", "v"]
    return sorted(zip(*(got[c].to_pylist() for c in cols), strict=True))


def test_overwrite_of_a_partition_streams_deletes_updates_and_inserts(tmp_path: Path) -> None:
    t = _catalog(tmp_path).create_table(
        "db.t", SCHEMA, primary_keys=["dt", "k"], partition_keys=["dt"], options={"bucket": "2"}
    )
    t.write_arrow(_rows("a", {1: "x", 2: "y", 3: "z", 4: "w", 5: None}))
    t.write_arrow(_rows("a", {4: "w2"}))  # a second file in a bucket: 'before' is merged
    t.write_arrow(_rows("b", {1: "keep", 2: "keep"}))
    t.write_arrow(_rows("a", {3: "z2", 4: "w2", 5: None, 6: "new", 7: None}), overwrite={"dt": "a"})
    assert _changes(t, 4) == sorted(
        [
            ("-D", "a", 1, "x"),
            ("-D", "a", 2, "y"),
            ("-U", "a", 3, "z"),
            ("+U", "a", 3, "z2"),
            ("+I", "a", 6, "new"),
            ("+I", "a", 7, None),
        ]
    )  # 4 and 5 unchanged (5's NULL equals NULL); partition b untouched
    # without row kinds: the rows the overwrite brought, not the retractions
    assert _changes(t, 4, row_kind=False) == sorted([("a", 3, "z2"), ("a", 6, "new"), ("a", 7, None)])

    # a dynamic partition overwrite with one key left: the bucket(s) without new files are
    # all -D ('after' is empty), partition b is not touched
    t.write_arrow(_rows("a", {3: "z2"}), overwrite=True)
    assert _changes(t, 5) == sorted([("-D", "a", 4, "w2"), ("-D", "a", 5, None), ("-D", "a", 6, "new"), ("-D", "a", 7, None)])
    assert {u.bucket for u in StreamTableScan(t, options={"streaming-read-overwrite": "true"}).plan_delta(
        t.snapshot_manager.snapshot(5)) or []} == {0, 1}


def test_without_the_option_an_overwrite_streams_nothing(tmp_path: Path) -> None:
    t = _catalog(tmp_path).create_table("db.t", SCHEMA, primary_keys=["dt", "k"], options={"bucket": "1"})
    t.write_arrow(_rows("a", {1: "x"}))
    t.write_arrow(_rows("a", {1: "y"}), overwrite=True)
    assert StreamTableScan(t).plan_delta(t.snapshot_manager.snapshot(2)) is None


def test_a_change_inside_a_nested_value_is_an_update(tmp_path: Path) -> None:
    schema = pa.schema(
        [
            pa.field("k", pa.int64(), nullable=False),
            ("n", pa.list_(pa.int32())),
            ("s", pa.struct([("a", pa.int32()), ("m", pa.map_(pa.string(), pa.int64()))])),
        ]
    )
    t = _catalog(tmp_path).create_table("db.n", schema, primary_keys=["k"], options={"bucket": "1"})
    same_s = {"a": 1, "m": [("x", 1)]}
    t.write_arrow(pa.table({"k": [1, 2, 3, 4], "n": [[1, 2], [1, 2], None, []],
                            "s": [same_s, same_s, same_s, {"a": 1, "m": [("x", 1)]}]}, schema=schema))
    t.write_arrow(pa.table({"k": [1, 2, 3, 4], "n": [[1, 2], [1, 3], None, []],
                            "s": [same_s, same_s, None, {"a": 1, "m": [("x", 2)]}]}, schema=schema), overwrite=True)
    units = StreamTableScan(t, options={"streaming-read-overwrite": "true"}).plan_delta(t.snapshot_manager.snapshot(2))
    got = TableRead(t, row_kind=True).to_arrow(units or [])
    # 1 unchanged; 2: list element; 3: struct became NULL; 4: a map value inside the struct
    assert list(zip(got["_ROW_KIND"].to_pylist(), got["k"].to_pylist(), strict=True)) == [
        ("-U", 2), ("+U", 2), ("-U", 3), ("+U", 3), ("-U", 4), ("+U", 4)
    ]
