"""Smoke test of the benchmark suite (bench/): every default case at ``--size small``, via its JSON.

Runs ``python -m bench.run --size small --repeat 1 --warmup 0`` in a subprocess (fresh work
directory) and checks the document it writes: every case present and OK (or SKIPPED, only if its
dependency is missing here too), every side's checksum equal to the expected one, ratios are
positive numbers, machine info filled in. Needs the peer venv: a missing one fails with a pointer
to scripts/setup_peers.sh (``PAIMON_ALLOW_MISSING_PEERS=1`` skips).

The Spark ingest cases are full-size only and not in this test: each run starts a JVM (~40 s
per process on the 2-core CI machine, far over this test's budget).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.cases import FLOOR, OURS, Context, all_cases  # noqa: E402
from bench.runner import peer_python  # noqa: E402
from bench.sidekit import compare_checksums  # noqa: E402

BUDGET_S = 90.0  # ~45-60 s on the shared 2-core machine


def _require_peers() -> None:
    _, problem = peer_python()
    if problem is None:
        return
    msg = f"{problem}. Run scripts/setup_peers.sh (or set PAIMON_PEERS_PYTHON)."
    if os.environ.get("PAIMON_ALLOW_MISSING_PEERS") == "1":
        pytest.skip(f"benchmark peers unavailable, skipped because PAIMON_ALLOW_MISSING_PEERS=1: {msg}")
    pytest.fail(f"benchmark peers unavailable: {msg} (set PAIMON_ALLOW_MISSING_PEERS=1 to skip locally)",
                pytrace=False)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


@pytest.mark.slow
def test_bench_small_suite(tmp_path: Path) -> None:
    _require_peers()
    out = tmp_path / "latest.json"
    cmd = [sys.executable, "-m", "bench.run", "--size", "small", "--repeat", "1", "--warmup", "0",
           "--out", str(out), "--workdir", str(tmp_path / "work")]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=BUDGET_S * 2, check=False)
    elapsed = time.monotonic() - t0
    tail = f"\n--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-6000:]}"
    assert proc.returncode == 0, f"bench.run exited {proc.returncode}{tail}"
    assert elapsed < BUDGET_S, f"small suite took {elapsed:.1f}s (budget {BUDGET_S:.0f}s){tail}"

    doc = json.loads(out.read_text())
    assert out.with_suffix(".md").is_file()
    assert doc["size"] == "small" and doc["repeat"] == 1
    machine = doc["machine"]
    for key in ("date", "cpu_count", "ram_gb", "ours", "peers"):
        assert machine.get(key), f"machine info lacks {key}: {machine}"
    assert machine["peers"].get("pypaimon") and machine["peers"].get("pypaimon-rust")

    expected_cases = [c for c in all_cases() if c.default and not c.full_only]
    assert set(doc["cases"]) == {c.name for c in expected_cases}
    assert {"pk_write_1m", "pk_upsert_100k", "pk_merged_read_1m"} <= set(doc["cases"])
    ctx = Context(workdir=tmp_path / "unused", size="small")
    for case in expected_cases:
        c = doc["cases"][case.name]
        if c["status"] == "SKIPPED":  # only for a dependency that is missing here as well
            assert case.unavailable(ctx) == c["skipped_reason"], case.name
            continue
        assert c["status"] == "OK", f"{case.name}: {json.dumps(c['sides'], indent=1)[:3000]}"
        assert set(c["sides"]) == set(case.sides), case.name
        assert set(c.get("not_applicable") or {}) == set(case.not_applicable), case.name
        for side, d in c["sides"].items():
            assert d["status"] == "OK", (case.name, side, d["errors"], d["problems"])
            assert d["checksum"] is not None, (case.name, side)
            want = d.get("expected_checksum") or c["expected_checksum"]  # pk_upsert's floor: the upsert rows
            assert compare_checksums(want, d["checksum"]) == [], (case.name, side)
            assert _is_number(d["median_s"]) and _is_number(d["peak_rss_mb"]), (case.name, side, d)
        others = [s for s in case.sides if s != OURS]
        assert set(c["ratios"]) == {f"ours/{s}" for s in others}, case.name
        for key, ratio in c["ratios"].items():
            assert _is_number(ratio), (case.name, key, ratio)
        if FLOOR in case.sides:
            assert _is_number(c["floor_median_s"])
    assert doc["summary"]["failed"] == []


def test_wrong_answer_is_failed(tmp_path: Path) -> None:
    """A side whose answer differs from the expected checksum marks the case FAILED (ours + floor only)."""
    from bench.cases import AppendRead
    from bench.report import document, markdown_table
    from bench.runner import measure

    case = AppendRead("append_read_1m", "rows_1m", "table")
    real_setup = case.setup

    def tampered_setup(ctx: Context) -> None:
        real_setup(ctx)
        case.expected = dict(case.expected, id_sum=case.expected["id_sum"] + 1)

    case.setup = tampered_setup  # type: ignore[method-assign]
    ctx = Context(workdir=tmp_path, size="small", log=lambda _msg: None)
    result = measure(case, ctx, sides=[OURS, FLOOR], repeat=1, warmup=0, peer_py=None, log=lambda _msg: None)
    assert result.status == "FAILED"
    assert {s.status for s in result.sides.values()} == {"MISMATCH"}
    doc = document([result], size="small", repeat=1, warmup=0, machine={}, command="test")
    assert doc["summary"]["failed"] == ["append_read_1m"]
    assert "| append_read_1m | FAILED |" in markdown_table(doc)
