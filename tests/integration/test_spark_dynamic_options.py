"""Session (dynamic) options: ``spark.conf.set("paimon.<catalog>.<db>.<table>.<key>", v)``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_jobs.datasource.dynamic_options import (
    enable_session_options,
    session_options_for,
    table_options_from_session,
)
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events, read, rows


@contextmanager
def session_conf(spark: SparkSession, **confs: str) -> Iterator[None]:
    enable_session_options(spark)
    for k, v in confs.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k in confs:
            spark.conf.unset(k)


def test_matching_and_precedence() -> None:
    conf = {
        "paimon.*.db.t.scan.snapshot-id": "2",
        "spark.paimon.paimon.db.t.scan.snapshot-id": "3",  # more specific: wins
        "paimon.*.db.other.scan.snapshot-id": "9",  # another table
        "paimon.hive.db.t.scan.snapshot-id": "8",  # another catalog
        "spark.paimon.scan.mode": "latest",  # global
        "spark.paimon.requiredSparkConfsCheck.enabled": "false",  # not a table option: ignored
        "paimon.*.*.T.read.stream.maxFilesPerTrigger": "5",  # names match case-insensitively
        "paimon.*.db.t.warehouse": "/elsewhere",  # never from the session
        "spark.sql.shuffle.partitions": "4",
    }
    assert table_options_from_session(conf, "paimon", "db", "t") == {
        "scan.snapshot-id": "3",
        "scan.mode": "latest",
        "read.stream.maxfilespertrigger": "5",
    }
    assert table_options_from_session(conf, "paimon", "db", "other") == {
        "scan.snapshot-id": "9",
        "scan.mode": "latest",
    }
    # a table-scoped key beats a global one; the source's own options beat both (merged by the source)
    both = {"spark.paimon.scan.mode": "latest", "paimon.*.db.t.scan.mode": "from-snapshot"}
    assert session_options_for({"path": "db.t"}, both) == {"scan.mode": "from-snapshot"}
    assert session_options_for({"path": "db.t", "catalog": "hive"}, conf)["scan.snapshot-id"] == "8"


def test_session_option_picks_a_snapshot_for_batch_and_streaming_reads(
    spark: SparkSession, wh: str, tmp_path: Path
) -> None:
    t = catalog(wh).create_table("db.t", EVENTS_SCHEMA)
    for i in range(3):
        t.write_arrow(events(5, start=5 * i))
    catalog(wh).create_table("db.u", EVENTS_SCHEMA).write_arrow(events(3))
    with session_conf(spark, **{"paimon.*.db.t.scan.snapshot-id": "2"}):
        assert rows(read(spark, wh, "db.t"), "id") == [(i,) for i in range(10)]
        assert rows(read(spark, wh, "db.t", **{"scan.snapshot-id": "1"}), "id") == [
            (i,) for i in range(5)
        ]  # option wins
        assert rows(read(spark, wh, "db.u"), "id") == [(i,) for i in range(3)]  # other table untouched
        # streaming: scan.snapshot-id makes the default mode from-snapshot (changes of 2 and 3)
        got: list[int] = []
        q = spark.readStream.format("paimon").option("warehouse", wh).load("db.t")
        w = q.writeStream.foreachBatch(lambda b, _i: got.extend(r[0] for r in b.select("id").collect()))
        w.option("checkpointLocation", str(tmp_path / "ck")).trigger(
            availableNow=True
        ).start().awaitTermination(120)
        assert sorted(got) == list(range(5, 15))
    assert rows(read(spark, wh, "db.t"), "id") == [(i,) for i in range(15)]  # unset: latest again


def test_session_option_applies_to_writes(spark: SparkSession, wh: str) -> None:
    catalog(wh).create_table("db.p", EVENTS_SCHEMA, partition_keys=["dt"]).write_arrow(events(9))
    one_day = spark.createDataFrame(events(2, start=100, days=1).to_pandas())
    with session_conf(spark, **{"spark.paimon.*.db.p.dynamic-partition-overwrite": "false"}):
        one_day.write.format("paimon").option("warehouse", wh).mode("overwrite").save("db.p")
    assert core_rows(wh, "db.p", "id") == [(100,), (101,)]  # the whole table was replaced
    catalog(wh).get_table("db.p").write_arrow(events(9))
    with session_conf(spark, **{"spark.paimon.*.db.p.dynamic-partition-overwrite": "false"}):
        w = one_day.write.format("paimon").option("warehouse", wh).mode("overwrite")
        w.option("dynamic-partition-overwrite", "true").save("db.p")  # the writer's option wins
    assert (
        sorted(r[0] for r in core_rows(wh, "db.p", "dt"))
        == ["2024-01-01"] * 2 + ["2024-01-02"] * 3 + ["2024-01-03"] * 3
    )


def test_conf_server_answers_workers_and_survives_bad_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a Python worker does: ask the driver's server named by the environment."""
    from multiprocessing import AuthenticationError
    from multiprocessing.connection import Client

    from spark_jobs.datasource import dynamic_options as d

    class _Conf:
        getAll = {"paimon.*.db.t.scan.snapshot-id": "2", "spark.hadoop.fs.s3a.secret.key": "s3cr3t"}

    class _Session:
        conf = _Conf()

    server = d._ConfServer(_Session())  # type: ignore[arg-type]
    host, port, _ = server.address.rsplit(":", 2)
    with pytest.raises(AuthenticationError):
        Client((host, int(port)), authkey=b"wrong key")
    monkeypatch.setenv(d.ENV_VAR, server.address)
    assert d.session_conf() == {"paimon.*.db.t.scan.snapshot-id": "2"}  # paimon confs only
    assert session_options_for({"path": "db.t"}) == {"scan.snapshot-id": "2"}
    monkeypatch.setenv(d.ENV_VAR, f"{host}:1:00")
    with pytest.raises(Exception, match="Cannot reach the paimon session-options server"):
        d.session_conf()
