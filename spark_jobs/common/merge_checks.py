"""The checks and counts of ``merge_into``'s matched pairs, in one Spark pass.

A target row matched by two source rows (``MERGE_CARDINALITY``) is an error naming the row's key,
and so is a matched upsert that changes a primary key; both are found before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.merge_io import FILE_COLUMN, POS_COLUMN
from spark_jobs.common.merge_spec import ACTION_DELETE, ACTION_UPSERT, MergeIntoError, MergeIntoSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["ACTION", "MergeCounts", "check_and_count"]

#: Column of the matched pairs with each pair's action (see ``merge_spec.ACTION_*``).
ACTION = "__merge_action"


@dataclass(frozen=True)
class MergeCounts:
    """What the matched pairs hold: pairs, upserted and deleted target rows, touched splits."""

    matched: int = 0
    updated: int = 0
    deleted: int = 0
    #: split indexes (append tables: files) holding an upserted or deleted row
    touched: tuple[int, ...] = ()


def check_and_count(pairs: DataFrame, table: FileStoreTable, spec: MergeIntoSpec) -> MergeCounts:
    """One pass over the pairs: counts, the touched files, and the checks (a target row matched
    twice, a primary key changed); a failed check raises :class:`MergeIntoError`."""
    from pyspark.sql import functions as F  # noqa: N812

    columns = [f.name for f in table.schema.fields]
    action = F.col(ACTION)
    aggs = [
        F.count(F.lit(1)).alias("matched"),
        F.count_distinct(F.col(FILE_COLUMN), F.col(POS_COLUMN)).alias("targets"),
        F.sum(F.when(action == ACTION_UPSERT, 1).otherwise(0)).alias("updated"),
        F.sum(F.when(action == ACTION_DELETE, 1).otherwise(0)).alias("deleted"),
        F.collect_set(F.when(action != 0, F.col(FILE_COLUMN))).alias("touched"),
    ]
    pk = list(table.schema.primary_keys)
    if pk and spec.upsert:
        same = [F.col(f"__new_{columns.index(k)}").eqNullSafe(F.col(f"__old_{columns.index(k)}")) for k in pk]
        all_same = same[0]
        for s in same[1:]:
            all_same = all_same & s
        aggs.append(F.sum(F.when((action == ACTION_UPSERT) & ~all_same, 1).otherwise(0)).alias("pk_changed"))
    row = pairs.agg(*aggs).collect()[0]
    if int(row["matched"] or 0) > int(row["targets"] or 0):
        _raise_duplicate(pairs, table, spec)
    if pk and spec.upsert and (row["pk_changed"] or 0) > 0:
        raise MergeIntoError(
            f"matched_upsert_setting changes the primary key {pk} of {row['pk_changed']} row(s) of "
            f"{spec.target_table}; primary key columns cannot be updated. Nothing was changed."
        )
    return MergeCounts(
        matched=int(row["matched"] or 0),
        updated=int(row["updated"] or 0),
        deleted=int(row["deleted"] or 0),
        touched=tuple(sorted(int(f) for f in row["touched"] or ())),
    )


def _raise_duplicate(pairs: DataFrame, table: FileStoreTable, spec: MergeIntoSpec) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    columns = [f.name for f in table.schema.fields]
    dup = pairs.groupBy(FILE_COLUMN, POS_COLUMN).count().where("count > 1").limit(1).collect()[0]
    row = pairs.where((F.col(FILE_COLUMN) == dup[0]) & (F.col(POS_COLUMN) == dup[1])).limit(1).collect()[0]
    keys = list(table.schema.primary_keys) or columns
    shown = {k: row[f"__old_{columns.index(k)}"] for k in keys[:8]}
    what = "primary key" if table.schema.primary_keys else "row"
    raise MergeIntoError(
        f"Target row with {what} {shown} of {spec.target_table} matches {dup['count']} source rows "
        f"(merge condition {spec.merge_condition!r}); a target row may match one source row at most. "
        "Nothing was changed."
    )
