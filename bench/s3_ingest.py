"""Spark ingest onto an S3 API server (moto, own process) against ``df.write.parquet``, same run.

``python -m bench.s3_ingest --rows 10000000`` (``--rows 200000`` for a quick look). One local
Spark session (``--master``, default ``local[2]``) with the endpoint and credentials in the
environment (``--cluster 2``: a standalone master and 2 workers on loopback instead); each case is
timed wall-clock and by CPU of the whole process tree (driver, JVM, cluster workers and executors,
Python workers):

* ``s3a_parquet``: ``df.write.parquet("s3a://...")``, Spark's own writer to the store. pyspark
  ships no hadoop-aws (S3A) and Maven Central is unreachable here, so this records the error;
* ``local_parquet``: ``df.write.parquet`` to local disk (the JVM writer's floor);
* ``arrow_s3_floor``: ``mapInArrow`` whose Python workers write each task's rows with pyarrow
  straight to a final name on S3 (the floor of any Python-side direct write: rows cross to
  Python, one PUT per file, no table format);
* ``paimon_s3``: ``write_table`` into an append table on ``s3://`` (``writer=auto``: the data
  source, which writes files in place under final names, one commit);
* ``paimon_local_native``: the same into a local warehouse (Spark's Parquet writer, staged + linked).

Results: ``bench/results/s3-ingest.json`` and ``.md`` (ratios wall and CPU against the floors).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from bench.spark_ops import _cpu_s, _session, _tree, source_frame

ROOT = Path(__file__).resolve().parents[1]


#: process trees whose CPU a case counts: the driver's, and the cluster workers' (executors) when
#: the bench started a cluster
_ROOTS: list[int] = [os.getpid()]
#: process trees left out: the S3 server (a child of this process, but the store's CPU, not the writer's)
_EXCLUDE: list[int] = []


def _cpu() -> tuple[float, float]:
    """CPU of the union of the trees (the cluster this bench starts is in the driver's tree too)."""
    user = system = 0.0
    excluded = {p for root in _EXCLUDE for p in _tree(root)}
    for pid in {p for root in _ROOTS for p in _tree(root)} - excluded:
        u, s = _cpu_s(pid)
        user, system = user + u, system + s
    return user, system


def _timed(fn: Callable[[], object]) -> dict[str, Any]:
    c0, t0 = _cpu(), time.perf_counter()
    try:
        fn()
        error = None
    except Exception as e:  # noqa: BLE001 - a case that cannot run is a result here
        lines = [ln.strip() for ln in str(e).splitlines() if "Exception" in ln or "Error" in ln]
        error = f"{type(e).__name__}: {(lines[0] if lines else str(e))[:300]}"
    wall, c1 = time.perf_counter() - t0, _cpu()
    return {"wall_s": round(wall, 2), "cpu_s": round(c1[0] + c1[1] - c0[0] - c0[1], 2), "error": error}


def _arrow_writer(endpoint_env: dict[str, str], prefix: str) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow.parquet as pq

        from paimon_core.io import FsspecFileIO

        fio = FsspecFileIO("s3", {})
        writer = None
        rows = 0
        path = f"{prefix}/part-{uuid.uuid4()}.parquet"
        with fio.open_output(path) as out:
            for b in batches:
                if writer is None:
                    writer = pq.ParquetWriter(out, b.schema, compression="zstd", compression_level=1)
                writer.write_batch(b)
                rows += b.num_rows
            if writer is not None:
                writer.close()
        yield pa.RecordBatch.from_pydict({"rows": [rows]})

    return write


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time, with every run's wall and CPU seconds."""
    ok = sorted((r for r in runs if not r["error"]), key=lambda r: r["wall_s"])
    picked = dict(ok[len(ok) // 2] if ok else runs[0])
    picked["runs"] = [[r["wall_s"], r["cpu_s"]] for r in runs]
    return picked


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--cluster", type=int, default=0, metavar="N",
                   help="start a standalone cluster of N workers on loopback (tests/distributed/spark_cluster.py) "
                        "with the S3 settings in the workers' environment, and use it as --master")
    p.add_argument("--repeat", type=int, default=1, help="runs of each case, round-robin; the median is reported")
    p.add_argument("--out", default=str(ROOT / "bench/results/s3-ingest.json"))
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from paimon_core import FileSystemCatalog
    from spark_jobs.datasource.write import write_table
    from tests.distributed.s3_server import S3Server

    results: dict[str, Any] = {"rows": args.rows, "tasks": args.tasks, "master": args.master, "repeat": args.repeat,
                               "cases": {}}
    with S3Server() as s3, tempfile.TemporaryDirectory() as tmp:
        os.environ.update(s3.env())
        if s3.pid is not None:
            _EXCLUDE.append(s3.pid)
        cluster = None
        if args.cluster:
            from tests.distributed.spark_cluster import SparkCluster

            cluster = SparkCluster.start(Path(tmp) / "cluster", workers=args.cluster, worker_env=s3.env())
            os.environ.update(cluster.driver_env())
            _ROOTS.extend(w.daemon.proc.pid for w in cluster.workers)
            results["master"] = f"standalone, {args.cluster} workers"
        spark = _session({"master": cluster.master_url if cluster else args.master, "bucket": 2,
                          "conf": cluster.driver_conf() if cluster else {}})
        df = source_frame(spark, args.rows, args.tasks).cache()
        df.count()
        df.write.parquet(f"{tmp}/warm-up")  # JIT and Python workers warm before anything is timed
        schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])
        runs: dict[str, list[dict[str, Any]]] = {}
        for i in range(args.repeat):  # round-robin: a slow spell of the shared machine hits every case
            runs.setdefault("s3a_parquet", []).append(_timed(lambda i=i: df.write.parquet(f"s3a://{s3.bucket}/floor{i}")))  # type: ignore[misc]
            runs.setdefault("local_parquet", []).append(
                _timed(lambda i=i: df.write.option("compression", "zstd").parquet(f"{tmp}/floor{i}")))  # type: ignore[misc]
            prefix = f"s3://{s3.bucket}/arrow-floor{i}"
            runs.setdefault("arrow_s3_floor", []).append(
                _timed(lambda prefix=prefix: df.mapInArrow(  # type: ignore[misc]
                    _arrow_writer(s3.env(), prefix), "rows long").collect()))
            for name, wh in (("paimon_s3", s3.url(f"wh{i}")), ("paimon_local_native", f"{tmp}/wh{i}")):
                catalog = FileSystemCatalog(wh)
                catalog.create_database("db")
                catalog.create_table("db.t", schema, options={"bucket": "-1"})
                run = _timed(lambda wh=wh: write_table(df, wh, "db.t"))  # type: ignore[misc]
                got = catalog.get_table("db.t").latest_snapshot()
                run["rows_committed"] = got.total_record_count if got is not None else 0
                runs.setdefault(name, []).append(run)
        results["cases"] = {name: _median(rs) for name, rs in runs.items()}
        spark.stop()
        if cluster is not None:
            cluster.stop()
    for key, floor in (("paimon_s3", "arrow_s3_floor"), ("paimon_s3", "local_parquet"), ("paimon_local_native", "local_parquet")):
        a, b = results["cases"][key], results["cases"][floor]
        if not a["error"] and not b["error"]:
            results[f"{key}/{floor}"] = {"wall": round(a["wall_s"] / b["wall_s"], 2), "cpu": round(a["cpu_s"] / b["cpu_s"], 2)}
    out = Path(args.out)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
