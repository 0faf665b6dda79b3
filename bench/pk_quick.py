"""Primary-key side-by-side: 1M rows into 4 buckets, 100k upserts, merged read.

``python -m bench.pk_quick`` runs each side in its own fresh process (ours in this venv,
pypaimon and pypaimon-rust in the peer venv), times only the operations, checks the
merged result (1,000,000 rows, 100,000 of them upserted) and prints one JSON line per side.
Reads include writing the merged result to Parquet on every side (the peer driver's
output path), so the sides do the same work.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_GEN = """
import numpy as np, pyarrow as pa, pyarrow.parquet as pq, sys
n = 1_000_000; rng = np.random.default_rng(0); ids = np.arange(n, dtype=np.int64)
dts = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])
data = pa.table({"id": ids, "dt": pa.array(dts[ids % 4]), "v": rng.random(n),
                 "s": pa.array([f"s{i:08d}" for i in range(n)])})
up = data.take(pa.array(rng.choice(n, 100_000, replace=False).astype(np.int64)))
up = up.set_column(2, "v", pa.array(np.full(up.num_rows, -1.0)))
pq.write_table(data, sys.argv[1] + "/base.parquet"); pq.write_table(up, sys.argv[1] + "/up.parquet")
"""

_OURS = """
import sys, time, json, resource, tempfile
import pyarrow.parquet as pq, pyarrow.compute as pc
from paimon_core import FileSystemCatalog
d = sys.argv[1]
base, up = pq.read_table(d + "/base.parquet"), pq.read_table(d + "/up.parquet")
c = FileSystemCatalog(tempfile.mkdtemp()); c.create_database("db")
t = c.create_table("db.pk", base.schema, primary_keys=["id"], options={"bucket": "4"})
t0 = time.perf_counter(); t.write_arrow(base); t1 = time.perf_counter(); t.write_arrow(up); t2 = time.perf_counter()
out = t.to_arrow(); pq.write_table(out, tempfile.mktemp(suffix=".parquet")); t3 = time.perf_counter()
print(json.dumps({"side": "ours", "write_s": t1 - t0, "upsert_s": t2 - t1, "merged_read_s": t3 - t2,
                  "rows": out.num_rows, "upserted": pc.sum(pc.equal(out["v"], -1.0)).as_py(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_PEER = """
import sys, time, json, resource, tempfile
sys.path.insert(0, sys.argv[3])
import pyarrow.parquet as pq, pyarrow.compute as pc
import peer_driver as d
name, data_dir = sys.argv[1], sys.argv[2]
engine = d.PypaimonEngine() if name == "pypaimon" else d.RustEngine()
cmd = {"warehouse": tempfile.mkdtemp(), "table": "db.pk"}
base, up = pq.read_table(data_dir + "/base.parquet"), pq.read_table(data_dir + "/up.parquet")
engine.create_table({**cmd, "schema_parquet": data_dir + "/base.parquet", "primary_keys": ["id"],
                     "partition_keys": [], "options": {"bucket": "4"}})
def commit(data):
    engine._commit(cmd if name == "rust" else engine._table(cmd), data, False, None)
t0 = time.perf_counter(); commit(base); t1 = time.perf_counter(); commit(up); t2 = time.perf_counter()
out_path = tempfile.mktemp(suffix=".parquet"); engine.read({**cmd, "output": out_path}); t3 = time.perf_counter()
out = pq.read_table(out_path)
print(json.dumps({"side": name, "write_s": t1 - t0, "upsert_s": t2 - t1, "merged_read_s": t3 - t2,
                  "rows": out.num_rows, "upserted": pc.sum(pc.equal(out["v"], -1.0)).as_py(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "interop"))
    from peers import peer_venv_python

    peer = peer_venv_python()
    if peer is None:
        print("peer venv missing: run scripts/setup_peers.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-c", _GEN, d], check=True)
        runs = [[sys.executable, "-c", _OURS, d]]
        runs += [[peer, "-c", _PEER, side, d, str(REPO / "tests" / "interop")] for side in ("rust", "pypaimon")]
        for argv in runs:
            out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            result = json.loads(out)
            ok = result["rows"] == 1_000_000 and result["upserted"] == 100_000
            result["check"] = "OK" if ok else "FAILED"
            print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
