"""A driver program run against the cluster (``python cluster_driver.py MASTER CONF_JSON WH``).

One Spark application (one driver JVM: they take seconds each on a busy box) that

1. asks every executor's Python worker where it imported ``paimon_core`` from, its working
   directory, and whether it was forked from the jobs' daemon (``spark_jobs.daemon``);
2. streams ``db.src`` into ``db.dst`` (both Paimon tables in ``WH``) with the ``paimon`` streaming
   source and sink, ``Trigger.AvailableNow``, and a checkpoint under ``WH``.

Prints one JSON line: ``{"probe": [...], "stream_batches": N}``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any


def _probe(_: Iterable[int]) -> Iterator[dict[str, Any]]:
    import paimon_core
    from spark_jobs.daemon import DAEMON_ENV

    yield {
        "paimon_core": paimon_core.__file__,
        "cwd": os.getcwd(),
        "daemon_pid": os.environ.get(DAEMON_ENV),
        "pid": os.getpid(),
    }


def main(master: str, conf_json: str, warehouse: str) -> int:
    from spark_jobs.common.session import SessionConfig, get_spark

    conf = json.loads(conf_json)
    spark = get_spark(SessionConfig(app_name="paimon-cluster-driver", master=master, conf=conf))
    try:
        probe = spark.sparkContext.parallelize(range(4), 4).mapPartitions(_probe).collect()
        stream = spark.readStream.format("paimon").option("warehouse", warehouse).load("db.src")
        query = (
            stream.writeStream.format("paimon")
            .option("warehouse", warehouse)
            .option("checkpointLocation", os.path.join(warehouse, "_checkpoints", "dst"))
            .trigger(availableNow=True)
            .start("db.dst")
        )
        query.awaitTermination(180)
        batches = sum(1 for p in query.recentProgress if p.numInputRows)
        print(json.dumps({"probe": probe, "stream_batches": batches}))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
