"""One handle, one meaning of its options (issue 26): the read, the write and the compaction of a
``table.copy({...})`` handle merge with the same options.

The merge function, the key and the sort order inside a bucket come from the handle's
:class:`~paimon_core.store.KeyValueFileStore`, built once from the schema options plus the dynamic
options. Before, the read built its merge function from the schema options alone, so a dynamic
``ignore-delete``, ``fields.<f>.aggregate-function`` or ``sequence.field.sort-order`` applied to
the write and the compaction but not to the read: the handle read one thing and its compaction
wrote another. Each case reads unmerged level-0 files through the handle, compacts them through
the handle (every merge-tree rewriter: plain, ``full-compaction`` changelog, ``lookup``) and checks
that what the compaction wrote is what the handle read; the write through the handle merges or
drops rows the same way. ``sequence.field`` itself cannot diverge: a dynamic value other than the
schema's is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidOptionError
from paimon_core.operation.compact.compact_planner import CompactPlanner, CompactRequest
from paimon_core.operation.compact.compact_task import run_compact_task
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.store import KeyValueFileStore
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_commit import TableCommit

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.int64()), ("v", pa.int64())])
#: the merge-tree rewriters: plain, full-compaction changelog, lookup
PRODUCERS = ["none", "full-compaction", "lookup"]


def _table(catalog: FileSystemCatalog, producer: str, **options: str) -> FileStoreTable:
    # write-only: writers leave every commit as level-0 files, so the read merges them itself
    opts = {"bucket": "1", "write-only": "true", "changelog-producer": producer, **options}
    return catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options=opts)


def _write(t: FileStoreTable, rows: Sequence[tuple[int, int, int]], *, deletes: Sequence[int] = ()) -> None:
    """One commit through ``t`` (the handle's own write): upserts, then deletes by key."""
    b = t.new_batch_write_builder()
    w = b.new_write()
    if rows:
        ids, ts, v = zip(*rows, strict=True)
        w.write_arrow(pa.table({"id": list(ids), "ts": list(ts), "v": list(v)}, schema=SCHEMA))
    if deletes:
        w.delete_arrow(pa.table({"id": pa.array(list(deletes), pa.int64())}))
    b.new_commit().commit(w.prepare_commit())


def _rows(t: FileStoreTable) -> dict[int, tuple[int | None, int | None]]:
    out = t.to_arrow().to_pylist()
    return {r["id"]: (r["ts"], r["v"]) for r in out}


def _compact(handle: FileStoreTable) -> None:
    """A full compaction by ``handle``: planned and rewritten by its store, one COMPACT commit."""
    store = handle.store
    plan = CompactPlanner(store, clock=store.clock).plan(CompactRequest(strategy="full"))
    assert plan.tasks
    messages = [run_compact_task(store, task) for task in plan.tasks]
    result = TableCommit(handle, "compactor").commit(messages, 1)
    assert result.commit_kind == CommitKind.COMPACT


def _check_read_equals_compaction(t: FileStoreTable, dynamic: Mapping[str, str], expected: dict[int, tuple[int | None, int | None]]) -> None:
    handle = t.copy(dict(dynamic))
    assert isinstance(handle.store, KeyValueFileStore)
    before = _rows(handle)
    assert before == expected  # the read merges with the dynamic option
    _compact(handle)
    entries = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert entries and all(e.file.level > 0 for e in entries)  # one merged run, nothing left to merge on read
    assert _rows(t) == expected  # the compaction wrote what the handle read
    assert _rows(handle) == expected


@pytest.mark.parametrize("producer", PRODUCERS)
def test_dynamic_ignore_delete(catalog: FileSystemCatalog, producer: str) -> None:
    t = _table(catalog, producer)
    _write(t, [(1, 1, 10), (2, 1, 20), (3, 1, 30)])
    _write(t, [], deletes=[1])  # a -D row, written by a handle without ignore-delete
    assert _rows(t) == {2: (1, 20), 3: (1, 30)}
    handle = t.copy({"ignore-delete": "true"})
    _write(handle, [], deletes=[2])  # the handle's write drops -D rows: nothing is written
    assert t.latest_snapshot().id == 2
    _check_read_equals_compaction(t, {"ignore-delete": "true"}, {1: (1, 10), 2: (1, 20), 3: (1, 30)})


@pytest.mark.parametrize("producer", ["none", "full-compaction"])  # lookup: not for the aggregation engine
def test_dynamic_aggregate_function(catalog: FileSystemCatalog, producer: str) -> None:
    t = _table(catalog, producer, **{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"})
    for v in (1, 5, 3):
        _write(t, [(1, 0, v)])
    assert _rows(t) == {1: (0, 9)}
    handle = t.copy({"fields.v.aggregate-function": "max"})
    _write(handle, [(2, 0, 4), (2, 0, 7)])  # one write: its buffer merges the two rows with max
    assert _rows(t)[2] == (0, 7)
    _check_read_equals_compaction(t, {"fields.v.aggregate-function": "max"}, {1: (0, 5), 2: (0, 7)})


@pytest.mark.parametrize("producer", PRODUCERS)
def test_dynamic_sequence_sort_order(catalog: FileSystemCatalog, producer: str) -> None:
    t = _table(catalog, producer, **{"sequence.field": "ts"})
    _write(t, [(1, 1, 10)])
    _write(t, [(1, 2, 20)])
    assert _rows(t) == {1: (2, 20)}  # ascending: the larger sequence field wins
    handle = t.copy({"sequence.field.sort-order": "descending"})
    _write(handle, [(2, 1, 10), (2, 2, 20)])  # one write: its buffer keeps the smaller one
    assert _rows(t)[2] == (1, 10)
    _check_read_equals_compaction(t, {"sequence.field.sort-order": "descending"}, {1: (1, 10), 2: (1, 10)})


def test_sequence_field_cannot_diverge(catalog: FileSystemCatalog) -> None:
    """``sequence.field`` decides the order of the files already written: a handle may repeat the
    schema's value but not give another one (its read and compaction would disagree with the data)."""
    t = _table(catalog, "none", **{"sequence.field": "ts"})
    _write(t, [(1, 2, 20)])
    _write(t, [(1, 1, 10)])
    with pytest.raises(InvalidOptionError, match="sequence.field"):
        t.copy({"sequence.field": "v"})
    same = t.copy({"sequence.field": "ts"})
    store = same.store
    assert isinstance(store, KeyValueFileStore) and store.sequence_fields == ["ts"]
    _check_read_equals_compaction(t, {"sequence.field": "ts"}, {1: (2, 20)})


def test_one_store_per_handle_serves_read_write_and_compaction(catalog: FileSystemCatalog) -> None:
    """The write and the rewriters of a handle take the key, merge function and order from that
    handle's store (nothing re-parses the options on the way); the read's merge is checked by
    the cases above."""
    from paimon_core.mergetree.compact.merge_tree_compact_rewriter import MergeTreeCompactRewriter

    t = _table(catalog, "none", **{"sequence.field": "ts"})
    handle = t.copy({"ignore-delete": "true", "sequence.field.sort-order": "descending"})
    store = handle.store
    assert isinstance(store, KeyValueFileStore)
    write = handle.new_batch_write_builder().new_write()
    rewriter = MergeTreeCompactRewriter(store, b"", 0)
    try:
        assert write.key_fields == store.key_fields == rewriter.key_fields
        assert write.sequence_fields == store.sequence_fields == ["ts"]
        assert write.sequence_descending and store.sequence_descending
        assert rewriter.sort_keys == store.sort_keys
        for merge in (write.merge_function, rewriter.merge_function):
            assert type(merge) is type(store.new_merge_function()) and merge.ignore_delete  # type: ignore[attr-defined]
    finally:
        write.close()
