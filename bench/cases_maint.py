"""Maintenance cases (ours only): expire 10,000 snapshots, remove 100,000 orphan files.

Neither peer can do these (see :attr:`NOT_APPLICABLE`), and a plain Parquet directory has
nothing to expire, so only our side runs; the numbers stand alone (time, peak memory,
snapshots or files per second). Each run works on a hard-linked copy of a cached fixture, so
the fixture survives the deletions. What the call did is checked on disk by the harness:

* expiry: exactly the newest ``retain`` snapshots are left, every data file is kept (append
  commits delete none), every manifest list / manifest a retained snapshot names exists (read
  with fastavro, not with a Paimon reader) and no metadata file of an expired snapshot is left.
* orphan clean: every planted file is gone, every file of the live table is still there, and
  the count the call reports equals the number planted.
"""

from __future__ import annotations

import importlib.util
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bench import fixtures
from bench.cases import FLOOR, OURS, PYPAIMON, RUST, SEED, Case, Context, Verdict
from bench.sidekit import compare_checksums

#: Why the peers and the floor have no number here (checked against pypaimon 2.1.0 and
#: pypaimon-rust 0.4.0 in the peer venv).
NOT_APPLICABLE = {
    PYPAIMON: "pypaimon 2.1.0 has no snapshot expiry and no orphan-file clean",
    RUST: "pypaimon-rust 0.4.0 has neither (no Python API; CALL sys.expire_snapshots / "
          "sys.remove_orphan_files: 'Unknown procedure')",
    FLOOR: "a plain Parquet directory has no snapshots or metadata to clean",
}
#: ``older_than`` of the expiry: far in the future, so only the retain counts decide.
FAR_FUTURE_MILLIS = 4_102_444_800_000  # 2100-01-01
DAY_MILLIS = 86_400_000


def _missing_module(module: str, what: str) -> str | None:
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    return None if found else f"{module} ({what}) is not in paimon_core yet"


def reported_count(result: Mapping[str, Any] | None, names: Sequence[str]) -> int | None:
    """The first of ``names`` the call's result carries as a count (the side summarized collections to sizes).

    Names of paimon_core's ExpireResult (``expired_snapshot_ids``) and OrphanCleanResult
    (``deleted_file_count``).
    """
    for name in names:
        value = (result or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


class ExpireSnapshots(Case):
    """``table.maintenance.expire_snapshots(retain_max=10, retain_min=10, ...)`` on a table of N small snapshots."""

    name = "expire_10k_snapshots"
    sides = (OURS,)
    throughput = "snapshots"
    not_applicable: ClassVar[dict[str, str]] = NOT_APPLICABLE
    retain = 10
    #: The size keys of the snapshot count and rows per snapshot of the table.
    sizes: tuple[str, str] = ("expire_snapshots", "expire_rows")

    def unavailable(self, ctx: Context) -> str | None:
        return _missing_module("paimon_core.operation.expire_snapshots", "snapshot expiry")

    def setup(self, ctx: Context) -> None:
        snaps, per = ctx.p[self.sizes[0]], ctx.p[self.sizes[1]]
        self.snapshots = snaps
        self.template = ctx.fixture(f"history-{snaps}x{per}", {"snapshots": snaps, "rows": per},
                                    lambda d: fixtures.build_history(d, snaps, per, seed=SEED))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.template))
        self.data = {str(f.relative_to(tdir)) for f in fixtures.data_files(tdir)}
        self.rows = snaps - self.retain  # snapshots expired: the throughput unit
        self.expected = {"snapshots_left": self.retain, "earliest": snaps - self.retain + 1, "latest": snaps,
                         "data_files_kept": len(self.data), "metadata_missing": 0, "metadata_left_over": 0,
                         "reported_expired": self.rows}
        self.params = {"snapshots": snaps, "rows_per_snapshot": per, "retain_max": self.retain,
                       "retain_min": self.retain, "max_deletes": 10_000, "older_than": FAR_FUTURE_MILLIS,
                       "data_files": len(self.data), "table_files": len(_files(tdir))}
        self.description = (f"expire_snapshots(retain_max={self.retain}, retain_min={self.retain}, max_deletes=10000, "
                            f"older_than=2100-01-01) on a table of {snaps} append snapshots of {per} rows "
                            f"(built by our writer): {self.rows} snapshots expire")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        run_dir.mkdir(parents=True)
        fixtures.link_tree(Path(fixtures.warehouse_of(self.template)), run_dir / "wh")
        return {"op": "expire", "warehouse": str(run_dir / "wh"), "table": fixtures.TABLE,
                "retain_max": self.retain, "retain_min": self.retain, "max_deletes": 10_000,
                "older_than": FAR_FUTURE_MILLIS}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        tdir = fixtures.table_dir(str(run_dir / "wh"))
        snaps = fixtures.snapshots(tdir)
        data_left = {str(f.relative_to(tdir)) for f in fixtures.data_files(tdir)}
        data_names = {Path(f).name for f in data_left}
        manifests = {p.name for p in (tdir / "manifest").iterdir()}
        needed: set[str] = set()
        missing = 0
        for snap in snaps.values():
            meta, live = fixtures.manifest_referenced(tdir, snap)
            needed |= meta
            missing += len(meta - manifests) + len(live - data_names)
        summary = result.get("result") or {}
        reported = reported_count(summary, ("expired_snapshot_ids", "deleted_snapshot_files"))
        got = {"snapshots_left": len(snaps), "earliest": min(snaps, default=None), "latest": max(snaps, default=None),
               "data_files_kept": len(data_left & self.data), "metadata_missing": missing,
               "metadata_left_over": len(manifests - needed), "reported_expired": reported}
        problems = compare_checksums(self.expected, got)
        return Verdict(got, problems, {"result": summary})


class OrphanClean(Case):
    """``table.maintenance.remove_orphan_files(older_than=now - 1 day, force=True)`` with N planted orphans."""

    name = "orphan_clean_100k"
    sides = (OURS,)
    throughput = "files"
    not_applicable: ClassVar[dict[str, str]] = NOT_APPLICABLE

    def unavailable(self, ctx: Context) -> str | None:
        return _missing_module("paimon_core.operation.orphan_files_clean", "orphan-file clean")

    def setup(self, ctx: Context) -> None:
        p = ctx.p
        n, commits, rows = p["orphan_files"], p["orphan_live_commits"], p["orphan_live_rows"]
        inp = ctx.input_file(rows)
        self.template = ctx.fixture(f"orphans-{n}-live-{rows}x{commits}", {"orphans": n, "rows": rows,
                                                                          "commits": commits},
                                    lambda d: build_orphan_fixture(d, inp, commits=commits, orphans=n))
        self.live = (self.template / "live.txt").read_text().split("\n")
        self.planted = (self.template / "orphans.txt").read_text().split("\n")
        self.rows = n  # files removed: the throughput unit
        self.expected = {"orphans_removed": n, "live_files_kept": len(self.live), "reported_deleted": n}
        self.params = {"orphans": n, "live_rows": rows, "live_commits": commits, "live_files": len(self.live),
                       "orphan_mtime": "30 days ago", "older_than": "now - 1 day", "force": True}
        self.description = (f"remove_orphan_files(older_than=now - 1 day, force=True) on a live table "
                            f"({rows} rows partitioned by dt, {commits} commits, {len(self.live)} files) with {n} "
                            "tiny orphan data files planted in its bucket directories (mtime 30 days ago)")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        run_dir.mkdir(parents=True)
        fixtures.link_tree(Path(fixtures.warehouse_of(self.template)), run_dir / "wh")
        return {"op": "orphan_clean", "warehouse": str(run_dir / "wh"), "table": fixtures.TABLE,
                "older_than": int(time.time() * 1000) - DAY_MILLIS}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        tdir = fixtures.table_dir(str(run_dir / "wh"))
        left = _files(tdir)
        summary = result.get("result") or {}
        reported = reported_count(summary, ("deleted_file_count",))
        got = {"orphans_removed": sum(1 for f in self.planted if f not in left),
               "live_files_kept": sum(1 for f in self.live if f in left), "reported_deleted": reported}
        return Verdict(got, compare_checksums(self.expected, got), {"result": summary})


def build_orphan_fixture(path: Path, input_file: Path, *, commits: int, orphans: int) -> None:
    """A live table partitioned by dt, then ``orphans`` tiny data-file look-alikes in its bucket dirs.

    ``live.txt`` lists the table's files before planting, ``orphans.txt`` the planted ones
    (paths relative to the table directory); the planted files get an mtime 30 days back.
    """
    fixtures.build_table(path, input_file, commits=commits, partition_keys=["dt"])
    tdir = fixtures.table_dir(fixtures.warehouse_of(path))
    live = sorted(_files(tdir))
    dirs = sorted({f.parent for f in fixtures.data_files(tdir)})
    rng = np.random.default_rng(SEED)
    old = time.time() - 30 * 86_400
    planted = []
    for i in range(orphans):  # fixture build: one tiny file per orphan
        target = dirs[i % len(dirs)] / f"data-{uuid.UUID(bytes=rng.bytes(16))}-0.parquet"
        target.write_bytes(b"orphan")
        os.utime(target, (old, old))
        planted.append(str(target.relative_to(tdir)))
    (path / "live.txt").write_text("\n".join(live))
    (path / "orphans.txt").write_text("\n".join(planted))
