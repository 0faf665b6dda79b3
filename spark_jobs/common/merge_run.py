"""Run one ``merge_into`` with Spark SQL (see :mod:`spark_jobs.merge_into` for the job).

Steps: run the source SQLs; resolve the source; read the target at its latest snapshot
(:func:`.merge_io.read_target`) into a temporary view; evaluate the matched pairs once (each with
its action, its new values and the old row) and persist them; check that no target row matches
two source rows and that no upsert changes a primary key; count. A dry run stops there. Then the
changes are written and committed once (:mod:`.merge_io`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CatalogError
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.merge_checks import ACTION, MergeCounts, check_and_count
from spark_jobs.common.merge_io import (
    FILE_COLUMN,
    KIND_COLUMN,
    POS_COLUMN,
    TargetRead,
    commit_changes,
    deleted_file_messages,
    plan_target,
    read_target,
    write_changes,
)
from spark_jobs.common.merge_spec import (
    ACTION_DELETE,
    ACTION_UPSERT,
    MergeIntoError,
    MergeIntoSpec,
    parse_assignments,
    quote,
    split_top_level,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["MergeIntoResult", "merge_into"]

logger = logging.getLogger(__name__)

_KIND_UPSERT, _KIND_DELETE, _KIND_INSERT = 2, 3, 0  # RowKind +U, -D, +I


@dataclass(frozen=True)
class MergeIntoResult:
    """What one merge_into did (or, with ``dry_run``, would do)."""

    table: str
    dry_run: bool
    #: ``merge-on-read`` (primary-key tables: rows with kinds) or ``copy-on-write`` (append tables)
    mode: str
    read_snapshot_id: int | None
    matched_rows: int = 0
    updated_rows: int = 0
    deleted_rows: int = 0
    inserted_rows: int = 0
    #: copy-on-write: data files rewritten (removed) and rows carried over unchanged
    rewritten_files: int = 0
    kept_rows: int = 0
    snapshot_id: int | None = None
    commit_kind: str | None = None
    commit_user: str | None = None
    commit_identifier: int | None = None
    added_files: int = 0
    deleted_files: int = 0
    already_committed: bool = False
    seconds: float = 0.0
    #: wall seconds per phase: ``check`` (pairs, checks, counts), ``insert`` (count), ``write``, ``commit``
    phase_seconds: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["phase_seconds"] = dict(self.phase_seconds)
        return out


def merge_into(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    spec: MergeIntoSpec,
    *,
    dry_run: bool = False,
    commit_user: str | None = None,
    commit_identifier: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> MergeIntoResult:
    """Merge ``spec``'s source into its target table; see the module doc. ``storage_options``:
    the warehouse's (fsspec) options, for reading a warehouse table as the source."""
    started = time.monotonic()
    table = catalog.get_table(spec.target_table)  # TableNotFoundError names it
    _check_table(table, spec)
    _check_expressions(spark, spec)
    for sql in spec.source_sqls:
        logger.info("merge_into: running source SQL %s", sql)
        spark.sql(sql)
    views: list[str] = []
    pairs: DataFrame | None = None
    inserts: DataFrame | None = None
    try:
        source_sql = _resolve_source(spark, catalog, spec, views, storage_options or {})
        source_columns = spark.table(source_sql).columns
        read = plan_target(table)
        target_view = f"__paimon_merge_target_{uuid.uuid4().hex[:12]}"
        # The target comes from spark.range(splits).mapInArrow(...): Spark sizes it as the few split
        # ids and would broadcast it (10M target rows: "Not enough memory to build and broadcast").
        # A sort-merge join never builds the whole target in memory.
        read_target(spark, table, read).hint("merge").createOrReplaceTempView(target_view)
        views.append(target_view)
        columns = [f.name for f in table.schema.fields]
        counts = MergeCounts()
        phases: dict[str, float] = {}
        mark = time.monotonic()
        if spec.matched:
            pairs = _matched_pairs(spark, spec, table, target_view, source_sql, source_columns).persist()
            counts = check_and_count(pairs, table, spec)
        phases["check"], mark = round(time.monotonic() - mark, 3), time.monotonic()
        if spec.insert:
            inserts = _inserts(spark, spec, table, target_view, source_sql, source_columns).persist()
        inserted = inserts.count() if inserts is not None else 0
        phases["insert"], mark = round(time.monotonic() - mark, 3), time.monotonic()
        mode = "merge-on-read" if table.schema.primary_keys else "copy-on-write"
        base = {
            "table": spec.target_table,
            "mode": mode,
            "read_snapshot_id": read.snapshot_id,
            "matched_rows": counts.matched,
            "updated_rows": counts.updated,
            "deleted_rows": counts.deleted,
            "inserted_rows": inserted,
            "phase_seconds": phases,
        }
        changed = counts.updated + counts.deleted
        if dry_run or changed + inserted == 0:
            touched = counts.touched if mode == "copy-on-write" else ()
            kept = sum(read.splits[i].row_count for i in touched) - changed if touched else 0
            return MergeIntoResult(
                dry_run=dry_run,
                rewritten_files=len(touched),
                kept_rows=kept,
                seconds=_since(started),
                **base,  # type: ignore[arg-type]
            )
        user = commit_user or f"merge_into-{spec.target_table}-{uuid.uuid4().hex}"
        ident = commit_identifier if commit_identifier is not None else BATCH_COMMIT_IDENTIFIER
        if mode == "merge-on-read":
            result = _apply_primary_key(table, columns, pairs, inserts, user, ident, phases)
            kept, rewritten = 0, 0
        else:
            result, kept, rewritten = _apply_copy_on_write(
                spark, table, read, target_view, columns, pairs, inserts, user, ident, counts, phases
            )
        return MergeIntoResult(
            dry_run=False,
            rewritten_files=rewritten,
            kept_rows=kept,
            snapshot_id=result.snapshot_id,
            commit_kind=result.commit_kind,
            commit_user=user,
            commit_identifier=ident,
            added_files=result.added_files,
            deleted_files=result.deleted_files,
            already_committed=result.already_committed,
            seconds=_since(started),
            **base,  # type: ignore[arg-type]
        )
    finally:
        for df in (pairs, inserts):
            if df is not None:
                df.unpersist()
        for v in views:
            spark.catalog.dropTempView(v)


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)


def _check_table(table: FileStoreTable, spec: MergeIntoSpec) -> None:
    if spec.target_name == spec.source_name:
        raise MergeIntoError(
            f"target and source are both named {spec.target_name!r} in the conditions; give a target_alias"
        )
    opts = table.options.options
    if not table.schema.primary_keys and str(opts.get("deletion-vectors.enabled", "false")).lower() == "true":
        raise MergeIntoError(
            f"merge_into on append table {table.name} with deletion vectors is not supported yet"
        )


def _check_expressions(spark: SparkSession, spec: MergeIntoSpec) -> None:
    """Parse (not resolve) every SQL expression argument on its own with Spark's parser, so a
    syntax error names its argument; names are resolved by the merge's own queries."""
    from pyspark.errors import ParseException

    exprs: list[tuple[str, str]] = [("merge_condition", spec.merge_condition)]
    for name in ("matched_upsert_condition", "not_matched_insert_condition", "matched_delete_condition"):
        value = getattr(spec, name)
        if value is not None:
            exprs.append((name, value))
    if spec.matched_upsert_setting not in (None, "*"):
        exprs += [("matched_upsert_setting", v) for v in parse_assignments(spec.matched_upsert_setting or "").values()]
    if spec.not_matched_insert_values not in (None, "*"):
        exprs += [("not_matched_insert_values", v) for v in split_top_level(spec.not_matched_insert_values or "", ",")]
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:  # Spark Connect: the merge's own queries report syntax errors
        return
    parser = jsession.sessionState().sqlParser()
    for name, text in exprs:
        try:
            parser.parseExpression(text)
        except ParseException as e:
            first = str(e).strip().split("\n", 1)[0]
            raise MergeIntoError(f"{name}: {text.strip()!r} is not a valid SQL expression: {first}") from None


def _resolve_source(
    spark: SparkSession, catalog: FileSystemCatalog, spec: MergeIntoSpec, views: list[str], storage: Mapping[str, str]
) -> str:
    """The source's SQL name: a Spark table or view, else a warehouse table read as a view."""
    name = spec.source_sql_name
    try:
        if spark.catalog.tableExists(spec.source_table):
            return name
    except Exception:  # noqa: BLE001 - a name Spark cannot parse: try the warehouse
        logger.debug("Spark does not know source %s", spec.source_table, exc_info=True)
    ident = spec.source_table if "." in spec.source_table else f"default.{spec.source_table}"
    try:
        source = catalog.get_table(ident)
    except (CatalogError, ValueError) as e:
        raise MergeIntoError(
            f"Source table {spec.source_table!r} is neither a Spark table or view nor a table of the warehouse ({e})"
        ) from None
    view = f"__paimon_merge_source_{uuid.uuid4().hex[:12]}"
    reader = spark.read.format("paimon").option("warehouse", catalog.warehouse)
    for k, v in storage.items():
        reader = reader.option(f"storage.{k}", v)
    reader.load(source.name).createOrReplaceTempView(view)
    views.append(view)
    return quote(view)


def _cast_to_table(df: DataFrame, table: FileStoreTable, prefix: str) -> list[Any]:
    from pyspark.sql import functions as F  # noqa: N812

    from spark_jobs.datasource.types import spark_schema

    target = spark_schema(table.schema.fields)
    return [F.col(f"{prefix}{i}").cast(f.dataType).alias(f.name) for i, f in enumerate(target.fields)]


def _matched_pairs(
    spark: SparkSession, spec: MergeIntoSpec, table: FileStoreTable, target_view: str, source_sql: str, source_columns: list[str]
) -> DataFrame:
    """One row per (target row, source row) pair: identity, action, old row (``__old_i``) and,
    for upserts, the new row (``__new_i``)."""
    columns = [f.name for f in table.schema.fields]
    t = quote(spec.target_name)
    select = [f"{t}.{quote(FILE_COLUMN)} AS {FILE_COLUMN}", f"{t}.{quote(POS_COLUMN)} AS {POS_COLUMN}"]
    select.append(f"{spec.action_sql()} AS {ACTION}")
    select += [f"{t}.{quote(c)} AS __old_{i}" for i, c in enumerate(columns)]
    if spec.upsert:
        values = spec.upsert_values(columns, source_columns)
        select += [f"({v}) AS __new_{i}" for i, v in enumerate(values)]
    sql = spec.matched_sql(target_view, source_sql, select)
    logger.info("merge_into: matched pairs: %s", sql)
    return spark.sql(sql)


def _inserts(
    spark: SparkSession, spec: MergeIntoSpec, table: FileStoreTable, target_view: str, source_sql: str, source_columns: list[str]
) -> DataFrame:
    columns = [f.name for f in table.schema.fields]
    sql = spec.insert_sql(target_view, source_sql, source_columns)
    logger.info("merge_into: not-matched inserts: %s", sql)
    df = spark.sql(sql)
    if len(df.columns) != len(columns):
        raise MergeIntoError(
            f"not_matched_insert_values gives {len(df.columns)} value(s) ({df.columns}) but {spec.target_table} "
            f"has {len(columns)} columns {columns}"
        )
    renamed = df.toDF(*[f"__new_{i}" for i in range(len(columns))])
    return renamed.select(*_cast_to_table(renamed, table, "__new_"))


def _apply_primary_key(
    table: FileStoreTable,
    columns: list[str],
    pairs: DataFrame | None,
    inserts: DataFrame | None,
    user: str,
    ident: int,
    phases: dict[str, float],
) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    parts: list[DataFrame] = []
    if pairs is not None:
        upserts = pairs.where(F.col(ACTION) == ACTION_UPSERT)
        if any(c.startswith("__new_") for c in pairs.columns):
            parts.append(upserts.select(*_cast_to_table(upserts, table, "__new_"), F.lit(_KIND_UPSERT).alias(KIND_COLUMN)))
        deletes = pairs.where(F.col(ACTION) == ACTION_DELETE)
        parts.append(deletes.select(*_cast_to_table(deletes, table, "__old_"), F.lit(_KIND_DELETE).alias(KIND_COLUMN)))
    if inserts is not None:
        parts.append(inserts.select(*[F.col(quote(c)) for c in columns], F.lit(_KIND_INSERT).alias(KIND_COLUMN)))
    changes = parts[0]
    for p in parts[1:]:
        changes = changes.unionByName(p)
    mark = time.monotonic()
    written = write_changes(changes.withColumn(KIND_COLUMN, F.col(KIND_COLUMN).cast("byte")), table, with_kind=True)
    phases["write"], mark = round(time.monotonic() - mark, 3), time.monotonic()
    result = commit_changes(table, written, commit_user=user, commit_identifier=ident)
    phases["commit"] = round(time.monotonic() - mark, 3)
    return result


def _apply_copy_on_write(
    spark: SparkSession,
    table: FileStoreTable,
    read: TargetRead,
    target_view: str,
    columns: list[str],
    pairs: DataFrame | None,
    inserts: DataFrame | None,
    user: str,
    ident: int,
    counts: MergeCounts,
    phases: dict[str, float],
) -> tuple[Any, int, int]:
    """Rewrite the files holding changed rows, plus the inserts; one commit removing the old files."""
    from pyspark.sql import functions as F  # noqa: N812

    touched = list(counts.touched)
    parts: list[DataFrame] = []
    kept = 0
    if touched:
        assert pairs is not None
        actions = pairs.where(F.col(ACTION) != 0).select(
            FILE_COLUMN, POS_COLUMN, ACTION, *[c for c in pairs.columns if c.startswith("__new_")]
        )
        rows = spark.table(target_view).where(F.col(FILE_COLUMN).isin(touched))
        joined = rows.join(actions, [FILE_COLUMN, POS_COLUMN], "left").where(
            F.col(ACTION).isNull() | (F.col(ACTION) != ACTION_DELETE)
        )
        upserting = any(c.startswith("__new_") for c in actions.columns)
        out = []
        for i, c in enumerate(columns):
            old = F.col(quote(c))
            if upserting:
                new = F.col(f"__new_{i}").cast(rows.schema[c].dataType)
                out.append(F.when(F.col(ACTION) == ACTION_UPSERT, new).otherwise(old).alias(c))
            else:
                out.append(old.alias(c))
        parts.append(joined.select(*out))
        kept = sum(read.splits[i].row_count for i in touched) - counts.updated - counts.deleted
    if inserts is not None:
        parts.append(inserts.select(*[F.col(quote(c)) for c in columns]))
    changes = parts[0]
    for p in parts[1:]:
        changes = changes.unionByName(p)
    mark = time.monotonic()
    written = write_changes(changes, table, with_kind=False)
    phases["write"], mark = round(time.monotonic() - mark, 3), time.monotonic()
    removed = deleted_file_messages(table, [read.entries[i] for i in touched])
    result = commit_changes(table, written, removed=removed, commit_user=user, commit_identifier=ident)
    phases["commit"] = round(time.monotonic() - mark, 3)
    return result, kept, len(touched)
