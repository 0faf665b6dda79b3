"""Column statistics of a Parquet file from its footer, reading data only where the footer is not enough.

Used for files Paimon did not write itself: files staged by Spark's Parquet writer
(``spark_jobs.datasource.native_files``) and files adopted by a migration
(:mod:`paimon_core.migrate`). Footer min/max are exact Python values for booleans, integers,
strings, binaries and dates; FLOAT/DOUBLE (a NaN drops min/max, as Java does, and Parquet footers
skip NaN), DECIMAL and TIMESTAMP columns are read back and collected by
:func:`~paimon_core.stats.collector.collect_raw_stats`, so the result equals what the Python writer
would record for the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core.format.arrow_types import to_arrow_schema
from paimon_core.schema.data_types import DataField
from paimon_core.stats.collector import ColumnStats, collect_raw_stats

__all__ = ["footer_column_stats", "raw_file_stats"]

#: Arrow types whose Parquet footer min/max are the exact values (others are read back).
_FOOTER_EXACT = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_string,
    pa.types.is_binary,
    pa.types.is_date32,
)


def footer_column_stats(md: pq.FileMetaData, index: int) -> tuple[list[object], int] | None:
    """(min and max values of every row group, null count) of column ``index``; None if incomplete."""
    values: list[object] = []
    nulls = 0
    for rg in range(md.num_row_groups):
        st = md.row_group(rg).column(index).statistics
        if st is None or not st.has_null_count:
            return None
        nulls += st.null_count
        if st.num_values > 0:  # non-null values in this row group
            if not st.has_min_max:
                return None
            values += [st.min, st.max]
    return values, nulls


def raw_file_stats(
    md: pq.FileMetaData, fields: Sequence[DataField], read_columns: Callable[[list[str]], pa.Table]
) -> dict[str, ColumnStats]:
    """Raw (mode-free) stats of ``fields`` by name; ``read_columns(names)`` reads the columns the
    footer cannot describe exactly. Every field must be a column of the file."""
    names = [md.schema.column(i).name for i in range(md.num_columns)]
    arrow_schema = to_arrow_schema(list(fields), field_ids=False)
    raw: dict[str, ColumnStats] = {}
    to_read: list[DataField] = []
    for f, af in zip(fields, arrow_schema, strict=True):
        exact = any(check(af.type) for check in _FOOTER_EXACT)
        footer = footer_column_stats(md, names.index(f.name)) if exact and f.name in names else None
        if footer is None:
            to_read.append(f)
            continue
        values, nulls = footer
        if not values:
            raw[f.name] = ColumnStats(None, None, nulls)
            continue
        got = collect_raw_stats(pa.table({f.name: pa.array(values, type=af.type)}), [f])[0]
        raw[f.name] = ColumnStats(got.min, got.max, nulls)
    if to_read:
        data = read_columns([f.name for f in to_read])
        for f, st in zip(to_read, collect_raw_stats(data, to_read), strict=True):
            raw[f.name] = st
    return raw
