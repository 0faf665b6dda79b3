"""The command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.compute as pc
import pyarrow.parquet as pq

from tests.fixtures.tables import sample_rows


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paimon_core", *args], capture_output=True, text=True, timeout=120)


def test_cli_end_to_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    wh = str(tmp_path / "wh")
    src = tmp_path / "in.parquet"
    pq.write_table(sample_rows(100), src)
    r = _cli("create-table", wh, "db.t", "--schema-from", str(src), "--partition-by", "dt", "--option", "file.format=orc")
    assert r.returncode == 0, r.stderr
    r = _cli("write", wh, "db.t", str(src))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["snapshot_id"] == 1
    part = tmp_path / "part.parquet"
    rows = sample_rows(100)
    pq.write_table(rows.filter(pc.equal(rows["dt"], "2024-01-01")).slice(0, 5), part)
    r = _cli("write", wh, "db.t", str(part), "--overwrite-partition", "dt=2024-01-01")
    assert r.returncode == 0, r.stderr
    # Rows of another partition are refused, with the reason.
    r = _cli("write", wh, "db.t", str(src), "--overwrite-partition", "dt=2024-01-01")
    assert r.returncode == 2 and "belongs to partition" in r.stderr
    out = tmp_path / "out.parquet"
    r = _cli("read", wh, "db.t", "--where", "id < 10 AND dt <> '2024-01-02'", "--columns", "id,dt", "--output", str(out))
    assert r.returncode == 0, r.stderr
    got = pq.read_table(out)
    assert got.schema.names == ["id", "dt"] and sorted(got.column("id").to_pylist()) == [0, 2, 3, 4, 6, 7, 8]
    assert json.loads(r.stdout)["rows"] == 7
    r = _cli("read", wh, "db.t", "--snapshot", "1", "--limit", "2")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2
    snaps = json.loads(_cli("snapshots", wh, "db.t").stdout)
    assert [s["commitKind"] for s in snaps] == ["APPEND", "OVERWRITE"]
    assert snaps[-1]["totalRecordCount"] == 75 + 5
    files = json.loads(_cli("files", wh, "db.t").stdout)
    assert all(f["file_name"].endswith(".orc") for f in files)
    assert json.loads(_cli("schema", wh, "db.t").stdout)["partitionKeys"] == ["dt"]


def test_cli_errors_are_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    wh = str(tmp_path / "wh")
    r = _cli("read", wh, "db.missing")
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
    src = tmp_path / "in.parquet"
    pq.write_table(sample_rows(3), src)
    _cli("create-table", wh, "db.t", "--schema-from", str(src))
    r = _cli("read", wh, "db.t", "--where", "id >")
    assert r.returncode == 2 and "error:" in r.stderr
    r = _cli("create-table", wh, "db.u", "--schema-from", str(src), "--option", "bukcet=2")
    assert r.returncode == 2 and "Unknown table option 'bukcet'" in r.stderr
