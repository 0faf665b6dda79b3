"""Rewriting append files into compacted ones, against real tables.

Tables are written in several small commits with a column added half way; each
(partition, bucket) is rewritten and the COMPACT commit made. The checks: same rows as before,
output files rolled at the target size with the stats a fresh write of the same rows gets,
Java's sequence numbers, COMPACT file source at level 0, and the old files left on disk.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.append import order_by_sequence, plan_unaware_bucket_compaction, rewrite_append_files
from paimon_core.append.append_compact_coordinator import AppendCompactConfig
from paimon_core.append.append_compact_rewriter import GATHER_ROWS
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import DataFileMeta, FileSource, ManifestEntry
from paimon_core.schema.data_types import VarCharType
from paimon_core.schema.schema_change import AddColumn
from paimon_core.snapshot.snapshot import CommitKind
from paimon_core.table.table import FileStoreTable

COMMITS_BEFORE, COMMITS_AFTER, ROWS = 3, 3, 4000
_ids = itertools.count(1)


def rows(n: int, start: int, *, extra: bool) -> pa.Table:
    ids = list(range(start, start + n))
    cols: dict[str, pa.Array] = {
        "id": pa.array(ids, pa.int64()),
        "dt": pa.array([f"2024-01-0{1 + i % 2}" for i in ids], pa.string()),
        "v": pa.array([None if i % 11 == 0 else i * 0.5 for i in ids], pa.float64()),
        "s": pa.array([None if i % 7 == 0 else f"s{i:08d}-{i % 97}" for i in ids], pa.string()),
    }
    if extra:
        cols["extra"] = pa.array([None if i % 5 == 0 else f"x{i}" for i in ids], pa.string())
    return pa.table(cols)


def build(catalog: FileSystemCatalog, *, bucket: int, partitioned: bool, **options: str) -> FileStoreTable:
    """Several commits, then an added column, then more commits."""
    opts = {"bucket": str(bucket), **options}
    if bucket > 0:
        opts["bucket-key"] = "id"
    t = catalog.create_table(
        "db.t", rows(1, 0, extra=False).schema, partition_keys=["dt"] if partitioned else [], options=opts
    )
    start = 0
    for _ in range(COMMITS_BEFORE):
        t.write_arrow(rows(ROWS, start, extra=False))
        start += ROWS
    t = catalog.alter_table("db.t", [AddColumn("extra", VarCharType(VarCharType.MAX_LENGTH))])
    for _ in range(COMMITS_AFTER):
        t.write_arrow(rows(ROWS, start, extra=True))
        start += ROWS
    return t


def live(t: FileStoreTable) -> list[ManifestEntry]:
    return t.new_file_store_scan().live_entries(t.latest_snapshot())


def by_bucket(t: FileStoreTable) -> dict[tuple[bytes, int], list[DataFileMeta]]:
    groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    for e in live(t):
        groups.setdefault((e.partition, e.bucket), []).append(e.file)
    if t.options.bucket <= 0:  # unaware buckets: every commit's files start at sequence 0
        return groups
    return {k: order_by_sequence(v) for k, v in groups.items()}


def sorted_rows(t: pa.Table) -> pa.Table:
    return t.replace_schema_metadata(None).sort_by([(n, "ascending") for n in t.column_names])


def digest(t: FileStoreTable, partition: bytes, bucket: int, file_name: str) -> str:
    return hashlib.sha256(t.file_io.read_bytes(join(t.bucket_path(partition, bucket), file_name))).hexdigest()


def fresh_write(catalog: FileSystemCatalog, t: FileStoreTable, inputs: Sequence[pa.Table]) -> list[DataFileMeta]:
    """Files a plain write of the same rows, fed in the same pieces, produces (same options)."""
    name = f"db.fresh{next(_ids)}"
    opts = {k: v for k, v in t.schema.options.items() if k not in ("bucket", "bucket-key")}
    fresh = catalog.create_table(name, t.arrow_schema, options=opts)
    fresh = fresh.copy(t.dynamic_options) if t.dynamic_options else fresh
    write = fresh.new_batch_write_builder().new_write()
    for piece in inputs:
        write.write_arrow(piece)
    (message,) = write.prepare_commit()
    write.abort()
    return list(message.new_files)


def as_rewritten(pieces: Sequence[pa.Table]) -> list[pa.Table]:
    """``pieces`` (one per input file) as the rewrite hands them to its writer: consecutive
    pieces gathered until they reach ``GATHER_ROWS`` rows."""
    out: list[pa.Table] = []
    gathered: list[pa.Table] = []
    for piece in pieces:
        gathered.append(piece)
        if sum(g.num_rows for g in gathered) >= GATHER_ROWS:
            out.append(pa.concat_tables(gathered).combine_chunks())
            gathered = []
    return out + ([pa.concat_tables(gathered).combine_chunks()] if gathered else [])


def file_rows(t: FileStoreTable, partition: bytes, bucket: int, files: Sequence[DataFileMeta]) -> list[pa.Table]:
    from paimon_core.io.data_file_reader import DataFileReader

    reader = DataFileReader(t.file_io, t.schema_manager_cached, table_name=t.name)
    path = t.bucket_path(partition, bucket)
    return [pa.Table.from_batches(list(reader.read(path, f, list(t.schema.fields))), schema=t.arrow_schema) for f in files]


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
@pytest.mark.parametrize("bucket", [-1, 2], ids=["unaware", "fixed2"])
def test_rewrite_each_bucket(catalog: FileSystemCatalog, bucket: int, partitioned: bool) -> None:
    t = build(catalog, bucket=bucket, partitioned=partitioned)
    before_rows = sorted_rows(t.to_arrow())
    groups = by_bucket(t)
    # A few input files per output file. (The writer estimates a file's size from the Arrow
    # bytes buffered until its first row group is flushed, so the target is in those terms.)
    pieces = [p for (partition, b), fs in groups.items() for p in file_rows(t, partition, b, fs)]
    target = int(sum(p.nbytes for p in pieces) / len(pieces) * 2.5)
    t = t.copy({"target-file-size": str(target)})
    old = {(p, b, f.file_name): digest(t, p, b, f.file_name) for (p, b), fs in groups.items() for f in fs}
    messages = []
    for (partition, b), files in groups.items():
        assert len(files) >= 3
        expected_pieces = file_rows(t, partition, b, files)
        m = rewrite_append_files(t.store, partition, b, files)
        assert (m.partition, m.bucket, m.total_buckets) == (partition, b, bucket)
        assert m.compact_before == tuple(files) and not m.new_files and not m.compact_deleted_index_files
        after = list(m.compact_after)
        assert 1 < len(after) < len(files)
        # Java's compactRewrite: one sequence number per row from the first input's minimum.
        seq = files[0].min_sequence_number
        for f in after:
            assert (f.min_sequence_number, f.max_sequence_number) == (seq, seq + f.row_count - 1)
            seq += f.row_count
            assert (f.level, f.file_source, f.schema_id) == (0, int(FileSource.COMPACT), t.schema.id)
        assert sum(f.row_count for f in after) == sum(f.row_count for f in files)
        # Stats, row counts and sizes exactly as a fresh write of the same rows in the same order.
        fresh = fresh_write(catalog, t, as_rewritten(expected_pieces))
        assert [(f.row_count, f.value_stats, f.value_stats_cols, f.file_size) for f in after] == [
            (f.row_count, f.value_stats, f.value_stats_cols, f.file_size) for f in fresh
        ]
        messages.append(m)
    result = t.new_file_store_commit("compact-test").commit(messages, 1)
    assert t.latest_snapshot() is not None and t.latest_snapshot().commit_kind == CommitKind.COMPACT  # type: ignore[union-attr]
    assert result.deleted_files == len(old)
    assert sorted_rows(t.to_arrow()).equals(before_rows)
    assert {e.file.file_name for e in live(t)} == {f.file_name for m in messages for f in m.compact_after}
    # The old files are untouched on disk (snapshot expiry deletes them later).
    assert {k: digest(t, *k) for k in old} == old


def test_planned_unaware_tasks_compact_the_table(catalog: FileSystemCatalog) -> None:
    """Plan with the table's options (small files everywhere), rewrite each task, commit."""
    t = build(catalog, bucket=-1, partitioned=True, **{"compaction.min.file-num": "3"})
    before_rows = sorted_rows(t.to_arrow())
    config = AppendCompactConfig.from_options({**t.schema.options})
    by_partition: dict[bytes, list[DataFileMeta]] = {}
    for e in live(t):
        by_partition.setdefault(e.partition, []).append(e.file)
    tasks = plan_unaware_bucket_compaction(
        by_partition,
        target_file_size=config.target_file_size,
        compaction_file_size=config.compaction_file_size,
        open_file_cost=config.open_file_cost,
        min_file_num=config.min_file_num,
    )
    assert sorted(t.partition for t in tasks) == sorted(by_partition)  # one leftover task each
    messages = [rewrite_append_files(t.store, task.partition, 0, task.files) for task in tasks]
    assert all(len(m.compact_after) == 1 for m in messages)  # 256 MB target: one file each
    t.new_file_store_commit("compact-test").commit(messages, 1)
    assert sorted_rows(t.to_arrow()).equals(before_rows)
    assert len(live(t)) == len(by_partition)


def test_failure_deletes_what_was_written(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    t = build(catalog, bucket=-1, partitioned=False)
    ((partition, bucket), files) = next(iter(by_bucket(t).items()))
    t = t.copy({"target-file-size": "1 b"})  # every input file becomes an output file at once
    bucket_dir = t.bucket_path(partition, bucket)
    listing = sorted(s.path for s in t.file_io.list_status(bucket_dir))
    from paimon_core.io import data_file_reader

    real = data_file_reader.DataFileReader.read
    calls = itertools.count()

    def failing(self: data_file_reader.DataFileReader, *args: object, **kw: object):  # type: ignore[no-untyped-def]
        if next(calls) == 3:
            raise OSError("disk on fire")
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(data_file_reader.DataFileReader, "read", failing)
    with pytest.raises(OSError, match="disk on fire"):
        rewrite_append_files(t.store, partition, bucket, files)
    assert sorted(s.path for s in t.file_io.list_status(bucket_dir)) == listing


def test_empty_unit_is_an_empty_message(catalog: FileSystemCatalog) -> None:
    t = build(catalog, bucket=2, partitioned=False)
    m = rewrite_append_files(t.store, b"\x00" * 12, 1, [])
    assert m.is_empty() and m.total_buckets == 2


def test_sequence_numbers_start_at_the_first_input(catalog: FileSystemCatalog) -> None:
    """A unit without the bucket's oldest file: numbering starts at its first file's minimum."""
    t = build(catalog, bucket=2, partitioned=False)
    (partition, bucket), files = next(iter(by_bucket(t).items()))
    unit = files[2:]
    assert unit[0].min_sequence_number > 0
    m = rewrite_append_files(t.store, partition, bucket, unit)
    (after,) = m.compact_after
    assert (after.min_sequence_number, after.max_sequence_number) == (
        unit[0].min_sequence_number,
        unit[0].min_sequence_number + sum(f.row_count for f in unit) - 1,
    )
    before = sorted_rows(t.to_arrow())
    t.new_file_store_commit("compact-test").commit([m], 1)
    assert sorted_rows(t.to_arrow()).equals(before)
    remaining = by_bucket(t)[(partition, bucket)]
    assert remaining == [*files[:2], after]  # still in sequence order, no overlap
