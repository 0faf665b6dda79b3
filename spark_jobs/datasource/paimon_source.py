"""The ``paimon`` Spark data source (PySpark >= 4.0 Python Data Source API), batch read and write.

Read::

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")   # our session helper does this
    df = spark.read.format("paimon").option("warehouse", W).load("db.t")
    spark.read.format("paimon").option("warehouse", W).option("scan.snapshot-id", "3").load("db.t")

The table is resolved, and (without a time-travel option) pinned to its latest snapshot, when
the DataFrame is created: every action on it reads that snapshot. ``partitions()`` plans the
splits once, in Spark's planner process; each split becomes one input partition, and executors
read it with paimon_core into Arrow batches of exactly Spark's schema. Primary-key tables are
read merged.

Filters, two ways, both with partition pruning and (append tables) min/max stats pruning, and
applied exactly:

* ``.option("filter", "dt = '2024-01-01' AND v > 3")``: part of the DataFrame's definition;
  always safe.
* ``.option("filter-pushdown", "true")``: Spark's pushed filters are accepted (see
  :mod:`.filters` for which) and Spark does not re-check them. **Off by default** because of a
  Spark 4.3.0 bug: the read planned for one query is stored on the DataFrame's relation and
  reused by later queries on the same DataFrame that push no filter, so after
  ``df.where("id = 3").count()`` a plain ``df.count()`` returns 1. Only turn it on for
  DataFrames used by a single query (or once Spark scopes the planned read to the scan, as
  Spark's master branch does). With it off, the reader has no ``pushFilters`` at all, so
  sessions that never enabled ``spark.sql.python.filterPushdown.enabled`` work too.

Write::

    df.write.format("paimon").option("warehouse", W).mode("append").save("db.t")
    df.write.format("paimon").option("warehouse", W).mode("overwrite").save("db.t")   # dynamic partitions
    (df.write.format("paimon").option("warehouse", W).mode("overwrite")
       .option("overwrite-partition", "dt=2024-01-01").save("db.t"))                 # static partition

Each task writes its rows into new files with paimon_core and returns their picklable
:class:`~paimon_core.CommitMessage` list; ``commit`` (called once per job by Spark, with the
messages of the successful attempts only) makes one atomic snapshot. Files of failed or
superseded attempts are never committed (orphans for orphan-file cleanup); ``abort`` deletes
the files it is told about unless the commit landed. Primary-key tables need each (partition,
bucket) written by one task: route the DataFrame with :func:`.routing.distribute_for_table`
(``write_table`` does it), otherwise the commit is refused.

Streaming: ``spark.readStream.format("paimon")`` (:mod:`.stream_reader`) and
``df.writeStream.format("paimon")`` (:mod:`.stream_writer`). Session options
(``spark.conf.set("paimon.*.db.t.scan.snapshot-id", "2")``, :mod:`.dynamic_options`) apply to
every read and write; ``.option(...)`` wins over them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    Filter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StringType, StructField, StructType

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import (
    InvalidArgumentError,
    SnapshotNotFoundError,
)
from paimon_core.operation.commit.committer import OverwriteSpec
from paimon_core.options import (
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_TIMESTAMP,
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_TIMESTAMP_MILLIS,
)
from paimon_core.predicate import Predicate, PredicateBuilder, parse_predicate
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.input_conform import check_column_names, check_nested_columns
from paimon_core.table.source import DataSplit
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_commit import TableCommit
from spark_jobs.datasource.dynamic_options import session_options_for
from spark_jobs.datasource.filters import convert_filters
from spark_jobs.datasource.options import SourceOptions
from spark_jobs.datasource.task_write import routed_bucket_column, write_task
from spark_jobs.datasource.types import spark_arrow_schema, spark_schema, to_spark_batch

__all__ = [
    "PaimonCommitMessage",
    "PaimonDataSource",
    "PaimonInputPartition",
    "PaimonReader",
    "PaimonWriter",
    "SOURCE_NAME",
]

logger = logging.getLogger(__name__)

SOURCE_NAME = "paimon"
_TIME_TRAVEL_KEYS = (
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_TIMESTAMP_MILLIS,
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_TIMESTAMP,
)


def load_table(opts: SourceOptions) -> FileStoreTable:
    """The table named by the options (``T`` alone: ``default.T``, as session options read
    it), at its latest schema (no per-read options applied)."""
    catalog = FileSystemCatalog(opts.warehouse, storage_options=opts.storage_options or None)
    db, name = opts.database_and_table
    table = catalog.get_table(f"{db}.{name}")
    branch = opts.table_options.get("branch")  # Paimon's ``branch`` option, as ``table$branch_x``
    return table.copy({"branch": branch}) if branch else table


class PaimonDataSource(DataSource):
    """``spark.read.format("paimon")`` / ``df.write.format("paimon")``.

    Spark creates the instance in a Python worker, calls :meth:`schema` there, then pickles
    the instance to the workers that create readers and writers: the table resolved (and
    the snapshot pinned) in :meth:`schema` travels with it.
    """

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self._read_table: FileStoreTable | None = None
        #: Session options for this table, read once when the DataFrame / query is defined
        #: (this runs in the worker that builds the source at load() time; see dynamic_options).
        self.session_options: dict[str, str] = session_options_for(options)

    @classmethod
    def name(cls) -> str:
        """The format name: ``paimon``."""
        return SOURCE_NAME

    def _options(self) -> SourceOptions:
        """The source's options over the session options (explicit options win, as in Paimon)."""
        explicit = {str(k).lower(): v for k, v in self.options.items()}
        return SourceOptions.parse({**self.session_options, **explicit})

    def _table_for_read(self) -> FileStoreTable:
        """The table with this read's options, pinned to the latest snapshot when not time-travelling."""
        if self._read_table is None:
            opts = self._options()
            table = load_table(opts)
            read_options = dict(opts.table_options)
            if not any(read_options.get(k) for k in _TIME_TRAVEL_KEYS):
                latest = table.latest_snapshot()
                if latest is not None:
                    read_options[SCAN_SNAPSHOT_ID] = str(latest.id)
            self._read_table = table.copy(read_options) if read_options else table
        return self._read_table

    def schema(self) -> StructType:
        """The table's Spark schema (NOT NULL columns are non-nullable); with ``read.changelog``
        a first column ``rowkind``. A start snapshot that does not exist (yet, or any more) is
        fine for a streaming read: then the latest schema (a batch read fails when planned)."""
        try:
            fields = self._table_for_read().schema.fields
        except SnapshotNotFoundError:
            fields = load_table(self._options()).schema.fields
        schema = spark_schema(fields)
        if self._options().read_changelog:
            from spark_jobs.datasource.stream_reader import ROWKIND_COLUMN

            schema = StructType([StructField(ROWKIND_COLUMN, StringType(), nullable=False), *schema.fields])
        return schema

    def reader(self, schema: StructType) -> PaimonReader:
        """A batch reader; ``schema`` may name a subset of the columns (a projection)."""
        opts = self._options()
        if opts.read_changelog:
            raise InvalidArgumentError("read.changelog is supported by streaming reads only")
        table = self._table_for_read()
        base = parse_predicate(opts.filter, list(table.schema.fields)) if opts.filter else None
        cls = PaimonPushdownReader if opts.filter_pushdown else PaimonReader
        return cls(table, schema, base_predicate=base)

    def writer(self, schema: StructType, overwrite: bool) -> PaimonWriter:
        """A batch writer for ``mode("append")`` (``overwrite=False``) or ``mode("overwrite")``."""
        return PaimonWriter(self._options(), schema, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802 - Spark's name
        """A streaming reader (``spark.readStream``): see :mod:`.stream_reader`."""
        from paimon_core.table.stream_scan import STREAM_TIME_TRAVEL_KEYS
        from spark_jobs.datasource.stream_reader import PaimonStreamReader

        opts = self._options()
        table = load_table(opts)
        table_options = {k: v for k, v in opts.table_options.items() if k not in STREAM_TIME_TRAVEL_KEYS}
        if table_options:
            table = table.copy(table_options)  # validates every option
        predicate = parse_predicate(opts.filter, list(table.schema.fields)) if opts.filter else None
        return PaimonStreamReader(
            table,
            schema,
            dict(opts.table_options),
            predicate=predicate,
            limits=opts.stream_limits,
            read_changelog=opts.read_changelog,
        )

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        """A streaming writer (``df.writeStream``): see :mod:`.stream_writer`."""
        from spark_jobs.datasource.stream_writer import PaimonStreamWriter

        return PaimonStreamWriter(self._options(), schema, overwrite)


# --------------------------------------------------------------------------------------------
# read
# --------------------------------------------------------------------------------------------


class PaimonInputPartition(InputPartition):
    """One input partition: one paimon_core split (picklable)."""

    def __init__(self, index: int, split: DataSplit) -> None:
        super().__init__(index)
        self.index = index
        self.split = split

    def __repr__(self) -> str:
        return (
            f"PaimonInputPartition({self.index}, bucket={self.split.bucket}, files={len(self.split.files)})"
        )


class PaimonReader(DataSourceReader):
    """Plans splits from one snapshot (driver side) and reads them (executors)."""

    def __init__(
        self,
        table: FileStoreTable,
        schema: StructType,
        *,
        base_predicate: Predicate | None = None,
    ) -> None:
        self.table = table
        self.schema = schema
        self.columns = [f.name for f in schema.fields]
        table.schema.fields_of(self.columns)  # unknown columns in a user-given schema: clear error
        self.base_predicate = base_predicate
        self.predicate: Predicate | None = base_predicate
        self.rejected_filters: list[Filter] = []

    def plan_splits(self) -> list[DataSplit]:
        """The splits of this read (one snapshot; pruned by the pushed filters)."""
        rb = self.table.new_read_builder().with_filter(self.predicate)
        plan = rb.new_scan().plan()
        logger.info(
            "paimon %s: snapshot %s, %d split(s), %d file(s)",
            self.table.name,
            plan.snapshot_id,
            len(plan.splits),
            sum(len(s.files) for s in plan.splits),
        )
        return list(plan.splits)

    def partitions(self) -> Sequence[InputPartition]:
        """One input partition per split."""
        return [PaimonInputPartition(i, s) for i, s in enumerate(self.plan_splits())]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Arrow batches of one split, cast to exactly the Arrow form of Spark's schema."""
        if not isinstance(partition, PaimonInputPartition):
            return  # Spark's stand-in partition when a plan has no splits (empty table)
        target = spark_arrow_schema(self.schema)
        rb = self.table.new_read_builder().with_filter(self.predicate).with_projection(self.columns)
        for batch in rb.new_read().to_batches([partition.split]):
            yield to_spark_batch(batch, target)


class PaimonPushdownReader(PaimonReader):
    """The reader with ``filter-pushdown=true``: Spark's filters are pushed into the scan.

    A separate class because Spark refuses a reader that defines ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false (its default), so the plain reader
    must not define it. Opt-in because of a Spark 4.3.0 bug: the read planned here is kept on
    the DataFrame's relation and reused by later queries on the same DataFrame that push no
    filter (``df.where("a = 1").count(); df.count()`` counts only ``a = 1``), so an accepted
    filter would silently drop rows from those queries.
    """

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:  # noqa: N802 - Spark's name
        """Accept the filters paimon_core evaluates exactly; return the others to Spark."""
        converted = convert_filters(filters, list(self.table.schema.fields))
        pushed = [p for p in (self.base_predicate, converted.predicate) if p is not None]
        self.predicate = PredicateBuilder.and_(*pushed) if pushed else None
        self.rejected_filters = converted.rejected
        logger.info(
            "paimon %s: pushed %d filter(s) (%s), left %d to Spark",
            self.table.name,
            len(converted.predicates),
            self.predicate,
            len(converted.rejected),
        )
        return converted.rejected


# --------------------------------------------------------------------------------------------
# write
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PaimonCommitMessage(WriterCommitMessage):
    """What one write task hands to the commit: paimon_core's commit messages and counts."""

    messages: tuple[CommitMessage, ...] = ()
    task_id: int = -1
    attempt: int = 0
    rows: int = 0
    skipped: bool = False

    @property
    def buckets(self) -> set[tuple[bytes, int]]:
        """The (partition, bucket) pairs this task wrote."""
        return {(m.partition, m.bucket) for m in self.messages}


def _task_info() -> tuple[int, int]:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return -1, 0
    return ctx.partitionId(), ctx.attemptNumber()


@dataclass
class _WritePlan:
    """Decided once on the driver side, pickled to every task and to commit/abort."""

    commit_user: str
    commit_identifier: int
    overwrite: OverwriteSpec | None
    skip: bool = False
    ignored_options: list[str] = field(default_factory=list)


def check_routing(table: FileStoreTable, messages: Sequence[PaimonCommitMessage], *, scope: str, remedy: str) -> None:
    """Refuse a primary-key commit where two tasks wrote the same (partition, bucket): their
    sequence numbers would collide and the merge order of the key's rows would be undefined."""
    if not table.schema.primary_keys:
        return
    owner: dict[tuple[bytes, int], int] = {}
    for m in messages:
        for key in m.buckets:
            if key[1] == -2:  # bucket-postpone: one file set per writer, replayed in order by the compaction
                continue
            other = owner.setdefault(key, m.task_id)
            if other != m.task_id:
                raise InvalidArgumentError(
                    f"Tasks {other} and {m.task_id}{scope} both wrote bucket {key[1]} of partition "
                    f"{table.partition_path(key[0]) or '<unpartitioned>'} of primary-key table "
                    f"{table.name}: sequence numbers would collide. {remedy}"
                )


class PaimonWriter(DataSourceArrowWriter):
    """Writes Arrow batches into new Paimon files per task; one atomic commit per job."""

    def __init__(self, options: SourceOptions, schema: StructType, overwrite: bool) -> None:
        self.options = options
        self.table = load_table(options)
        self.schema = schema
        self._check_columns(schema)
        self.plan = self._plan(overwrite)
        if self.plan.ignored_options:
            logger.warning(
                "paimon %s: table options %s given to a write are not applied by paimon_core writes; "
                "set them on the table (ALTER / create options) instead",
                self.table.name,
                self.plan.ignored_options,
            )

    def _check_columns(self, schema: StructType) -> None:
        names = [f.name for f in schema.fields]
        self.bucket_column = routed_bucket_column(names, self.table)
        check_column_names(
            [n for n in names if n != self.bucket_column],
            self.table.schema.field_names,
            what="DataFrame",
            table=self.table.name,
        )
        check_nested_columns(spark_arrow_schema(schema), self.table.arrow_schema)  # on the driver

    def _plan(self, overwrite: bool) -> _WritePlan:
        opts = self.options
        spec: OverwriteSpec | None = None
        if overwrite:
            if opts.overwrite_partition is not None:
                builder = self.table.new_batch_write_builder().overwrite(opts.overwrite_partition)
                spec = builder.new_commit().overwrite
            else:
                flag = opts.table_options.get("dynamic-partition-overwrite")
                dynamic = (
                    flag.lower() == "true"
                    if flag is not None
                    else self.table.schema.core_options.dynamic_partition_overwrite
                )
                spec = OverwriteSpec(None, dynamic=dynamic)
        elif opts.overwrite_partition is not None:
            raise InvalidArgumentError("Option 'overwrite-partition' needs mode('overwrite')")
        user = opts.commit_user or f"spark-{uuid.uuid4()}"
        ident = opts.commit_identifier if opts.commit_identifier is not None else BATCH_COMMIT_IDENTIFIER
        skip = opts.commit_user is not None and self.table.new_stream_write_builder(
            user
        ).new_commit().is_committed(ident)
        if skip:
            logger.info(
                "paimon %s: commit %s/%d already committed; tasks write nothing", self.table.name, user, ident
            )
        ignored = sorted(k for k in opts.table_options if k != "dynamic-partition-overwrite")
        return _WritePlan(user, ident, spec, skip=skip, ignored_options=ignored)

    # --- executors ------------------------------------------------------------------------
    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        """Write this task's rows into new files; return their commit messages."""
        task_id, attempt = _task_info()
        if self.plan.skip:
            for _ in iterator:
                pass
            return PaimonCommitMessage((), task_id, attempt, 0, skipped=True)
        tw = self.table.new_batch_write_builder().new_write()
        try:
            rows = write_task(
                tw, iterator, batch_rows=self.options.write_batch_rows, bucket_column=self.bucket_column
            )
            messages = tw.prepare_commit()
        except BaseException:
            tw.abort()  # best effort: files of a failed attempt are never committed anyway
            raise
        finally:
            tw.close()
        logger.info(
            "paimon %s: task %d attempt %d wrote %d row(s) into %d file(s)",
            self.table.name,
            task_id,
            attempt,
            rows,
            sum(len(m.new_files) for m in messages),
        )
        return PaimonCommitMessage(tuple(messages), task_id, attempt, rows)

    # --- driver (a Python worker launched by the driver JVM) --------------------------------
    def _committer(self) -> TableCommit:
        """The one commit path (precommit-compact, the postpone fixed-bucket step, a landed APPEND
        kept when its inline compaction conflicts, post-commit maintenance). A caller-chosen
        (user, identifier) is looked up first: a re-run commits nothing; a generated user is fresh."""
        return TableCommit(
            self.table,
            self.plan.commit_user,
            overwrite=self.plan.overwrite,
            check_committed=self.options.commit_user is not None,
        )

    def check_routing(self, messages: Sequence[PaimonCommitMessage]) -> None:
        check_routing(
            self.table,
            messages,
            scope="",
            remedy="Route the DataFrame first (spark_jobs.datasource.distribute_for_table / write_table).",
        )

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """The only place this write commits: one snapshot with every task's files."""
        ours = [m for m in messages if isinstance(m, PaimonCommitMessage)]
        if self.plan.skip or any(m.skipped for m in ours):
            logger.info("paimon %s: already committed, nothing to do", self.table.name)
            return
        self.check_routing(ours)
        flat = [cm for m in ours for cm in m.messages]
        result = self._committer().commit(flat, self.plan.commit_identifier)
        logger.info(
            "paimon %s: committed snapshot %s (%s) from %d task(s): %d file(s), %+d row(s)%s",
            self.table.name,
            result.snapshot_id,
            result.commit_kind,
            len(ours),
            result.added_files,
            result.added_rows - result.deleted_rows,
            " (already committed)" if result.already_committed else "",
        )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Delete the files of the messages received, unless the commit landed after all."""
        flat = [cm for m in messages if isinstance(m, PaimonCommitMessage) for cm in m.messages]
        missing = sum(1 for m in messages if m is None)
        if not self._committer().abort_unless_landed(flat, self.plan.commit_identifier):
            logger.warning("paimon %s: abort after a commit that landed (or cannot tell); keeping files", self.table.name)
            return
        logger.warning(
            "paimon %s: write aborted; deleted the files of %d message(s); %d task(s) left no message "
            "(their files, if any, are orphans for orphan-file cleanup)",
            self.table.name,
            len(flat),
            missing,
        )
