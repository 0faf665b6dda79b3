"""ORC data files, written and read with ``pyarrow.orc``.

Java's ``OrcTypeUtil`` maps TIME to ORC ``int`` (millis of the day), BINARY(n)/VARBINARY to
``binary``, TIMESTAMP to ``timestamp`` and TIMESTAMP_LTZ to ``timestamp with local time zone``;
pyarrow writes tz-aware timestamps as the latter. pyarrow's ORC writer cannot write time or
fixed-size binary columns, so they are stored as Java stores them (int32 / binary) and
:func:`paimon_core.format.conform.conform_to_schema` brings them back. pyarrow's ORC writer has
no zstd level knob (it uses zstd's default), unlike Java's ``orc.compression.zstd.level``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.types as pt

from paimon_core.format.format_base import (
    BaseFormatWriter,
    check_columns,
    corrupt,
    filter_batch,
    guard_read,
    is_decode_error,
    slice_batches,
)
from paimon_core.format.format_options import OrcSettings

if TYPE_CHECKING:
    import pyarrow.compute as pc

    from paimon_core.io.file_io import FileIO


_HEADER_ALLOWANCE = 1024


def orc_physical_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type pyarrow's ORC writer is given for a column of type ``t``."""
    if pt.is_time(t):
        return pa.int32()
    if pt.is_fixed_size_binary(t):
        return pa.binary()
    if pt.is_struct(t):
        return pa.struct([f.with_type(orc_physical_type(f.type)) for f in t])
    if pt.is_map(t):
        return pa.map_(
            t.key_field.with_type(orc_physical_type(t.key_type)),
            t.item_field.with_type(orc_physical_type(t.item_type)),
        )
    if pt.is_list(t) or pt.is_large_list(t):
        return pa.list_(t.value_field.with_type(orc_physical_type(t.value_type)))
    return t


def _physical_array(arr: pa.Array, physical: pa.DataType) -> pa.Array:
    if arr.type == physical:
        return arr
    if pt.is_time(arr.type):
        # time -> int32 millis of day (a time64 with sub-millisecond values fails the safe cast).
        return arr.cast(pa.time32("ms"), safe=True).cast(pa.int32())
    return arr.cast(physical, safe=True)


def _unsliced(arr: pa.Array) -> pa.Array:
    """A copy at offset 0 of a sliced nested array: pyarrow's ORC writer ignores a struct's offset."""
    if arr.offset and pt.is_nested(arr.type):
        return pa.concat_arrays([arr])
    return arr


class OrcFormatWriter(BaseFormatWriter):
    """Streams batches into ``pyarrow.orc.ORCWriter`` (stripes of ``orc.stripe.size``)."""

    def __init__(self, file_io: FileIO, path: str, schema: pa.Schema, options: Mapping[str, str]) -> None:
        settings = OrcSettings.from_options(options)
        super().__init__(file_io, path, schema)
        self._physical = pa.schema([f.with_type(orc_physical_type(f.type)) for f in schema])
        try:
            self._writer = orc.ORCWriter(
                self._sink,
                file_version="0.12",
                stripe_size=settings.stripe_size,
                compression=settings.compression,
                compression_block_size=settings.compression_block_size,
                row_index_stride=settings.row_index_stride,
                dictionary_key_size_threshold=settings.dictionary_key_size_threshold,
            )
        except BaseException:
            self.abort()
            raise
        self._arrow_bytes = 0
        self._arrow_bytes_at_flush = 0
        self._last_pos = 0

    def _write_batch(self, batch: pa.RecordBatch) -> None:
        arrays = [_unsliced(_physical_array(batch.column(i), f.type)) for i, f in enumerate(self._physical)]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self._physical)
        self._writer.write(pa.Table.from_batches([batch]))
        self._arrow_bytes += batch.nbytes
        pos = self._sink.tell()
        # Only the header precedes the first stripe; ignore it when estimating the ratio.
        if pos != self._last_pos and pos > _HEADER_ALLOWANCE:  # a stripe went out
            self._last_pos = pos
            self._arrow_bytes_at_flush = self._arrow_bytes

    def bytes_written(self) -> int:
        """Stripes already written plus buffered rows at the compression ratio seen so far (1 before)."""
        if self._closed:
            return self._final_size or 0
        pending = self._arrow_bytes - self._arrow_bytes_at_flush
        if not self._arrow_bytes_at_flush:
            return int(pending)
        return int(self._last_pos + pending * self._last_pos / self._arrow_bytes_at_flush)

    def _finish(self) -> None:
        if not self._rows:  # pyarrow's ORC writer only emits the schema with the first table
            self._writer.write(self._physical.empty_table())
        self._writer.close()

    def _abort_format(self) -> None:
        writer = getattr(self, "_writer", None)
        if writer is not None:
            writer.close()


def _open(file_io: FileIO, path: str) -> orc.ORCFile:
    try:
        source = file_io.arrow_filesystem().open_input_file(file_io.arrow_path(path))
        return orc.ORCFile(source)
    except Exception as e:
        if is_decode_error(e):
            raise corrupt(path, e) from e
        raise


def read_orc_schema(file_io: FileIO, path: str) -> pa.Schema:
    """The Arrow schema pyarrow derives from the ORC footer."""
    schema: pa.Schema = _open(file_io, path).schema
    return schema


def read_orc(
    file_io: FileIO,
    path: str,
    *,
    columns: Sequence[str] | None,
    batch_size: int,
    arrow_filter: pc.Expression | None,
) -> Iterator[pa.RecordBatch]:
    """Stream an ORC file stripe by stripe, in order, in batches of at most ``batch_size`` rows."""
    reader = _open(file_io, path)
    cols = check_columns(path, reader.schema, columns)

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(reader.nstripes):
            stripe = reader.read_stripe(i, columns=cols)
            if stripe.schema.names != cols:  # pyarrow returns file order
                stripe = stripe.select(cols)
            if arrow_filter is not None:
                stripe = filter_batch(stripe, arrow_filter)
            yield from slice_batches(stripe, batch_size)

    return guard_read(path, batches())


__all__ = ["OrcFormatWriter", "orc_physical_type", "read_orc", "read_orc_schema"]
