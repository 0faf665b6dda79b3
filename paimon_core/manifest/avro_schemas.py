"""Avro schemas of Paimon's manifest files, and the Avro container codec.

Schemas
    The schemas are what Java Paimon (master) writes: ``AvroSchemaConverter``
    turns the ``_VERSION``-prefixed row types (``ManifestEntry.SCHEMA``,
    ``ManifestFileMeta.SCHEMA``, ``IndexManifestEntry.SCHEMA``) into a record
    named ``org.apache.paimon.avro.generated.record``; a nested row field ``_X``
    becomes a record named ``<parent>_<field>`` (``record__FILE``,
    ``record__FILE__KEY_STATS``). The top-level record and the stats / file
    records are not nullable (Java made them NOT NULL in 0.9); a nullable type
    ``T`` becomes ``["null", T]`` with ``"default": null``; TINYINT becomes
    ``int``; ``_CREATION_TIME`` (TIMESTAMP(3)) becomes ``long`` with logical type
    ``timestamp-millis``.

Container
    fastavro only handles the ``zstandard`` codec with ``backports.zstd``, so we
    frame the Avro object container ourselves (header, blocks, sync markers) and
    (de)compress blocks with the ``zstandard`` package (``snappy`` of older Java
    manifests through pyarrow). fastavro encodes the records we write.

Decoding
    Reading is on the scan-planning hot path. :func:`compile_decoder` turns the
    *writer* schema found in a file plus a :class:`RecordPlan` (which fields we
    want, and which function builds our dataclass from them) into straight-line
    Python, cached per schema: about twice as fast as fastavro's C reader plus a
    dict-to-dataclass pass. Fields resolve by name, whichever writer (Java,
    pypaimon, pypaimon-rust) named the records; unknown fields are skipped;
    logical types stay their stored primitives, so ``_CREATION_TIME`` comes
    back as the stored ``long``.
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import fastavro
import zstandard

from paimon_core.exceptions import CorruptFileError
from paimon_core.manifest.entries import EMPTY_ROW_BYTES, EMPTY_STATS, SimpleStats

AVRO_NAMESPACE = "org.apache.paimon.avro.generated"
RECORD_NAME = "record"

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
#: Java Avro's ``DataFileConstants.DEFAULT_SYNC_INTERVAL``: a block is flushed
#: once its uncompressed records reach this many bytes.
SYNC_INTERVAL = 64000
#: Java Paimon's default ``file.compression.zstd-level``.
ZSTD_LEVEL = 1

ManifestRecord = dict[str, Any]

# --- schema building blocks -------------------------------------------------


def _required(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type}


def _optional(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


def _array(items: Any) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _record(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": fields}


def _top_record(fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": RECORD_NAME, "namespace": AVRO_NAMESPACE, "fields": fields}


def _simple_stats(record_name: str) -> dict[str, Any]:
    """Java ``SimpleStats.SCHEMA`` (a NOT NULL row)."""
    return _record(
        record_name,
        [
            _required("_MIN_VALUES", "bytes"),
            _required("_MAX_VALUES", "bytes"),
            _optional("_NULL_COUNTS", _array(["null", "long"])),
        ],
    )


def _data_file_meta(record_name: str) -> dict[str, Any]:
    """Java ``DataFileMeta.SCHEMA`` (fields 0..20)."""
    return _record(
        record_name,
        [
            _required("_FILE_NAME", "string"),
            _required("_FILE_SIZE", "long"),
            _required("_ROW_COUNT", "long"),
            _required("_MIN_KEY", "bytes"),
            _required("_MAX_KEY", "bytes"),
            _required("_KEY_STATS", _simple_stats(record_name + "__KEY_STATS")),
            _required("_VALUE_STATS", _simple_stats(record_name + "__VALUE_STATS")),
            _required("_MIN_SEQUENCE_NUMBER", "long"),
            _required("_MAX_SEQUENCE_NUMBER", "long"),
            _required("_SCHEMA_ID", "long"),
            _required("_LEVEL", "int"),
            _required("_EXTRA_FILES", _array("string")),
            _optional("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
            _optional("_DELETE_ROW_COUNT", "long"),
            _optional("_EMBEDDED_FILE_INDEX", "bytes"),
            _optional("_FILE_SOURCE", "int"),
            _optional("_VALUE_STATS_COLS", _array("string")),
            _optional("_EXTERNAL_PATH", "string"),
            _optional("_FIRST_ROW_ID", "long"),
            _optional("_WRITE_COLS", _array("string")),
            _optional("_WRITE_COLS_SEQUENCES", _array("long")),
        ],
    )


# --- the three file schemas ---------------------------------------------------

#: ``_VERSION`` Java writes into manifest files (``ManifestEntrySerializer``).
MANIFEST_ENTRY_VERSION = 2
#: ``_VERSION`` Java writes into manifest lists (``ManifestFileMetaSerializer``).
MANIFEST_FILE_META_VERSION = 2
#: ``_VERSION`` Java writes into index manifests (``IndexManifestEntrySerializer``).
INDEX_MANIFEST_ENTRY_VERSION = 1

MANIFEST_ENTRY_SCHEMA: dict[str, Any] = _top_record(
    [
        _required("_VERSION", "int"),
        _required("_KIND", "int"),
        _required("_PARTITION", "bytes"),
        _required("_BUCKET", "int"),
        _required("_TOTAL_BUCKETS", "int"),
        _required("_FILE", _data_file_meta("record__FILE")),
    ]
)

MANIFEST_FILE_META_SCHEMA: dict[str, Any] = _top_record(
    [
        _required("_VERSION", "int"),
        _required("_FILE_NAME", "string"),
        _required("_FILE_SIZE", "long"),
        _required("_NUM_ADDED_FILES", "long"),
        _required("_NUM_DELETED_FILES", "long"),
        _required("_PARTITION_STATS", _simple_stats("record__PARTITION_STATS")),
        _required("_SCHEMA_ID", "long"),
        _optional("_MIN_BUCKET", "int"),
        _optional("_MAX_BUCKET", "int"),
        _optional("_MIN_LEVEL", "int"),
        _optional("_MAX_LEVEL", "int"),
        _optional("_MIN_ROW_ID", "long"),
        _optional("_MAX_ROW_ID", "long"),
    ]
)

INDEX_MANIFEST_ENTRY_SCHEMA: dict[str, Any] = _top_record(
    [
        _required("_VERSION", "int"),
        _required("_KIND", "int"),
        _required("_PARTITION", "bytes"),
        _required("_BUCKET", "int"),
        _required("_INDEX_TYPE", "string"),
        _required("_FILE_NAME", "string"),
        _required("_FILE_SIZE", "long"),
        _required("_ROW_COUNT", "long"),
        # Java: ARRAY(nullable DeletionVectorMeta.SCHEMA), itself nullable.
        _optional(
            "_DELETIONS_VECTORS_RANGES",
            _array(
                [
                    "null",
                    _record(
                        "record__DELETIONS_VECTORS_RANGES",
                        [
                            _required("f0", "string"),
                            _required("f1", "int"),
                            _required("f2", "int"),
                            _optional("_CARDINALITY", "long"),
                        ],
                    ),
                ]
            ),
        ),
        _optional("_EXTERNAL_PATH", "string"),
        # Java: GlobalIndexMeta.SCHEMA is a nullable row.
        _optional(
            "_GLOBAL_INDEX",
            _record(
                "record__GLOBAL_INDEX",
                [
                    _required("_ROW_RANGE_START", "long"),
                    _required("_ROW_RANGE_END", "long"),
                    _required("_INDEX_FIELD_ID", "int"),
                    _optional("_EXTRA_FIELD_IDS", _array("int")),
                    _optional("_INDEX_META", "bytes"),
                    _optional("_SOURCE_META", "bytes"),
                ],
            ),
        ),
    ]
)


def schema_json(schema: Any) -> str:
    """The schema as Java's Avro ``Schema.toString()`` prints it (compact JSON)."""
    return json.dumps(schema, separators=(",", ":"))


def strip_logical_types(schema: Any) -> Any:
    """A copy of a schema (JSON form) without ``logicalType`` annotations."""
    if isinstance(schema, dict):
        return {k: strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [strip_logical_types(v) for v in schema]
    return schema


_SCHEMAS: dict[str, dict[str, Any]] = {
    "manifest_entry": MANIFEST_ENTRY_SCHEMA,
    "manifest_file_meta": MANIFEST_FILE_META_SCHEMA,
    "index_manifest_entry": INDEX_MANIFEST_ENTRY_SCHEMA,
}


@cache
def _parsed_for_encoding(name: str) -> Any:
    return fastavro.parse_schema(strip_logical_types(_SCHEMAS[name]))


# --- varints and the container header ---------------------------------------------


def _encode_long(value: int) -> bytes:
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _decode_long(data: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    n = 0
    while True:
        if pos >= len(data):
            raise EOFError("unexpected end of data while reading a varint")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("varint is too long")
    return (n >> 1) ^ -(n & 1), pos


def _encode_bytes(value: bytes) -> bytes:
    return _encode_long(len(value)) + value


def _header(schema_text: str, codec: str, sync: bytes) -> bytes:
    meta = [(b"avro.schema", schema_text.encode("utf-8")), (b"avro.codec", codec.encode("ascii"))]
    out = bytearray(MAGIC)
    out += _encode_long(len(meta))
    for key, value in meta:
        out += _encode_bytes(key)
        out += _encode_bytes(value)
    out += _encode_long(0)
    out += sync
    return bytes(out)


def _parse_header(data: bytes) -> tuple[dict[str, bytes], bytes, int]:
    """Parse ``magic, meta map, sync``; return (meta, sync, position after it)."""
    if data[:4] != MAGIC:
        raise ValueError("not an Avro object container file (bad magic)")
    pos = 4
    meta: dict[str, bytes] = {}
    while True:
        count, pos = _decode_long(data, pos)
        if count == 0:
            break
        if count < 0:  # a negative count is followed by the block's byte size
            count = -count
            _, pos = _decode_long(data, pos)
        for _ in range(count):
            key, pos = _read_bytes(data, pos)
            value, pos = _read_bytes(data, pos)
            meta[key.decode("utf-8")] = value
    sync = data[pos : pos + SYNC_SIZE]
    if len(sync) != SYNC_SIZE:
        raise EOFError("truncated header (sync marker)")
    return meta, sync, pos + SYNC_SIZE


def _read_bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = _decode_long(data, pos)
    end = pos + length
    if length < 0 or end > len(data):
        raise EOFError("truncated data")
    return data[pos:end], end


# --- codecs ----------------------------------------------------------------------


_ZSTD = threading.local()


def _zstd() -> zstandard.ZstdDecompressor:
    """This thread's zstd decompressor (making one per block costs more than a small block)."""
    got: zstandard.ZstdDecompressor | None = getattr(_ZSTD, "d", None)
    if got is None:
        got = _ZSTD.d = zstandard.ZstdDecompressor()
    return got


def _decompress(codec: str, block: bytes) -> bytes:
    if codec == "zstandard":
        size = zstandard.frame_content_size(block)
        if 0 < size <= 256 * len(block):  # the size is in the frame (and plausible): decode in one call
            out: bytes = _zstd().decompress(block)  # a truncated frame raises
            return out
        dobj = _zstd().decompressobj()
        out = dobj.decompress(block)
        if not dobj.eof:
            raise EOFError("truncated zstandard block")
        return out
    if codec == "null":
        return block
    if codec == "deflate":
        return zlib.decompress(block, -15)
    if codec == "snappy":  # older Java manifests
        return _snappy_decompress(block)
    raise ValueError(f"unsupported Avro codec {codec!r}")


def _snappy_decompress(block: bytes) -> bytes:
    """Avro's snappy framing: raw snappy data, then a big-endian CRC32 of the result."""
    import pyarrow as pa  # lazily: only old snappy manifests need it

    if len(block) < 4:
        raise EOFError("truncated snappy block")
    data, crc = block[:-4], int.from_bytes(block[-4:], "big")
    size, _ = _decode_varint(data)  # raw snappy starts with the uncompressed length
    out: bytes = pa.decompress(data, decompressed_size=size, codec="snappy", asbytes=True)
    if zlib.crc32(out) != crc:
        raise ValueError("snappy block CRC mismatch")
    return out


def _decode_varint(data: bytes) -> tuple[int, int]:
    """An unsigned (not zig-zag) little-endian base-128 varint at the start of ``data``."""
    n = shift = pos = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("bad varint")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7


def _compress(codec: str, block: bytes, level: int) -> bytes:
    if codec == "zstandard":
        return zstandard.ZstdCompressor(level=level).compress(block)
    if codec == "null":
        return block
    if codec == "deflate":
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        return c.compress(block) + c.flush()
    if codec == "snappy":
        import pyarrow as pa  # lazily, as for reading

        packed: bytes = pa.compress(block, codec="snappy", asbytes=True)
        return packed + zlib.crc32(block).to_bytes(4, "big")
    raise ValueError(f"unsupported Avro codec {codec!r}")


# --- reading and writing ------------------------------------------------------------


def read_avro_blocks(data: bytes) -> tuple[Any, list[tuple[int, bytes]]]:
    """Split a container file into its writer schema and decompressed blocks.

    Returns ``(writer_schema, [(record_count, block_bytes), ...])``. Raises
    ``ValueError``/``EOFError`` on malformed input; callers wrap them.
    """
    writer_schema, _, blocks = read_avro_blocks_keyed(data)
    return writer_schema, blocks


@lru_cache(maxsize=64)
def _schema_of(text: bytes) -> tuple[Any, str]:
    schema = json.loads(text)
    return schema, json.dumps(schema, sort_keys=True)


#: The last header parsed: its bytes before the sync marker, its metadata and its length.
_LAST_HEADER: tuple[bytes, dict[str, bytes], int] | None = None


def _header_of(data: bytes) -> tuple[dict[str, bytes], bytes, int]:
    """:func:`_parse_header`, skipped when ``data`` starts with the same bytes as the last header
    parsed (the files of one table differ only in their sync markers): parsing reads exactly
    those bytes, so it would give the same metadata. The metadata is shared: do not modify it."""
    global _LAST_HEADER
    last = _LAST_HEADER
    if last is not None and data.startswith(last[0]) and len(data) >= last[2]:
        return last[1], data[last[2] - SYNC_SIZE : last[2]], last[2]
    meta, sync, pos = _parse_header(data)
    _LAST_HEADER = (data[: pos - SYNC_SIZE], meta, pos)
    return meta, sync, pos


def read_avro_blocks_keyed(data: bytes) -> tuple[Any, str, list[tuple[int, bytes]]]:
    """:func:`read_avro_blocks`, plus the writer schema as canonical JSON text (a cache key).

    The parsed schema is shared between files with the same schema: do not modify it.
    """
    meta, sync, pos = _header_of(data)
    codec = meta.get("avro.codec", b"null").decode("ascii")
    writer_schema, schema_text = _schema_of(meta["avro.schema"])
    blocks: list[tuple[int, bytes]] = []
    end = len(data)
    while pos < end:
        count, pos = _decode_long(data, pos)
        block, pos = _read_bytes(data, pos)
        if data[pos : pos + SYNC_SIZE] != sync:
            raise ValueError(f"bad sync marker after the block ending at offset {pos}")
        pos += SYNC_SIZE
        if count < 0:
            raise ValueError(f"negative record count {count} in a block")
        blocks.append((count, _decompress(codec, block)))
    return writer_schema, schema_text, blocks


def read_avro_records(data: bytes, path: str) -> list[ManifestRecord]:
    """Decode every record of an Avro container file into dicts, with fastavro.

    The generic (slower) path: records are plain dicts keyed by field name,
    logical types left as their stored primitives. Malformed, truncated or
    undecodable content raises :class:`CorruptFileError` naming ``path``.
    """
    try:
        writer_schema, blocks = read_avro_blocks(data)
        # Re-frame as an uncompressed container so fastavro's C reader decodes it.
        sync = bytes(SYNC_SIZE)
        out = io.BytesIO()
        out.write(_header(json.dumps(strip_logical_types(writer_schema)), "null", sync))
        for count, raw in blocks:
            out.write(_encode_long(count))
            out.write(_encode_bytes(raw))
            out.write(sync)
        out.seek(0)
        records: list[ManifestRecord] = []
        for rec in fastavro.reader(out):
            if not isinstance(rec, dict):
                raise ValueError("top-level Avro value is not a record")
            records.append(rec)
        return records
    except Exception as e:  # noqa: BLE001 - any decoding failure means a corrupt file
        raise _corrupt(path, e) from e


def read_avro_objects(data: bytes, path: str, plan: RecordPlan) -> list[Any]:
    """Decode every record of an Avro container file into objects built by ``plan``.

    The fast path used by the manifest readers: a decoder specialised to the
    file's writer schema and to ``plan`` is generated once and cached, so no
    intermediate dicts are built. Fields are matched by name; unknown writer
    fields are skipped. Errors raise :class:`CorruptFileError` naming ``path``.
    """
    try:
        _, schema_text, blocks = read_avro_blocks_keyed(data)
    except Exception as e:  # noqa: BLE001 - any decoding failure means a corrupt file
        raise _corrupt(path, e) from e
    return decode_avro_blocks(schema_text, blocks, path, plan)


def decode_avro_blocks(schema_text: str, blocks: list[tuple[int, bytes]], path: str, plan: RecordPlan) -> list[Any]:
    """Decode the blocks of :func:`read_avro_blocks_keyed` into objects built by ``plan``
    (see :func:`read_avro_objects`)."""
    try:
        records = sum(count for count, _ in blocks)
        if 0 < records < SMALL_FILE_RECORDS and (schema_text, plan) not in _COMPILED:
            return _decode_small(schema_text, blocks, plan)
        with _COMPILE_LOCK:  # the scan's thread pool would otherwise compile the same decoder N times
            decode = compile_decoder(schema_text, plan)
            _COMPILED.add((schema_text, plan))
        out: list[Any] = []
        for count, raw in blocks:
            end = decode(raw, 0, count, out)
            if end != len(raw):
                raise ValueError(f"block has {len(raw) - end} trailing bytes after {count} records")
        return out
    except CorruptFileError:
        raise
    except Exception as e:  # noqa: BLE001 - any decoding failure means a corrupt file
        raise _corrupt(path, e) from e


#: A file with fewer records than this is decoded by fastavro's C reader plus ``plan`` unless a
#: decoder for its schema is compiled already: generating one costs 5-10 ms of CPU, once per
#: process and schema, which would dominate a small read in a fresh process.
SMALL_FILE_RECORDS = 64
_COMPILED: set[tuple[str, RecordPlan]] = set()


@lru_cache(maxsize=64)
def _fastavro_schema(schema_text: str) -> Any:
    return fastavro.parse_schema(strip_logical_types(json.loads(schema_text)))


def _decode_small(schema_text: str, blocks: list[tuple[int, bytes]], plan: RecordPlan) -> list[Any]:
    """What the compiled decoder returns, through fastavro's dicts (the same values: logical
    types stripped, fields matched by name, missing ones None)."""
    parsed = _fastavro_schema(schema_text)
    out: list[Any] = []
    for count, raw in blocks:
        bio = io.BytesIO(raw)
        for _ in range(count):
            rec = fastavro.schemaless_reader(bio, parsed, None)
            if not isinstance(rec, dict):
                raise ValueError("null top-level record" if rec is None else "top-level Avro value is not a record")
            out.append(_from_dict(rec, plan))
        if bio.tell() != len(raw):
            raise ValueError(f"block has {len(raw) - bio.tell()} trailing bytes after {count} records")
    return out


def _from_dict(rec: dict[str, Any], plan: RecordPlan) -> Any:
    missing = plan.required - rec.keys()
    if missing:
        raise ValueError(f"required field(s) {sorted(missing)} missing from the writer schema")
    nested = dict(plan.nested)
    args = []
    for name in plan.fields:
        value = rec.get(name)
        sub = nested.get(name)
        if sub is not None:
            if isinstance(value, dict):
                value = _from_dict(value, sub)
            elif isinstance(value, list):
                value = [_from_dict(v, sub) if isinstance(v, dict) else v for v in value]
        args.append(value)
    return plan.build(*args)


def _corrupt(path: str, e: BaseException) -> CorruptFileError:
    return CorruptFileError(f"Cannot read Avro file {path}: {type(e).__name__}: {e}", path=path)


def write_avro_records(
    schema_name: str,
    records: Iterable[ManifestRecord],
    *,
    codec: str = "zstandard",
    level: int = ZSTD_LEVEL,
) -> bytes:
    """Encode records with one of our schemas as an Avro container file.

    ``schema_name`` is one of ``manifest_entry``, ``manifest_file_meta``,
    ``index_manifest_entry``.
    """
    return write_avro_container(
        _SCHEMAS[schema_name], records, codec=codec, level=level, parsed=_parsed_for_encoding(schema_name)
    )


def write_avro_container(
    schema: Any,
    records: Iterable[ManifestRecord],
    *,
    codec: str = "zstandard",
    level: int = ZSTD_LEVEL,
    parsed: Any = None,
) -> bytes:
    """Encode records as an Avro object container file and return its bytes.

    The header carries ``schema`` as Java prints it; codecs are ``zstandard``
    (Paimon's default), ``snappy``, ``deflate`` and ``null``. Blocks are
    flushed every :data:`SYNC_INTERVAL` uncompressed bytes, as Java's
    ``DataFileWriter`` does. Integer values are written as is for logical
    types (``_CREATION_TIME`` stays the stored millis).
    """
    if parsed is None:
        parsed = fastavro.parse_schema(strip_logical_types(schema))
    sync = os.urandom(SYNC_SIZE)
    out = bytearray(_header(schema_json(schema), codec, sync))
    buf = io.BytesIO()
    count = 0

    def flush() -> None:
        nonlocal count
        block = _compress(codec, buf.getvalue(), level)
        out.extend(_encode_long(count))
        out.extend(_encode_bytes(block))
        out.extend(sync)
        buf.seek(0)
        buf.truncate()
        count = 0

    for rec in records:
        fastavro.schemaless_writer(buf, parsed, rec)
        count += 1
        if buf.tell() >= SYNC_INTERVAL:
            flush()
    if count:
        flush()
    return bytes(out)


# --- the specialised decoder -----------------------------------------------------------


@dataclass(frozen=True)
class RecordPlan:
    """How to turn one Avro record into a Python object.

    ``build`` is called with the values of ``fields`` in that order (a field
    the writer did not write is passed as None; a missing field listed in
    ``required`` makes the file unreadable). ``nested`` gives the plans of
    record-typed fields, or of the records inside array-typed fields; other
    record values decode to dicts. Plans are hashable and used as cache keys.
    """

    fields: tuple[str, ...]
    build: Callable[..., Any]
    required: frozenset[str] = frozenset()
    nested: tuple[tuple[str, RecordPlan], ...] = ()


_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_COMPLEX = frozenset({"record", "error", "array", "map", "enum", "fixed"})
_MAX_DEPTH = 32


_COMPILE_LOCK = threading.Lock()


@lru_cache(maxsize=64)
def compile_decoder(writer_schema_text: str, plan: RecordPlan | None) -> Callable[..., int]:
    """Generate ``decode(data, pos, count, out) -> end_pos`` for a writer schema.

    The generated function decodes ``count`` top-level records from ``data``
    starting at ``pos``, appends them to ``out`` and returns the position after
    the last one. Without a plan, records decode to dicts (as fastavro does,
    with logical types left as their primitives). Only generated identifiers
    and integer literals go into the source; field names, builders and enum
    symbols are passed in as constants, so no file content is ever executed.
    """
    gen = _Codegen()
    gen.emit(0, "def decode(data, pos, count, out):")
    gen.emit(1, "n = len(data)")
    gen.emit(1, "for _ in range(count):")
    gen.value(json.loads(writer_schema_text), 2, "rec", plan, "", 0)
    gen.emit(2, "if rec is None: raise ValueError('null top-level record')")
    gen.emit(2, "out.append(rec)")
    gen.emit(1, "return pos")
    namespace: dict[str, Any] = {"_unpack_from": struct.unpack_from}
    namespace.update(gen.consts)
    exec(compile("\n".join(gen.lines), "<paimon-avro-decoder>", "exec"), namespace)  # noqa: S102
    decode: Callable[..., int] = namespace["decode"]
    return decode


class _Codegen:
    """Emits straight-line Python that decodes one writer schema."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self.named: dict[str, tuple[dict[str, Any], str]] = {}
        self._n = 0

    def var(self) -> str:
        self._n += 1
        return f"v{self._n}"

    def const(self, value: Any) -> str:
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    # -- primitives --

    def long(self, ind: int, target: str) -> None:
        """A zig-zag varint, inlined (one byte: no loop; longer: a local loop)."""
        self.emit(ind, "b = data[pos]")
        self.emit(ind, "pos += 1")
        self.emit(ind, f"if b < 128: {target} = (b >> 1) ^ -(b & 1)")
        self.emit(ind, "else:")
        self.emit(ind + 1, "z = b & 127")
        self.emit(ind + 1, "shift = 7")
        self.emit(ind + 1, "while True:")
        self.emit(ind + 2, "b = data[pos]")
        self.emit(ind + 2, "pos += 1")
        self.emit(ind + 2, "z |= (b & 127) << shift")
        self.emit(ind + 2, "if b < 128: break")
        self.emit(ind + 2, "shift += 7")
        self.emit(ind + 2, "if shift > 63: raise ValueError('varint is too long')")
        self.emit(ind + 1, f"{target} = (z >> 1) ^ -(z & 1)")

    def sized(self, ind: int, target: str | None, kind: str) -> None:
        length = self.var()
        self.long(ind, length)
        self.emit(ind, f"end = pos + {length}")
        self.emit(ind, f"if {length} < 0 or end > n: raise EOFError('truncated value')")
        if target is not None:
            if kind == "string":
                self.emit(ind, f"{target} = str(data[pos:end], 'utf-8')")
            else:
                self.emit(ind, f"{target} = data[pos:end]")
        self.emit(ind, "pos = end")

    def fixed_width(self, ind: int, target: str | None, fmt: str, width: int) -> None:
        if target is not None:
            self.emit(ind, f"{target} = _unpack_from({fmt!r}, data, pos)[0]")
        self.emit(ind, f"pos += {width}")

    # -- schema walk --

    def resolve(self, schema: Any, ns: str) -> tuple[Any, str]:
        """Unwrap annotated primitives and follow named-type references."""
        for _ in range(_MAX_DEPTH):
            if isinstance(schema, str):
                if schema in _PRIMITIVES:
                    return schema, ns
                key = schema if "." in schema or not ns else f"{ns}.{schema}"
                found = self.named.get(key) or self.named.get(schema)
                if found is None:
                    raise ValueError(f"unknown Avro type {schema!r}")
                return found
            if isinstance(schema, dict) and schema.get("type") not in _COMPLEX:
                schema = schema.get("type")  # e.g. {"type": "long", "logicalType": ...}
                continue
            return schema, ns
        raise ValueError("Avro schema is nested too deeply")

    def register(self, schema: dict[str, Any], ns: str) -> str:
        name = str(schema["name"])
        if "." in name:
            full, own_ns = name, name.rsplit(".", 1)[0]
        else:
            own_ns = str(schema.get("namespace", ns) or "")
            full = f"{own_ns}.{name}" if own_ns else name
        self.named[full] = (schema, own_ns)
        self.named.setdefault(name.rsplit(".", 1)[-1], (schema, own_ns))
        return own_ns

    def value(
        self, schema: Any, ind: int, target: str | None, plan: RecordPlan | None, ns: str, depth: int
    ) -> None:
        """Decode one value into ``target`` (None: skip it)."""
        if depth > _MAX_DEPTH:
            raise ValueError("Avro schema is nested too deeply (recursive type?)")
        schema, ns = self.resolve(schema, ns)
        if isinstance(schema, list):
            self.union(schema, ind, target, plan, ns, depth)
        elif isinstance(schema, str):
            self.primitive(schema, ind, target)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind == "record" or kind == "error":
                own_ns = self.register(schema, ns)
                self.record(schema, ind, target, plan, own_ns, depth)
            elif kind == "array":
                self.blocks(
                    ind, target, lambda i, t: self.value(schema["items"], i, t, plan, ns, depth + 1), False
                )
            elif kind == "map":
                self.blocks(
                    ind, target, lambda i, t: self.value(schema["values"], i, t, None, ns, depth + 1), True
                )
            elif kind == "enum":
                self.register(schema, ns)
                idx = self.var()
                self.long(ind, idx)
                if target is not None:
                    self.emit(ind, f"{target} = {self.const(tuple(schema['symbols']))}[{idx}]")
            elif kind == "fixed":
                self.register(schema, ns)
                size = int(schema["size"])
                self.emit(ind, f"end = pos + {size}")
                self.emit(ind, "if end > n: raise EOFError('truncated value')")
                if target is not None:
                    self.emit(ind, f"{target} = data[pos:end]")
                self.emit(ind, "pos = end")
            else:
                raise ValueError(f"unsupported Avro type {kind!r}")
        else:
            raise ValueError(f"invalid Avro schema {schema!r}")

    def primitive(self, kind: str, ind: int, target: str | None) -> None:
        if kind == "null":
            if target is not None:
                self.emit(ind, f"{target} = None")
        elif kind in ("int", "long"):
            self.long(ind, target or "_")
        elif kind in ("string", "bytes"):
            self.sized(ind, target, kind)
        elif kind == "boolean":
            if target is not None:
                self.emit(ind, f"{target} = data[pos] != 0")
            self.emit(ind, "pos += 1")
        elif kind == "float":
            self.fixed_width(ind, target, "<f", 4)
        elif kind == "double":
            self.fixed_width(ind, target, "<d", 8)
        else:
            raise ValueError(f"unsupported Avro type {kind!r}")

    def union(
        self,
        branches: list[Any],
        ind: int,
        target: str | None,
        plan: RecordPlan | None,
        ns: str,
        depth: int,
    ) -> None:
        # A branch index k < 64 is the single byte 2k (zig-zag varint).
        if len(branches) > 63:
            raise ValueError("unions of more than 63 branches are not supported")
        self.emit(ind, "b = data[pos]")
        self.emit(ind, "pos += 1")
        for i, branch in enumerate(branches):
            self.emit(ind, f"{'if' if i == 0 else 'elif'} b == {2 * i}:")
            before = len(self.lines)
            self.value(branch, ind + 1, target, plan, ns, depth + 1)
            if len(self.lines) == before:
                self.emit(ind + 1, "pass")
        self.emit(ind, "else: raise ValueError('invalid union branch')")

    def blocks(
        self, ind: int, target: str | None, item: Callable[[int, str | None], None], is_map: bool
    ) -> None:
        items, count, elem, key = self.var(), self.var(), self.var(), self.var()
        if target is not None:
            self.emit(ind, f"{items} = {{}}" if is_map else f"{items} = []")
        self.emit(ind, "while True:")
        self.long(ind + 1, count)
        self.emit(ind + 1, f"if {count} == 0: break")
        self.emit(ind + 1, f"if {count} < 0:")
        self.emit(ind + 2, f"{count} = -{count}")
        self.long(ind + 2, "_")
        self.emit(ind + 1, f"for _ in range({count}):")
        if is_map:
            self.sized(ind + 2, key if target is not None else None, "string")
        item(ind + 2, elem if target is not None else None)
        if target is not None:
            self.emit(ind + 2, f"{items}[{key}] = {elem}" if is_map else f"{items}.append({elem})")
        if target is not None:
            self.emit(ind, f"{target} = {items}")

    def record(
        self,
        schema: dict[str, Any],
        ind: int,
        target: str | None,
        plan: RecordPlan | None,
        ns: str,
        depth: int,
    ) -> None:
        fields = schema.get("fields", [])
        if plan is None:
            out = self.var()
            if target is not None:
                self.emit(ind, f"{out} = {{}}")
            for f in fields:
                v = self.var() if target is not None else None
                self.value(f["type"], ind, v, None, ns, depth + 1)
                if target is not None:
                    self.emit(ind, f"{out}[{self.const(str(f['name']))}] = {v}")
            if target is not None:
                self.emit(ind, f"{target} = {out}")
            return
        wanted = set(plan.fields) if target is not None else set()
        nested = dict(plan.nested)
        names = {str(f["name"]) for f in fields}
        missing = plan.required - names
        if missing and target is not None:
            raise ValueError(f"required field(s) {sorted(missing)} missing from the writer schema")
        local: dict[str, str] = {}
        for f in fields:
            name = str(f["name"])
            if name in wanted:
                local[name] = self.var()
                self.value(f["type"], ind, local[name], nested.get(name), ns, depth + 1)
            else:
                self.value(f["type"], ind, None, None, ns, depth + 1)
        if target is not None:
            args = ", ".join(local.get(name, "None") for name in plan.fields)
            self.emit(ind, f"{target} = {self.const(plan.build)}({args})")


# --- SimpleStats <-> record (shared by manifest files and manifest lists) ------------


def build_stats(min_values: bytes, max_values: bytes, null_counts: list[int | None] | None) -> SimpleStats:
    """Build ``SimpleStats`` from decoded record values (sharing the empty instance)."""
    if null_counts is None:
        return SimpleStats(min_values, max_values, None)
    if not null_counts and min_values == EMPTY_ROW_BYTES and max_values == EMPTY_ROW_BYTES:
        return EMPTY_STATS
    return SimpleStats(min_values, max_values, tuple(null_counts))


#: Decodes a ``SimpleStats`` record (Java ``SimpleStats.SCHEMA``).
STATS_PLAN = RecordPlan(
    fields=("_MIN_VALUES", "_MAX_VALUES", "_NULL_COUNTS"),
    build=build_stats,
    required=frozenset({"_MIN_VALUES", "_MAX_VALUES"}),
)


def stats_to_record(stats: SimpleStats) -> ManifestRecord:
    """Encode ``SimpleStats`` as its Avro record."""
    nc = stats.null_counts
    return {
        "_MIN_VALUES": stats.min_values,
        "_MAX_VALUES": stats.max_values,
        "_NULL_COUNTS": None if nc is None else list(nc),
    }
