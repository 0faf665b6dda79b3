"""The benchmark cases: parameters per size, fixtures, the spec of each side, the expected answer.

A case is measured by :mod:`bench.runner`: for every run and side it calls :meth:`Case.prepare`
(fresh run directory -> op spec for that side's subprocess), launches the side, then
:meth:`Case.verify` (the side's answer against :attr:`Case.expected`; writes are checked by
reading the written files with plain pyarrow, never by the writer's own reader).
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import datagen, fixtures
from bench.sidekit import compare_checksums, table_checksum

OURS, PYPAIMON, RUST, FLOOR = "ours", "pypaimon", "rust", "floor"
#: delta-rs (``deltalake``, in the peer venv): a side of the delta cases only (bench/cases_delta.py).
DELTA = "delta"
PEERS = (PYPAIMON, RUST)
ALL_SIDES = (OURS, PYPAIMON, RUST, FLOOR)
TABLE_SIDES = (OURS, PYPAIMON, RUST)
SEED = 20240101

#: Sizes: ``full`` as named by the cases, ``small`` ~1/1000 for the smoke test.
SIZES: dict[str, dict[str, int]] = {
    "full": {"rows_1m": 1_000_000, "rows_10m": 10_000_000, "selective_commits": 10,
             "snapshots_many": 1000, "snapshots_few": 10, "history_rows": 10, "commit_rows": 10,
             "plan_commits": 100, "plan_partitions": 100, "plan_rows_per_file": 10,
             "pk_upserts": 100_000, "expire_snapshots": 10_000, "expire_rows": 3,
             "orphan_files": 100_000, "orphan_live_commits": 10, "orphan_live_rows": 100_000},
    "small": {"rows_1m": 1_000, "rows_10m": 10_000, "selective_commits": 10,
              "snapshots_many": 10, "snapshots_few": 2, "history_rows": 10, "commit_rows": 10,
              "plan_commits": 10, "plan_partitions": 10, "plan_rows_per_file": 10,
              "pk_upserts": 100, "expire_snapshots": 30, "expire_rows": 3,
              "orphan_files": 100, "orphan_live_commits": 3, "orphan_live_rows": 300},
}


@dataclass
class Context:
    """Where fixtures live and how to log while building them."""

    workdir: Path
    size: str
    log: Callable[[str], None] = print
    #: Interpreter of the peer venv (None: no peers), for fixtures a peer must write.
    peer_py: str | None = None
    #: Versions of the peer libraries (part of the fingerprint of peer-written fixtures).
    peer_versions: dict[str, Any] = field(default_factory=dict)

    @property
    def p(self) -> dict[str, int]:
        return SIZES[self.size]

    def fixture(self, name: str, params: dict[str, Any], build: Callable[[Path], None], *,
                ours_source: bool = True) -> Path:
        return fixtures.cached(self.workdir / "fixtures" / name, params, build, self.log, ours_source=ours_source)

    def input_file(self, rows: int, *, start: int = 0, name: str = "") -> Path:
        label = name or f"input-{rows}"
        path = self.fixture(label, {"rows": rows, "start": start, "seed": SEED},
                            lambda p: _write_input(p, rows, start))
        return path / "input.parquet"


def _write_input(path: Path, rows: int, start: int) -> None:
    datagen.write_input(path / "input.parquet", rows, seed=SEED, start=start)


@dataclass
class Verdict:
    """What the harness concluded about one run of one side."""

    checksum: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class Case(ABC):
    """One benchmark case. Subclasses set the class attributes and implement the hooks."""

    name: str = ""
    description: str = ""
    sides: tuple[str, ...] = ALL_SIDES
    default: bool = True
    #: Left out of the default selection at ``--size small`` (still runnable by name).
    full_only: bool = False
    #: Unit of the throughput column: "rows" (rows/s), "files", "snapshots" ... (``rows`` of that unit).
    throughput: str = "rows"
    #: Sides the case cannot have, with the reason (shown as "n/a" and explained under the table).
    not_applicable: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        self.expected: dict[str, Any] = {}
        self.params: dict[str, Any] = {}
        self.rows = 0
        self.data_bytes = 0
        self.notes: list[str] = []

    def unavailable(self, ctx: Context) -> str | None:
        """Why the case cannot run here (a missing dependency): it is then SKIPPED. None: it can."""
        return None

    @abstractmethod
    def setup(self, ctx: Context) -> None:
        """Build fixtures; set ``expected``, ``params``, ``rows`` and ``data_bytes``."""

    @abstractmethod
    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        """Make ``run_dir`` ready for one run of ``side``; return the op spec."""

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        """Default: the checksum the side computed of what it read must equal ``expected``."""
        got = result.get("checksum")
        if not isinstance(got, dict):
            return Verdict(None, ["no checksum in the answer"])
        return Verdict(got, compare_checksums(self.expected, got), _plan_extra(result))


def _plan_extra(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("plan", "plan_unfiltered", "batches", "every_file_object_s") if k in result}


# ---------------------------------------------------------------------------------------------
# append write / read
# ---------------------------------------------------------------------------------------------

class AppendWrite(Case):
    """Write N rows into an empty unpartitioned append table, one commit."""

    throughput = "rows"

    def __init__(self, name: str, rows_key: str, *, full_only: bool = False) -> None:
        super().__init__()
        self.name = name
        self.rows_key = rows_key
        self.full_only = full_only
        self.description = ("write N rows (id, dt, v, s) to an empty unpartitioned append table, one commit; "
                            "floor: pq.write_table zstd(1)")

    def setup(self, ctx: Context) -> None:
        self.rows = ctx.p[self.rows_key]
        self.input = ctx.input_file(self.rows)
        data = pq.read_table(self.input)
        self.expected = table_checksum(data)
        self.data_bytes = self.input.stat().st_size
        self.params = {"rows": self.rows, "commits": 1, "partitioned": False}

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            run_dir.mkdir(parents=True)
            return {"op": "write", "input": str(self.input), "path": str(run_dir / "out.parquet")}
        wh = str(run_dir / "wh")
        fixtures.create_empty_table(wh)
        return {"op": "write", "input": str(self.input), "warehouse": wh, "table": fixtures.TABLE}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side == FLOOR:
            files = [run_dir / "out.parquet"]
            problems: list[str] = []
        else:
            table = fixtures.table_dir(str(run_dir / "wh"))
            files = fixtures.data_files(table)
            problems = check_snapshot(fixtures.snapshots(table), 1, self.rows, self.rows)
        got = table_checksum(fixtures.read_files(files))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, {"files_written": len(files), "bytes_written": fixtures.dir_bytes(files)})


def check_snapshot(snaps: dict[int, dict[str, Any]], want_id: int, delta: int, total: int) -> list[str]:
    if not snaps:
        return ["no snapshot was written"]
    latest = max(snaps)
    if latest != want_id:
        return [f"latest snapshot is {latest}, want {want_id} (one commit)"]
    snap = snaps[latest]
    problems = []
    if snap.get("deltaRecordCount") not in (None, delta):
        problems.append(f"snapshot {latest} deltaRecordCount {snap.get('deltaRecordCount')}, want {delta}")
    if snap.get("totalRecordCount") not in (None, total):
        problems.append(f"snapshot {latest} totalRecordCount {snap.get('totalRecordCount')}, want {total}")
    return problems


class AppendRead(Case):
    """Read a whole unpartitioned append table (written by us, one commit)."""

    throughput = "rows"

    def __init__(self, name: str, rows_key: str, mode: str, *, full_only: bool = False) -> None:
        super().__init__()
        self.name = name
        self.rows_key = rows_key
        self.mode = mode
        self.full_only = full_only
        if mode == "stream":
            self.description = ("stream the whole table batch by batch, only counting rows (ours: "
                                "to_arrow_batch_reader; a second, untimed pass checks the checksum); "
                                "floor: ParquetFile.iter_batches")
        else:
            self.description = "read the whole table into one Arrow table; floor: pq.read_table"

    def setup(self, ctx: Context) -> None:
        self.rows = ctx.p[self.rows_key]
        inp = ctx.input_file(self.rows)
        self.table = ctx.fixture(f"append-{self.rows}", {"rows": self.rows, "commits": 1},
                                 lambda p: fixtures.build_table(p, inp))
        self.floor = ctx.fixture(f"floor-{self.rows}", {"rows": self.rows},
                                 lambda p: fixtures.build_floor_file(p, inp))
        self.expected = table_checksum(pq.read_table(inp))
        files = fixtures.data_files(fixtures.table_dir(fixtures.warehouse_of(self.table)))
        self.data_bytes = fixtures.dir_bytes(files)
        self.params = {"rows": self.rows, "mode": self.mode, "data_files": len(files),
                       "data_bytes": self.data_bytes,
                       "floor_bytes": (self.floor / "data.parquet").stat().st_size}

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            return {"op": "read", "mode": self.mode, "path": str(self.floor / "data.parquet")}
        return {"op": "read", "mode": self.mode, "warehouse": fixtures.warehouse_of(self.table),
                "table": fixtures.TABLE}


# ---------------------------------------------------------------------------------------------
# selective read of a partitioned table
# ---------------------------------------------------------------------------------------------

class SelectiveRead(Case):
    """``dt = X AND id < T`` on a table partitioned by dt, written in several commits."""

    name = "partitioned_read_selective"
    throughput = "rows"

    def setup(self, ctx: Context) -> None:
        p = ctx.p
        self.rows = p["rows_1m"]
        commits = p["selective_commits"]
        inp = ctx.input_file(self.rows)
        self.table = ctx.fixture(f"partitioned-{self.rows}-{commits}", {"rows": self.rows, "commits": commits},
                                 lambda d: fixtures.build_table(d, inp, commits=commits, partition_keys=["dt"]))
        self.hive = ctx.fixture(f"hive-{self.rows}-{commits}", {"rows": self.rows, "commits": commits},
                                lambda d: fixtures.build_hive_dir(d, inp, commits=commits))
        dt = datagen.DT_VALUES[1]
        limit = max(10, self.rows // 1000)
        self.filter = [["=", "dt", dt], ["<", "id", limit]]
        data = pq.read_table(inp)
        want = data.filter(pc.and_(pc.equal(data.column("dt"), dt), pc.less(data.column("id"), limit)))
        self.expected = table_checksum(want)
        files = fixtures.data_files(fixtures.table_dir(fixtures.warehouse_of(self.table)))
        self.data_bytes = fixtures.dir_bytes(files)
        self.params = {"rows": self.rows, "commits": commits, "partitions": len(datagen.DT_VALUES),
                       "data_files": len(files), "filter": f"dt = '{dt}' AND id < {limit}",
                       "matching_rows": want.num_rows}
        self.description = (f"read with dt = '{dt}' AND id < {limit} from {self.rows} rows partitioned by dt "
                            f"({commits} commits of ascending ids, {len(files)} files); "
                            "floor: pq.read_table(filters=) on the same data as a hive directory")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            return {"op": "read", "mode": "table", "path": str(self.hive / "hive"), "filter": self.filter}
        return {"op": "read", "mode": "table", "warehouse": fixtures.warehouse_of(self.table),
                "table": fixtures.TABLE, "filter": self.filter, "pruning_baseline": True}


# ---------------------------------------------------------------------------------------------
# commit latency on a long history
# ---------------------------------------------------------------------------------------------

class CommitLatency(Case):
    """Write + commit 10 rows on a copy of a table with a long snapshot history."""

    sides = TABLE_SIDES
    throughput = "rows"

    def __init__(self, name: str, snapshots_key: str) -> None:
        super().__init__()
        self.name = name
        self.snapshots_key = snapshots_key

    def setup(self, ctx: Context) -> None:
        p = ctx.p
        self.snapshots = p[self.snapshots_key]
        per = p["history_rows"]
        self.rows = p["commit_rows"]
        snaps = self.snapshots
        self.template = ctx.fixture(f"history-{snaps}x{per}", {"snapshots": snaps, "rows": per},
                                    lambda d: fixtures.build_history(d, snaps, per, seed=SEED))
        self.base_rows = snaps * per
        self.input = ctx.input_file(self.rows, start=self.base_rows, name=f"input-{self.rows}-at-{self.base_rows}")
        self.expected = table_checksum(pq.read_table(self.input))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.template))
        self.template_files = {f.relative_to(tdir) for f in fixtures.data_files(tdir)}
        manifests = sorted((tdir / "manifest").glob("manifest-*"))
        self.params = {"snapshots": snaps, "rows_per_snapshot": per, "commit_rows": self.rows,
                       "template_data_files": len(self.template_files),
                       "template_manifest_dir_files": len(manifests),
                       "template_manifest_dir_bytes": fixtures.dir_bytes(manifests)}
        self.description = (f"write + commit {self.rows} rows on a table with {snaps} snapshots "
                            f"(built by our writer, {per} rows each); time = write + commit, "
                            "phases split them")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        run_dir.mkdir(parents=True)
        shutil.copytree(fixtures.warehouse_of(self.template), run_dir / "wh")
        return {"op": "write", "input": str(self.input), "warehouse": str(run_dir / "wh"), "table": fixtures.TABLE}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        tdir = fixtures.table_dir(str(run_dir / "wh"))
        problems = check_snapshot(fixtures.snapshots(tdir), self.snapshots + 1, self.rows,
                                   self.base_rows + self.rows)
        new = [f for f in fixtures.data_files(tdir) if f.relative_to(tdir) not in self.template_files]
        got = table_checksum(fixtures.read_files(new))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, {"files_written": len(new)})


# ---------------------------------------------------------------------------------------------
# planning over many files
# ---------------------------------------------------------------------------------------------

class PlanManyFiles(Case):
    """Plan a scan (splits only, no data) of a table with many tiny files."""

    name = "plan_10k_files"
    sides = TABLE_SIDES
    throughput = "files"

    def setup(self, ctx: Context) -> None:
        p = ctx.p
        commits, parts, per = p["plan_commits"], p["plan_partitions"], p["plan_rows_per_file"]
        self.table = ctx.fixture(f"manyfiles-{commits}x{parts}x{per}",
                                 {"commits": commits, "partitions": parts, "rows": per},
                                 lambda d: fixtures.build_many_files(d, commits, parts, per, seed=SEED))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        files = fixtures.data_files(tdir)
        self.rows = commits * parts * per
        self.files = len(files)
        self.expected = {"files": commits * parts, "rows": self.rows}
        manifests = sorted((tdir / "manifest").glob("manifest-*"))
        self.params = {"commits": commits, "partitions": parts, "rows_per_file": per, "data_files": len(files),
                       "manifest_dir_files": len(manifests), "manifest_dir_bytes": fixtures.dir_bytes(manifests)}
        self.description = (f"plan a full scan (splits, no data read) of {commits} commits x {parts} partitions "
                            f"= {commits * parts} data files")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        return {"op": "plan", "warehouse": fixtures.warehouse_of(self.table), "table": fixtures.TABLE}


def all_cases() -> list[Case]:
    """Every case, in report order (a fresh instance each call)."""
    from bench.cases_compact import compaction_cases
    from bench.cases_delta import delta_cases
    from bench.cases_maint import ExpireSnapshots, OrphanClean
    from bench.cases_meta import meta_cases
    from bench.cases_pk import PkMergedRead, PkUpsert, PkWrite
    from bench.cases_spark import SparkIngest

    return [
        AppendWrite("append_write_1m", "rows_1m"),
        AppendRead("append_read_1m", "rows_1m", "table"),
        AppendRead("append_stream_1m", "rows_1m", "stream"),
        SelectiveRead(),
        CommitLatency("commit_latency_10_snapshots", "snapshots_few"),
        CommitLatency("commit_latency_1000_snapshots", "snapshots_many"),
        PlanManyFiles(),
        PkWrite(),
        PkUpsert(),
        PkMergedRead(),
        ExpireSnapshots(),
        OrphanClean(),
        *meta_cases(),
        *compaction_cases(),
        *delta_cases(),
        AppendWrite("append_write_10m", "rows_10m", full_only=True),
        AppendRead("append_read_10m", "rows_10m", "table", full_only=True),
        AppendRead("append_stream_10m", "rows_10m", "stream", full_only=True),
        SparkIngest("spark_ingest_append_10m", primary_key=False),
        SparkIngest("spark_ingest_pk_10m", primary_key=True),
        SparkIngest("spark_ingest_pk_10m_vs_layout", primary_key=True, floor="pk_layout"),
        SparkIngest("spark_ingest_append_10m_datasource", primary_key=False, writer="datasource"),
        SparkIngest("spark_ingest_pk_10m_datasource", primary_key=True, writer="datasource"),
    ]
