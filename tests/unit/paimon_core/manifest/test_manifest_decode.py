"""The bulk steps of the vectorized manifest decoder and their fallbacks.

Each fallback (a name holding the separator, names too unequal to gather as rows,
invalid UTF-8, candidates that are no record) is driven by a real manifest file and
checked against the sequential decoder.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
import zstandard

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest import FileKind, ManifestEntry, SimpleStats, read_manifest_file
from paimon_core.manifest.avro_chain import _chain
from paimon_core.manifest.avro_schemas import (
    MANIFEST_ENTRY_VERSION,
    _decompress,
    _encode_bytes,
    _encode_long,
    _header,
    read_avro_blocks_keyed,
)
from paimon_core.manifest.avro_vector import PAD, decode_columns
from paimon_core.manifest.manifest_batch import HOT_FIELDS, ManifestBatch
from paimon_core.manifest.manifest_decode import _KEPT_PATHS, _likely_entry, _texts, decode_manifest_batches
from paimon_core.manifest.manifest_file import write_manifest_file
from tests.unit.paimon_core.manifest.test_manifest_file import _entry

IO = LocalFileIO()


pytestmark = pytest.mark.usefixtures("vectorize_always")


def _write(tmp_path: Path, entries: list[ManifestEntry]) -> str:
    path = str(tmp_path / f"manifest-{uuid.uuid4()}-0")
    write_manifest_file(IO, path, entries, partition_stats=SimpleStats.empty(), schema_id=0)
    return path


def _decode_one(path: str, data: bytes | None = None) -> ManifestBatch:
    [batch] = decode_manifest_batches([(path, IO.read_bytes(path) if data is None else data)])
    assert not batch.is_eager  # the vectorized path was taken
    return batch


def _hot(batch: ManifestBatch) -> dict[str, list[object]]:
    return {name: list(batch.cols[name]) for name, _, _ in HOT_FIELDS}


def _want(path: str) -> dict[str, list[object]]:
    entries = read_manifest_file(IO, path)
    return {name: [getattr(e.file, name) for e in entries] for name, _, _ in HOT_FIELDS}


def _uncompressed(data: bytes, edit: tuple[bytes, bytes] | None = None) -> bytes:
    """The same Avro file with its blocks uncompressed (``edit``: a byte replacement in them)."""
    _, text, blocks = read_avro_blocks_keyed(data)
    sync = bytes(16)
    out = bytearray(_header(text, "null", sync))
    for count, block in blocks:
        if edit is not None:
            block = block.replace(edit[0], edit[1], 1)
        out += _encode_long(count) + _encode_bytes(block) + sync
    return bytes(out)


@pytest.mark.parametrize(
    "names",
    [
        [f"data-{i}.parquet" for i in range(300)],  # lengths differ: rows of the longest, bytes dropped
        [f"data-{i:04d}.parquet" for i in range(300)],  # one length: no byte to drop
        [f"dätä-€-{i}-😀.parquet" for i in range(300)],  # multi-byte UTF-8
        ["" if i % 7 == 0 else f"n{i}" for i in range(300)],  # empty names
        [f"a\x00b-{i}" if i % 5 == 0 else f"ab-{i}" for i in range(300)],  # the separator in a name: one by one
        ["x" * 5000 if i == 3 else f"d-{i}" for i in range(300)],  # too unequal for rows: one by one
    ],
    ids=["ascii", "one-length", "non-ascii", "empty", "nul", "one-long"],
)
def test_file_names_decode_in_bulk_as_one_by_one(tmp_path: Path, names: list[str]) -> None:
    path = _write(tmp_path, [_entry(n, bucket=i % 3) for i, n in enumerate(names)])
    batch = _decode_one(path)
    assert batch.cols["file_name"] == names
    assert _hot(batch) == _want(path)


def test_texts_fall_back_where_bulk_decoding_cannot_be_exact() -> None:
    raw = b"abc\x00de\xc3\xa9fgh" + bytes(PAD)
    starts, ends = np.array([0, 4, 8], dtype=np.int64), np.array([3, 8, 11], dtype=np.int64)
    assert _texts(raw, starts, ends) == ["abc", "deé", "fgh"]
    assert _texts(raw, np.array([0, 4]), np.array([6, 8])) is None  # a value holds the NUL separator
    assert _texts(raw, np.array([6]), np.array([7])) is None  # half a character: invalid UTF-8
    assert _texts(raw, np.zeros(0, np.int64), np.zeros(0, np.int64)) == []


def test_invalid_utf8_file_name_is_a_corrupt_file_naming_it(tmp_path: Path) -> None:
    names = [f"data-{i}-é.parquet" for i in range(300)]
    good_path = _write(tmp_path, [_entry(f"other-{i}.parquet") for i in range(300)])
    bad_path = _write(tmp_path, [_entry(n) for n in names])
    data = _uncompressed(IO.read_bytes(bad_path), ("data-7-é".encode(), b"data-7-\xff\xfe"))
    # decoded in one pass with a good file before it: the error names the bad file, the good one reads
    good, bad = decode_manifest_batches([(good_path, IO.read_bytes(good_path)), (bad_path, data)])
    assert not good.is_eager and not bad.is_eager
    with pytest.raises(CorruptFileError) as got:
        bad.cols["file_name"]
    with pytest.raises(UnicodeDecodeError) as alone:
        (b"data-7-\xff\xfe.parquet").decode("utf-8")
    assert got.value.path == bad_path and bad_path in str(got.value)
    assert str(alone.value) in str(got.value)  # the position is within the name, as when decoded alone
    assert good.cols["file_name"] == [f"other-{i}.parquet" for i in range(300)]
    with pytest.raises(CorruptFileError):  # and again: the file stays corrupt, it is not cached as read
        bad.cols["file_name"]


def test_invalid_utf8_in_one_file_leaves_null_texts_of_the_next_readable(tmp_path: Path) -> None:
    # review finding: the re-check of a file's own rows must skip null values (no content span)
    bad_path = _write(tmp_path, [_entry(f"a-{i}.parquet", external_path=f"/x/é-{i}") for i in range(300)])
    good_path = _write(tmp_path, [_entry(f"b-{i}.parquet", external_path=None if i % 2 else f"/y/{i}")
                                  for i in range(300)])
    data = _uncompressed(IO.read_bytes(bad_path), ("/x/é-7".encode(), b"/x/\xff\xfe-7"))
    bad, good = decode_manifest_batches([(bad_path, data), (good_path, IO.read_bytes(good_path))])
    assert not bad.is_eager and not good.is_eager
    assert good.cols["external_path"] == [None if i % 2 else f"/y/{i}" for i in range(300)]
    with pytest.raises(CorruptFileError) as got:
        bad.cols["external_path"]
    assert got.value.path == bad_path
    assert bad.cols["file_name"] == [f"a-{i}.parquet" for i in range(300)]  # the other columns read


def test_equal_partitions_share_one_object(tmp_path: Path) -> None:
    parts = [bytes([i % 4]) * 16 for i in range(400)]
    entries = [ManifestEntry(FileKind.ADD, p, 0, 1, _entry(f"d-{i}").file) for i, p in enumerate(parts)]
    path = _write(tmp_path, entries)
    batch = _decode_one(path)
    assert batch.partition == parts
    assert batch.partition[0] is batch.partition[4]
    assert len({id(p) for p in batch.partition}) == 4


def test_decode_columns_padded_and_candidates_that_are_no_record(tmp_path: Path) -> None:
    """Without the heuristic most candidates are no record: the records found are the same."""
    entries = [_entry(f"data-{i}.parquet", bucket=2, file_size=i % 3) for i in range(500)]  # many 0x04 bytes
    path = _write(tmp_path, entries)
    writer_schema, _, blocks = read_avro_blocks_keyed(IO.read_bytes(path))
    raw = b"".join(b for _, b in blocks)
    starts = list(np.cumsum([0] + [len(b) for _, b in blocks])[:-1])
    counts = [c for c, _ in blocks]
    first = MANIFEST_ENTRY_VERSION << 1
    every = decode_columns(raw, starts, counts, writer_schema, first)
    assert every.order is not None and len(every.order) == 500  # most candidates were no record
    plain = every.keep(_KEPT_PATHS)
    padded = decode_columns(raw + bytes(PAD), starts, counts, writer_schema, first, padded=True,
                            accept=_likely_entry, collect=_KEPT_PATHS)
    assert padded.order is None  # the heuristic left only records: lane i is record i
    assert np.array_equal(plain.starts, padded.starts) and np.array_equal(plain.ends, padded.ends)
    for path_ in _KEPT_PATHS:
        for get in ("ints", "branches", "span", "content"):
            a, b = getattr(plain, get)(path_), getattr(padded, get)(path_)
            assert (a is None) == (b is None), (path_, get)
            if a is not None:
                assert np.array_equal(np.asarray(a), np.asarray(b)), (path_, get)
    sizes = padded.ints("_FILE._FILE_SIZE")
    assert sizes is not None and sizes.tolist() == [i % 3 for i in range(500)]
    assert "_FILE._KEY_STATS" not in padded._spans  # only what was asked is collected
    with pytest.raises(ValueError, match="zero bytes"):
        decode_columns(raw + b"x" * PAD, starts, counts, writer_schema, first, padded=True)


def test_a_corrupt_zstd_block_leaves_the_next_file_readable(tmp_path: Path) -> None:
    path = _write(tmp_path, [_entry(f"data-{i}.parquet") for i in range(300)])
    data = IO.read_bytes(path)
    corrupt = data[: len(data) - 40] + bytes(24) + data[len(data) - 16 :]  # the block's tail zeroed
    with pytest.raises(CorruptFileError):
        decode_manifest_batches([(path, corrupt)])
    assert _hot(_decode_one(path)) == _want(path)


def test_chain_skips_live_lanes_that_are_no_record() -> None:
    """Records at 0 and 10 of the block [0, 20); a lane decoded at 5 that ends at 12 is no record."""
    cand = np.array([0, 5, 10], dtype=np.int64)
    ends = np.array([10, 12, 20], dtype=np.int64)
    alive = np.ones(3, dtype=bool)
    bounds = np.array([0, 20], dtype=np.int64)
    assert _chain(cand, ends, alive, bounds, [2]).tolist() == [0, 2]
    assert _chain(cand[[0, 2]], ends[[0, 2]], alive[:2], bounds, [2]).tolist() == [0, 1]
    two_blocks = np.array([0, 10, 20], dtype=np.int64)
    assert _chain(cand, np.array([10, 10, 20]), alive, two_blocks, [1, 1]).tolist() == [0, 2]


@pytest.mark.parametrize("with_size", [True, False], ids=["size-in-frame", "streamed"])
def test_zstd_blocks_with_or_without_their_size(with_size: bool) -> None:
    data = b"".join(b"record %d;" % i for i in range(5000))
    block = zstandard.ZstdCompressor(write_content_size=with_size).compress(data)
    assert _decompress("zstandard", block) == data
    assert _decompress("zstandard", block + b"trailing") == data
    with pytest.raises((zstandard.ZstdError, EOFError)):
        _decompress("zstandard", block[:-3])


def test_header_reuse_only_for_the_same_header_bytes(tmp_path: Path) -> None:
    """Files of one writer share their header bytes up to the sync marker; others parse anew."""
    a = IO.read_bytes(_write(tmp_path, [_entry("a.parquet")]))
    b = IO.read_bytes(_write(tmp_path, [_entry("b.parquet"), _entry("c.parquet")]))
    _, text_a, blocks_a = read_avro_blocks_keyed(a)
    _, text_b, blocks_b = read_avro_blocks_keyed(b)  # the same header but its own sync marker
    assert text_a == text_b and [c for c, _ in blocks_a] == [1] and [c for c, _ in blocks_b] == [2]
    other = _uncompressed(a)  # another codec: another header
    _, _, blocks_o = read_avro_blocks_keyed(other)
    assert blocks_o == blocks_a
    header_end = other.index(bytes(16)) + 16
    with pytest.raises((EOFError, ValueError)):
        read_avro_blocks_keyed(other[: header_end - 4])  # the header's bytes, the sync cut short
    with pytest.raises(ValueError, match="sync"):
        read_avro_blocks_keyed(b[:-16] + bytes(16))  # a block followed by another sync than the header's
