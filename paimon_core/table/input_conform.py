"""Check and cast user data to the table's Arrow schema before writing."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import SchemaMismatchError
from paimon_core.format.arrow_types import to_arrow_schema
from paimon_core.schema.data_types import (
    BinaryType,
    CharType,
    DataType,
    LocalZonedTimestampType,
    TimestampType,
    VarBinaryType,
    VarCharType,
)
from paimon_core.schema.table_schema import TableSchema


def table_arrow_schema(schema: TableSchema) -> pa.Schema:
    return to_arrow_schema(list(schema.fields))


def conform(
    data: pa.Table | pa.RecordBatch,
    schema: TableSchema,
    target: pa.Schema | None = None,
    *,
    check_not_null: bool = True,
) -> pa.Table:
    """Reorder and safely cast ``data`` to the table schema, or raise SchemaMismatchError.

    Missing columns, extra columns, lossy casts and nulls in NOT NULL columns are
    errors that name the column; nothing is written.
    """
    target = target if target is not None else table_arrow_schema(schema)
    table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
    check_column_names(table.schema.names, target.names)
    cols = []
    for field in target:
        col = table.column(field.name)
        if not col.type.equals(field.type):
            try:
                col = col.cast(field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise SchemaMismatchError(
                    f"Column '{field.name}' has type {col.type}, which cannot be cast safely to the "
                    f"table type {field.type}: {e}",
                    column=field.name,
                ) from None
        _check_declared_limits(col, schema.field(field.name).type, field.name)
        if check_not_null and not field.nullable and col.null_count:
            raise SchemaMismatchError(
                f"Column '{field.name}' is NOT NULL but {col.null_count} row(s) are null", column=field.name
            )
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=target)



_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _check_declared_limits(col: pa.ChunkedArray, t: DataType, name: str) -> None:
    """Refuse values that do not fit the declared TIMESTAMP(p) precision or CHAR/VARCHAR/
    BINARY/VARBINARY length (Arrow cannot express either), naming the column.

    The BinaryRow/stats encoders refuse them too (``data/internal.py``); checking here makes
    every ``metadata.stats-mode`` behave the same and fails before any file is written.
    """
    bad = 0
    what = ""
    if isinstance(t, (TimestampType, LocalZonedTimestampType)) and pa.types.is_timestamp(col.type):
        digits = _UNIT_DIGITS[col.type.unit]
        if t.precision >= digits:
            return
        step = 10 ** (digits - t.precision)
        ints = pc.cast(col, pa.int64())
        rest = pc.subtract(ints, pc.multiply(pc.divide(ints, step), step))
        bad = _count_true(pc.not_equal(rest, 0))
        what = f"more than {t.precision} fractional second digits"
    elif isinstance(t, (CharType, VarCharType)) and t.length != VarCharType.MAX_LENGTH:
        bad = _count_true(pc.greater(pc.utf8_length(col), t.length))
        what = f"more than {t.length} characters"
    elif isinstance(t, (BinaryType, VarBinaryType)) and t.length != VarBinaryType.MAX_LENGTH:
        bad = _count_true(pc.greater(pc.binary_length(col), t.length))
        what = f"more than {t.length} bytes"
    if bad:
        raise SchemaMismatchError(
            f"Column '{name}' is {t.copy(nullable=True)} but {bad} value(s) have {what}", column=name
        )


def _count_true(mask: pa.ChunkedArray) -> int:
    """How many values of a boolean array are true (nulls do not count)."""
    return int(pc.sum(mask).as_py() or 0)


def check_column_names(have: Sequence[str], want: Sequence[str], *, what: str = "Data", table: str = "") -> None:
    """SchemaMismatchError naming missing and unknown columns, if the names differ as sets."""
    missing = [n for n in want if n not in have]
    extra = [n for n in have if n not in want]
    if not (missing or extra):
        return
    parts = []
    if missing:
        parts.append(f"missing column(s) {missing}")
    if extra:
        parts.append(f"unknown column(s) {extra}")
    of = f"the schema of {table}" if table else "the table schema"
    raise SchemaMismatchError(
        f"{what} does not match {of}: {'; '.join(parts)} (table columns: {list(want)})",
        missing=missing,
        extra=extra,
    )
