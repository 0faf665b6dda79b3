"""Spark-written tables read by pypaimon and paimon_core; pypaimon-written tables read by Spark."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import SparkSession

from spark_jobs.datasource import write_table
from tests.integration.helpers import EVENTS_SCHEMA, catalog, core_rows, events, read, rows
from tests.interop.peers import Peer


def test_spark_written_tables_read_by_pypaimon_and_paimon_core(
    spark: SparkSession, wh: str, pypaimon: Peer
) -> None:
    c = catalog(wh)
    c.create_table("db.app", EVENTS_SCHEMA, partition_keys=["dt"])
    c.create_table(
        "db.pk", EVENTS_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"}
    )
    df = spark.createDataFrame(events(500).to_pandas()).repartition(3)
    write_table(df, wh, "db.app")
    write_table(df, wh, "db.pk")
    upd = spark.createDataFrame(events(100, start=450, v=1e6).to_pandas()).repartition(2)
    write_table(upd, wh, "db.pk")
    for table, n in (("db.app", 500), ("db.pk", 550)):
        ours = core_rows(wh, table, "id", "dt", "v", "name")
        theirs = rows(pypaimon.read(wh, table), "id", "dt", "v", "name")
        spark_rows = rows(read(spark, wh, table), "id", "dt", "v", "name")
        assert len(ours) == n and ours == theirs == spark_rows, table
    assert rows(pypaimon.read(wh, "db.pk", filter={"op": "=", "field": "id", "value": 460}), "v") == [
        (1e6 + 230,)
    ]


def test_pypaimon_written_tables_read_by_spark(spark: SparkSession, wh: str, pypaimon: Peer) -> None:
    pypaimon.create_table(wh, "db.app", EVENTS_SCHEMA, partition_keys=["dt"])
    pypaimon.write(wh, "db.app", events(300))
    pypaimon.write(wh, "db.app", events(50, start=300))
    schema = EVENTS_SCHEMA.append(pa.field("op", pa.string()))
    pypaimon.create_table(
        wh, "db.pk", schema, primary_keys=["id"], options={"bucket": "3", "rowkind.field": "op"}
    )
    base = events(200)
    pypaimon.write(wh, "db.pk", base.append_column("op", pa.array(["+I"] * 200)))
    upd = events(20, start=0, v=5000.0)
    pypaimon.write(wh, "db.pk", upd.append_column("op", pa.array(["+U"] * 20)))
    pypaimon.write(wh, "db.pk", events(2, start=100).append_column("op", pa.array(["-D", "-D"])))

    app = read(spark, wh, "db.app")
    assert app.count() == 350
    assert rows(app, "id", "name") == core_rows(wh, "db.app", "id", "name")
    pk = read(spark, wh, "db.pk")
    want = sorted(
        [(i, 5000.0 + i * 0.5) for i in range(20)]
        + [(i, i * 0.5) for i in range(20, 200) if i not in (100, 101)]
    )
    assert rows(pk, "id", "v") == want == core_rows(wh, "db.pk", "id", "v")
    assert rows(
        read(spark, wh, "db.app", **{"filter-pushdown": "true"}).where("dt = '2024-01-02' AND id < 10"), "id"
    ) == [
        (1,),
        (4,),
        (7,),
    ]
