"""With the project installed, a plain SparkSession finds ``format("paimon")`` by itself.

PySpark registers the ``DefaultSource`` of every top-level ``pyspark_*`` module on the path
(``pyspark_paimon.py``). The shared test session registers the source explicitly, so this
runs a separate, bare session in a subprocess: no ``register`` call, no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from paimon_core import FileSystemCatalog

_SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1").getOrCreate())
wh = sys.argv[1]
df = spark.read.format("paimon").option("warehouse", wh).load("db.t")
rows = sorted((r.id, r.v) for r in df.collect())
spark.range(3).selectExpr("id + 10 AS id", "CAST(id AS STRING) AS v").write.format("paimon") \\
    .option("warehouse", wh).mode("append").save("db.t")
print(json.dumps({"rows": rows}))
spark.stop()
"""


def test_plain_session_finds_paimon_source(tmp_path: Path) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_database("db")
    t = cat.create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    t.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path / "wh")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["rows"] == [[1, "a"], [2, "b"]]
    ids = sorted(cat.get_table("db.t").to_arrow().column("id").to_pylist())
    assert ids == [1, 2, 10, 11, 12]
