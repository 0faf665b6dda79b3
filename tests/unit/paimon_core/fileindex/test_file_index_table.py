"""Data-file indexes on real tables: written with each data file (embedded or ``.index``), used
by reads to skip files (counted) with the same rows as a read without them, rebuilt by
``rewrite_file_index`` in one COMPACT snapshot, and bad ``file-index.*`` options refused with the
table unchanged. Expiry and orphan clean keep the index files live snapshots name."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.io.data_file_reader import DataFileReader
from paimon_core.predicate import Predicate
from paimon_core.predicate.builder import PredicateBuilder
from paimon_core.schema.schema_change import DropColumn, RemoveOption, RenameColumn, SetOption
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("dt", pa.string()), ("v", pa.float64())])
FILES = 6
ROWS = 50


def _data(i: int) -> pa.Table:
    """File i holds ids i, i+6, i+12 ...: every file spans the whole id range, so min/max stats
    can never skip one; only an index can."""
    ids = list(range(i, FILES * ROWS, FILES))
    return pa.table(
        {"id": ids, "s": [f"s-{x}" for x in ids], "dt": ["a" if i % 2 else "b"] * len(ids), "v": [x / 7 for x in ids]},
        schema=SCHEMA,
    )


def _table(wh: Path, options: dict[str, str], *, pk: bool = False, files: int = FILES) -> FileStoreTable:
    catalog = FileSystemCatalog(str(wh))
    catalog.create_database("db", ignore_if_exists=True)
    t = catalog.create_table(
        "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"] if pk else (),
        options={"bucket": "1" if pk else "-1", **options},
    )  # fmt: skip
    for i in range(files):
        t.write_arrow(_data(i))
    return catalog.get_table("db.t")


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def files_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The data files reads open (every table read goes through DataFileReader.read)."""
    seen: list[str] = []
    original = DataFileReader.read

    def spy(self: DataFileReader, bucket_path: str, f: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(f.file_name)
        return original(self, bucket_path, f, *args, **kwargs)

    monkeypatch.setattr(DataFileReader, "read", spy)
    yield seen


def _rows(t: FileStoreTable, predicate: Predicate | None = None) -> list[tuple[Any, ...]]:
    table = t.to_arrow(predicate=predicate)
    return sorted(tuple(r.values()) for r in table.to_pylist())


def _entries(t: FileStoreTable) -> list[Any]:
    return t.new_file_store_scan().live_entries(t.latest_snapshot())


def _predicates(t: FileStoreTable) -> list[Predicate]:
    pb = PredicateBuilder(t.schema.fields)
    return [
        pb.equal("id", 13),
        pb.equal("s", "s-200"),
        pb.is_in("id", [1, 8]),
        PredicateBuilder.and_(pb.equal("id", 13), pb.greater_than("v", 0.0)),
        pb.equal("s", "s-15x"),  # within every file's min/max: no row, only an index can tell
    ]


@pytest.mark.parametrize(
    ("options", "where"),
    [
        ({"file-index.bloom-filter.columns": "id,s"}, "extra"),  # ~600 KB per file: an index file
        (
            {"file-index.bloom-filter.columns": "id,s", "file-index.bloom-filter.id.items": "100",
             "file-index.bloom-filter.s.items": "100"},
            "embedded",
        ),  # fmt: skip
        ({"file-index.bitmap.columns": "id,s", "file-index.bloom-filter.columns": "s"}, "extra"),
        ({"file-index.bitmap.columns": "id,s", "file-index.in-manifest-threshold": "100 kb"}, "embedded"),
    ],
)
def test_reads_skip_files_by_index_with_the_same_rows(
    tmp_path: Path, files_read: list[str], options: dict[str, str], where: str
) -> None:
    t = _table(tmp_path, options)
    entries = _entries(t)
    assert len(entries) == FILES
    for e in entries:
        if where == "extra":
            assert e.file.embedded_index is None and e.file.extra_files == (e.file.file_name + ".index",)
            assert (tmp_path / "db.db/t" / t.partition_path(e.partition) / "bucket-0" / e.file.extra_files[0]).stat().st_size > 500
        else:
            assert e.file.extra_files == () and 0 < len(e.file.embedded_index or b"")
    plain = t.copy({"file-index.read.enabled": "false"})
    for p in _predicates(t):
        files_read.clear()
        expected = _rows(plain, p)
        without = len(files_read)
        files_read.clear()
        assert _rows(t, p) == expected, p
        matching_files = len({x % FILES for x, *_ in expected})
        assert without == FILES  # min/max stats skip nothing here
        # bitmaps and a 1M-item filter of 50 values have no false positive; a 100-item filter may
        slack = int("file-index.bloom-filter.id.items" in options)
        assert matching_files <= len(files_read) <= matching_files + slack, (p, files_read)
    files_read.clear()
    assert len(_rows(t)) == FILES * ROWS and len(files_read) == FILES


def test_primary_key_tables_index_their_values(tmp_path: Path, files_read: list[str]) -> None:
    t = _table(tmp_path, {"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "100"}, pk=True)
    assert all(e.file.embedded_index for e in _entries(t))
    pb = PredicateBuilder(t.schema.fields)
    plain = t.copy({"file-index.read.enabled": "false"})
    for p in (pb.equal("s", "s-200"), pb.equal("s", "nope")):
        assert _rows(t, p) == _rows(plain, p)
    t.maintenance.compact(compact_strategy="full")
    t = FileSystemCatalog(str(tmp_path)).get_table("db.t")
    compacted = _entries(t)
    assert all(e.file.level > 0 and e.file.embedded_index for e in compacted)  # compaction output is indexed too
    files_read.clear()
    assert _rows(t, pb.equal("s", "s-200")) == [(200, "s-200", "b", 200 / 7)]
    assert len(files_read) <= len(compacted)


def test_bad_file_index_options_are_refused_at_create_alter_and_rewrite(tmp_path: Path) -> None:
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    for options, needle in (
        ({"file-index.zmap.columns": "id"}, "unknown file index type 'zmap'"),
        ({"file-index.bloom-filter.columns": "nope"}, "Column 'nope' specified in 'file-index.bloom-filter.columns'"),
        ({"file-index.bloom-filter.columns": "id,,s"}, "should not have empty column"),
        ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.s.items": "5"}, "column 's' is not declared"),
        ({"file-index.bloom-filter.columns": "v", "file-index.bitmap.columns": "b"}, "Column 'b' specified"),
    ):
        with pytest.raises(InvalidOptionError, match=needle.replace("(", r"\(")):
            catalog.create_table("db.bad", SCHEMA, options=options)
        assert not (tmp_path / "db.db" / "bad").exists()
    flags = pa.schema([("id", pa.int64()), ("flag", pa.bool_()), ("d", pa.decimal128(10, 2))])
    with pytest.raises(InvalidOptionError, match="'flag' with type 'BOOLEAN' is not supported by 'bloom-filter'"):
        catalog.create_table("db.bad", flags, options={"file-index.bloom-filter.columns": "flag"})
    catalog.create_table("db.ok", flags, options={"file-index.bsi.columns": "d", "file-index.bitmap.columns": "flag"})
    with pytest.raises(InvalidOptionError, match="not supported by 'bitmap'"):
        catalog.create_table("db.bad", pa.schema([("b", pa.binary())]), options={"file-index.bitmap.columns": "b"})
    t = _table(tmp_path, {"file-index.bloom-filter.columns": "id"}, files=2)
    root = tmp_path / "db.db" / "t"
    before = _digest(root)
    with pytest.raises(InvalidOptionError, match="Column 'nope'"):
        catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id,nope")])
    with pytest.raises(InvalidOptionError):
        catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id,v"), DropColumn("v")])
    assert _digest(root) == before
    # options another engine (or a hand-edited schema) left behind: refused by the rewrite, nothing changed
    for dynamic, needle in (
        ({"file-index.zmap.columns": "id"}, "unknown file index type 'zmap'"),
        ({"file-index.bloom-filter.columns": "missing"}, "Column 'missing'"),
    ):
        with pytest.raises(InvalidOptionError, match=needle):
            t.copy(dynamic).maintenance.rewrite_file_index()
        assert _digest(root) == before
    for dynamic in ({"file-index.bsi.columns": "id"}, {"file-index.range-bitmap.columns": "id"}):
        with pytest.raises(InvalidArgumentError, match="not supported by paimon_core.*nothing was changed"):
            t.copy(dynamic).maintenance.rewrite_file_index()
        assert _digest(root) == before
    with pytest.raises(InvalidArgumentError, match="not partition keys"):
        t.maintenance.rewrite_file_index("id=1")
    assert _digest(root) == before


def test_rewrite_file_index_adds_changes_and_drops_indexes(tmp_path: Path, files_read: list[str]) -> None:
    t = _table(tmp_path, {})
    catalog = FileSystemCatalog(str(tmp_path))
    assert all(not e.file.embedded_index and not e.file.extra_files for e in _entries(t))
    noop = t.maintenance.rewrite_file_index()
    assert noop.rewritten_files == 0 and noop.snapshot_id is None and noop.files == FILES
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id"), SetOption("file-index.bloom-filter.id.items", "100")])
    t = catalog.get_table("db.t")
    before_rows = _rows(t)
    latest = t.latest_snapshot()
    assert latest is not None
    one = t.maintenance.rewrite_file_index("dt=a")
    assert (one.rewritten_files, one.written_partitions, one.embedded_indexes) == (FILES // 2, 1, FILES // 2)
    snap = t.latest_snapshot()
    assert snap is not None and snap.id == latest.id + 1 and snap.commit_kind.name == "COMPACT"
    assert snap.total_record_count == latest.total_record_count
    rest = t.maintenance.rewrite_file_index()
    assert rest.rewritten_files == FILES // 2 and rest.written_partitions == 1  # dt=a is done already
    assert t.maintenance.rewrite_file_index().rewritten_files == 0
    entries = _entries(t)
    assert all(e.file.embedded_index for e in entries)
    seqs = {e.file.file_name: (e.file.min_sequence_number, e.file.max_sequence_number, e.file.row_count) for e in entries}
    assert _rows(t) == before_rows
    files_read.clear()
    pb = PredicateBuilder(t.schema.fields)
    assert _rows(t, pb.equal("id", 13)) == [r for r in before_rows if r[0] == 13] and len(files_read) == 1
    # a bigger index: into index files; a renamed column: old files keep their index under the old name
    with pytest.raises(InvalidOptionError, match="Column 'id'"):  # as Java: the option still names 'id'
        catalog.alter_table("db.t", [RenameColumn("id", "key")])
    catalog.alter_table(
        "db.t",
        [RemoveOption("file-index.bloom-filter.id.items"), RenameColumn("id", "key"),
         SetOption("file-index.bloom-filter.columns", "key")],
    )  # fmt: skip
    t = catalog.get_table("db.t")
    moved = t.maintenance.rewrite_file_index()
    assert moved.rewritten_files == FILES and moved.index_files_written == FILES
    entries = _entries(t)
    assert all(e.file.extra_files == (e.file.file_name + ".index",) and e.file.embedded_index is None for e in entries)
    assert {e.file.file_name: (e.file.min_sequence_number, e.file.max_sequence_number, e.file.row_count) for e in entries} == seqs
    files_read.clear()
    pb = PredicateBuilder(t.schema.fields)
    assert [r[0] for r in _rows(t, pb.equal("key", 13))] == [13] and len(files_read) == 1
    # an index file is never overwritten: the next rewrite of a changed index takes the next name
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "key,s")])
    t = catalog.get_table("db.t")
    assert t.maintenance.rewrite_file_index().index_files_written == FILES
    assert all(e.file.extra_files == (e.file.file_name + "-1.index",) for e in _entries(t))
    # no index configured: dropped
    catalog.alter_table("db.t", [RemoveOption("file-index.bloom-filter.columns")])
    t = catalog.get_table("db.t")
    dropped = t.maintenance.rewrite_file_index()
    assert dropped.dropped_indexes == FILES
    assert all(not e.file.extra_files and e.file.embedded_index is None for e in _entries(t))
    assert [r[1:] for r in _rows(t)] == [r[1:] for r in before_rows]


def test_expiry_and_orphan_clean_keep_the_live_index_files(tmp_path: Path) -> None:
    t = _table(tmp_path, {"file-index.bloom-filter.columns": "id"}, files=3)
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.alter_table("db.t", [SetOption("file-index.bloom-filter.columns", "id,s")])
    t = catalog.get_table("db.t")
    t.maintenance.rewrite_file_index()
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1)
    old = time.time() - 3 * 86400
    for p in tmp_path.rglob("*"):
        os.utime(p, (old, old))
    t = catalog.get_table("db.t")
    t.maintenance.remove_orphan_files(dry_run=False)
    t = catalog.get_table("db.t")
    for e in _entries(t):
        bucket = tmp_path / "db.db/t" / t.partition_path(e.partition) / "bucket-0"
        assert (bucket / e.file.file_name).exists() and all((bucket / x).exists() for x in e.file.extra_files)
    pb = PredicateBuilder(t.schema.fields)
    assert len(_rows(t)) == 3 * ROWS and [r[0] for r in _rows(t, pb.equal("s", "s-13"))] == [13]


def test_a_failed_write_leaves_no_index_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(tmp_path, {"file-index.bloom-filter.columns": "id"}, files=1)
    before = _digest(tmp_path / "db.db" / "t")
    from paimon_core.operation.commit.committer import FileStoreCommit

    def boom(*_: Any, **__: Any) -> Any:
        raise RuntimeError("commit failed")

    monkeypatch.setattr(FileStoreCommit, "commit", boom)
    with pytest.raises(RuntimeError):
        t.write_arrow(_data(3))
    assert _digest(tmp_path / "db.db" / "t") == before


def test_spark_native_writes_fall_back_to_the_indexing_writer(tmp_path: Path) -> None:
    """Spark's own Parquet writer cannot write file indexes: tables with any go through ours."""
    from spark_jobs.datasource.native_write import native_write_problem

    plain = _table(tmp_path, {}, files=0)
    assert native_write_problem(plain) is None
    indexed = plain.copy({"file-index.bloom-filter.columns": "id"})
    assert "file-index" in (native_write_problem(indexed) or "")


def test_map_keys_get_their_own_index(tmp_path: Path) -> None:
    """``m[k]`` indexes the value under key k of a MAP column (null where the map lacks it), stored
    under the name ``m[k]`` (Java's MapFileIndexMaintainer); a key no row has gets an index of nulls."""
    from paimon_core.fileindex.file_index_format import FileIndexFormatReader

    schema = pa.schema([("id", pa.int64()), ("m", pa.map_(pa.string(), pa.int32()))])
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    t = catalog.create_table(
        "db.m", schema,
        options={"bucket": "-1", "file-index.bloom-filter.columns": "m[a],m[zz]", "file-index.bloom-filter.m.items": "64"},
    )  # fmt: skip
    t.write_arrow(pa.table({"id": [1, 2, 3], "m": [[("a", 10), ("b", 2)], None, [("b", 5)]]}, schema=schema))
    (entry,) = _entries(catalog.get_table("db.m"))
    assert entry.file.embedded_index is not None
    reader = FileIndexFormatReader(entry.file.embedded_index)
    assert sorted(c for c, *_ in reader.metas()) == ["m[a]", "m[zz]"]
    from paimon_core.schema.data_types import IntType

    (bloom,) = reader.column_readers("m[a]", IntType())
    assert bloom.visit("equal", [10]).remain() and not bloom.visit("equal", [5]).remain()
    assert len(t.to_arrow()) == 3


def test_rewrite_file_index_dry_run_reports_the_run_and_writes_nothing(tmp_path: Path) -> None:
    """A dry run reads and computes as the run does: the same counts (files, partitions, embedded
    indexes, index files), and not one byte of the table changes (no index file, no snapshot)."""
    t = _table(tmp_path, {})
    catalog = FileSystemCatalog(str(tmp_path))
    root = tmp_path / "db.db" / "t"

    def counts(r: Any) -> tuple[int, ...]:
        return (r.files, r.rewritten_files, r.written_partitions, r.embedded_indexes, r.index_files_written, r.dropped_indexes)

    for options, partitions in (
        ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.items": "100"}, "dt=a"),  # in the manifest
        ({"file-index.bloom-filter.columns": "id,s"}, None),  # bigger than the threshold: .index files
        ({}, None),  # nothing configured: dropped
    ):
        current = catalog.get_table("db.t").schema.options
        changes: list[Any] = [SetOption(k, v) for k, v in options.items()]
        changes += [RemoveOption(k) for k in current if k.startswith("file-index.") and k not in options]
        catalog.alter_table("db.t", changes)
        t = catalog.get_table("db.t")
        before = _digest(root)
        dry = t.maintenance.rewrite_file_index(partitions, dry_run=True)
        assert _digest(root) == before and dry.dry_run and dry.snapshot_id is None and "dry run" in dry.note
        real = t.maintenance.rewrite_file_index(partitions)
        assert not real.dry_run and real.snapshot_id is not None and real.rewritten_files > 0
        assert counts(dry) == counts(real), (options, dry, real)
    # a dry run with nothing to rewrite says so
    again = catalog.get_table("db.t").maintenance.rewrite_file_index(dry_run=True)
    assert again.rewritten_files == 0 and "nothing to rewrite" in again.note
