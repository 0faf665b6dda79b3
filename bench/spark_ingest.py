"""Ingest benchmark: the ``paimon`` Spark data source against ``df.write.parquet`` (the floor).

::

    python -m bench.spark_ingest [--rows 10000000] [--repeat 1] [--bucket 4] [--master local[2]] [--out DIR]

One Spark session; one generated DataFrame (``spark.range`` + expressions, so generation is
cheap JVM work shared by every contender). Each round times, in this order:

* ``floor``: ``df.write.mode("overwrite").parquet(dir)`` (Spark's native JVM Parquet writer),
* ``append``: the ``ingest`` job (``spark_jobs.ingest.run``) into an append table (bucket -1),
* ``pk``: the ``ingest`` job into a primary-key table (``--bucket`` fixed buckets; routed shuffle).

Prints one JSON line per measurement and a final summary line with the ratios against the floor
(targets: append <= 1.3x, pk <= 2x). Row counts of every output are checked.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession

__all__ = ["main"]

TARGETS = {"append": 1.3, "pk": 2.0}


def source(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    """``rows`` rows of (id BIGINT, k STRING, v DOUBLE, ts TIMESTAMP, name STRING)."""
    return spark.range(0, rows, numPartitions=partitions).selectExpr(
        "id",
        "concat('key-', cast(id % 1000 as string)) as k",
        "cast(id as double) * 0.25 as v",
        "timestamp_seconds(1700000000 + id) as ts",
        "concat('name-', sha1(cast(id as string))) as name",
    )


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(
    spark: SparkSession, rows: int, *, bucket: int, partitions: int, out: str, repeat: int
) -> dict[str, Any]:
    from paimon_core import FileSystemCatalog
    from spark_jobs import ingest

    df = source(spark, rows, partitions)
    df.createOrReplaceTempView("bench_source")
    results: dict[str, list[float]] = {"floor": [], "append": [], "pk": []}
    for r in range(repeat):
        wh = os.path.join(out, f"wh-{r}")
        floor_dir = os.path.join(out, f"floor-{r}")
        results["floor"].append(_timed(lambda: df.write.mode("overwrite").parquet(floor_dir)))  # noqa: B023
        assert spark.read.parquet(floor_dir).count() == rows
        for name, extra in (("append", []), ("pk", ["--primary-key", "id", "--bucket", str(bucket)])):
            table = f"db.{name}"
            plan = ingest.parse_args(
                ["--warehouse", wh, "--table", table, "--source", "bench_source", "--format", "table", *extra]
            )
            seconds = _timed(lambda: ingest.run(spark, plan))  # noqa: B023
            results[name].append(seconds)
            snap = FileSystemCatalog(wh).get_table(table).latest_snapshot()
            assert snap is not None and snap.total_record_count == rows, (name, snap)
        for name, values in results.items():
            print(
                json.dumps({"round": r, "contender": name, "rows": rows, "seconds": round(values[-1], 3)}),
                flush=True,
            )
        shutil.rmtree(wh, ignore_errors=True)
        shutil.rmtree(floor_dir, ignore_errors=True)
    best = {k: min(v) for k, v in results.items()}
    ratios = {k: round(best[k] / best["floor"], 3) for k in ("append", "pk")}
    return {
        "rows": rows,
        "repeat": repeat,
        "bucket": bucket,
        "partitions": partitions,
        "best_seconds": {k: round(v, 3) for k, v in best.items()},
        "ratio_vs_floor": ratios,
        "targets": TARGETS,
        "within_target": {k: ratios[k] <= TARGETS[k] for k in ratios},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.spark_ingest", description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--bucket", type=int, default=4, help="buckets of the primary-key table")
    p.add_argument("--partitions", type=int, default=2, help="Spark partitions of the generated source")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--warmup-rows", type=int, default=200_000)
    p.add_argument("--out", help="scratch directory (default: a temp dir, removed afterwards)")
    args = p.parse_args(argv)

    from spark_jobs.common.output import configure_logging
    from spark_jobs.common.session import SessionConfig, get_spark

    os.environ.setdefault("PAIMON_LOG_LEVEL", "WARNING")
    configure_logging()
    out = args.out or tempfile.mkdtemp(prefix="spark-ingest-bench-")
    spark = get_spark(
        SessionConfig(
            app_name="bench-spark-ingest",
            master=args.master,
            driver_memory=args.driver_memory,
            conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": str(max(args.bucket, 2))},
        )
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if args.warmup_rows:
            run(
                spark,
                args.warmup_rows,
                bucket=args.bucket,
                partitions=args.partitions,
                out=os.path.join(out, "warmup"),
                repeat=1,
            )
        summary = run(
            spark, args.rows, bucket=args.bucket, partitions=args.partitions, out=out, repeat=args.repeat
        )
        print(json.dumps({"summary": summary}), flush=True)
    finally:
        spark.stop()
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
