"""``TableWrite.write_arrow(buckets=)`` (buckets computed by the caller, e.g. Spark's routing) and
the batch splitting of :mod:`paimon_core.table.write_split`.

Given buckets are used instead of hashing again and must change nothing that is written; bad
ones are refused before any file is written. The splitting must give the groups (and their
order) of the Arrow ``group_by`` it replaces on the fast paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.bucket import compute_buckets
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.schema.data_types import BigIntType
from paimon_core.table import table_write as tw_module
from paimon_core.table.table import FileStoreTable
from paimon_core.table.write_split import RowGroup, split_rows

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])


def _table(tmp_path: Path, name: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    if "db" not in catalog.list_databases():
        catalog.create_database("db")
    partition = options.pop("partition", None)
    catalog.create_table(
        f"db.{name}",
        SCHEMA,
        primary_keys=["id", "dt"] if partition else ["id"],
        partition_keys=[partition] if partition else [],
        options={"bucket": "4", **options},
    )
    return catalog.get_table(f"db.{name}")


def _rows(n: int, start: int = 0) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table(
        {"id": ids, "dt": pa.array([f"2024-01-0{1 + i % 3}" for i in ids]), "v": ids * 0.5}, schema=SCHEMA
    )


def _buckets(t: pa.Table, n: int = 4) -> pa.Array:
    return pa.array(compute_buckets([t.column("id")], [BigIntType(nullable=False)], n), pa.int32())


def _files(table: FileStoreTable, tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "wh").rglob("*.parquet") if f"/{table.name.split('.')[-1]}/" in str(p))


def _commit(table: FileStoreTable, batches: list[tuple[pa.Table, pa.Array | None]], **kw: Any) -> list[Any]:
    tw = table.new_batch_write_builder().new_write()
    for data, buckets in batches:
        if buckets is None:
            tw.write_arrow(data, **kw)
        else:
            tw.write_arrow(data, buckets=buckets, **kw)
    messages = tw.prepare_commit()
    table.new_batch_write_builder().new_commit().commit(messages)
    return messages


def _summary(messages: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (m.partition, m.bucket, [(f.row_count, f.file_size, f.min_key, f.max_key, f.key_stats, f.value_stats)
                                 for f in m.new_files])
        for m in messages
    ]


@pytest.mark.parametrize("partition", [None, "dt"])
def test_given_buckets_write_what_hashing_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, partition: str | None
) -> None:
    extra = {"partition": partition} if partition else {}
    hashed, given = _table(tmp_path, "hashed", **extra), _table(tmp_path, "given", **extra)
    # one batch of a single bucket (a routed task), one mixing every bucket
    single = _rows(20_000).filter(pa.array(_buckets(_rows(20_000)).to_numpy() == 2))
    mixed = _rows(5_000, start=50_000)
    expected = _summary(_commit(hashed, [(single, None), (mixed, None)]))

    def no_hashing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("hashed again")

    with monkeypatch.context() as m:
        m.setattr(tw_module, "compute_buckets", no_hashing)
        got = _summary(_commit(given, [(single, _buckets(single)), (mixed, _buckets(mixed))]))
    assert got == expected
    assert given.to_arrow().sort_by("id").equals(hashed.to_arrow().sort_by("id"))
    for f in _files(given, tmp_path):  # every row in its bucket directory
        bucket = int(f.parent.name.split("-")[1])
        ids = pq.read_table(f, columns=["id"]).column("id")
        assert set(compute_buckets([ids], [BigIntType(nullable=False)], 4).tolist()) == {bucket}


def test_given_buckets_follow_ignore_delete_filtering(tmp_path: Path) -> None:
    table = _table(tmp_path, "t", **{"ignore-delete": "true"})
    data = _rows(1000)
    kinds = pa.array(np.where(np.arange(1000) % 3 == 0, 3, 0), pa.int8())  # every third row a -D: dropped
    _commit(table, [(data, _buckets(data))], row_kinds=kinds)
    assert table.to_arrow().sort_by("id").column("id").to_pylist() == [i for i in range(1000) if i % 3]
    for f in _files(table, tmp_path):
        ids = pq.read_table(f, columns=["id"]).column("id")
        assert set(compute_buckets([ids], [BigIntType(nullable=False)], 4).tolist()) == {
            int(f.parent.name.split("-")[1])
        }


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda t: _buckets(t).cast(pa.int64()), "must be int32"),
        (lambda t: pa.array([0] * (t.num_rows - 1), pa.int32()), "values for"),
        (lambda t: pa.array([None] + [0] * (t.num_rows - 1), pa.int32()), "null"),
        (lambda t: pa.array(np.full(t.num_rows, 4), pa.int32()), r"in \[0, 4\)"),
        (lambda t: pa.array(np.full(t.num_rows, -1), pa.int32()), r"in \[0, 4\)"),
        (lambda t: _buckets(t, 3), "disagree with the table's bucket function"),  # another bucket count
        (lambda t: [0] * t.num_rows, "Arrow int32 array"),
    ],
)
def test_bad_buckets_are_refused_before_writing(tmp_path: Path, bad: Any, message: str) -> None:
    table = _table(tmp_path, "t")
    data = _rows(100)
    tw = table.new_batch_write_builder().new_write()
    with pytest.raises(InvalidArgumentError, match=message):
        tw.write_arrow(data, buckets=bad(data))
    assert tw.prepare_commit() == []
    assert _files(table, tmp_path) == []


def test_buckets_need_fixed_buckets_and_one_table(tmp_path: Path) -> None:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    catalog.create_table("db.append", SCHEMA)  # bucket -1
    data = _rows(10)
    with pytest.raises(InvalidArgumentError, match="no fixed buckets"):
        catalog.get_table("db.append").new_batch_write_builder().new_write().write_arrow(
            data, buckets=pa.array([0] * 10, pa.int32())
        )
    table = _table(tmp_path, "pk")
    with pytest.raises(InvalidArgumentError, match="single Table or RecordBatch"):
        table.new_batch_write_builder().new_write().write_arrow(iter(data.to_batches()), buckets=_buckets(data))


# --- split_rows ---------------------------------------------------------------------------------


def _reference(table: pa.Table, keys: list[str], buckets: np.ndarray | None) -> list[list[int]]:
    """The Arrow group_by split the fast paths replace: groups by first row, rows in order."""
    work = table.select(keys)
    names = list(keys)
    if buckets is not None:
        work = work.append_column("__b", pa.array(buckets, pa.int32()))
        names.append("__b")
    work = work.append_column("__i", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    groups = work.group_by(names, use_threads=False).aggregate([("__i", "list")])
    return [g.values.to_pylist() for g in groups.column("__i_list").chunks[0]] if groups.num_rows else []


def _rows_of(groups: list[RowGroup], n: int) -> list[list[int]]:
    out = []
    for g in groups:
        rows = list(range(n)) if g.rows is None else g.rows.to_pylist()
        assert rows[0] == g.first
        out.append(rows)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_split_rows_equals_group_by(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    t = pa.table(
        {
            "p": pa.array([("a", "b", None)[i] for i in rng.integers(0, 3, size=n)]),
            "q": pa.array(rng.integers(0, 2, size=n), pa.int32()),
            "f": pa.array(rng.choice([0.0, -0.0, 1.5], size=n)),
        }
    )
    buckets = rng.integers(0, int(rng.integers(1, 5)), size=n).astype(np.int32)
    for keys in ([], ["p"], ["q"], ["p", "q"], ["f"]):
        for b in (None, buckets):
            if not keys and b is None:
                continue
            assert _rows_of(split_rows(t, keys, b), n) == _reference(t, keys, b), (keys, b is None)


def test_split_rows_single_group_is_whole_batch() -> None:
    t = pa.table({"p": ["x"] * 5, "n": pa.array([None] * 5, pa.string())})
    assert split_rows(t, ["p", "n"], np.full(5, 3, np.int32)) == [RowGroup(0, None)]
    assert split_rows(t, [], np.full(5, 1, np.int32)) == [RowGroup(0, None)]
    # a float partition value is never trusted as constant (-0.0 and 0.0 hash apart): grouped
    f = pa.table({"f": [0.0, -0.0]})
    assert _rows_of(split_rows(f, ["f"], None), 2) == _reference(f, ["f"], None)
