"""Option keys and resolved settings of the data-file formats.

Keys and defaults follow Java Paimon (``CoreOptions``, ``ParquetFileFormat``,
``OrcFileFormat``, ``AvroFileFormat``):

* ``file.compression`` (default ``zstd``) and ``file.compression.zstd-level``
  (default 1) apply to every format; ``parquet.compression`` and
  ``parquet.compression.codec.zstd.level`` override them for Parquet, ``orc.compress`` for
  ORC and ``avro.codec`` for Avro (Java gives the format keys precedence the same way).
* ``file.block-size`` (no default) sets the Parquet row group / ORC stripe size and
  wins over ``parquet.block.size`` (Hadoop key, default 128 MiB) and
  ``orc.stripe.size`` (default 64 MiB).
* ``parquet.write-page-index.enabled`` is pypaimon's key (default true).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from paimon_core.exceptions import InvalidOptionError

FILE_FORMAT = "file.format"
FILE_FORMAT_DEFAULT = "parquet"
FILE_COMPRESSION = "file.compression"
FILE_COMPRESSION_DEFAULT = "zstd"
FILE_COMPRESSION_ZSTD_LEVEL = "file.compression.zstd-level"
FILE_COMPRESSION_ZSTD_LEVEL_DEFAULT = 1
FILE_BLOCK_SIZE = "file.block-size"

PARQUET_COMPRESSION = "parquet.compression"
PARQUET_ZSTD_LEVEL = "parquet.compression.codec.zstd.level"
PARQUET_BLOCK_SIZE = "parquet.block.size"
PARQUET_BLOCK_SIZE_DEFAULT = 128 * 1024 * 1024
PARQUET_PAGE_SIZE = "parquet.page.size"
PARQUET_PAGE_SIZE_DEFAULT = 1024 * 1024
PARQUET_DICTIONARY_PAGE_SIZE = "parquet.dictionary.page.size"
PARQUET_DICTIONARY_PAGE_SIZE_DEFAULT = 1024 * 1024
PARQUET_ENABLE_DICTIONARY = "parquet.enable.dictionary"
PARQUET_ENABLE_DICTIONARY_DEFAULT = True
PARQUET_PAGE_ROW_COUNT_LIMIT = "parquet.page.row.count.limit"
PARQUET_WRITE_PAGE_INDEX = "parquet.write-page-index.enabled"
PARQUET_WRITE_PAGE_INDEX_DEFAULT = True

ORC_COMPRESS = "orc.compress"
ORC_STRIPE_SIZE = "orc.stripe.size"
ORC_STRIPE_SIZE_DEFAULT = 64 * 1024 * 1024
ORC_COMPRESS_SIZE = "orc.compress.size"
ORC_COMPRESS_SIZE_DEFAULT = 256 * 1024
ORC_ROW_INDEX_STRIDE = "orc.row.index.stride"
ORC_ROW_INDEX_STRIDE_DEFAULT = 10_000
ORC_DICTIONARY_KEY_THRESHOLD = "orc.dictionary.key.threshold"
ORC_DICTIONARY_KEY_THRESHOLD_DEFAULT = 0.8

AVRO_CODEC = "avro.codec"
#: Java's ``DataFileConstants.DEFAULT_SYNC_INTERVAL``.
AVRO_SYNC_INTERVAL = 64_000

_UNITS = {
    "": 1,
    "b": 1,
    "bytes": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kibibytes": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mebibytes": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gibibytes": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tebibytes": 1 << 40,
}
_MEMORY_RE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")


def parse_memory_size(key: str, text: str) -> int:
    """Parse a Paimon ``MemorySize`` string (``"128 mb"``, ``"64kb"``, ``"1024"``) to bytes."""
    m = _MEMORY_RE.match(text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise InvalidOptionError(f"Invalid memory size for '{key}': {text!r}", key=key, value=text)
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def _get_int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        return int(str(raw).strip())
    except ValueError as e:
        raise InvalidOptionError(f"Invalid integer for '{key}': {raw!r}", key=key, value=raw) from e


def _get_float(options: Mapping[str, str], key: str, default: float) -> float:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        return float(str(raw).strip())
    except ValueError as e:
        raise InvalidOptionError(f"Invalid number for '{key}': {raw!r}", key=key, value=raw) from e


def _get_bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise InvalidOptionError(f"Invalid boolean for '{key}': {raw!r}", key=key, value=raw)


def _block_size(options: Mapping[str, str], fallback_key: str, default: int) -> int:
    raw = options.get(FILE_BLOCK_SIZE)
    if raw is not None:
        return parse_memory_size(FILE_BLOCK_SIZE, str(raw))
    # parquet.block.size / orc.stripe.size are Hadoop-style plain byte counts.
    raw = options.get(fallback_key)
    if raw is not None:
        return parse_memory_size(fallback_key, str(raw))
    return default


_PARQUET_CODECS = {
    "zstd": "zstd",
    "snappy": "snappy",
    "gzip": "gzip",
    "brotli": "brotli",
    "lz4": "lz4",
    "lz4_raw": "lz4",
    "none": "none",
    "uncompressed": "none",
}
_ORC_CODECS = {
    "zstd": "zstd",
    "snappy": "snappy",
    "lz4": "lz4",
    "zlib": "zlib",
    "gzip": "zlib",
    "none": "uncompressed",
    "uncompressed": "uncompressed",
}
#: Avro codecs Java's ``CodecFactory.fromString`` knows, as fastavro names them.
_AVRO_CODECS = {
    "zstd": "zstandard",
    "zstandard": "zstandard",
    "snappy": "snappy",
    "deflate": "deflate",
    "bzip2": "bzip2",
    "xz": "xz",
    "none": "null",
    "null": "null",
}


def _codec(table: Mapping[str, str], fmt: str, key: str, value: str) -> str:
    codec = table.get(value.strip().lower())
    if codec is None:
        raise InvalidOptionError(
            f"Unsupported compression '{value}' for {fmt} (option '{key}'); supported: "
            f"{', '.join(sorted(table))}",
            key=key,
            value=value,
        )
    return codec


@dataclass(frozen=True, slots=True)
class ParquetSettings:
    """Resolved Parquet writer settings."""

    compression: str
    compression_level: int | None
    row_group_bytes: int
    data_page_size: int
    dictionary_page_size: int
    use_dictionary: bool
    write_page_index: bool
    max_rows_per_page: int | None

    @staticmethod
    def from_options(options: Mapping[str, str]) -> ParquetSettings:
        """Resolve from table options with Java's precedence and defaults."""
        key = PARQUET_COMPRESSION if PARQUET_COMPRESSION in options else FILE_COMPRESSION
        codec = _codec(_PARQUET_CODECS, "parquet", key, str(options.get(key, FILE_COMPRESSION_DEFAULT)))
        level: int | None = None
        if codec == "zstd":
            level = _get_int(
                options,
                PARQUET_ZSTD_LEVEL,
                _get_int(options, FILE_COMPRESSION_ZSTD_LEVEL, FILE_COMPRESSION_ZSTD_LEVEL_DEFAULT),
            )
        rows_per_page = options.get(PARQUET_PAGE_ROW_COUNT_LIMIT)
        return ParquetSettings(
            compression=codec,
            compression_level=level,
            row_group_bytes=_block_size(options, PARQUET_BLOCK_SIZE, PARQUET_BLOCK_SIZE_DEFAULT),
            data_page_size=_get_int(options, PARQUET_PAGE_SIZE, PARQUET_PAGE_SIZE_DEFAULT),
            dictionary_page_size=_get_int(
                options, PARQUET_DICTIONARY_PAGE_SIZE, PARQUET_DICTIONARY_PAGE_SIZE_DEFAULT
            ),
            use_dictionary=_get_bool(options, PARQUET_ENABLE_DICTIONARY, PARQUET_ENABLE_DICTIONARY_DEFAULT),
            write_page_index=_get_bool(options, PARQUET_WRITE_PAGE_INDEX, PARQUET_WRITE_PAGE_INDEX_DEFAULT),
            max_rows_per_page=None
            if rows_per_page is None
            else _get_int(options, PARQUET_PAGE_ROW_COUNT_LIMIT, 0),
        )


@dataclass(frozen=True, slots=True)
class OrcSettings:
    """Resolved ORC writer settings (pyarrow's ORC writer has no zstd level knob)."""

    compression: str
    stripe_size: int
    compression_block_size: int
    row_index_stride: int
    dictionary_key_size_threshold: float

    @staticmethod
    def from_options(options: Mapping[str, str]) -> OrcSettings:
        """Resolve from table options: ``orc.compress`` wins over ``file.compression`` (as in Java)."""
        key = ORC_COMPRESS if ORC_COMPRESS in options else FILE_COMPRESSION
        return OrcSettings(
            compression=_codec(_ORC_CODECS, "orc", key, str(options.get(key, FILE_COMPRESSION_DEFAULT))),
            stripe_size=_block_size(options, ORC_STRIPE_SIZE, ORC_STRIPE_SIZE_DEFAULT),
            compression_block_size=_get_int(options, ORC_COMPRESS_SIZE, ORC_COMPRESS_SIZE_DEFAULT),
            row_index_stride=_get_int(options, ORC_ROW_INDEX_STRIDE, ORC_ROW_INDEX_STRIDE_DEFAULT),
            dictionary_key_size_threshold=_get_float(
                options, ORC_DICTIONARY_KEY_THRESHOLD, ORC_DICTIONARY_KEY_THRESHOLD_DEFAULT
            ),
        )


@dataclass(frozen=True, slots=True)
class AvroSettings:
    """Resolved Avro writer settings."""

    codec: str
    compression_level: int | None

    @staticmethod
    def from_options(options: Mapping[str, str]) -> AvroSettings:
        """``avro.codec`` wins; otherwise ``file.compression`` (zstd with ``file.compression.zstd-level``)."""
        key = AVRO_CODEC if AVRO_CODEC in options else FILE_COMPRESSION
        codec = _codec(_AVRO_CODECS, "avro", key, str(options.get(key, FILE_COMPRESSION_DEFAULT)))
        level = None
        if codec == "zstandard":
            level = _get_int(options, FILE_COMPRESSION_ZSTD_LEVEL, FILE_COMPRESSION_ZSTD_LEVEL_DEFAULT)
        return AvroSettings(codec=codec, compression_level=level)
