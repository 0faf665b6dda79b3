"""merge_sorted_runs: the streaming k-way merge equals concatenating, sorting and merging in one go.

Random sorted runs with overlapping keys (repeated keys inside a run too), random batch sizes
down to one row, empty runs and empty batches, every key type a primary key may have,
multi-column keys and every merge engine; plus a memory bound on a large merge.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_function import create_merge_function
from paimon_core.mergetree.merge_reader import merge_sorted_runs
from paimon_core.mergetree.writer import sort_keys_for
from paimon_core.schema.data_types import (
    BigIntType,
    BooleanType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    IntType,
    TimestampType,
    VarBinaryType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)

#: key type -> a small pool of values (ascending), so that runs overlap a lot
KEY_POOLS: dict[str, tuple[DataType, list[Any]]] = {
    "bigint": (BigIntType(nullable=False), [-(2**40), -1, 0, 1, 7, 2**40]),
    "string": (STRING.copy(nullable=False), ["", "a", "ab", "b", "\u00e9", "z\x00", "\U0001f600"]),
    "bytes": (
        VarBinaryType(VarBinaryType.MAX_LENGTH, nullable=False),
        [b"", b"\x00", b"\x00\x01", b"a", b"\xff"],
    ),
    "decimal": (
        DecimalType(10, 2, nullable=False),
        [Decimal("-1.50"), Decimal("0.00"), Decimal("0.01"), Decimal("99.99")],
    ),
    "date": (DateType(nullable=False), [dt.date(1970, 1, 1), dt.date(2000, 2, 29), dt.date(2024, 12, 31)]),
    "timestamp": (
        TimestampType(6, nullable=False),
        [dt.datetime(1969, 12, 31, 23, 59), dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 0, 1)],
    ),
    "bool": (BooleanType(nullable=False), [False, True]),
    "double": (DoubleType(nullable=False), [-1.5, 0.0, 2.25, float("inf")]),
}

ENGINES: list[dict[str, str]] = [
    {},
    {"ignore-delete": "true"},
    {"sequence.field": "a"},
    {"sequence.field": "a", "sequence.field.sort-order": "descending"},
    {"merge-engine": "first-row"},
    {"merge-engine": "first-row", "ignore-delete": "true"},
    {"merge-engine": "partial-update"},
    {"merge-engine": "partial-update", "fields.a.sequence-group": "b"},
    {"merge-engine": "aggregation", "fields.b.aggregate-function": "sum"},
    {
        "merge-engine": "aggregation",
        "fields.b.aggregate-function": "max",
        "fields.a.aggregate-function": "last_non_null_value",
    },
]


def _setup(
    key_types: Sequence[str], options: dict[str, str]
) -> tuple[list[DataField], list[DataField], Any, list[Any]]:
    keys = [DataField(i, f"k{i}", KEY_POOLS[t][0]) for i, t in enumerate(key_types)]
    n = len(keys)
    values = [*keys, DataField(n, "a", IntType()), DataField(n + 1, "b", BigIntType())]
    mf = create_merge_function(keys, values, options)
    seq_fields = [x for x in options.get("sequence.field", "").split(",") if x]
    descending = options.get("sequence.field.sort-order") == "descending"
    sort_keys = sort_keys_for([k.name for k in keys], seq_fields, sequence_descending=descending)
    return keys, values, mf, sort_keys


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    key_types = draw(st.lists(st.sampled_from(sorted(KEY_POOLS)), min_size=1, max_size=3))
    n_runs = draw(st.integers(1, 5))
    n_rows = draw(st.integers(0, 60))
    rows = []
    for seq in draw(st.permutations(range(n_rows))):
        key = tuple(draw(st.integers(0, len(KEY_POOLS[t][1]) - 1)) for t in key_types)
        rows.append(
            {
                "key": key,
                "run": draw(st.integers(0, n_runs - 1)),
                "seq": seq,
                "kind": draw(st.sampled_from([0, 0, 0, 2, 1, 3])),
                "a": draw(st.one_of(st.none(), st.integers(-3, 3))),
                "b": draw(st.one_of(st.none(), st.integers(-100, 100))),
            }
        )
    cuts = draw(st.lists(st.integers(0, 8), min_size=n_runs, max_size=n_runs))
    return {
        "key_types": key_types,
        "n_runs": n_runs,
        "rows": rows,
        "batch": draw(st.sampled_from([1, 2, 3, 7, 100])),
        "cuts": cuts,
        "engine": draw(st.integers(0, len(ENGINES) - 1)),
        "batch_rows": draw(st.sampled_from([1, 2, 5, 64])),
    }


def _run_tables(
    s: dict[str, Any], keys: list[DataField], values: list[DataField], sort_keys: list[Any]
) -> list[pa.Table]:
    schema = pa.schema(
        [pa.field(f.name, to_arrow_type(f.type)) for f in values]
        + [pa.field("_SEQUENCE_NUMBER", pa.int64()), pa.field("_VALUE_KIND", pa.int8())]
    )
    tables = []
    for r in range(s["n_runs"]):
        rows = [x for x in s["rows"] if x["run"] == r]
        cols: dict[str, list[Any]] = {f.name: [] for f in values}
        for x in rows:
            for i, (k, t) in enumerate(zip(keys, s["key_types"], strict=True)):
                cols[k.name].append(KEY_POOLS[t][1][x["key"][i]])
            cols["a"].append(x["a"])
            cols["b"].append(x["b"])
        arrays = [pa.array(cols[f.name], schema.field(f.name).type) for f in values]
        arrays.append(pa.array([x["seq"] for x in rows], pa.int64()))
        arrays.append(pa.array([x["kind"] for x in rows], pa.int8()))
        t = pa.Table.from_arrays(arrays, schema=schema)
        tables.append(t.take(pc.sort_indices(t, sort_keys=sort_keys)))  # a run is sorted
    return tables


def _batches(t: pa.Table, size: int, cut: int) -> Iterator[pa.RecordBatch]:
    """``t`` in batches of ``size`` rows, with an empty batch and an extra cut thrown in."""
    yield pa.RecordBatch.from_pylist([], schema=t.schema)
    start = 0
    while start < t.num_rows:
        n = size if start or not cut else min(cut, size)
        yield from t.slice(start, n).to_batches()
        start += n


def _reference(tables: list[pa.Table], mf: Any, sort_keys: list[Any], drop: bool) -> pa.Table:
    data = pa.concat_tables(tables)
    data = data.take(pc.sort_indices(data, sort_keys=sort_keys))
    out: pa.Table = mf.merge(data, drop_retracts=drop)
    return out


SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(s=scenarios(), drop=st.booleans())
@example(
    s={
        "key_types": ["bigint"],
        "n_runs": 2,
        "batch": 1,
        "cuts": [0, 0],
        "engine": 0,
        "batch_rows": 1,
        "rows": [
            {"key": (1,), "run": r, "seq": q, "kind": 0, "a": q, "b": q}
            for q, r in enumerate([0, 0, 0, 1, 1, 0])
        ],
    },
    drop=True,
)
def test_streaming_merge_equals_in_memory_merge(s: dict[str, Any], drop: bool) -> None:
    options = ENGINES[s["engine"]]
    keys, values, mf, sort_keys = _setup(s["key_types"], options)
    tables = _run_tables(s, keys, values, sort_keys)
    try:
        expected: pa.Table | None = _reference(tables, mf, sort_keys, drop)
    except MergeError:
        expected = None
    runs = [_batches(t, s["batch"], c) for t, c in zip(tables, s["cuts"], strict=True)]
    stream = merge_sorted_runs(
        runs,
        key_names=[k.name for k in keys],
        sort_keys=sort_keys,
        merge_function=mf,
        drop_retracts=drop,
        batch_rows=s["batch_rows"],
    )
    if expected is None:
        with pytest.raises(MergeError):
            list(stream)
        return
    parts = list(stream)
    assert all(p.num_rows for p in parts)
    got = pa.concat_tables(parts).combine_chunks() if parts else expected.schema.empty_table()
    assert got.schema == expected.schema
    assert got.to_pylist() == expected.combine_chunks().to_pylist()


@pytest.mark.parametrize("key_types", [["bigint"], ["string", "bigint"], ["bool", "date", "bytes"]])
def test_keys_split_across_batches_and_runs(key_types: list[str]) -> None:
    """Long runs of one key spanning many 1-row batches in every run, merged exactly once."""
    keys, values, mf, sort_keys = _setup(
        key_types, {"merge-engine": "aggregation", "fields.b.aggregate-function": "sum"}
    )
    rng = np.random.default_rng(7)
    rows = []
    for seq in rng.permutation(300):
        key = tuple(int(rng.integers(0, 2)) for _ in key_types)
        rows.append({"key": key, "run": int(rng.integers(0, 3)), "seq": int(seq), "kind": 0, "a": 1, "b": 1})
    s = {"key_types": key_types, "n_runs": 3, "rows": rows}
    tables = _run_tables(s, keys, values, sort_keys)
    expected = _reference(tables, mf, sort_keys, True)
    calls: list[int] = []

    class Counting:
        def merge(self, data: pa.Table, *, drop_retracts: bool = True) -> pa.Table:
            calls.append(data.num_rows)
            out: pa.Table = mf.merge(data, drop_retracts=drop_retracts)
            return out

    out = list(
        merge_sorted_runs(
            [_batches(t, 1, 0) for t in tables],
            key_names=[k.name for k in keys],
            sort_keys=sort_keys,
            merge_function=Counting(),
            drop_retracts=True,
            batch_rows=4,
        )
    )
    got = pa.concat_tables(out)
    assert got.to_pylist() == expected.to_pylist()
    assert sum(calls) == 300  # every row merged once
    assert got.column("b").to_pylist() == expected.column("b").to_pylist()


def test_no_runs_and_empty_runs() -> None:
    keys, values, mf, sort_keys = _setup(["bigint"], {})
    kw: dict[str, Any] = {
        "key_names": ["k0"],
        "sort_keys": sort_keys,
        "merge_function": mf,
        "drop_retracts": True,
    }
    assert list(merge_sorted_runs([], **kw)) == []
    assert list(merge_sorted_runs([iter([]), iter([])], **kw)) == []


# --- memory --------------------------------------------------------------------------------

RUNS, ROWS_PER_RUN, BATCH = 8, 2_000_000, 65536
#: Peak Arrow allocation allowed while merging RUNS x ROWS_PER_RUN rows (~400 MB in all).
PEAK_BOUND = 96 * 1024 * 1024


def _lazy_run(r: int) -> Iterator[pa.RecordBatch]:
    """Run ``r``: every key 0..ROWS_PER_RUN-1 once (all runs overlap fully), built batch by batch."""
    for start in range(0, ROWS_PER_RUN, BATCH):
        n = min(BATCH, ROWS_PER_RUN - start)
        keys = np.arange(start, start + n, dtype=np.int64)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(keys),
                pa.array(keys * 2 + r, pa.int64()),
                pa.array(keys * RUNS + r, pa.int64()),
                pa.array(np.zeros(n, np.int8)),
            ],
            names=["k", "v", "_SEQUENCE_NUMBER", "_VALUE_KIND"],
        )


def test_memory_is_bounded_by_runs_times_batch_rows() -> None:
    key = DataField(0, "k", BigIntType(nullable=False))
    mf = create_merge_function([key], [key, DataField(1, "v", BigIntType())], {})
    baseline = pa.total_allocated_bytes()
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, pa.total_allocated_bytes() - baseline)
            time.sleep(0.0005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rows = 0
    last_key = -1
    try:
        for out in merge_sorted_runs(
            [_lazy_run(r) for r in range(RUNS)],
            key_names=["k"],
            sort_keys=sort_keys_for(["k"], []),
            merge_function=mf,
            drop_retracts=True,
            batch_rows=BATCH,
        ):
            peak = max(peak, pa.total_allocated_bytes() - baseline)
            k = out.column("k").to_numpy()
            assert k[0] > last_key and (np.diff(k) > 0).all()
            assert (out.column("v").to_numpy() == k * 2 + RUNS - 1).all()  # the newest run wins
            last_key = int(k[-1])
            rows += out.num_rows
            del out, k
    finally:
        stop.set()
        sampler.join()
    assert rows == ROWS_PER_RUN
    total = RUNS * ROWS_PER_RUN * (8 + 8 + 8 + 1)
    print(f"peak Arrow memory {peak / 2**20:.1f} MiB for {total / 2**20:.0f} MiB of input")
    assert peak < PEAK_BOUND, peak


# --- TableRead on the streaming merge ----------------------------------------------------------


@pytest.mark.parametrize("key_type", [pa.string(), pa.float64()], ids=["string-key", "double-key"])
def test_table_read_streams_many_commits_like_the_model(tmp_path: Any, key_type: pa.DataType) -> None:
    """A primary-key bucket after many overlapping commits (upserts and deletes) reads as the
    model says, in several merged chunks of at most ``batch_size`` rows (a streaming merge)."""
    from paimon_core import FileSystemCatalog
    from paimon_core.table.table_read import TableRead

    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([("k", key_type), ("id", pa.int64()), ("v", pa.int64()), ("op", pa.string())])
    table = catalog.create_table(
        "db.t", schema, primary_keys=["k", "id"], options={"bucket": "1", "rowkind.field": "op", "write-only": "true"}  # keep 8 level-0 runs
    )
    rng = np.random.default_rng(11)
    pool = ["a", "b", "c"] if pa.types.is_string(key_type) else [-1.5, 0.0, 2.5]
    model: dict[tuple[Any, int], int] = {}
    for commit in range(8):
        n = 400
        ks = [pool[i] for i in rng.integers(0, 3, n)]
        ids = rng.integers(0, 300, n)
        ops = rng.choice(["+I", "+U", "-D"], size=n, p=[0.5, 0.3, 0.2])
        for j in range(n):
            key = (ks[j], int(ids[j]))
            if ops[j] == "-D":
                model.pop(key, None)
            else:
                model[key] = commit * 1000 + j
        table.write_arrow(
            pa.table(
                {
                    "k": pa.array(ks, key_type),
                    "id": pa.array(ids, pa.int64()),
                    "v": pa.array(commit * 1000 + np.arange(n), pa.int64()),
                    "op": pa.array(ops),
                }
            )
        )
    splits = table.new_read_builder().new_scan().plan().splits
    assert len(splits) == 1 and len(splits[0].files) == 8 and not splits[0].raw_convertible
    batches = list(TableRead(table, batch_size=50).to_batches(splits))
    assert len(batches) > 10 and all(b.num_rows <= 50 for b in batches)
    got = pa.Table.from_batches(batches)
    pairs = list(zip(got.column("k").to_pylist(), got.column("id").to_pylist(), strict=True))
    assert pairs == sorted(model)  # key order, each key once
    assert dict(zip(pairs, got.column("v").to_pylist(), strict=True)) == model
    assert table.to_arrow().num_rows == len(model)
