"""The harness's own checks of the primary-key, maintenance, compaction and Spark cases (no peers, no subprocesses).

Each case's ``verify`` must pass on a correct run and fail on a wrong one: the operations of our
side run in this process (``bench.ours_ops``), then the run directory is judged, then tampered
with (a missing row, a wrong value, a deleted file) and judged again.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import datagen, fixtures  # noqa: E402
from bench.cases import FLOOR, OURS, Case, Context, Verdict  # noqa: E402
from bench.cases_compact import (  # noqa: E402
    PK_FULL_ARGS,
    CompactAppendBinpack,
    CompactManyFiles,
    CompactPkFull,
    PkReadAfterCompaction,
    live_paths,
)
from bench.cases_maint import ExpireSnapshots, OrphanClean  # noqa: E402
from bench.cases_pk import PkMergedRead, PkUpsert, PkWrite  # noqa: E402
from bench.report import document, markdown  # noqa: E402
from bench.runner import measure  # noqa: E402
from bench.sidekit import table_checksum  # noqa: E402


def _ctx(tmp_path: Path) -> Context:
    return Context(workdir=tmp_path / "work", size="small", log=lambda _msg: None)


def _setup(case: Case, ctx: Context) -> Case:
    reason = case.unavailable(ctx)
    if reason is not None:
        pytest.skip(reason)
    case.setup(ctx)
    return case


def _ours(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.ours_ops import HANDLERS

    return HANDLERS[spec["op"]](spec)


def _pk_file(path: Path, rows: list[tuple[int, int, int, float]]) -> Path:
    """A data file of (id, seq, kind, v) rows in the primary-key file layout."""
    ids = [r[0] for r in rows]
    pq.write_table(pa.table({
        "_KEY_id": pa.array(ids, pa.int64()), "_SEQUENCE_NUMBER": pa.array([r[1] for r in rows], pa.int64()),
        "_VALUE_KIND": pa.array([r[2] for r in rows], pa.int8()), "id": pa.array(ids, pa.int64()),
        "dt": pa.array(["2024-01-01"] * len(rows)), "v": pa.array([r[3] for r in rows], pa.float64()),
        "s": pa.array(["x"] * len(rows))}), path)
    return path


def test_read_pk_files_keeps_the_highest_sequence_and_drops_retractions(tmp_path: Path) -> None:
    a = _pk_file(tmp_path / "a.parquet", [(i, i, 0, float(i)) for i in range(5)])
    b = _pk_file(tmp_path / "b.parquet", [(1, 10, 2, -1.0), (2, 11, 3, 0.0), (3, 1, 0, -5.0), (7, 12, 0, 7.0)])
    merged = fixtures.read_pk_files([a, b]).sort_by("id")
    assert merged.column("id").to_pylist() == [0, 1, 3, 4, 7]
    assert merged.column("v").to_pylist() == [0.0, -1.0, 3.0, 4.0, 7.0]  # id 3: seq 3 beats the later file's seq 1
    assert merged.schema.names == list(datagen.SCHEMA.names)


def test_upserts_change_exactly_the_picked_rows() -> None:
    base = pa.Table.from_batches([datagen.batch(0, 1000, seed=1)])
    up, merged = datagen.upserts(base, 100, seed=1)
    assert up.num_rows == 100 and len(set(up.column("id").to_pylist())) == 100
    assert set(up.column("v").to_pylist()) == {datagen.UPSERT_V}
    assert table_checksum(merged)["v_neg"] == 100 and table_checksum(base)["v_neg"] == 0
    changed = {i for i, (x, y) in enumerate(zip(base.column("v").to_pylist(), merged.column("v").to_pylist(),
                                                strict=True)) if x != y}
    assert changed == set(up.column("id").to_pylist())


def test_pk_write_verify(tmp_path: Path) -> None:
    case = _setup(PkWrite(), _ctx(tmp_path))
    good = tmp_path / "good"
    _ours(case.prepare(OURS, good))
    verdict = case.verify(OURS, good, {})
    assert verdict.problems == [] and verdict.extra["files_written"] == 4  # one file per bucket

    short = tmp_path / "short"
    spec = case.prepare(OURS, short)
    pq.write_table(pq.read_table(spec["input"]).slice(1), tmp_path / "short.parquet")
    _ours(dict(spec, input=str(tmp_path / "short.parquet")))
    problems = case.verify(OURS, short, {}).problems
    assert any(p.startswith("rows:") for p in problems) and any("deltaRecordCount" in p for p in problems)


def test_pk_upsert_verify(tmp_path: Path) -> None:
    case = _setup(PkUpsert(), _ctx(tmp_path))
    assert isinstance(case, PkUpsert)
    good = tmp_path / "good"
    _ours(case.prepare(OURS, good))
    verdict = case.verify(OURS, good, {})
    assert verdict.problems == [] and verdict.checksum is not None
    assert verdict.checksum["v_neg"] == case.rows

    wrong = tmp_path / "wrong"
    spec = case.prepare(OURS, wrong)
    data = pq.read_table(spec["input"])
    pq.write_table(data.set_column(2, "v", pa.array([0.5] * data.num_rows)), tmp_path / "wrong.parquet")
    _ours(dict(spec, input=str(tmp_path / "wrong.parquet")))
    problems = case.verify(OURS, wrong, {}).problems
    assert any(p.startswith("v_neg:") for p in problems) and any(p.startswith("new files: v_neg") for p in problems)

    floor = tmp_path / "floor"
    from bench.floor_ops import op_write

    op_write(case.prepare(FLOOR, floor))
    assert case.verify(FLOOR, floor, {}).problems == []


def test_pk_merged_read_fixture_is_checked(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    case = _setup(PkMergedRead(), ctx)
    answer = _ours(case.prepare(OURS, tmp_path / "run"))
    assert case.verify(OURS, tmp_path / "run", answer).problems == []
    # A corrupted fixture (a bucket's upsert file gone) fails the case's setup, before any reader.
    assert isinstance(case, PkMergedRead)
    victim = max(fixtures.data_files(fixtures.table_dir(fixtures.warehouse_of(case.table))),
                 key=lambda f: f.stat().st_mtime_ns)
    victim.unlink()
    with pytest.raises(RuntimeError, match="merges wrong"):
        PkMergedRead().setup(ctx)


def test_expire_verify(tmp_path: Path) -> None:
    case = _setup(ExpireSnapshots(), _ctx(tmp_path))
    idle = tmp_path / "idle"
    case.prepare(OURS, idle)
    assert any(p.startswith("snapshots_left") for p in case.verify(OURS, idle, {}).problems)

    run = tmp_path / "run"
    answer = _ours(case.prepare(OURS, run))
    verdict = case.verify(OURS, run, answer)
    assert verdict.problems == [], verdict.problems
    assert verdict.checksum is not None and verdict.checksum["snapshots_left"] == ExpireSnapshots.retain

    fixtures.data_files(fixtures.table_dir(str(run / "wh")))[0].unlink()
    problems = case.verify(OURS, run, answer).problems
    assert any(p.startswith("data_files_kept") for p in problems)
    assert any(p.startswith("metadata_missing") for p in problems)


def test_orphan_clean_verify(tmp_path: Path) -> None:
    case = _setup(OrphanClean(), _ctx(tmp_path))
    idle = tmp_path / "idle"
    case.prepare(OURS, idle)
    assert any(p.startswith("orphans_removed") for p in case.verify(OURS, idle, {}).problems)

    run = tmp_path / "run"
    answer = _ours(case.prepare(OURS, run))
    assert case.verify(OURS, run, answer).problems == []
    assert isinstance(case, OrphanClean)
    (fixtures.table_dir(str(run / "wh")) / case.live[0]).unlink()
    assert any(p.startswith("live_files_kept") for p in case.verify(OURS, run, answer).problems)


def _floor(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.floor_ops import HANDLERS

    return HANDLERS[spec["op"]](spec)


def test_compact_append_verify(tmp_path: Path) -> None:
    case = _setup(CompactAppendBinpack(), _ctx(tmp_path))
    idle = tmp_path / "idle"
    case.prepare(OURS, idle)  # no compaction ran: no COMPACT snapshot, every input file still live
    problems = case.verify(OURS, idle, {}).problems
    assert any(p.startswith("latest snapshot") for p in problems) and any("still live" in p for p in problems)

    run = tmp_path / "run"
    answer = _ours(case.prepare(OURS, run))
    verdict = case.verify(OURS, run, answer)
    assert verdict.problems == [], verdict.problems
    assert verdict.extra["files_after"] == 4 and verdict.extra["files_before"] == 20
    assert set(answer["phases"]) >= {"plan", "rewrite", "commit"}

    _, paths, _ = live_paths(fixtures.table_dir(str(run / "wh")))
    next(iter(paths.values())).unlink()  # a compacted file lost
    problems = case.verify(OURS, run, answer).problems
    assert any(p.startswith("live file missing") for p in problems) and any(p.startswith("rows:") for p in problems)

    floor = tmp_path / "floor"
    _floor(case.prepare(FLOOR, floor))
    assert case.verify(FLOOR, floor, {}).problems == []


def test_compact_pk_verify(tmp_path: Path) -> None:
    case = _setup(CompactPkFull(*PK_FULL_ARGS), _ctx(tmp_path))
    run = tmp_path / "run"
    answer = _ours(case.prepare(OURS, run))
    verdict = case.verify(OURS, run, answer)
    assert verdict.problems == [], verdict.problems
    assert verdict.extra["files_after"] == 4 and verdict.extra["levels_after"] == [5]
    assert verdict.checksum is not None and verdict.checksum["rows"] == 1000

    # A compacted file with one row missing and one value changed: the neutral merge tells.
    _, paths, _ = live_paths(fixtures.table_dir(str(run / "wh")))
    victim = next(iter(paths.values()))
    data = pq.read_table(victim)
    pq.write_table(data.slice(1).set_column(data.schema.get_field_index("v"), "v",
                                            pa.array([0.5] * (data.num_rows - 1))), victim)
    problems = case.verify(OURS, run, answer).problems
    assert any(p.startswith("rows:") for p in problems) and any(p.startswith("v_sum:") for p in problems)

    floor = tmp_path / "floor"
    _floor(case.prepare(FLOOR, floor))
    assert case.verify(FLOOR, floor, {}).problems == []


def test_compact_plan_verify(tmp_path: Path) -> None:
    case = _setup(CompactManyFiles("compact_plan_10k_files", dry_run=True), _ctx(tmp_path))
    run = tmp_path / "run"
    answer = _ours(case.prepare(OURS, run))
    verdict = case.verify(OURS, run, answer)
    assert verdict.problems == [] and verdict.checksum == {"tasks": 10, "input_files": 100, "snapshots_after": 10}
    assert case.verify(OURS, run, dict(answer, plan_input_files=99)).problems != []


def test_read_after_compaction_fixture_is_checked(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    case = _setup(PkReadAfterCompaction(), ctx)
    answer = _ours(case.prepare(OURS, tmp_path / "run"))
    assert case.verify(OURS, tmp_path / "run", answer).problems == []
    assert isinstance(case, PkReadAfterCompaction)
    _, paths, _ = live_paths(fixtures.table_dir(fixtures.warehouse_of(case.table)))
    next(iter(paths.values())).unlink()
    with pytest.raises(RuntimeError, match="merges wrong"):
        PkReadAfterCompaction().setup(ctx)


class _Unavailable(Case):
    name = "needs_something"

    def unavailable(self, ctx: Context) -> str | None:
        return "something is missing"

    def setup(self, ctx: Context) -> None:
        raise AssertionError("a skipped case is never set up")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        raise AssertionError("a skipped case never runs")


class _BrokenSetup(_Unavailable):
    name = "broken_setup"

    def unavailable(self, ctx: Context) -> str | None:
        return None

    def setup(self, ctx: Context) -> None:
        raise RuntimeError("fixture is wrong")

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        raise AssertionError("never verified")


def test_skipped_and_broken_cases_in_the_report(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    skipped = measure(_Unavailable(), ctx, sides=[OURS], repeat=1, warmup=0, peer_py=None, log=ctx.log)
    broken = measure(_BrokenSetup(), ctx, sides=[OURS], repeat=1, warmup=0, peer_py=None, log=ctx.log)
    assert skipped.status == "SKIPPED" and broken.status == "FAILED"
    doc = document([skipped, broken], size="small", repeat=1, warmup=0, machine={}, command="test")
    assert doc["summary"]["failed"] == ["broken_setup"]
    assert doc["summary"]["skipped"] == {"needs_something": "something is missing"}
    md = markdown(doc)
    assert "| needs_something | SKIPPED |" in md and "SKIPPED: something is missing" in md
    assert "setup: RuntimeError: fixture is wrong" in md


def test_spark_source_rows_match_the_spark_expressions() -> None:
    from bench.spark_ops import source_batches, source_checksum

    t = pa.concat_tables(source_batches(6))
    assert t.column("dt").to_pylist() == list(datagen.DT_VALUES) + list(datagen.DT_VALUES[:2])
    assert t.column("s").to_pylist()[:2] == ["s00000000", "s00000001"]
    assert t.column("v").to_pylist()[4] == 1.0
    assert source_checksum(6)["rows"] == 6


def test_link_tree_copies_the_hints_by_value(tmp_path: Path) -> None:
    src = tmp_path / "src" / "snapshot"
    src.mkdir(parents=True)
    (src / "LATEST").write_text("1")
    (src / "snapshot-1").write_text("{}")
    fixtures.link_tree(tmp_path / "src", tmp_path / "dst")
    with open(tmp_path / "dst" / "snapshot" / "LATEST", "w") as f:  # an in-place rewrite, as pypaimon-rust does
        f.write("2")
    assert (src / "LATEST").read_text() == "1"
    assert (src / "snapshot-1").stat().st_ino == (tmp_path / "dst" / "snapshot" / "snapshot-1").stat().st_ino
