"""The delta-rs cases of the bench (``bench/cases_delta.py``) at ``--size small``, a few seconds.

Every delta case runs through the harness's own ``measure`` (each side in its fresh process:
ours in this venv, delta-rs in the peer venv) and must come out OK with every side's checksum
equal to the expected one; the report gets its side-by-side table. Then the checks must be able
to fail: a compaction result that lost a row, an orphan clean that removed a live file, and
delta-rs's default "lite" vacuum, which leaves untracked files (why the case uses ``full=True``).

Needs the peer venv (scripts/setup_peers.sh, with deltalake): a missing one fails
(``PAIMON_ALLOW_MISSING_PEERS=1`` skips).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.cases import DELTA, OURS, PYPAIMON, Context  # noqa: E402
from bench.cases_delta import DeltaCompact, DeltaOrphans, delta_cases, delta_live_files  # noqa: E402
from bench.report import document, markdown  # noqa: E402
from bench.runner import measure, peer_python, run_side  # noqa: E402
from bench.sidekit import compare_checksums  # noqa: E402


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Context:
    peer_py, problem = peer_python()
    if problem is not None or peer_py is None:
        msg = f"{problem}. Run scripts/setup_peers.sh (or set PAIMON_PEERS_PYTHON)."
        if os.environ.get("PAIMON_ALLOW_MISSING_PEERS") == "1":
            pytest.skip(f"benchmark peers unavailable, skipped because PAIMON_ALLOW_MISSING_PEERS=1: {msg}")
        pytest.fail(f"benchmark peers unavailable: {msg} (set PAIMON_ALLOW_MISSING_PEERS=1 to skip locally)",
                    pytrace=False)
    info = run_side(PYPAIMON, {"op": "info"}, peer_py, timeout=120)
    assert info.get("ok"), info
    versions = dict(info["versions"])
    assert versions.get("deltalake"), f"deltalake is not in the peer venv: {versions}"
    return Context(workdir=tmp_path_factory.mktemp("delta-bench"), size="small", log=lambda _m: None,
                   peer_py=peer_py, peer_versions=versions)


def test_every_delta_case_runs_and_agrees(ctx: Context, tmp_path: Path) -> None:
    results = []
    for case in delta_cases():
        assert case.unavailable(ctx) is None
        res = measure(case, ctx, sides=case.sides, repeat=1, warmup=0, peer_py=ctx.peer_py, log=lambda _m: None)
        results.append(res)
        assert res.status == "OK", {s: (r.errors, r.problems) for s, r in res.sides.items()}
        assert set(res.sides) == set(case.sides) and DELTA in res.sides
        for side, r in res.sides.items():  # OK: each side's checksum matched what the case expects
            assert r.checksum is not None and r.samples and r.samples[0] > 0 and r.cpu_samples, side
        if isinstance(case, DeltaCompact):  # the very same rows on every side
            assert all(compare_checksums(case.expected, r.checksum or {}) == [] for r in res.sides.values())
        assert (res.ratios().get("ours/delta") or 0) > 0
    doc = document(results, size="small", repeat=1, warmup=0, machine={}, command="test")
    md = markdown(doc)
    assert "Against delta-rs" in md
    for case in delta_cases():
        assert f"| {case.name} | delta-rs |" in md


def _run(case: Any, ctx: Context, side: str, run_dir: Path, **extra: Any) -> dict[str, Any]:
    spec = dict(case.prepare(side, run_dir), **extra)
    answer = run_side(side, spec, ctx.peer_py)
    assert answer.get("ok"), answer
    return answer


def test_a_compaction_that_lost_a_row_fails(ctx: Context, tmp_path: Path) -> None:
    case = DeltaCompact("delta_compact_10m_200_files", "commits_200")
    case.setup(ctx)
    run = tmp_path / "delta-run"
    answer = _run(case, ctx, DELTA, run)
    assert case.verify(DELTA, run, answer).problems == []
    # drop the last row of one compacted file: the checksum must catch it
    live = sorted(delta_live_files(run / "delta"))
    victim = run / "delta" / live[0]
    data = pq.read_table(victim)
    pq.write_table(data.slice(0, data.num_rows - 1), victim)
    problems = case.verify(DELTA, run, answer).problems
    assert any(p.startswith("rows:") for p in problems), problems
    # ours: a compaction never run leaves 5 files per partition and no COMPACT snapshot
    idle = tmp_path / "ours-idle"
    case.prepare(OURS, idle)
    problems = case.verify(OURS, idle, {}).problems
    assert any("COMPACT" in p or "snapshot" in p for p in problems), problems


def test_an_orphan_clean_that_took_a_live_file_fails_and_lite_vacuum_leaves_orphans(ctx: Context,
                                                                                    tmp_path: Path) -> None:
    case = DeltaOrphans("delta_orphans_10k_files", "orphan_commits_10k", "orphans_10k")
    case.setup(ctx)
    run = tmp_path / "ours"
    answer = _run(case, ctx, OURS, run)
    assert case.verify(OURS, run, answer).problems == []
    tracked = next(f for f in case.tracked[OURS] if "/bucket-" in f)
    (run / "wh" / "db.db" / "t" / tracked).unlink()
    assert any(p.startswith("tracked_files_kept") for p in case.verify(OURS, run, answer).problems)
    # delta-rs's default (lite) vacuum deletes no untracked file; full does (see the case's docstring)
    lite = tmp_path / "lite"
    answer = _run(case, ctx, DELTA, lite, full=False)
    got = case.verify(DELTA, lite, answer)
    assert got.checksum is not None and got.checksum["orphans_removed"] == 0 and got.checksum["reported_deleted"] == 0
    full = tmp_path / "full"
    answer = _run(case, ctx, DELTA, full)
    assert case.verify(DELTA, full, answer).problems == []
