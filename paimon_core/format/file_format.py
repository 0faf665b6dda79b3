"""Data-file formats: one entry point to write and read Parquet, ORC and Avro data files.

Writers stream batches into one file (``open_writer`` -> ``write``* -> ``close``) and give a
cheap size estimate for rolling at ``target-file-size``. Readers stream a file in order in
bounded batches (``read_file``), in the file's own Arrow types; callers conform them to the
table's canonical types with :func:`conform_to_schema` (handling of columns absent from an
older file -- schema evolution -- is the caller's job).

Example::

    writer = open_writer(file_io, path, schema, "parquet", table_options)
    for batch in batches:
        writer.write(batch)
        if writer.bytes_written() >= target_file_size:
            ...  # close and roll to a new file
    size = writer.close()
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.format.avro_format import AvroFormatWriter, read_avro, read_avro_schema
from paimon_core.format.conform import conform_array, conform_to_schema
from paimon_core.format.format_base import FormatWriter
from paimon_core.format.format_options import FILE_FORMAT, FILE_FORMAT_DEFAULT
from paimon_core.format.orc_format import OrcFormatWriter, read_orc, read_orc_schema
from paimon_core.format.parquet_format import ParquetFormatWriter, read_parquet, read_parquet_schema

if TYPE_CHECKING:
    import pyarrow.compute as pc

    from paimon_core.io.file_io import FileIO

__all__ = [
    "FORMATS",
    "FormatWriter",
    "conform_array",
    "conform_to_schema",
    "file_format_from_name",
    "format_extension",
    "format_from_options",
    "normalize_format",
    "open_writer",
    "read_file",
    "read_file_schema",
]

PARQUET = "parquet"
ORC = "orc"
AVRO = "avro"
FORMATS = (PARQUET, ORC, AVRO)

DEFAULT_BATCH_SIZE = 65536


def normalize_format(fmt: str) -> str:
    """Lower-case format identifier; unknown formats raise :class:`InvalidOptionError`."""
    name = fmt.strip().lower()
    if name not in FORMATS:
        raise InvalidOptionError(
            f"Unsupported file format '{fmt}'; supported: {', '.join(FORMATS)}", key=FILE_FORMAT, value=fmt
        )
    return name


def format_from_options(options: Mapping[str, str]) -> str:
    """The ``file.format`` of a table (default ``parquet``)."""
    return normalize_format(options.get(FILE_FORMAT, FILE_FORMAT_DEFAULT))


def format_extension(fmt: str) -> str:
    """File name extension (without dot) of data files in ``fmt``: the identifier itself."""
    return normalize_format(fmt)


def file_format_from_name(file_name: str) -> str:
    """``data-<uuid>-0.orc`` -> ``"orc"``; a name without a known extension raises."""
    base = file_name.rstrip("/").rsplit("/", 1)[-1]
    _, dot, ext = base.rpartition(".")
    if not dot or ext.lower() not in FORMATS:
        raise InvalidOptionError(f"Cannot tell the file format of '{file_name}' from its extension")
    return ext.lower()


def open_writer(
    file_io: FileIO,
    path: str,
    schema: pa.Schema,
    fmt: str,
    options: Mapping[str, str],
) -> FormatWriter:
    """Create ``path`` and return a writer of ``schema`` rows in ``fmt``.

    ``options`` are the table options (``file.compression``, ``file.compression.zstd-level``,
    ``file.block-size``, ``parquet.*``, ``orc.*``, ``avro.codec`` ...). Nullable fields are
    written optional, non-nullable ones required; Parquet field ids come from
    ``PARQUET:field_id`` field metadata.
    """
    name = normalize_format(fmt)
    if name == PARQUET:
        return ParquetFormatWriter(file_io, path, schema, options)
    if name == ORC:
        return OrcFormatWriter(file_io, path, schema, options)
    return AvroFormatWriter(file_io, path, schema, options)


def read_file(
    file_io: FileIO,
    path: str,
    fmt: str,
    *,
    columns: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    arrow_filter: pc.Expression | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of a data file in file order, at most ``batch_size`` rows per batch.

    Memory stays bounded by a row group (Parquet), a stripe (ORC) or ``batch_size`` records
    (Avro). ``columns`` selects and orders columns; one missing from the file raises
    :class:`~paimon_core.exceptions.SchemaMismatchError` (eagerly, before the first batch).
    ``arrow_filter`` removes non-matching rows (and lets Parquet skip row groups by their
    statistics), so only pass filters that are valid for the table kind (e.g. key filters for
    primary-key tables). Undecodable content raises
    :class:`~paimon_core.exceptions.CorruptFileError` naming ``path``; a missing file raises
    ``FileNotFoundError``.
    """
    if batch_size <= 0:
        raise InvalidArgumentError(f"batch_size must be positive, got {batch_size}")
    name = normalize_format(fmt)
    if name == PARQUET:
        return read_parquet(file_io, path, columns=columns, batch_size=batch_size, arrow_filter=arrow_filter)
    if name == ORC:
        return read_orc(file_io, path, columns=columns, batch_size=batch_size, arrow_filter=arrow_filter)
    return read_avro(file_io, path, columns=columns, batch_size=batch_size, arrow_filter=arrow_filter)


def read_file_schema(file_io: FileIO, path: str, fmt: str) -> pa.Schema:
    """The Arrow schema of a data file as its reader will produce it (before conforming)."""
    name = normalize_format(fmt)
    if name == PARQUET:
        return read_parquet_schema(file_io, path)
    if name == ORC:
        return read_orc_schema(file_io, path)
    return read_avro_schema(file_io, path)
