"""The S3 ingest bench (``bench/s3_ingest.py``) end to end at a trimmed size: its own S3 server
and a 1-worker standalone cluster, every case run, the paimon cases committing every row, and the
ratios it quotes computed from the medians it reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_s3_ingest_bench_on_a_cluster(tmp_path: Path) -> None:
    out = tmp_path / "s3-ingest.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.s3_ingest", "--rows", "3000", "--tasks", "2", "--cluster", "1",
         "--repeat", "2", "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=420,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["master"] == "standalone, 1 workers" and doc["repeat"] == 2
    cases = doc["cases"]
    # no S3A in pyspark: the case is recorded as the error it is, not dropped
    assert "S3AFileSystem" in (cases["s3a_parquet"]["error"] or "")
    for name in ("local_parquet", "arrow_s3_floor", "paimon_s3", "paimon_local_native"):
        case = cases[name]
        assert case["error"] is None, (name, case)
        assert len(case["runs"]) == 2 and case["wall_s"] in [w for w, _ in case["runs"]]
        # the cluster's executors are counted: a write's CPU is more than the idle driver's
        assert case["cpu_s"] > 0
    for name in ("paimon_s3", "paimon_local_native"):
        assert cases[name]["rows_committed"] == 3000  # a fresh table per run: every row, once
    ratio = doc["paimon_s3/arrow_s3_floor"]
    assert ratio["wall"] == round(cases["paimon_s3"]["wall_s"] / cases["arrow_s3_floor"]["wall_s"], 2)
