"""Deletion vectors: the DV index file format, and reads that drop deleted rows.

The bitmaps here are built by hand, byte by byte, following the portable RoaringBitmap spec
(array, bitmap and run containers; both cookies) and Java's ``BitmapDeletionVector`` /
``Bitmap64DeletionVector`` layouts, then cross-checked with ``pyroaring``'s own serializer.
Files written by the peers are parsed in tests/interop/test_interop_deletion_vectors.py.
"""

from __future__ import annotations

import itertools
import pickle
import struct
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_core import FileSystemCatalog
from paimon_core.deletionvectors import (
    BITMAP32_MAGIC,
    BITMAP64_MAGIC,
    DeletionFile,
    DeletionVector,
    deletion_files_by_bucket,
    deserialize_deletion_vector,
    read_all_deletion_vectors,
    read_deletion_vector,
)
from paimon_core.exceptions import CorruptFileError, InvalidArgumentError
from paimon_core.format.file_format import read_file
from paimon_core.io.file_io import join
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest import (
    EMPTY_ROW_BYTES,
    DataFileMeta,
    DeletionVectorMeta,
    FileKind,
    IndexFileMeta,
    IndexManifestEntry,
    ManifestEntry,
)
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.source import DataSplit
from paimon_core.table.table import FileStoreTable

IO = LocalFileIO()

# --- an independent encoder of the portable RoaringBitmap format --------------------------------

SERIAL_COOKIE_NO_RUNCONTAINER = 12346
SERIAL_COOKIE = 12347
NO_OFFSET_THRESHOLD = 4


def _runs(lows: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for v in lows:
        if runs and runs[-1][0] + runs[-1][1] + 1 == v:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((v, 0))  # (start, length - 1)
    return runs


def _container(kind: str, lows: Sequence[int]) -> bytes:
    if kind == "array":
        return struct.pack(f"<{len(lows)}H", *lows)
    if kind == "bitmap":
        bits = bytearray(8192)
        for v in lows:
            bits[v >> 3] |= 1 << (v & 7)
        return bytes(bits)
    runs = _runs(lows)
    return struct.pack("<H", len(runs)) + b"".join(struct.pack("<HH", s, n) for s, n in runs)


def portable_roaring(values: Iterable[int], kinds: dict[int, str] | None = None) -> bytes:
    """Serialize 32-bit ``values``; ``kinds`` picks a container kind per high-16-bit key
    (default: array up to 4096 values, else bitmap, as CRoaring does without run optimization)."""
    by_key: dict[int, list[int]] = {}
    for v in sorted(set(values)):
        by_key.setdefault(v >> 16, []).append(v & 0xFFFF)
    keys = sorted(by_key)
    kinds = {k: (kinds or {}).get(k, "array" if len(by_key[k]) <= 4096 else "bitmap") for k in keys}
    bodies = [_container(kinds[k], by_key[k]) for k in keys]
    has_run = "run" in kinds.values()
    n = len(keys)
    if has_run:
        flags = bytearray((n + 7) // 8)
        for i, k in enumerate(keys):
            if kinds[k] == "run":
                flags[i // 8] |= 1 << (i % 8)
        header = struct.pack("<I", SERIAL_COOKIE | ((n - 1) << 16)) + bytes(flags)
    else:
        header = struct.pack("<II", SERIAL_COOKIE_NO_RUNCONTAINER, n)
    header += b"".join(struct.pack("<HH", k, len(by_key[k]) - 1) for k in keys)
    if not has_run or n >= NO_OFFSET_THRESHOLD:
        offset = len(header) + 4 * n
        for body in bodies:
            header += struct.pack("<I", offset)
            offset += len(body)
    return header + b"".join(bodies)


def dv32(bitmap: bytes) -> bytes:
    """Java ``BitmapDeletionVector.serializeTo``: BE length, BE magic + bitmap, BE CRC-32."""
    data = struct.pack(">I", BITMAP32_MAGIC) + bitmap
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def dv64(values: Iterable[int]) -> bytes:
    """Java ``Bitmap64DeletionVector.serializeTo``: BE length, LE magic, LE bitmap count, then
    per high-32-bit key (empty ones included up to the highest) a LE key and a portable bitmap."""
    by_key: dict[int, list[int]] = {}
    for v in values:
        by_key.setdefault(v >> 32, []).append(v & 0xFFFFFFFF)
    count = max(by_key) + 1 if by_key else 0
    body = struct.pack("<q", count)
    for key in range(count):
        body += struct.pack("<i", key) + portable_roaring(by_key.get(key, []))
    data = struct.pack("<I", BITMAP64_MAGIC) + body
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def index_file(blobs: Sequence[bytes]) -> tuple[bytes, list[tuple[int, int]]]:
    """A DV index file (version byte 1 + blobs) and each blob's (offset, manifest length)."""
    out = bytearray(b"\x01")
    ranges = []
    for blob in blobs:
        (length,) = struct.unpack_from(">i", blob)
        is64 = struct.unpack_from("<I", blob, 4)[0] == BITMAP64_MAGIC
        ranges.append((len(out), len(blob) if is64 else length))
        out += blob
    return bytes(out), ranges


def _positions(blob: bytes, **kw: object) -> list[int]:
    return deserialize_deletion_vector(blob, **kw).deleted_positions().tolist()  # type: ignore[arg-type]


# --- the portable format, checked against pyroaring and by hand ------------------------------------

BITMAP_VALUES = list(range(0, 10000, 2))  # 5000 values in one key: a bitmap container
ARRAY_VALUES = [1, 4, 100, 65535, 65536, 1 << 20, (1 << 31) - 1]


@pytest.mark.parametrize("values", [[], [1, 4], ARRAY_VALUES, BITMAP_VALUES, BITMAP_VALUES + ARRAY_VALUES[3:]])
def test_hand_built_bitmap_matches_pyroaring(values: list[int]) -> None:
    assert portable_roaring(values) == BitMap(values, optimize=False).serialize()
    assert _positions(dv32(portable_roaring(values))) == sorted(set(values))


def test_doc_example_positions_1_4() -> None:
    # paimon-format.md 1.6: a 33-byte file, range f1=1 f2=24, positions {1, 4}.
    data, ranges = index_file([dv32(portable_roaring([1, 4]))])
    assert len(data) == 33 and ranges == [(1, 24)]
    assert data[5:9] == bytes.fromhex("5e43f2d0") and data[9:13] == bytes.fromhex("3a300000")


@pytest.mark.parametrize(
    "kinds",
    [
        {0: "run"},
        {0: "run", 1: "array"},
        {0: "run", 1: "array", 2: "bitmap", 3: "run", 4: "array"},  # >= 4 containers: offset header
        {0: "array", 1: "array", 2: "bitmap", 3: "run", 4: "run"},
    ],
)
def test_run_containers(kinds: dict[int, str]) -> None:
    # A reader tells array from bitmap containers by cardinality (<= 4096: array), so only
    # the run kind is a free choice; the run flags in the header mark those.
    values = list(range(3000)) + [4000, 4001, 65000]  # key 0
    values += [65536 + 7, 65536 + 9]  # key 1
    values += [2 * 65536 + i for i in range(0, 20000, 3)]  # key 2
    values += [3 * 65536 + i for i in range(100, 65536)]  # key 3: one long run
    values += [4 * 65536 + 5]  # key 4
    keys = set(kinds)
    values = [v for v in values if v >> 16 in keys]
    blob = portable_roaring(values, kinds)
    assert BitMap.deserialize(blob) == BitMap(values)
    assert _positions(dv32(blob)) == sorted(values)
    # What Java writes (runOptimize before serialize) decodes the same.
    optimized = BitMap(values)
    optimized.run_optimize()
    assert _positions(dv32(optimized.serialize())) == sorted(values)


def test_bitmap64_variant() -> None:
    values = [0, 3, 70000, (1 << 32) + 1, (3 << 32) + 5]  # key 2 is an empty bitmap, as Java writes it
    blob = dv64(values)
    assert blob[4:8] == bytes.fromhex("d1d33964")  # 1681511377 little-endian
    dv = deserialize_deletion_vector(blob, range_length=len(blob))
    assert dv.bitmap64 and dv.deleted_positions().tolist() == values
    with pytest.raises(CorruptFileError, match="length"):
        deserialize_deletion_vector(blob, path="f64", range_length=len(blob) - 8)  # the 32-bit rule


def test_rust_written_files() -> None:
    # Written by pypaimon-rust 0.4.0 (SQL DELETE on a data-evolution table): {1, 3}, then {1, 2, 3}.
    for hexed, expected in [
        ("01000000185e43f2d03a30000001000000000001001000000001000300da2d59d3", [1, 3]),
        ("010000001a5e43f2d03a3000000100000000000200100000000100020003001d745108", [1, 2, 3]),
    ]:
        blob = bytes.fromhex(hexed)
        assert _positions(blob[1:], range_length=len(blob) - 9) == expected
        assert blob[5:] == dv32(portable_roaring(expected))[4:]


# --- DeletionVector ------------------------------------------------------------------------------


def test_deletion_vector_api() -> None:
    dv = DeletionVector.of([9, 2, 2, 5, 100])
    assert dv.cardinality == 4 and not dv.is_empty()
    pos = dv.deleted_positions()
    assert pos.dtype == np.int64 and pos.tolist() == [2, 5, 9, 100] and not pos.flags.writeable
    assert dv.is_deleted(5) and not dv.is_deleted(6)
    assert dv.deleted_mask(10).nonzero()[0].tolist() == [2, 5, 9]
    assert dv.deleted_mask(4, start=4).tolist() == [False, True, False, False]
    assert dv.deleted_mask(0, start=3).tolist() == []
    assert DeletionVector.of(range(5)).deletes_all(5) and not DeletionVector.of(range(5)).deletes_all(6)
    assert not DeletionVector.of([0, 1, 7]).deletes_all(3)
    assert dv == DeletionVector.of([2, 5, 9, 100]) and DeletionVector.of([]).is_empty()
    with pytest.raises(ValueError):
        DeletionVector.of([-1])


# --- index files: reading and corruption -------------------------------------------------------------


def _write_index(tmp_path: Path, blobs: Sequence[bytes]) -> tuple[str, list[DeletionVectorMeta]]:
    data, ranges = index_file(blobs)
    path = tmp_path / "index-test-0"
    path.write_bytes(data)
    metas = []
    for i, ((off, length), blob) in enumerate(zip(ranges, blobs, strict=True)):
        card = deserialize_deletion_vector(blob).cardinality
        metas.append(DeletionVectorMeta(f"data-{i}.parquet", off, length, card))
    return str(path), metas


def test_read_index_file(tmp_path: Path) -> None:
    sets = [[1, 4], BITMAP_VALUES, [0, 1 << 33]]
    path, metas = _write_index(tmp_path, [dv32(portable_roaring(sets[0])), dv32(portable_roaring(sets[1])), dv64(sets[2])])
    every = read_all_deletion_vectors(IO, path, metas)
    for meta, expected in zip(metas, sets, strict=True):
        assert every[meta.data_file_name].deleted_positions().tolist() == expected
        one = read_deletion_vector(IO, DeletionFile(path, meta.offset, meta.length, meta.cardinality))
        assert one == every[meta.data_file_name]


def _corrupt(data: bytearray, where: str, offset: int) -> None:
    if where == "crc":
        data[-1] ^= 0xFF
    elif where == "bitmap":
        data[offset + 12] ^= 0x01  # a byte inside the roaring bitmap: caught by the CRC
    elif where == "magic":
        data[offset + 4] ^= 0xFF
    elif where == "version":
        data[0] = 2


@pytest.mark.parametrize("where", ["crc", "bitmap", "magic", "version"])
def test_corruption_raises_corrupt_file_error_naming_the_file(tmp_path: Path, where: str) -> None:
    path, metas = _write_index(tmp_path, [dv32(portable_roaring([1, 4, 9]))])
    data = bytearray(Path(path).read_bytes())
    _corrupt(data, where, metas[0].offset)
    Path(path).write_bytes(bytes(data))
    m = metas[0]
    with pytest.raises(CorruptFileError, match=path) as err:
        read_deletion_vector(IO, DeletionFile(path, m.offset, m.length, m.cardinality))
    assert err.value.path == path  # type: ignore[attr-defined]
    with pytest.raises(CorruptFileError, match=path):
        read_all_deletion_vectors(IO, path, metas)


def test_crc_mismatch_message() -> None:
    blob = bytearray(dv32(portable_roaring([3])))
    blob[-2] ^= 0x10
    with pytest.raises(CorruptFileError, match="CRC mismatch"):
        deserialize_deletion_vector(bytes(blob), path="x")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"length": 99}, "does not match the index manifest"),
        ({"cardinality": 7}, "index manifest says 7"),
        ({"offset": 5000}, "ends before|outside"),
    ],
)
def test_manifest_range_mismatch(tmp_path: Path, change: dict[str, int], match: str) -> None:
    path, metas = _write_index(tmp_path, [dv32(portable_roaring([1, 4, 9]))])
    m = metas[0]
    offset, length = change.get("offset", m.offset), change.get("length", m.length)
    cardinality = change.get("cardinality", m.cardinality)
    with pytest.raises(CorruptFileError, match=match):
        read_deletion_vector(IO, DeletionFile(path, offset, length, cardinality))
    bad = DeletionVectorMeta(m.data_file_name, offset, length, cardinality)
    with pytest.raises(CorruptFileError, match=path):
        read_all_deletion_vectors(IO, path, [bad])


def test_truncated_and_garbage_blobs() -> None:
    good = dv32(portable_roaring([1, 2, 3]))
    for cut in (0, 3, 7, 12, len(good) - 1):
        with pytest.raises(CorruptFileError):
            deserialize_deletion_vector(good[:cut], path="t")
    # A valid CRC over bytes that are not a roaring bitmap.
    data = struct.pack(">I", BITMAP32_MAGIC) + b"\xff" * 12
    garbage = struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    with pytest.raises(CorruptFileError, match="roaring"):
        deserialize_deletion_vector(garbage, path="g")


def test_deletion_files_by_bucket() -> None:
    def entry(kind: FileKind, name: str, files: Sequence[str], index_type: str = "DELETION_VECTORS") -> IndexManifestEntry:
        ranges = tuple(DeletionVectorMeta(f, 1 + 30 * i, 22, 1) for i, f in enumerate(files))
        return IndexManifestEntry(kind, EMPTY_ROW_BYTES, 0, IndexFileMeta(index_type, name, 100, len(files), ranges))

    got = deletion_files_by_bucket(
        [
            entry(FileKind.ADD, "index-a", ["d1", "d2"]),
            entry(FileKind.ADD, "index-b", ["d3"]),
            entry(FileKind.DELETE, "index-b", ["d3"]),
            entry(FileKind.ADD, "index-h", ["d4"], "HASH"),
        ],
        lambda e: "/t/index/" + e.index_file.file_name,
    )
    assert got == {
        (EMPTY_ROW_BYTES, 0): {
            "d1": DeletionFile("/t/index/index-a", 1, 22, 1),
            "d2": DeletionFile("/t/index/index-a", 31, 22, 1),
        }
    }


def test_data_split_deletion_files_align_and_pickle() -> None:
    f = DataFileMeta("d.parquet", 1, 1, b"", b"", None, None, 0, 0, 0, 0)  # type: ignore[arg-type]
    df = DeletionFile("/t/index/i", 1, 24, 2)
    split = DataSplit(1, EMPTY_ROW_BYTES, 0, "/t/bucket-0", (f, f), deletion_files=(None, df))
    assert split.deletion_file(0) is None and split.deletion_file(1) == df
    assert pickle.loads(pickle.dumps(split)) == split
    assert DataSplit(1, EMPTY_ROW_BYTES, 0, "/t/bucket-0", (f,)).deletion_file(0) is None
    with pytest.raises(InvalidArgumentError):
        DataSplit(1, EMPTY_ROW_BYTES, 0, "/t/bucket-0", (f, f), deletion_files=(df,))


# --- reads of tables with deletion vectors (index files committed by hand) -----------------------------

_ids = itertools.count(1)


def _commit_dvs(table: FileStoreTable, entry: ManifestEntry, positions: Sequence[int], **extra: object) -> None:
    """Commit a DV index file deleting ``positions`` of ``entry``'s data file (as Java would)."""
    blob = dv32(portable_roaring(positions))
    data, [(offset, length)] = index_file([blob])
    name = f"index-dvtest-{next(_ids)}"
    table.file_io.write_bytes(join(table.paths.index_dir, name), data)
    meta = IndexFileMeta(
        "DELETION_VECTORS", name, len(data), 1, (DeletionVectorMeta(entry.file.file_name, offset, length, len(positions)),)
    )
    message = CommitMessage(entry.partition, entry.bucket, entry.total_buckets, new_index_files=(meta,), **extra)  # type: ignore[arg-type]
    table.new_file_store_commit("dv-test").commit([message], next(_ids))


def _file_ids(table: FileStoreTable, entry: ManifestEntry) -> list[int]:
    path = join(table.bucket_path(entry.partition, entry.bucket), entry.file.file_name)
    return pa.Table.from_batches(list(read_file(table.file_io, path, "parquet"))).column("id").to_pylist()


def _live(table: FileStoreTable) -> list[ManifestEntry]:
    return sorted(table.new_file_store_scan().live_entries(table.latest_snapshot()), key=lambda e: e.file.file_name)


def _read_ids(table: FileStoreTable, **options: str) -> list[int]:
    return sorted(table.copy(options).to_arrow().column("id").to_pylist())


def _append(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
    return catalog.create_table("db.a", schema, partition_keys=["dt"], options=options)


def _rows(ids: Sequence[int], dt: str = "p", v: float = 0.0) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt] * len(ids), "v": [v + i for i in ids]})


def test_append_table_drops_deleted_positions(catalog: FileSystemCatalog) -> None:
    t = _append(catalog, **{"deletion-vectors.enabled": "true"})
    t.write_arrow(pa.concat_tables([_rows(range(0, 300, 3), "x"), _rows(range(1, 300, 3), "y")]))
    t.write_arrow(_rows(range(1000, 1050), "x"))
    entries = _live(t)
    assert len(entries) == 3
    target = next(e for e in entries if e.file.row_count == 100 and b"x" in e.partition)
    ids = _file_ids(t, target)
    _commit_dvs(t, target, [0, 1, 50, 99])
    deleted = {ids[0], ids[1], ids[50], ids[99]}
    everything = sorted(list(range(0, 300, 3)) + list(range(1, 300, 3)) + list(range(1000, 1050)))
    assert _read_ids(t) == [i for i in everything if i not in deleted]
    assert _read_ids(t, **{"scan.snapshot-id": "2"}) == everything  # time travel: before the delete
    t.maintenance.create_tag("before", 2)
    assert _read_ids(t, **{"scan.tag-name": "before"}) == everything

    plan = t.new_read_builder().new_scan().plan()
    dfs = [(f.file_name, s.deletion_file(i)) for s in plan.splits for i, f in enumerate(s.files)]
    assert [d.cardinality for n, d in dfs if d is not None] == [4]
    assert all(d is None for n, d in dfs if n != target.file.file_name)

    # Filters, projections and limits see only live rows.
    rb = t.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.less_than("id", 30)).with_projection(["id"])
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits).column("id").to_pylist()
    assert sorted(got) == [i for i in everything if i < 30 and i not in deleted]
    assert t.to_arrow().num_rows == len(everything) - 4


def test_file_fully_deleted_and_dvs_replaced(catalog: FileSystemCatalog) -> None:
    t = _append(catalog, **{"deletion-vectors.enabled": "true"})
    t.write_arrow(_rows(range(10)))
    (entry,) = _live(t)
    _commit_dvs(t, entry, range(10))
    assert _read_ids(t) == []


def test_dvs_ignored_without_the_option(catalog: FileSystemCatalog) -> None:
    # Java and pypaimon attach deletion files only when 'deletion-vectors.enabled' is set.
    t = _append(catalog)
    t.write_arrow(_rows(range(10)))
    (entry,) = _live(t)
    _commit_dvs(t, entry, [1, 2])
    assert _read_ids(t) == list(range(10))
    assert _read_ids(t, **{"deletion-vectors.enabled": "true"}) == [0, *range(3, 10)]


def test_corrupt_dv_fails_the_read(catalog: FileSystemCatalog) -> None:
    t = _append(catalog, **{"deletion-vectors.enabled": "true"})
    t.write_arrow(_rows(range(10)))
    (entry,) = _live(t)
    _commit_dvs(t, entry, [1, 2])
    snap = t.latest_snapshot()
    assert snap is not None and snap.index_manifest is not None
    plan = t.new_read_builder().new_scan().plan()
    df = plan.splits[0].deletion_file(0)
    assert df is not None
    data = bytearray(t.file_io.read_bytes(df.path))
    data[-1] ^= 0xFF
    t.file_io.write_bytes(df.path, bytes(data), overwrite=True)
    with pytest.raises(CorruptFileError, match=df.path):
        t.to_arrow()


def _pk(catalog: FileSystemCatalog, **options: str) -> FileStoreTable:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
    # write-only: these tests commit their own "compactions" (writers would compact level 0 away)
    opts = {"bucket": "1", "deletion-vectors.enabled": "true", "write-only": "true", **options}
    return catalog.create_table("db.pk", schema, primary_keys=["id"], options=opts)


def test_primary_key_table_reads_compacted_files_raw_minus_deleted(catalog: FileSystemCatalog) -> None:
    t = _pk(catalog)
    t.write_arrow(_rows(range(100)))
    t.write_arrow(_rows(range(100, 150)))
    level0 = _live(t)
    assert [e.file.level for e in level0] == [0, 0]
    assert _read_ids(t) == []  # level 0 only: invisible to batch reads, as in Java

    # A "compaction" that upgrades both files to the top level, then deletion vectors on them.
    e1, e2 = level0
    upgrade = CommitMessage(
        e1.partition, e1.bucket, e1.total_buckets,
        compact_before=(e1.file, e2.file), compact_after=(e1.file.with_level(5), e2.file.with_level(5)),
    )  # fmt: skip
    t.new_file_store_commit("dv-test").commit([upgrade], next(_ids))
    assert _read_ids(t) == list(range(150))
    top = _live(t)
    ids1, ids2 = _file_ids(t, top[0]), _file_ids(t, top[1])
    _commit_dvs(t, top[0], [0, 5, len(ids1) - 1])
    _commit_dvs(t, top[1], [10])
    deleted = {ids1[0], ids1[5], ids1[-1], ids2[10]}
    assert _read_ids(t) == [i for i in range(150) if i not in deleted]

    # New level-0 writes stay invisible; the raw splits carry one deletion file per data file.
    t.write_arrow(_rows(range(10), v=500.0))
    (split,) = t.new_read_builder().new_scan().plan().splits
    assert split.raw_convertible and all(f.level == 5 for f in split.files)
    assert sorted(d.cardinality or 0 for d in split.deletion_files if d is not None) == [1, 3]
    assert _read_ids(t) == [i for i in range(150) if i not in deleted]

    # merge-on-read: level-0 files join the read and are merged; DVs apply to each file first.
    mor = t.copy({"deletion-vectors.merge-on-read": "true"})
    (split,) = mor.new_read_builder().new_scan().plan().splits
    assert not split.raw_convertible and len(split.files) == 3
    out = mor.to_arrow().sort_by("id")
    expected = sorted(set(range(150)) - deleted | set(range(10)))
    assert out.column("id").to_pylist() == expected
    assert out.column("v").to_pylist()[:10] == [500.0 + i for i in range(10)]

    # Time travel to before the deletion vectors.
    assert _read_ids(t, **{"scan.snapshot-id": "3"}) == list(range(150))
