"""Fast paths of primary-key writes: each one changes neither the merge result nor the files.

* ``in_key_order``: the merge-tree writer skips its sort when the buffer is already sorted;
* lone rows: ``KeyedMergeFunction.merge`` passes input with distinct keys through where that
  is provably the engine's result;
* the writer writes the same bytes whichever path produced the rows (``canonical_layout``).

Each fast path is compared with the slow path forced (monkeypatched off) on the same input.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core import FileSystemCatalog
from paimon_core.mergetree import writer as merge_writer
from paimon_core.mergetree.base import KeyedMergeFunction
from paimon_core.mergetree.merge_function import create_merge_function
from paimon_core.mergetree.segments import in_key_order
from paimon_core.schema.data_types import BigIntType, DataField, IntType, VarCharType

STRING = VarCharType(VarCharType.MAX_LENGTH)
ID = DataField(0, "id", BigIntType(nullable=False))
VALUES = [ID, DataField(1, "a", IntType()), DataField(2, "b", IntType()), DataField(3, "s", STRING)]


def _sort_is_identity(t: pa.Table, keys: list[str]) -> bool:
    order = pc.sort_indices(t, sort_keys=[(k, "ascending") for k in keys]).to_numpy()
    return bool(np.array_equal(order, np.arange(t.num_rows)))


# --- in_key_order ---------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 3), st.sampled_from(["", "a", "ab", "b", "\u00e9", "z"])), max_size=12),
    st.booleans(),
)
def test_in_key_order_is_exactly_sorted(rows: list[tuple[int, str]], chunked: bool) -> None:
    t = pa.table({"k": pa.array([r[0] for r in rows], pa.int64()), "s": pa.array([r[1] for r in rows])})
    if chunked and t.num_rows > 2:
        t = pa.concat_tables([t.slice(0, 2), t.slice(2)])
    for keys in (["k"], ["s"], ["k", "s"], ["s", "k"]):
        sorted_ = _sort_is_identity(t, keys)
        assert in_key_order(t, keys) == sorted_
        distinct = len({tuple(r[["k", "s"].index(k)] for k in keys) for r in rows}) == len(rows)
        assert in_key_order(t, keys, strict=True) == (sorted_ and distinct)


@pytest.mark.parametrize(
    "values, expected",
    [
        (pa.array([Decimal("1.10"), Decimal("1.20"), Decimal("1.20")], pa.decimal128(5, 2)), True),
        (pa.array([Decimal("1.30"), Decimal("1.20")], pa.decimal128(5, 2)), False),
        (pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2)]), True),
        (pa.array([dt.datetime(2024, 1, 2), dt.datetime(2024, 1, 1)], pa.timestamp("us")), False),
        (pa.array([b"\x00", b"\xff", b"\xff\x00"]), True),
        (pa.array([False, True, True]), True),
        (pa.array([1.0, 2.0, 3.0]), False),  # floats: never trusted (NaN, -0.0), the sort decides
        (pa.array([1, None, 3], pa.int64()), False),  # nulls: the sort decides
        (pa.array([], pa.int64()), True),
        (pa.array([7], pa.int64()), True),
    ],
)
def test_in_key_order_types(values: pa.Array, expected: bool) -> None:
    assert in_key_order(pa.table({"k": values}), ["k"]) is expected


# --- merge: lone rows -------------------------------------------------------------------------

ENGINES: list[dict[str, str]] = [
    {},
    {"ignore-delete": "true"},
    {"sequence.field": "a"},
    {"merge-engine": "first-row"},
    {"merge-engine": "first-row", "ignore-delete": "true"},
    {"merge-engine": "partial-update"},
    {"merge-engine": "partial-update", "fields.a.sequence-group": "b"},
    {"merge-engine": "aggregation", "fields.b.aggregate-function": "sum"},
]


def _distinct_key_table(rng: np.random.Generator, n: int, *, kinds: list[int]) -> pa.Table:
    ids = np.sort(rng.choice(10 * n + 10, size=n, replace=False)).astype(np.int64)
    a = rng.integers(-5, 5, size=n)
    b = rng.integers(-5, 5, size=n)
    null = rng.random(n) < 0.2
    return pa.table(
        {
            "id": pa.array(ids),
            "a": pa.array(a, pa.int32(), mask=null),
            "b": pa.array(b, pa.int32()),
            "s": pa.array([f"s{i}" for i in ids]),
            "_SEQUENCE_NUMBER": pa.array(np.arange(n, dtype=np.int64) * 3),
            "_VALUE_KIND": pa.array(rng.choice(kinds, size=n), pa.int8()),
        }
    )


@pytest.mark.parametrize("options", ENGINES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "dedup")
@pytest.mark.parametrize("kinds", [[0], [0, 2], [0, 1, 2, 3]], ids=["inserts", "upserts", "all-kinds"])
def test_distinct_keys_merge_like_the_engine(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, str], kinds: list[int]
) -> None:
    mf = create_merge_function([ID], VALUES, options)
    rng = np.random.default_rng(len(options) * 7 + len(kinds))
    for n in (1, 2, 50, 3000):
        data = _distinct_key_table(rng, n, kinds=kinds)
        for drop in (False, True):
            try:
                fast: pa.Table | Exception = mf.merge(data, drop_retracts=drop)
            except Exception as e:  # the same error either way
                fast = e
            with monkeypatch.context() as m:
                m.setattr(KeyedMergeFunction, "lone_rows_pass_through", property(lambda self: False))
                try:
                    slow: pa.Table | Exception = mf.merge(data, drop_retracts=drop)
                except Exception as e:
                    slow = e
            if isinstance(slow, Exception):
                assert type(fast) is type(slow) and str(fast) == str(slow)
                continue
            assert isinstance(fast, pa.Table)
            assert fast.schema == slow.schema
            assert fast.combine_chunks().equals(slow.combine_chunks()), (options, n, drop)


def test_dedup_distinct_inserts_skip_the_engine_without_copying(monkeypatch: pytest.MonkeyPatch) -> None:
    mf = create_merge_function([ID], VALUES, {})
    data = _distinct_key_table(np.random.default_rng(1), 1000, kinds=[0])

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the engine ran")

    monkeypatch.setattr(type(mf), "_merge_runs", boom)
    assert mf.merge(data, drop_retracts=False) is data
    upserts = data.set_column(5, "_VALUE_KIND", pa.array(np.full(1000, 2, np.int8)))
    out = mf.merge(upserts, drop_retracts=False)
    assert out.column("_VALUE_KIND").to_pylist() == [0] * 1000  # +U -> +I, as passed through
    # a duplicated key: the engine runs
    dup = pa.concat_tables([data.slice(0, 2), data.slice(1, 1)])
    dup = dup.set_column(4, "_SEQUENCE_NUMBER", pa.array([0, 1, 2], pa.int64()))
    with pytest.raises(AssertionError, match="the engine ran"):
        mf.merge(dup.sort_by([("id", "ascending"), ("_SEQUENCE_NUMBER", "ascending")]), drop_retracts=False)


def test_lone_rows_pass_through_only_where_proven() -> None:
    proven = {"deduplicate": True, "first-row": True, "partial-update": False, "aggregation": True}
    for engine, expected in proven.items():
        mf = create_merge_function([ID], VALUES, {"merge-engine": engine})
        # aggregation: lone inserts never reach the engine (single_insert_is_identity is False)
        assert mf.lone_rows_pass_through is expected, engine
    grouped = create_merge_function(
        [ID], VALUES, {"merge-engine": "partial-update", "fields.a.sequence-group": "b"}
    )
    assert grouped.lone_rows_pass_through  # groups: lone inserts are passed through already


# --- the writer: same files either way ------------------------------------------------------


def _write(
    warehouse: Path,
    name: str,
    batches: list[pa.Table],
    options: dict[str, str],
    *,
    slow: bool,
    monkeypatch: pytest.MonkeyPatch,
    in_order: bool = True,
) -> tuple[list[Any], dict[str, bytes], pa.Table]:
    catalog = FileSystemCatalog(str(warehouse))
    if "db" not in catalog.list_databases():
        catalog.create_database("db")
    catalog.create_table(f"db.{name}", batches[0].schema, primary_keys=["id"], options=options)
    table = catalog.get_table(f"db.{name}")
    with monkeypatch.context() as m:
        if slow:
            m.setattr(merge_writer, "in_key_order", lambda *a, **k: False)
            m.setattr(KeyedMergeFunction, "lone_rows_pass_through", property(lambda self: False))
        else:
            calls: list[bool] = []

            def spy(*args: Any, **kwargs: Any) -> bool:
                calls.append(in_key_order(*args, **kwargs))
                return calls[-1]

            m.setattr(merge_writer, "in_key_order", spy)
        tw = table.new_batch_write_builder().new_write()
        for b in batches:
            tw.write_arrow(b)
        messages = tw.prepare_commit()
        table.new_batch_write_builder().new_commit().commit(messages)
        if not slow:  # every flushed buffer was checked, with the expected answer (fast path taken)
            assert calls and all(c is in_order for c in calls), calls
    files = sorted((f for m in messages for f in m.new_files), key=lambda f: (f.min_key, f.file_name))
    data_dir = warehouse / "db.db" / name
    contents = {f.file_name: (next(data_dir.rglob(f.file_name))).read_bytes() for f in files}
    return files, contents, table.to_arrow().sort_by("id")


def _comparable(meta: Any) -> dict[str, Any]:
    d = {k: getattr(meta, k) for k in meta.__dataclass_fields__}
    d.pop("file_name")
    d.pop("creation_time")
    return d


def _source(n: int, *, with_bitmaps: bool, dup_every: int = 0) -> list[pa.Table]:
    ids = np.arange(n, dtype=np.int64) * 3
    if dup_every:
        ids = np.sort(np.concatenate([ids, ids[::dup_every]]))
    s = pc.binary_join_element_wise("key-", pc.cast(pa.array(ids), pa.string()), "")
    if with_bitmaps:  # as Spark's Arrow batches: validity buffers although nothing is null
        ones = pa.py_buffer(np.full((len(ids) + 7) // 8, 0xFF, np.uint8).tobytes())
        s = pa.Array.from_buffers(pa.string(), len(ids), [ones, *s.buffers()[1:]])
    t = pa.table({"id": pa.array(ids), "v": pa.array(ids * 0.5), "s": s})
    return [t.slice(i, 7001) for i in range(0, t.num_rows, 7001)]


@pytest.mark.parametrize(
    "case",
    [
        {"with_bitmaps": False},
        {"with_bitmaps": True},
        {"with_bitmaps": True, "dup_every": 5},  # in order with duplicates: no sort, engine merges
        {"with_bitmaps": False, "options": {"target-file-size": "64 kb", "write-buffer-size": "256 kb"}},
        {"with_bitmaps": False, "options": {"parquet.block.size": "32768", "merge-engine": "first-row"}},
    ],
)
def test_fast_and_slow_paths_write_identical_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]
) -> None:
    options = {"bucket": "1", **case.get("options", {})}
    batches = _source(40_000, with_bitmaps=case["with_bitmaps"], dup_every=case.get("dup_every", 0))
    fast = _write(tmp_path, "fast", batches, options, slow=False, monkeypatch=monkeypatch)
    slow = _write(tmp_path, "slow", batches, options, slow=True, monkeypatch=monkeypatch)
    assert len(fast[0]) == len(slow[0]) >= 1
    assert [_comparable(f) for f in fast[0]] == [_comparable(f) for f in slow[0]]
    assert list(fast[1].values()) == list(slow[1].values())  # byte for byte
    assert fast[2].equals(slow[2])
    if options.get("merge-engine") != "first-row":  # first-row: level-0 files are read after compaction
        assert fast[2].num_rows == len(set(pa.concat_tables(batches).column("id").to_pylist()))


@pytest.mark.parametrize("with_nulls", [False, True])
def test_nested_and_decimal_columns_write_identical_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_nulls: bool
) -> None:
    n = 20_000
    ids = list(range(n))
    null = [with_nulls and i % 7 == 3 for i in ids]
    t = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "l": pa.array([None if z else [i, i + 1] for i, z in zip(ids, null, strict=True)]),
            "st": pa.array([None if z else {"a": i, "b": str(i)} for i, z in zip(ids, null, strict=True)]),
            "d": pa.array([Decimal(i) / 100 for i in ids], pa.decimal128(10, 2)),
            "m": pa.array([[(str(i), i)] for i in ids], pa.map_(pa.string(), pa.int64())),
        }
    )
    batches = [t.slice(i, 3001) for i in range(0, n, 3001)]
    options = {"bucket": "1", "parquet.block.size": "65536"}
    fast = _write(tmp_path, "fast", batches, options, slow=False, monkeypatch=monkeypatch)
    slow = _write(tmp_path, "slow", batches, options, slow=True, monkeypatch=monkeypatch)
    assert [_comparable(f) for f in fast[0]] == [_comparable(f) for f in slow[0]]
    assert list(fast[1].values()) == list(slow[1].values())
    assert fast[2].equals(slow[2]) and fast[2].num_rows == n


def test_unsorted_buffer_is_sorted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reversed input takes the sort; the result is the same table as sorted input."""
    batches = _source(5000, with_bitmaps=False)
    reverse = [t.take(pa.array(np.arange(t.num_rows)[::-1])) for t in reversed(batches)]
    _, _, sorted_read = _write(tmp_path, "a", batches, {"bucket": "1"}, slow=False, monkeypatch=monkeypatch)
    _, _, reversed_read = _write(
        tmp_path, "b", reverse, {"bucket": "1"}, slow=False, monkeypatch=monkeypatch, in_order=False
    )
    assert reversed_read.equals(sorted_read)


def test_sequence_field_with_equal_keys_in_order_still_sorts(tmp_path: Path) -> None:
    """With sequence.field, rows of one key arriving in key order are ordered by that field."""
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("v", pa.string())])
    catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1", "sequence.field": "ts"})
    table = catalog.get_table("db.t")
    rows = pa.table({"id": [1, 1, 2, 2], "ts": [5, 3, 1, 9], "v": ["new", "old", "old", "new"]}, schema=schema)
    tw = table.new_batch_write_builder().new_write()
    tw.write_arrow(rows)
    table.new_batch_write_builder().new_commit().commit(tw.prepare_commit())
    assert table.to_arrow().sort_by("id").column("v").to_pylist() == ["new", "new"]

