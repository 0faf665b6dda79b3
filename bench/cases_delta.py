"""Delta cases: our compaction and orphan clean against what a user would pick instead, delta-rs.

delta-rs (``deltalake``, Rust, pinned in the peer venv: tests/interop/requirements-peers.txt) runs
in its own fresh process per run like every side (``bench/delta_ops.py``), timed the same way
(wall, user and system CPU of all threads, peak RSS of the process).

* ``delta_compact_10m_200_files`` / ``delta_compact_10m_2000_files``: the same 10M rows
  (``id int64, dt string, v double, s string``) in the same number of small files, 50 / 500
  appends x 4 dt partitions = 200 / 2,000 files. Ours: ``table.maintenance.compact()`` (the Spark-free local
  path) of an unaware-bucket append table written by our writer (``write-only`` while built,
  ``source.split.open-file-cost`` 1 kb so bins go by bytes as delta-rs's do, default target file
  size 256 MB); delta-rs: ``DeltaTable(path).optimize.compact(target_size=256 MB)`` of a table
  delta-rs wrote itself from the same slices (each side compacts files its own writer made,
  zstd level 1 on both sides, also for the compaction's output); floor F: per partition,
  ``pq.read_table`` of our fixture's files + ``pq.write_table`` zstd(1). Each side must end with
  one file per partition holding exactly the input rows: checked on disk, never by the side's
  own reader (ours: manifests via fastavro; delta-rs: the ``_delta_log`` JSON replayed here),
  the live files read with plain pyarrow and checksummed.
* ``delta_orphans_100k_files`` / ``delta_orphans_10k_files``: 100,000 / 10,000 data files of which
  10 % are orphans. One fixture serves both sides with the very same files: our table (90 / 9
  commits of 1,000 files over 100 dt partitions; hard links of 100 real 10-row Parquet files
  under new names, committed by our committer) and a Delta table whose log adds the same files
  at the same relative paths (hard links, one commit per our commit, through delta-rs's
  ``create_write_transaction``); then 10,000 / 1,000 untracked data-file look-alikes planted in
  both at the same paths. Every file is made old (data 10 days, orphans 30 days). Ours:
  ``table.maintenance.remove_orphan_files(older_than=now - 1 day)`` (``force=True`` as in
  ``orphan_clean_100k``: it only matters below 1 hour); delta-rs:
  ``DeltaTable(path).vacuum(retention_hours=24, enforce_retention_duration=False, dry_run=False,
  full=True)``: the same 1-day age threshold (``retention_hours=0`` would also take files written
  seconds ago, which ours refuses below 1 hour without ``force``), and ``full=True`` because
  delta-rs's default "lite" vacuum only deletes files its log removed, never untracked files
  (checked by ``tests/bench/test_bench_delta.py``). Checked on disk: every planted file gone,
  every file the table had before planting still there, the count each call reports = planted.

The timer of a delta-rs run covers ``DeltaTable(path)`` (the log replay: the table's state, what
our calls read from snapshots and manifests inside their own timer) plus the operation; ours
opens the table (schema only) before its timer, as every case of ours does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench import fixtures
from bench.cases import DELTA, FLOOR, OURS, PYPAIMON, RUST, SEED, Case, Context, Verdict
from bench.cases_compact import APPEND_OPTIONS, COMPACT_OPTIONS, CompactAppendBinpack, build_append_files
from bench.cases_maint import DAY_MILLIS, _files, reported_count
from bench.sidekit import compare_checksums, table_checksum

NOT_APPLICABLE = {
    PYPAIMON: "pypaimon 2.1.0 has no compaction and no orphan clean",
    RUST: "pypaimon-rust 0.4.0 has no compaction and no orphan clean (no Python API)",
}
NOT_APPLICABLE_ORPHANS = {**NOT_APPLICABLE, FLOOR: "a plain Parquet directory has nothing to clean"}

#: Sizes (``small``: for tests/bench, seconds).
SIZES: dict[str, dict[str, int]] = {
    "full": {"rows": 10_000_000, "commits_200": 50, "commits_2000": 500,
             "orphan_partitions": 100, "orphan_per_commit": 1000, "orphan_commits_100k": 90, "orphans_100k": 10_000,
             "orphan_commits_10k": 9, "orphans_10k": 1_000},
    "small": {"rows": 10_000, "commits_200": 5, "commits_2000": 20,
              "orphan_partitions": 10, "orphan_per_commit": 100, "orphan_commits_100k": 3, "orphans_100k": 30,
              "orphan_commits_10k": 1, "orphans_10k": 10},
}
#: Target file size of both compactions: Paimon's default for append tables.
TARGET_FILE_SIZE = 256 * 1024 * 1024
ZSTD_LEVEL = 1
#: Age of the orphan fixture's files: tracked data files, and the planted orphans.
LIVE_AGE_S = 10 * 86_400
ORPHAN_AGE_S = 30 * 86_400
ORPHAN_ROWS_PER_FILE = 10
DELTA_LOG = "_delta_log"


def _delta_missing(ctx: Context) -> str | None:
    if ctx.peer_py is None:
        return "the peer venv (deltalake) is missing: run scripts/setup_peers.sh"
    if not ctx.peer_versions.get("deltalake"):
        return "deltalake is not in the peer venv: re-run scripts/setup_peers.sh"
    return None


def run_delta_op(ctx: Context, spec: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
    """One untimed op of ``bench/delta_ops.py`` in the peer venv (fixture builds); raises on failure."""
    from bench.runner import side_command

    cmd, env = side_command(DELTA, spec, ctx.peer_py)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    answer: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    if not answer.get("ok"):
        raise RuntimeError(f"delta op {spec.get('op')} failed: {answer.get('error') or proc.stderr[-2000:]}\n"
                           f"{answer.get('traceback') or ''}")
    return answer


def link_delta(src: Path, dst: Path) -> None:
    """A run's copy of a Delta table: data files hard-linked, the log copied by value (delta-rs
    writes new log files only, but a copy keeps the fixture's log safe whatever it does)."""
    def copy(s: str, d: str) -> None:
        if f"/{DELTA_LOG}/" in s or os.path.basename(os.path.dirname(s)) == DELTA_LOG:
            shutil.copy2(s, d)
        else:
            os.link(s, d)

    shutil.copytree(src, dst, copy_function=copy)


def delta_log(table: Path) -> list[list[dict[str, Any]]]:
    """The commits of a Delta log, in version order, each a list of actions (JSON lines).

    Every JSON commit stays in the log (checkpoints only add Parquet summaries beside them), so
    replaying them all from version 0 gives the table's state without delta-rs.
    """
    commits = sorted((p for p in (table / DELTA_LOG).glob("*.json") if p.stem.isdigit()), key=lambda p: int(p.stem))
    if [int(p.stem) for p in commits] != list(range(len(commits))):
        raise ValueError(f"{table}: the Delta log is not a contiguous run of JSON commits from 0")
    return [[json.loads(line) for line in p.read_text().splitlines() if line.strip()] for p in commits]


def delta_live_files(table: Path) -> dict[str, dict[str, str | None]]:
    """Relative path -> partition values of the files the latest version of a Delta table holds."""
    live: dict[str, dict[str, str | None]] = {}
    for actions in delta_log(table):
        for action in actions:
            if "add" in action:
                live[unquote(action["add"]["path"])] = dict(action["add"].get("partitionValues") or {})
            elif "remove" in action:
                live.pop(unquote(action["remove"]["path"]), None)
    return live


def read_delta_files(table: Path, live: dict[str, dict[str, str | None]]) -> pa.Table:
    """The rows of a Delta table's live files with plain pyarrow (partition column from the log)."""
    from bench import datagen

    parts = []
    for rel, values in sorted(live.items()):
        data = pq.read_table(table / rel, columns=[c for c in datagen.SCHEMA.names if c != "dt"])
        parts.append(data.append_column("dt", pa.array([values.get("dt")] * data.num_rows, pa.string()))
                     .select(datagen.SCHEMA.names).cast(datagen.SCHEMA))
    return pa.concat_tables(parts) if parts else datagen.SCHEMA.empty_table()


def _last_operation(table: Path) -> str | None:
    for action in delta_log(table)[-1]:
        if "commitInfo" in action:
            return str(action["commitInfo"].get("operation"))
    return None


# ---------------------------------------------------------------------------------------------
# 1. small-file compaction
# ---------------------------------------------------------------------------------------------

class DeltaCompact(CompactAppendBinpack):
    """Ours (``table.maintenance.compact()``), delta-rs (``optimize.compact()``) and the floor on the same rows and file count."""

    sides = (OURS, DELTA, FLOOR)
    not_applicable: ClassVar[dict[str, str]] = NOT_APPLICABLE

    def __init__(self, name: str, commits_key: str) -> None:
        super().__init__()
        self.name = name
        self.commits_key = commits_key

    def unavailable(self, ctx: Context) -> str | None:
        return _delta_missing(ctx) or super().unavailable(ctx)

    def setup(self, ctx: Context) -> None:
        p = SIZES[ctx.size]
        rows, commits = p["rows"], p[self.commits_key]
        inp = ctx.input_file(rows)
        # the very fixture of compact_append_binpack when the sizes agree (same name, same parameters)
        self.table = ctx.fixture(f"compact-append-{rows}x{commits}", {"rows": rows, "commits": commits,
                                                                      "options": APPEND_OPTIONS},
                                 lambda d: build_append_files(d, inp, commits))
        version = ctx.peer_versions.get("deltalake")

        def build_delta(d: Path) -> None:
            run_delta_op(ctx, {"op": "build_append", "path": str(d / "delta"), "input": str(inp), "commits": commits,
                               "partition_by": ["dt"], "zstd_level": ZSTD_LEVEL})

        self.delta = ctx.fixture(f"delta-append-{rows}x{commits}", {"rows": rows, "commits": commits,
                                                                    "deltalake": version, "zstd": ZSTD_LEVEL},
                                 build_delta, ours_source=False) / "delta"
        self._fixture_facts()
        self.rows = rows
        self.expected = table_checksum(pq.read_table(inp))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        by_part: dict[str, list[str]] = {}
        for f in fixtures.data_files(tdir):
            by_part.setdefault(f.parent.parent.name, []).append(str(f))
        self.partitions = len(by_part)
        self.floor_groups = [{"inputs": files} for _, files in sorted(by_part.items())]
        delta_live = delta_live_files(self.delta)
        self.delta_files = len(delta_live)
        self.delta_bytes = sum((self.delta / rel).stat().st_size for rel in delta_live)
        self.delta_versions = len(delta_log(self.delta))
        if self.delta_files != self.input_files:
            raise RuntimeError(f"fixture {self.delta}: {self.delta_files} files, ours has {self.input_files}")
        problems = compare_checksums(self.expected, table_checksum(read_delta_files(self.delta, delta_live)))
        if problems:
            raise RuntimeError(f"fixture {self.delta} holds other rows than the input: {problems[:3]}")
        self.params = {"rows": rows, "commits": commits, "partitions": self.partitions,
                       "data_files": self.input_files, "data_bytes": self.data_bytes,
                       "delta_files": self.delta_files, "delta_bytes": self.delta_bytes,
                       "delta_versions": self.delta_versions, "options": APPEND_OPTIONS,
                       "compact_options": COMPACT_OPTIONS, "target_file_size": TARGET_FILE_SIZE,
                       "zstd_level": ZSTD_LEVEL, "expected_files_after": self.partitions}
        self.description = (
            f"{rows} rows in {self.input_files} small files ({commits} appends x {self.partitions} dt partitions) -> one "
            f"file per partition. ours: table.maintenance.compact() of an unaware-bucket append table ({self.data_bytes / 1e6:.0f} "
            f"MB, our writer, open-file-cost 1 kb); delta-rs: DeltaTable(path).optimize.compact(target_size=256 MB, "
            f"zstd(1)) of the same slices written by delta-rs ({self.delta_bytes / 1e6:.0f} MB, {self.delta_versions} "
            "versions; its timer includes opening the table); floor: per partition pq.read_table of our files + "
            "pq.write_table zstd(1)")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side != DELTA:
            return super().prepare(side, run_dir)
        run_dir.mkdir(parents=True)
        link_delta(self.delta, run_dir / "delta")
        return {"op": "compact", "path": str(run_dir / "delta"), "target_size": TARGET_FILE_SIZE,
                "zstd_level": ZSTD_LEVEL}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side != DELTA:
            return super().verify(side, run_dir, result)
        table = run_dir / "delta"
        problems: list[str] = []
        versions = len(delta_log(table))
        if versions != self.delta_versions + 1:
            problems.append(f"{versions - self.delta_versions} new Delta version(s), want 1 (one OPTIMIZE commit)")
        elif _last_operation(table) != "OPTIMIZE":
            problems.append(f"last Delta commit is {_last_operation(table)!r}, want 'OPTIMIZE'")
        live = delta_live_files(table)
        missing = sorted(rel for rel in live if not (table / rel).is_file())
        problems += [f"live file missing on disk: {rel}" for rel in missing[:3]]
        if len(live) != self.partitions:
            problems.append(f"{len(live)} live files after the compaction, want {self.partitions} (one per partition)")
        got = table_checksum(read_delta_files(table, {k: v for k, v in live.items() if k not in missing}))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, {"files_before": self.delta_files, "files_after": len(live),
                                       "files_written": len(live), "input_bytes": self.delta_bytes,
                                       "bytes_written": sum((table / r).stat().st_size for r in live if r not in missing),
                                       "result": result.get("result")})


# ---------------------------------------------------------------------------------------------
# 2. orphan clean
# ---------------------------------------------------------------------------------------------

def build_orphan_pair(path: Path, ctx: Context, *, partitions: int, per_commit: int, commits: int,
                      orphans: int) -> None:
    """Our table and a Delta table over the very same data files, then the same orphans in both.

    ``wh``: our table, ``commits`` commits of ``per_commit`` files (round-robin over
    ``partitions`` dt partitions), hard links of one real 10-row file per partition (written in
    ``scratch``) under new names, committed with copies of their metas by our committer.
    ``delta``: the same files hard-linked at the same relative paths, added by one Delta commit
    per commit of ours. Then ``orphans`` untracked look-alikes ``dt=.../bucket-0/data-<uuid>-0.parquet``
    in both (one inode, linked). Tracked files get an mtime 10 days back, orphans 30 days.
    ``tracked-ours.txt`` / ``tracked-delta.txt`` list every file of each table before planting,
    ``orphans.txt`` the planted ones (paths relative to the table directory).
    """
    from paimon_core import FileSystemCatalog
    from paimon_core.table.commit_message import CommitMessage

    scratch = str(path / "scratch")
    fixtures.create_empty_table(scratch, ["dt"])
    fixtures.write_commits(scratch, [fixtures.many_files_commit(0, partitions, ORPHAN_ROWS_PER_FILE, seed=SEED)])
    source = FileSystemCatalog(scratch).get_table(fixtures.TABLE)
    template = source.new_file_store_scan().live_entries(source.latest_snapshot())
    wh = fixtures.warehouse_of(path)
    fixtures.create_empty_table(wh, ["dt"])
    table = FileSystemCatalog(wh).get_table(fixtures.TABLE)
    tdir = fixtures.table_dir(wh)
    delta = path / "delta"
    rng = np.random.default_rng([SEED, commits, per_commit])
    old_live = time.time() - LIVE_AGE_S
    adds: list[list[dict[str, Any]]] = []
    for c in range(commits):
        messages, commit_adds = [], []
        for k in range(per_commit):
            e = template[k % len(template)]
            meta = e.file.copy(file_name=f"data-{uuid.UUID(bytes=rng.bytes(16))}-{c}.parquet")
            src = Path(source.bucket_path(e.partition, e.bucket)) / e.file.file_name
            dst = Path(table.bucket_path(e.partition, e.bucket)) / meta.file_name
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.link(src, dst)
            rel = dst.relative_to(tdir).as_posix()
            (delta / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(src, delta / rel)
            messages.append(CommitMessage(e.partition, e.bucket, e.total_buckets, new_files=(meta,)))
            commit_adds.append({"path": rel, "size": meta.file_size, "dt": rel.split("/", 1)[0].split("=", 1)[1],
                                "mtime_ms": int(old_live * 1000), "rows": meta.row_count})
        table.new_batch_write_builder().new_commit().commit(messages)
        adds.append(commit_adds)
    (path / "adds.json").write_text(json.dumps(adds))
    run_delta_op(ctx, {"op": "build_adds", "path": str(delta), "commits_file": str(path / "adds.json")})
    for root in (tdir, delta):  # every tracked file (and every metadata file) old enough to be a candidate
        for f in root.rglob("*"):
            if f.is_file():
                os.utime(f, (old_live, old_live))
    tracked_ours, tracked_delta = sorted(_files(tdir)), sorted(_files(delta))
    dirs = sorted({Path(a["path"]).parent.as_posix() for commit in adds for a in commit})
    old = time.time() - ORPHAN_AGE_S
    planted = []
    for i in range(orphans):
        rel = f"{dirs[i % len(dirs)]}/data-{uuid.UUID(bytes=rng.bytes(16))}-0.parquet"
        (tdir / rel).write_bytes(b"orphan")
        os.utime(tdir / rel, (old, old))
        os.link(tdir / rel, delta / rel)
        planted.append(rel)
    (path / "tracked-ours.txt").write_text("\n".join(tracked_ours))
    (path / "tracked-delta.txt").write_text("\n".join(tracked_delta))
    (path / "orphans.txt").write_text("\n".join(planted))


class DeltaOrphans(Case):
    """Ours (``remove_orphan_files``) and delta-rs (``vacuum(full=True)``) over the same files and orphans."""

    sides = (OURS, DELTA)
    throughput = "files"
    not_applicable: ClassVar[dict[str, str]] = NOT_APPLICABLE_ORPHANS

    def __init__(self, name: str, commits_key: str, orphans_key: str) -> None:
        super().__init__()
        self.name = name
        self.commits_key = commits_key
        self.orphans_key = orphans_key
        self.full_only = True

    def unavailable(self, ctx: Context) -> str | None:
        from bench.cases_maint import _missing_module

        return _delta_missing(ctx) or _missing_module("paimon_core.operation.orphan_files_clean", "orphan-file clean")

    def setup(self, ctx: Context) -> None:
        p = SIZES[ctx.size]
        parts, per, commits, n = p["orphan_partitions"], p["orphan_per_commit"], p[self.commits_key], p[self.orphans_key]
        params = {"partitions": parts, "per_commit": per, "commits": commits, "orphans": n,
                  "deltalake": ctx.peer_versions.get("deltalake"), "live_age_s": LIVE_AGE_S, "orphan_age_s": ORPHAN_AGE_S}
        self.fixture = ctx.fixture(f"delta-orphans-{commits}x{per}-{n}", params,
                                   lambda d: build_orphan_pair(d, ctx, partitions=parts, per_commit=per,
                                                               commits=commits, orphans=n))
        self.tracked = {OURS: (self.fixture / "tracked-ours.txt").read_text().split("\n"),
                        DELTA: (self.fixture / "tracked-delta.txt").read_text().split("\n")}
        self.planted = (self.fixture / "orphans.txt").read_text().split("\n")
        live = commits * per
        self.rows = n  # files removed: the throughput unit
        self.expected = {"orphans_removed": n, "tracked_files_kept": None, "reported_deleted": n}
        self.params = {"data_files": live + n, "live_data_files": live, "orphans": n, "commits": commits,
                       "files_per_commit": per, "partitions": parts,
                       "tracked_files_ours": len(self.tracked[OURS]), "tracked_files_delta": len(self.tracked[DELTA]),
                       "live_mtime": "10 days ago", "orphan_mtime": "30 days ago",
                       "ours": "remove_orphan_files(older_than=now - 1 day, force=True)",
                       "delta": "vacuum(retention_hours=24, enforce_retention_duration=False, dry_run=False, full=True)"}
        self.description = (
            f"{live + n} data files, {n} of them orphans (untracked, 30 days old), the rest tracked by {commits} "
            f"commits of {per} files over {parts} dt partitions; the very same files in both tables. ours: "
            "remove_orphan_files(older_than=now - 1 day); delta-rs: DeltaTable(path).vacuum(retention_hours=24, "
            "enforce_retention_duration=False, dry_run=False, full=True), its timer including opening the table")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        run_dir.mkdir(parents=True)
        if side == DELTA:
            link_delta(self.fixture / "delta", run_dir / "delta")
            return {"op": "vacuum", "path": str(run_dir / "delta"), "retention_hours": 24}
        fixtures.link_tree(Path(fixtures.warehouse_of(self.fixture)), run_dir / "wh")
        return {"op": "orphan_clean", "warehouse": str(run_dir / "wh"), "table": fixtures.TABLE,
                "older_than": int(time.time() * 1000) - DAY_MILLIS}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        root = run_dir / "delta" if side == DELTA else fixtures.table_dir(str(run_dir / "wh"))
        left = _files(root)
        summary = result.get("result") or {}
        tracked = self.tracked[side]
        want = dict(self.expected, tracked_files_kept=len(tracked))
        got = {"orphans_removed": sum(1 for f in self.planted if f not in left),
               "tracked_files_kept": sum(1 for f in tracked if f in left),
               "reported_deleted": reported_count(summary, ("deleted_file_count",))}
        return Verdict(got, compare_checksums(want, got), {"result": summary, "files_before": len(tracked) + len(self.planted),
                                                           "files_after": len(left)})


def delta_cases() -> list[Case]:
    """The delta cases, in report order (fresh instances)."""
    return [
        DeltaCompact("delta_compact_10m_200_files", "commits_200"),
        DeltaCompact("delta_compact_10m_2000_files", "commits_2000"),
        DeltaOrphans("delta_orphans_100k_files", "orphan_commits_100k", "orphans_100k"),
        DeltaOrphans("delta_orphans_10k_files", "orphan_commits_10k", "orphans_10k"),
    ]


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------

def delta_details(cases: dict[str, Any], fmt_time: Callable[[float | None], str]) -> list[str]:
    """The side-by-side table of the delta cases: wall, CPU, memory, files, ratios ours / delta-rs."""
    names = [n for n, c in cases.items() if n.startswith("delta_") and c["sides"]]
    if not names:
        return []
    out = ["", "Against delta-rs (medians; CPU = user + system of all threads; growth = peak RSS - RSS before the "
               "timer; ratio > 1: ours slower):", "",
           "| case | side | wall | user CPU | sys CPU | user+sys | peak RSS MB | op growth MB | files before -> after |"
           " ours/delta-rs wall | ours/delta-rs user+sys |", "|" + "---|" * 11]
    for n in names:
        c = cases[n]
        sides = c["sides"]

        def cpu(d: dict[str, Any] | None) -> float | None:
            if not d or d.get("user_cpu_median_s") is None:
                return None
            return float(d["user_cpu_median_s"]) + float(d.get("sys_cpu_median_s") or 0.0)

        ours, delta = sides.get(OURS), sides.get(DELTA)
        wall_ratio = (ours["median_s"] / delta["median_s"] if ours and delta and ours.get("median_s")
                      and delta.get("median_s") else None)
        cpu_ratio = cpu(ours) / cpu(delta) if cpu(ours) and cpu(delta) else None  # type: ignore[operator]
        for s in (OURS, DELTA, FLOOR):
            d = sides.get(s)
            if d is None:
                continue
            growth = (f"{d['peak_rss_mb'] - d['base_rss_mb']:.0f}" if d.get("peak_rss_mb") is not None
                      and d.get("base_rss_mb") is not None else "-")
            before, after = d.get("files_before"), d.get("files_after", d.get("files_written"))
            files = f"{before if before is not None else '-'} -> {after if after is not None else '-'}"
            status = "" if d["status"] == "OK" else f" {d['status']}"
            ratios = ([f"{wall_ratio:.2f}x" if wall_ratio else "-", f"{cpu_ratio:.2f}x" if cpu_ratio else "-"]
                      if s == OURS else ["", ""])
            label = {OURS: "ours", DELTA: "delta-rs", FLOOR: "pyarrow floor"}[s]
            out.append(f"| {n} | {label}{status} | {fmt_time(d.get('median_s'))} | "
                       f"{fmt_time(d.get('user_cpu_median_s'))} | {fmt_time(d.get('sys_cpu_median_s'))} | "
                       f"{fmt_time(cpu(d))} | {d.get('peak_rss_mb')} | {growth} | {files} | " + " | ".join(ratios) + " |")
    return out
