"""Row-id grouping and column alignment of data-evolution reads (Java ``RangeHelper``,
``DataEvolutionSplitRead.mergeRangesAndSort``, ``DataEvolutionUtils.retrieveAnchorFile``,
``DataEvolutionFileReader``); end to end on pypaimon-written tables in
tests/interop/test_data_evolution_read.py."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core.exceptions import CorruptFileError, UnsupportedTableKindError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.table.data_evolution_read import (
    aligned_slices,
    anchor_file,
    merge_ranges_and_sort,
    row_id_groups,
)


def meta(name: str, first: int | None, rows: int, seq: int, cols: tuple[str, ...] | None = None) -> DataFileMeta:
    f = DataFileMeta.new_level0(
        name, 100, rows, value_stats=None, min_sequence_number=seq, max_sequence_number=seq, schema_id=0
    )
    return f.copy(first_row_id=first, write_cols=cols)


def names(groups: list[list[DataFileMeta]]) -> list[list[str]]:
    return [[f.file_name for f in g] for g in groups]


def test_groups_by_overlapping_range_in_range_order_keeping_input_order() -> None:
    files = [
        meta("u2.parquet", 10, 10, 5, ("a",)),
        meta("base1.parquet", 10, 10, 2),
        meta("base0.parquet", 0, 10, 1),
        meta("u1.parquet", 10, 10, 4, ("b",)),
        meta("base2.parquet", 20, 5, 3),
    ]
    assert names(row_id_groups(files)) == [
        ["base0.parquet"],
        ["u2.parquet", "base1.parquet", "u1.parquet"],  # input order within a group
        ["base2.parquet"],
    ]
    # in a group newest first (max sequence number descending)
    assert names(merge_ranges_and_sort(files))[1] == ["u2.parquet", "u1.parquet", "base1.parquet"]
    assert anchor_file(merge_ranges_and_sort(files)[1]).file_name == "base1.parquet"  # smallest (seq, name)
    assert anchor_file([meta("b.parquet", 0, 1, 1), meta("a.parquet", 0, 1, 1)]).file_name == "a.parquet"


def test_bad_groups_are_refused() -> None:
    with pytest.raises(CorruptFileError, match="same row-id range"):
        merge_ranges_and_sort([meta("a.parquet", 0, 10, 1), meta("b.parquet", 5, 10, 2, ("x",))])
    with pytest.raises(UnsupportedTableKindError, match="no first_row_id"):
        merge_ranges_and_sort([meta("a.parquet", None, 10, 1)])
    with pytest.raises(UnsupportedTableKindError, match="blob"):
        merge_ranges_and_sort([meta("a.parquet", 0, 10, 1), meta("b.blob", 0, 10, 2, ("x",))])


def _batches(sizes: list[int], start: int = 0) -> list[pa.RecordBatch]:
    out, at = [], start
    for n in sizes:
        out.append(pa.record_batch([pa.array(range(at, at + n))], names=["v"]))
        at += n
    return out


def test_sources_are_slicedaligned_slices() -> None:
    group = [meta("a.parquet", 0, 10, 2), meta("b.parquet", 0, 10, 1)]
    steps = list(aligned_slices([iter(_batches([3, 4, 3])), iter(_batches([0, 5, 5]))], 10, 4, group))
    assert [m for _, m in steps] == [3, 2, 2, 3]
    for chunk, m in steps:
        assert chunk[0].column(0).to_pylist() == chunk[1].column(0).to_pylist() and len(chunk[0]) == m
    assert [m for _, m in aligned_slices([], 10, 4, group)] == [4, 4, 2]  # no file read: positions only
    with pytest.raises(CorruptFileError, match="do not all hold its 10 rows"):
        list(aligned_slices([iter(_batches([3, 4, 3])), iter(_batches([5, 4]))], 10, 4, group))
    with pytest.raises(CorruptFileError, match="do not all hold its 10 rows"):
        list(aligned_slices([iter(_batches([3, 4])), iter(_batches([3, 4]))], 10, 4, group))


def test_not_null_column_no_file_holds_is_refused(tmp_path: object) -> None:
    """Java ``createUnionReader``: "Field ... is not null but can't find any file contains it"."""
    import pyarrow.parquet as pq

    from paimon_core import FileSystemCatalog
    from paimon_core.exceptions import SchemaMismatchError
    from paimon_core.table.data_evolution_read import DataEvolutionSplitRead
    from paimon_core.table.source import DataSplit

    cat = FileSystemCatalog(str(tmp_path))
    cat.create_database("db", ignore_if_exists=True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("a", pa.int64())])
    cat.create_table("db.t", schema, options={"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"})
    t = cat.get_table("db.t")
    bucket = t.bucket_path(t.partition_codec.encode([]), 0)
    t.file_io.mkdirs(bucket)
    pq.write_table(pa.table({"a": [1, 2]}), f"{bucket}/data-a.parquet")
    only_a = meta("data-a.parquet", 0, 2, 2, ("a",))
    split = DataSplit(1, t.partition_codec.encode([]), 0, bucket, (only_a,), False)
    reader = DataEvolutionSplitRead(t)
    assert reader.read(split, [t.schema.fields[1]]).__next__().column(0).to_pylist() == [1, 2]
    with pytest.raises(SchemaMismatchError, match="Field id \\(BIGINT NOT NULL\\) is not null"):
        list(reader.read(split, [t.schema.fields[0]]))
