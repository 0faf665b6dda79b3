"""Check and cast user data to the table's Arrow schema before writing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
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

_EXPECTED = "a pyarrow.Table, a pyarrow.RecordBatch, a pyarrow.RecordBatchReader or an iterable of RecordBatches"


def _hint(value: object) -> str:
    if isinstance(value, Mapping):
        return " (for a dict of columns use pyarrow.table(data) or pyarrow.Table.from_pylist(rows))"
    if type(value).__name__ == "DataFrame":
        return " (for a pandas DataFrame use pyarrow.Table.from_pandas(df))"
    return ""


def check_write_input(data: object, *, api: str) -> None:
    """InvalidArgumentError saying what ``api`` expects when ``data`` cannot be Arrow rows."""
    if isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return
    if data is None or isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable) or _hint(data):
        raise InvalidArgumentError(f"{api} expects {_EXPECTED}; got {type(data).__name__}{_hint(data)}")


def check_stream_item(item: object, *, api: str) -> pa.Table | pa.RecordBatch:
    """One element of a stream given to ``api``: a RecordBatch (or Table), else InvalidArgumentError."""
    if isinstance(item, (pa.RecordBatch, pa.Table)):
        return item
    raise InvalidArgumentError(
        f"{api} expects {_EXPECTED}; the iterable yielded a {type(item).__name__}{_hint(item)}"
    )


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
            check_nested_fields(col.type, field.type, field.name)
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



def check_nested_fields(have: pa.DataType, want: pa.DataType, path: str) -> None:
    """SchemaMismatchError naming the path (``s.b``, ``l.element.b``, ``m.value.b``) of a nested
    field the data has and the table does not, or of a NOT NULL one it lacks (a type-level walk).

    Arrow's struct cast matches fields by name: it would drop the unknown field silently and
    fill a missing nullable one with nulls. Missing nullable fields stay null, as Java's writers
    fill them; an unknown field is an error, as an unknown top-level column is.
    """
    if pa.types.is_struct(have) and pa.types.is_struct(want):
        wanted = {want.field(i).name: want.field(i) for i in range(want.num_fields)}
        names = [have.field(i).name for i in range(have.num_fields)]
        extra = [f"{path}.{n}" for n in names if n not in wanted]
        if extra:
            raise SchemaMismatchError(
                f"Column '{path}' has nested field(s) {extra} that the table does not have "
                f"(fields of '{path}': {list(wanted)})",
                column=path,
                extra=extra,
            )
        missing = [f"{path}.{n}" for n, f in wanted.items() if n not in names and not f.nullable]
        if missing:
            raise SchemaMismatchError(
                f"Column '{path}' lacks NOT NULL nested field(s) {missing}", column=path, missing=missing
            )
        for i in range(have.num_fields):
            f = have.field(i)
            check_nested_fields(f.type, wanted[f.name].type, f"{path}.{f.name}")
    elif _is_list(have) and _is_list(want):
        check_nested_fields(have.value_type, want.value_type, f"{path}.element")
    elif pa.types.is_map(have) and pa.types.is_map(want):
        check_nested_fields(have.key_type, want.key_type, f"{path}.key")
        check_nested_fields(have.item_type, want.item_type, f"{path}.value")


def check_nested_columns(have: pa.Schema, want: pa.Schema) -> None:
    """:func:`check_nested_fields` for every column of ``have`` that ``want`` has too."""
    for f in have:
        i = want.get_field_index(f.name)
        if i >= 0:
            check_nested_fields(f.type, want.field(i).type, f.name)


def _is_list(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    )


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
