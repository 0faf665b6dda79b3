"""Decode manifest files in bulk into :class:`~paimon_core.manifest.manifest_batch.ManifestBatch`.

All files given together that share a writer schema are decoded in one
vectorized pass (:func:`paimon_core.manifest.avro_vector.decode_columns`): the
fixed cost of walking the schema is paid once per schema, not per file. A file
the vectorized path does not fit (another schema shape, a record it cannot
chain, a corrupt file) is decoded on its own, and sequentially when needed:
the sequential decoder gives every error its exact message.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_core.exceptions import CorruptFileError
from paimon_core.manifest.avro_schemas import (
    MANIFEST_ENTRY_VERSION,
    compile_decoder,
    decode_avro_blocks,
    read_avro_blocks_keyed,
)
from paimon_core.manifest.avro_vector import PAD, Columns, Unsupported, decode_columns
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.manifest.manifest_batch import HOT_FIELDS, ManifestBatch

_REQUIRED_FILE_FIELDS = frozenset(
    {"_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY", "_MAX_KEY", "_MIN_SEQUENCE_NUMBER",
     "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID", "_LEVEL", "_KEY_STATS", "_VALUE_STATS", "_EXTRA_FILES"}
)
_TOP_FIELDS = ("_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")
_AVRO_KIND = {"int": ("int", "long"), "bytes": ("bytes",), "str": ("string",)}
_HOT_BY_NAME = {name: (avro, kind) for name, avro, kind in HOT_FIELDS}
#: The decoded paths a batch keeps (the rest of a record is decoded from its bytes on demand).
_KEPT_PATHS = (
    "_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE._EXTRA_FILES",
    *(f"_FILE.{avro}" for _, avro, _ in HOT_FIELDS),
)

Blocks = list[tuple[int, bytes]]
_PAD = bytes(PAD)

#: Fewer records than this (over the files of one schema) decode faster sequentially: the
#: vectorized pass has a fixed cost per schema field.
VECTORIZE_MIN_RECORDS = 256


def decode_manifest_batches(items: Sequence[tuple[str, bytes]]) -> list[ManifestBatch]:
    """Decode manifest files given as ``(path, bytes)``; one batch per file, in order.

    Raises :class:`CorruptFileError` naming the file when one cannot be decoded.
    """
    out: list[ManifestBatch | None] = [None] * len(items)
    groups: dict[str, list[tuple[int, Any, Blocks]]] = {}
    for i, (path, data) in enumerate(items):
        try:
            writer_schema, schema_text, blocks = read_avro_blocks_keyed(data)
        except Exception as e:  # noqa: BLE001 - any framing failure means a corrupt file
            raise CorruptFileError(f"Cannot read Avro file {path}: {type(e).__name__}: {e}", path=path) from e
        groups.setdefault(schema_text, []).append((i, writer_schema, blocks))
    for schema_text, members in groups.items():
        paths = [items[i][0] for i, _, _ in members]
        records = sum(c for _, _, blocks in members for c, _ in blocks)
        if records < VECTORIZE_MIN_RECORDS:
            batches = [_sequential(p, schema_text, b) for p, (_, _, b) in zip(paths, members, strict=True)]
        else:
            try:
                batches = _vectorized(paths, members[0][1], schema_text, [b for _, _, b in members])
            except Unsupported:  # decode each on its own: only a file that does not fit is sequential
                batches = [_one(p, ws, schema_text, b) for p, (_, ws, b) in zip(paths, members, strict=True)]
        for (i, _, _), batch in zip(members, batches, strict=True):
            out[i] = batch
    return [b for b in out if b is not None]


def _one(path: str, writer_schema: Any, schema_text: str, blocks: Blocks) -> ManifestBatch:
    try:
        return _vectorized([path], writer_schema, schema_text, [blocks])[0]
    except Unsupported:
        return _sequential(path, schema_text, blocks)


def _sequential(path: str, schema_text: str, blocks: Blocks) -> ManifestBatch:
    from paimon_core.manifest.manifest_file import ENTRY_PLAN  # manifest_file imports this module's users

    entries: list[ManifestEntry] = decode_avro_blocks(schema_text, blocks, path, ENTRY_PLAN)
    batch = ManifestBatch(path, len(entries))
    batch.set_eager(entries, nbytes=sum(len(b) for _, b in blocks) * 3)
    return batch


def _vectorized(paths: list[str], writer_schema: Any, schema_text: str, files: list[Blocks]) -> list[ManifestBatch]:
    from paimon_core.manifest.manifest_file import ENTRY_PLAN

    record_schema, prefix = _top_record(writer_schema)
    fields = _check_schema(record_schema)
    raw = b"".join([*(b for blocks in files for _, b in blocks), _PAD])  # the pad: no second copy
    starts: list[int] = []
    counts: list[int] = []
    file_rows: list[int] = []
    off = 0
    for blocks in files:
        file_rows.append(sum(c for c, _ in blocks))
        for c, b in blocks:
            starts.append(off)
            counts.append(c)
            off += len(b)
    cols = decode_columns(
        raw, starts, counts, record_schema, MANIFEST_ENTRY_VERSION << 1, accept=_likely_entry, prefix=prefix,
        padded=True, collect=_KEPT_PATHS,
    )
    cols = cols.keep(_KEPT_PATHS)
    n = len(cols.starts)
    kinds = cols.ints("_KIND")
    if n and (kinds is None or np.any(cols.ints("_VERSION") != MANIFEST_ENTRY_VERSION) or np.any((kinds >> 1) != 0)):
        raise Unsupported("unexpected _VERSION or _KIND")
    shared = _SharedColumns(raw, cols, fields)
    decoder = partial(compile_decoder, schema_text, ENTRY_PLAN)  # compiled on first use (cached)
    kind = [] if kinds is None else kinds.tolist()
    bucket = _ints(cols, "_BUCKET", n)
    total = _ints(cols, "_TOTAL_BUCKETS", n)
    partition = _shared_blobs(raw, cols, "_PARTITION")
    plain = _plain_keys(cols, fields).tolist()
    rec_starts = cols.starts.tolist()
    batches = []
    lo = 0
    for path, rows in zip(paths, file_rows, strict=True):
        hi = lo + rows
        batch = ManifestBatch(path, rows)
        batch.kind, batch.bucket, batch.total_buckets = kind[lo:hi], bucket[lo:hi], total[lo:hi]
        batch.partition, batch.plain_key = partition[lo:hi], plain[lo:hi]
        batch.set_records(raw, rec_starts[lo:hi], decoder, _FileColumns(shared, lo, hi, path))
        batch.nbytes = (len(raw) * rows) // max(n, 1) + rows * 400  # its share of the bytes + columns
        batches.append(batch)
        lo = hi
    return batches


class _SharedColumns:
    """Hot columns of every record of one vectorized pass, each made into a list on first use."""

    def __init__(self, raw: bytes, cols: Columns, fields: dict[str, Any]) -> None:
        self.raw = raw
        self.cols = cols
        self.fields = fields
        self.made: dict[str, list[Any]] = {}
        #: per text column that holds invalid UTF-8: its bad rows and their errors
        self.bad: dict[str, dict[int, UnicodeDecodeError]] = {}

    def column(self, name: str) -> list[Any]:
        col = self.made.get(name)
        if col is None:
            avro, kind = _HOT_BY_NAME[name]
            f = self.fields.get(avro)
            n = len(self.cols.starts)
            try:
                col = [None] * n if f is None else _column(self.raw, self.cols, "_FILE." + avro, kind, f["type"])
            except UnicodeDecodeError:  # a corrupt name: find its row; the files without it stay readable
                assert f is not None
                col = self._lenient_texts(name, "_FILE." + avro, f["type"])
            self.made[name] = col
        return col

    def _lenient_texts(self, name: str, path: str, avro_type: Any) -> list[Any]:
        null = _null_mask(self.cols, path, avro_type) if isinstance(avro_type, list) else None
        got = self.cols.content(path)
        assert got is not None  # it raised decoding values
        out: list[Any] = []
        for i, (s, e) in enumerate(zip(got[0].tolist(), got[1].tolist(), strict=True)):
            if null is not None and null[i]:
                out.append(None)
                continue
            try:
                out.append(str(self.raw[s:e], "utf-8"))
            except UnicodeDecodeError as err:
                self.bad.setdefault(name, {})[i] = err
                out.append(None)
        return out


class _FileColumns(dict[str, list[Any]]):
    """One file's slice of :class:`_SharedColumns` (a dict filled on first use per column)."""

    def __init__(self, shared: _SharedColumns, lo: int, hi: int, path: str) -> None:
        super().__init__()
        self._shared = shared
        self._lo = lo
        self._hi = hi
        self._path = path

    def __missing__(self, name: str) -> list[Any]:
        shared = self._shared
        col = shared.column(name)[self._lo : self._hi]
        bad = shared.bad.get(name)
        if bad:
            mine = [i for i in sorted(bad) if self._lo <= i < self._hi]
            if mine:  # this file holds invalid UTF-8: corrupt (it is not kept, so it raises again)
                err = bad[mine[0]]
                raise CorruptFileError(
                    f"Cannot read Avro file {self._path}: {type(err).__name__}: {err}", path=self._path
                ) from err
        self[name] = col
        return col


# --- schema shape --------------------------------------------------------------------------------


def _top_record(writer_schema: Any) -> tuple[Any, bytes]:
    """The record schema of the top-level values, and the bytes before each record: none, or
    the branch byte when the top level is a nullable record (pypaimon-rust writes
    ``["null", record]``)."""
    if isinstance(writer_schema, list) and len(writer_schema) == 2 and "null" in writer_schema:
        branch = 1 - writer_schema.index("null")
        return writer_schema[branch], bytes([2 * branch])
    return writer_schema, b""


def _check_schema(writer_schema: Any) -> dict[str, Any]:
    """The ``_FILE`` fields by name, after checking the shape the vectorized path needs."""
    if not isinstance(writer_schema, dict) or writer_schema.get("type") != "record":
        raise Unsupported("top level is not a record")
    top = writer_schema.get("fields", [])
    if not top or top[0].get("name") != "_VERSION" or _prim(top[0]["type"]) not in ("int", "long"):
        raise Unsupported("records do not start with _VERSION")
    by_name = {f["name"]: f for f in top}
    if any(n not in by_name for n in _TOP_FIELDS):
        raise Unsupported("missing top-level fields")
    for n, want in (("_KIND", "int"), ("_PARTITION", "bytes"), ("_BUCKET", "int"), ("_TOTAL_BUCKETS", "int")):
        if _prim(by_name[n]["type"]) not in _AVRO_KIND[want]:
            raise Unsupported(f"{n} has an unexpected type")
    file_t = by_name["_FILE"]["type"]
    if not isinstance(file_t, dict) or file_t.get("type") != "record":
        raise Unsupported("_FILE is not a plain record")
    fields = {f["name"]: f for f in file_t.get("fields", [])}
    if not _REQUIRED_FILE_FIELDS <= set(fields):
        raise Unsupported("missing _FILE fields")
    for _, avro, kind in HOT_FIELDS:
        if avro in fields and _prim(fields[avro]["type"], nullable=True) not in _AVRO_KIND[kind]:
            raise Unsupported(f"{avro} has an unexpected type")
    return fields


def _prim(t: Any, *, nullable: bool = False) -> str | None:
    if isinstance(t, dict) and t.get("type") in ("int", "long", "bytes", "string"):
        return str(t["type"])
    if isinstance(t, str):
        return t
    if nullable and isinstance(t, list) and len(t) == 2 and "null" in t:
        return _prim(t[1 - t.index("null")])
    return None


def _likely_entry(buf: npt.NDArray[np.uint8], cand: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Starts that look like an entry: ``_KIND`` 0 or 1, then a ``_PARTITION`` of at least
    12 bytes (a serialized BinaryRow: arity + null bits). Only a heuristic for the
    vectorized decoder: an entry it rejects makes the file decode sequentially."""
    kind = buf[cand + 1]
    length = buf[cand + 2]
    ok: npt.NDArray[np.bool_] = ((kind == 0) | (kind == 2)) & ((length & 1) == 0) & (length >= 24)
    return ok


# --- columns to lists ----------------------------------------------------------------------------


def _plain_keys(cols: Columns, fields: dict[str, Any]) -> npt.NDArray[np.bool_]:
    """Rows whose extra files are empty and embedded index and external path null."""
    plain = np.ones(len(cols.starts), dtype=bool)
    extra = cols.span("_FILE._EXTRA_FILES")
    if extra is not None:
        plain &= (extra[1] - extra[0]) == 1  # an empty array is the single byte 0
    for avro in ("_EMBEDDED_FILE_INDEX", "_EXTERNAL_PATH"):
        if avro in fields:
            plain &= _null_mask(cols, "_FILE." + avro, fields[avro]["type"])
    return plain


def _null_mask(cols: Columns, path: str, avro_type: Any) -> npt.NDArray[np.bool_]:
    if not isinstance(avro_type, list):
        return np.zeros(len(cols.starts), dtype=bool)
    branches = cols.branches(path)
    if branches is None:
        return np.zeros(len(cols.starts), dtype=bool)
    mask: npt.NDArray[np.bool_] = branches == avro_type.index("null")
    return mask


def _ints(cols: Columns, path: str, n: int) -> list[Any]:
    vals = cols.ints(path)
    return [0] * n if vals is None else vals.tolist()


def _blobs(raw: bytes, cols: Columns, path: str, null: npt.NDArray[np.bool_] | None, *, text: bool = False) -> list[Any]:
    n = len(cols.starts)
    got = cols.content(path)
    if got is None:  # every value null
        return [None] * n
    starts, ends = got
    if null is not None and null.any():
        out: list[Any] = [None] * n
        keep = np.flatnonzero(~null)
        for i, v in zip(keep.tolist(), _slices(raw, starts[keep], ends[keep], text), strict=True):
            out[i] = v
        return out
    return _slices(raw, starts, ends, text)


def _shared_blobs(raw: bytes, cols: Columns, path: str) -> list[Any]:
    """A bytes column with few distinct values (partitions): one object per distinct value.

    When every value has the same length (a partition row of fixed-size fields), the values
    are dictionary-encoded as one Arrow fixed-size binary array, so only the distinct ones
    become ``bytes``; equal values then share one object (its hash is computed once for every
    dict lookup after)."""
    got = cols.content(path)
    if got is None:
        return [None] * len(cols.starts)
    starts, ends = got
    lengths = ends - starts
    if not len(lengths) or np.any(lengths != lengths[0]) or lengths[0] == 0:
        return _blobs(raw, cols, path, None)
    width = int(lengths[0])
    rows = _rows(raw, starts, width)
    keys = pa.Array.from_buffers(pa.binary(width), len(rows), [None, pa.py_buffer(rows)])
    coded = keys.dictionary_encode()  # a hash table: one index per distinct value
    values = coded.dictionary.to_pylist()
    ids = coded.indices  # int32, no nulls (read from its buffer: to_numpy() would import pandas)
    index = np.frombuffer(ids.buffers()[1], dtype=np.int32, count=len(ids) + ids.offset)[ids.offset :]
    return list(map(values.__getitem__, index.tolist()))


def _slices(raw: bytes, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64], text: bool) -> list[Any]:
    if text:
        got = _texts(raw, starts, ends)
        if got is not None:
            return got
    pairs = zip(starts.tolist(), ends.tolist(), strict=True)
    if text:
        return [str(raw[s:e], "utf-8") for s, e in pairs]
    return [raw[s:e] for s, e in pairs]


def _column(raw: bytes, cols: Columns, path: str, kind: str, avro_type: Any) -> list[Any]:
    null = _null_mask(cols, path, avro_type) if isinstance(avro_type, list) else None
    if kind != "int":
        return _blobs(raw, cols, path, null, text=kind == "str")
    vals = cols.ints(path)
    if vals is None:
        return [None] * len(cols.starts)
    out: list[Any] = vals.tolist()
    if null is not None and null.any():
        for i in np.flatnonzero(null).tolist():
            out[i] = None
    return out


def _texts(raw: bytes, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]) -> list[str] | None:
    """The UTF-8 strings ``raw[starts[i]:ends[i]]``, decoded in one call: the values are gathered
    into one buffer, each followed by a NUL byte, which is decoded and split at the NULs. None
    (decode one by one) when a value holds a NUL, is not valid UTF-8 (decoding one by one then
    raises the error naming it) or the values are too unequal in length to gather as rows."""
    n = len(starts)
    if not n:
        return []
    lengths = ends - starts
    width = int(lengths.max()) + 1  # a row: the longest value and its separator
    total = int(lengths.sum()) + n
    if int(starts.max()) + width > len(raw) or n * width > 4 * total + (1 << 16):
        return None
    rows = _rows(raw, starts, width)
    if width * n == total:  # every value as long: no byte to drop
        rows[:, -1] = 0
        flat = rows.reshape(-1)
    else:
        rows[np.arange(n), lengths] = 0
        if width < (1 << 15):  # narrow integers: a smaller mask to compute
            keep = np.arange(width, dtype=np.int16) <= lengths.astype(np.int16)[:, None]
        else:
            keep = np.arange(width) <= lengths[:, None]
        flat = rows[keep]
    if np.count_nonzero(flat == 0) != n:  # a value holds the separator
        return None
    try:
        out = flat.tobytes().decode("utf-8").split("\x00")
    except UnicodeDecodeError:
        return None
    out.pop()  # after the last separator
    return out


def _rows(raw: bytes, starts: npt.NDArray[np.int64], width: int) -> npt.NDArray[np.uint8]:
    """``raw[s:s + width]`` for each start ``s`` (each in bounds), as the rows of a new matrix."""
    items = np.ndarray((len(raw) - width + 1,), dtype=np.dtype((np.void, width)), buffer=raw, strides=(1,))
    rows: npt.NDArray[np.uint8] = items[starts].view(np.uint8).reshape(len(starts), width)
    return rows
