"""One commit path (issue 26) on local Spark: every Spark entry point commits through
``paimon_core.table.table_commit.TableCommit``.

Per entry point (the data source's batch write with a commit user, the streaming sink,
``merge_into``, the ingest job):

* **inline compaction loses to a dedicated compaction**: a primary-key table whose next write
  compacts its bucket inline (the 3rd sorted run); right after the write task prepared its
  messages, a dedicated compaction of the same bucket lands from another table handle (inside the
  task for the data source paths, deterministic: one task; between the write and the commit on the
  driver for ``merge_into``). The write's rows land, the query / job does not fail, and no file is
  left that no snapshot references (the losing compaction's output is deleted).
* **precommit-compact applies**: an append table with ``precommit-compact = true`` written by two
  tasks commits one merged file.

Before the one commit path, the data source with a commit user, the streaming sink and
``merge_into`` called the low-level committer: the conflict failed the write (the streaming query
died) and left the compaction's files behind, and none of them ran precommit-compact; the ingest
job (run ids give it a commit user) went through the data source's direct path. A postpone-bucket
table written by the data source with its own commit user skipped the fixed-bucket step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from paimon_core import FileSystemCatalog
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.table.commit_message import CommitMessage
from paimon_core.table.table import FileStoreTable
from spark_jobs import ingest
from spark_jobs.common import merge_run
from spark_jobs.common.merge_io import write_changes
from spark_jobs.common.merge_spec import MergeIntoSpec
from spark_jobs.datasource.dynamic_options import enable_session_options
from spark_jobs.datasource.paimon_source import (
    PaimonCommitMessage,
    PaimonDataSource,
    PaimonWriter,
    load_table,
)
from spark_jobs.datasource.stream_writer import PaimonStreamCommitMessage, PaimonStreamWriter
from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
DDL = "id BIGINT, v BIGINT"


# --- the injection: a dedicated compaction lands right after a write task prepared its messages ----
def _compact_if_the_writer_did(
    task_messages: Sequence[CommitMessage], other: Callable[[], FileStoreTable]
) -> None:
    if any(m.compact_after for m in task_messages):
        other().maintenance.compact()  # another table handle, the same bucket


class _CompactedMeanwhileWriter(PaimonWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        out = super().write(iterator)
        _compact_if_the_writer_did(out.messages, lambda: load_table(self.options))
        return out


class _CompactedMeanwhileStreamWriter(PaimonStreamWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonStreamCommitMessage:
        out = super().write(iterator)
        _compact_if_the_writer_did(out.messages, lambda: load_table(self.options))
        return out


class _CompactedMeanwhileSource(PaimonDataSource):
    """The ``paimon`` source whose write tasks are followed by a dedicated compaction; the driver's
    commit (what is tested) is the real one."""

    def writer(self, schema: StructType, overwrite: bool) -> PaimonWriter:
        return _CompactedMeanwhileWriter(self._options(), schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> PaimonStreamWriter:  # noqa: N802
        return _CompactedMeanwhileStreamWriter(self._options(), schema, overwrite)


@pytest.fixture
def compacted_meanwhile(spark: SparkSession) -> Iterator[None]:
    """Register the injecting source as ``paimon`` (the jobs write to that name), then the real one."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import tests/
    spark.dataSource.register(_CompactedMeanwhileSource)
    try:
        yield
    finally:
        enable_session_options(spark)  # the real source again


# --- tables -------------------------------------------------------------------------------------
def _catalog(wh: str) -> FileSystemCatalog:
    c = FileSystemCatalog(wh)
    c.create_database("db", ignore_if_exists=True)
    return c


def _rows(start: int, n: int, v: int) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "v": [v] * n}, schema=SCHEMA)


def _compacting_pk(wh: str, name: str = "db.pk") -> FileStoreTable:
    """Two sorted runs in its one bucket: the next write compacts it inline."""
    t = _catalog(wh).create_table(
        name, SCHEMA, primary_keys=["id"], options={"bucket": "1", "num-sorted-run.compaction-trigger": "3"}
    )
    for i in range(2):
        t.write_arrow(_rows(i, 10, i))
    return t


def _precommit_append(wh: str, name: str = "db.app") -> FileStoreTable:
    return _catalog(wh).create_table(name, SCHEMA, options={"bucket": "-1", "precommit-compact": "true"})


def _fresh(t: FileStoreTable) -> FileStoreTable:
    return _catalog(t.path.rsplit("/", 2)[0]).get_table(t.name)


def _ids(t: FileStoreTable) -> list[int]:
    return sorted(_fresh(t).to_arrow()["id"].to_pylist())


def _assert_write_kept(t: FileStoreTable, new_ids: list[int]) -> None:
    t = _fresh(t)
    assert _ids(t) == sorted({*range(11), *new_ids})
    kinds = [s.commit_kind.value for s in t.snapshot_manager.snapshots()]
    assert kinds == ["APPEND", "APPEND", "COMPACT", "APPEND"], kinds  # the writer's COMPACT half dropped
    assert unreferenced_files(t) == set()  # no orphan of the losing inline compaction


def _added_files(t: FileStoreTable) -> int:
    """ADD entries of the latest snapshot's delta."""
    t = _fresh(t)
    snap = t.latest_snapshot()
    assert snap is not None
    return sum(1 for e in t.new_file_store_scan().delta_entries(snap) if e.kind.name == "ADD")


def _df(spark: SparkSession, data: pa.Table, tasks: int) -> DataFrame:
    return spark.createDataFrame(data.to_pandas(), DDL).repartition(tasks)


# --- the Spark data source's batch write, with its own commit user --------------------------------
def test_data_source_write_keeps_the_write_when_its_inline_compaction_loses(
    spark: SparkSession, wh: str, compacted_meanwhile: None
) -> None:
    pk = _compacting_pk(wh)
    (
        _df(spark, _rows(100, 10, 100), 1)
        .write.format("paimon").option("warehouse", wh).option("commit-user", "job-1").mode("append").save("db.pk")
    )  # fmt: skip
    _assert_write_kept(pk, list(range(100, 110)))


def test_data_source_write_precommit_compact(spark: SparkSession, wh: str) -> None:
    app = _precommit_append(wh)
    _df(spark, _rows(0, 40, 0), 2).write.format("paimon").option("warehouse", wh).option(
        "commit-user", "job-2"
    ).mode("append").save("db.app")
    assert _added_files(app) == 1 and len(_ids(app)) == 40 and unreferenced_files(_fresh(app)) == set()


def test_data_source_write_of_a_postpone_table_with_a_commit_user_goes_to_real_buckets(
    spark: SparkSession, wh: str
) -> None:
    t = _catalog(wh).create_table(
        "db.pp", SCHEMA, primary_keys=["id"], options={"bucket": str(POSTPONE_BUCKET)}
    )
    _df(spark, _rows(0, 20, 0), 1).write.format("paimon").option("warehouse", wh).option(
        "commit-user", "job-3"
    ).mode("append").save("db.pp")
    t = _fresh(t)
    live = t.new_file_store_scan().live_entries(t.latest_snapshot())
    assert live and all(e.bucket != POSTPONE_BUCKET for e in live)  # the fixed-bucket step ran
    assert _ids(t) == list(range(20)) and unreferenced_files(t) == set()


# --- the streaming sink ----------------------------------------------------------------------------
def _stream_into(spark: SparkSession, wh: str, table: str, src: Path, ckpt: Path, *, tasks: int) -> None:
    stream = spark.readStream.schema(DDL).parquet(str(src)).repartition(tasks)
    query = (
        stream.writeStream.format("paimon").option("warehouse", wh).option("checkpointLocation", str(ckpt))
        .trigger(availableNow=True).start(table)
    )  # fmt: skip
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()


def test_streaming_sink_keeps_the_write_when_its_inline_compaction_loses(
    spark: SparkSession, wh: str, tmp_path: Path, compacted_meanwhile: None
) -> None:
    pk = _compacting_pk(wh)
    (tmp_path / "src-pk").mkdir()
    pq.write_table(_rows(100, 10, 100), tmp_path / "src-pk" / "part-0.parquet")
    _stream_into(
        spark, wh, "db.pk", tmp_path / "src-pk", tmp_path / "ckpt-pk", tasks=1
    )  # failed the query before
    _assert_write_kept(pk, list(range(100, 110)))


def test_streaming_sink_precommit_compact(spark: SparkSession, wh: str, tmp_path: Path) -> None:
    app = _precommit_append(wh)
    (tmp_path / "src-app").mkdir()
    pq.write_table(_rows(0, 40, 0), tmp_path / "src-app" / "part-0.parquet")
    _stream_into(spark, wh, "db.app", tmp_path / "src-app", tmp_path / "ckpt-app", tasks=2)
    assert _added_files(app) == 1 and len(_ids(app)) == 40 and unreferenced_files(_fresh(app)) == set()


# --- merge_into ------------------------------------------------------------------------------------
def test_merge_into_keeps_the_write_when_its_inline_compaction_loses(
    spark: SparkSession, wh: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def compacted_after_the_write(df: Any, table: FileStoreTable, *, with_kind: bool) -> Any:
        written = write_changes(df, table, with_kind=with_kind)
        _compact_if_the_writer_did([m for w in written for m in w.messages], lambda: _fresh(table))
        return written

    monkeypatch.setattr(merge_run, "write_changes", compacted_after_the_write)
    c = _catalog(wh)
    pk = _compacting_pk(wh)
    spark.createDataFrame([(i, 1000 + i) for i in range(100, 110)], DDL).createOrReplaceTempView("S")
    spec = {
        "target_table": "db.pk",
        "target_alias": "T",
        "source_table": "S",
        "merge_condition": "T.id = S.id",
    }
    insert = {"not_matched_insert_values": "S.id, S.v"}
    result = merge_run.merge_into(spark, c, MergeIntoSpec.of({**spec, **insert}))  # raised before
    assert result.inserted_rows == 10 and result.snapshot_id is not None
    _assert_write_kept(pk, list(range(100, 110)))


def test_merge_into_precommit_compact(spark: SparkSession, wh: str, monkeypatch: pytest.MonkeyPatch) -> None:
    written_files: list[int] = []

    def counted(df: Any, table: FileStoreTable, *, with_kind: bool) -> Any:
        written = write_changes(df, table, with_kind=with_kind)
        written_files.append(sum(len(m.new_files) for w in written for m in w.messages))
        return written

    monkeypatch.setattr(merge_run, "write_changes", counted)
    c = _catalog(wh)
    spec = {
        "target_table": "db.app",
        "target_alias": "T",
        "source_table": "S",
        "merge_condition": "T.id = S.id",
    }
    app = _precommit_append(wh)
    for i in range(2):
        app.write_arrow(_rows(i * 20, 20, 0))
    upsert = {"matched_upsert_setting": "v = S.v", "not_matched_insert_values": "S.id, S.v"}
    spark.createDataFrame([(i, 7) for i in (5, 25, 50, 51)], DDL).createOrReplaceTempView("S")
    merge_run.merge_into(spark, c, MergeIntoSpec.of({**spec, **upsert}))
    assert written_files[-1] >= 2, "the merge wrote one file: precommit-compact has nothing to merge"
    assert _added_files(app) == 1 and len(_ids(app)) == 42 and unreferenced_files(_fresh(app)) == set()


# --- the ingest job (a run id: its own commit user) ------------------------------------------------
def test_ingest_keeps_the_write_when_its_inline_compaction_loses(
    spark: SparkSession, wh: str, compacted_meanwhile: None
) -> None:
    pk = _compacting_pk(wh)
    _df(spark, _rows(100, 10, 100), 1).createOrReplaceTempView("ingest_src")
    argv = ["--warehouse", wh, "--source", "ingest_src", "--format", "table", "--writer", "datasource"]
    res = ingest.run(spark, ingest.parse_args([*argv, "--table", "db.pk", "--run-id", "r1"]))  # failed before
    assert res["already_committed"] is False and res["commit_kind"] == "APPEND"
    _assert_write_kept(pk, list(range(100, 110)))


def test_ingest_precommit_compact(spark: SparkSession, wh: str) -> None:
    argv = ["--warehouse", wh, "--source", "ingest_src", "--format", "table", "--writer", "datasource"]
    app = _precommit_append(wh)
    _df(spark, _rows(200, 40, 0), 2).createOrReplaceTempView("ingest_src")
    ingest.run(spark, ingest.parse_args([*argv, "--table", "db.app", "--run-id", "r2"]))
    assert _added_files(app) == 1 and len(_ids(app)) == 40 and unreferenced_files(_fresh(app)) == set()
