"""Compaction cases: ``table.maintenance.compact()`` against a pyarrow floor that moves the same bytes.

No peer can compact (see :data:`NOT_APPLICABLE`), so each case has our side and the floor F:
plain pyarrow reading all the input data files and writing the same rows with the same codec
(zstd level 1, one file per output group). Every run works on a hard-linked copy of a cached
fixture written by our writer (paimon_core never rewrites a file in place). Fixture tables are
written with ``write-only = true`` (no compaction while they are built: the runs stay level-0
runs); the compaction forces it off, as Paimon's procedure does, and gets the dynamic option
``snapshot.num-retained.min`` = 1,000,000 so its post-commit expiry, which depends on the
fixture's age, never expires anything (expiry has its own case).

What a compaction did is checked on disk, never with our reader: the latest snapshot is one new
COMPACT snapshot, its live files (manifests read with fastavro: :func:`bench.fixtures.live_data_files`)
are read with plain pyarrow (primary-key files merged by :func:`bench.fixtures.read_pk_files`)
and must hold exactly the expected rows, no input file may be live any more, and the layout must
be what the compaction promises (one file per append bin; one sorted run per bucket on the max
level after a full compaction).

* ``compact_append_binpack``: an unaware-bucket append table partitioned by dt, 200 files of
  ~50k rows (50 commits x 4 partitions), ``source.split.open-file-cost`` 1 kb (bins by size):
  one bin per partition, 50 files -> 1. Floor: per partition, read its files, write one file.
* ``compact_pk_full_1m_10runs``: a primary-key table (id, 4 buckets, deduplicate) of 1M keys in
  10 sorted runs (1M rows, then 9 commits each upserting a random 30% of the keys with
  ``v = -k``), full compaction. Floor: per bucket, read its files and write the merged rows
  (the expected output in the key-value layout, loaded before the timer).
* ``pk_merged_read_after_compaction_1m``: read of that compacted table (one sorted run per
  bucket) into Arrow; its companion ``append_read_compacted_rows_1m`` reads the same 1M rows
  from an append table (the target: within 1.1x of it).
* ``compact_pk_large_bucket``: full compaction of one bucket of 4.5M keys in 6 runs (~200 MB of
  input files), ``write-buffer-size`` 8 MB: peak memory must stay bounded (the merge streams).
* ``compact_plan_10k_files`` / ``compact_plan_commit_10k_files``: ``compact(dry_run=True)`` and
  the full compaction of the ``plan_10k_files`` table (100 commits x 100 partitions of 10-row
  files), phases plan / rewrite / commit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import fixtures
from bench.cases import FLOOR, OURS, PYPAIMON, RUST, SEED, AppendRead, Case, Context, Verdict
from bench.sidekit import compare_checksums, table_checksum

NOT_APPLICABLE = {
    PYPAIMON: "pypaimon 2.1.0 has no compaction (no COMPACT commit at all)",
    RUST: "pypaimon-rust 0.4.0 has no compaction (no Python API; no compact procedure)",
}
NOT_APPLICABLE_PLAN = {**NOT_APPLICABLE, FLOOR: "a plain Parquet directory has nothing to plan"}

#: Sizes of the compaction cases (``small`` ~1/1000 for the tests).
SIZES: dict[str, dict[str, int]] = {
    "full": {"append_rows": 10_000_000, "append_commits": 50, "pk_rows": 1_000_000, "pk_runs": 10,
             "large_keys": 4_500_000, "large_runs": 6, "large_keys_3m": 3_000_000, "large_keys_9m": 9_000_000},
    "small": {"append_rows": 1_000, "append_commits": 5, "pk_rows": 1_000, "pk_runs": 10,
              "large_keys": 3_000, "large_runs": 6, "large_keys_3m": 2_000, "large_keys_9m": 6_000},
}
#: Share of the keys each later run upserts.
UPSERT_FRACTION = 0.3
#: Options of every fixture table: no compaction while it is built.
FIXTURE_OPTIONS = {"write-only": "true"}
#: Dynamic options of every measured compaction: post-commit expiry finds nothing to expire.
COMPACT_OPTIONS = {"snapshot.num-retained.min": "1000000"}
APPEND_OPTIONS = {**FIXTURE_OPTIONS, "source.split.open-file-cost": "1 kb"}
PK_OPTIONS = {**FIXTURE_OPTIONS, **fixtures.PK_OPTIONS}
#: The large-bucket table: one bucket, an 8 MB write buffer (its fixture is written with a
#: 1 GB buffer so that each commit is one sorted run).
LARGE_OPTIONS = {**FIXTURE_OPTIONS, "bucket": "1", "write-buffer-size": "8 mb"}
LARGE_WRITE_OPTIONS = {"write-buffer-size": "1 gb"}
KV_COLUMNS = ("_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND")


# ---------------------------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------------------------

def create_table(warehouse: str, options: dict[str, str], *, partition_keys: Sequence[str] = (),
                 primary_keys: Sequence[str] = ()) -> None:
    fixtures.create_empty_table(warehouse, partition_keys, primary_keys=primary_keys, options=options)


def write_commits(warehouse: str, commits: Sequence[pa.Table] | Any, dynamic: dict[str, str] | None = None) -> None:
    from paimon_core import FileSystemCatalog

    table = FileSystemCatalog(warehouse).get_table(fixtures.TABLE)
    if dynamic:
        table = table.copy(dynamic)
    for data in commits:
        table.write_arrow(data)


def build_append_files(path: Path, input_file: Path, commits: int) -> None:
    """The input in ``commits`` slices of ascending ids into a table partitioned by dt (one
    file per partition and commit)."""
    data = pq.read_table(input_file)
    wh = fixtures.warehouse_of(path)
    create_table(wh, APPEND_OPTIONS, partition_keys=["dt"])
    step = -(-data.num_rows // commits)
    write_commits(wh, (data.slice(i, step) for i in range(0, data.num_rows, step)))


def write_pk_runs(path: Path, base_file: Path, runs: int) -> None:
    """``run-0.parquet`` = the base rows; ``run-k.parquet`` (k >= 1) = a random ``UPSERT_FRACTION``
    of them in random order with ``v = -k``; ``merged.parquet`` = what the table holds after all."""
    base = pq.read_table(base_file).combine_chunks()
    n = base.num_rows
    pq.write_table(base, path / "run-0.parquet", **fixtures.ZSTD1)
    v_index = base.schema.get_field_index("v")
    merged_v = base.column("v").to_numpy().copy()
    rng = np.random.default_rng([SEED, n, runs])
    m = int(n * UPSERT_FRACTION)
    for k in range(1, runs):
        picked = rng.choice(n, size=m, replace=False).astype(np.int64)
        up = base.take(pa.array(picked)).set_column(v_index, "v", pa.array(np.full(m, -float(k))))
        merged_v[picked] = -float(k)
        pq.write_table(up, path / f"run-{k}.parquet", **fixtures.ZSTD1)
    pq.write_table(base.set_column(v_index, "v", pa.array(merged_v)), path / "merged.parquet", **fixtures.ZSTD1)


def merge_kv_layout(files: Sequence[Path]) -> pa.Table:
    """The merged rows of primary-key files in the key-value layout (system columns kept):
    highest ``_SEQUENCE_NUMBER`` per ``id`` wins, sorted by key (what a full compaction writes)."""
    data = pa.concat_tables([pq.read_table(f) for f in files]).combine_chunks()
    order = pc.sort_indices(data, sort_keys=[("_KEY_id", "ascending"), ("_SEQUENCE_NUMBER", "descending")])
    data = data.take(order)
    ids = data.column("_KEY_id").to_numpy()
    first = np.ones(len(ids), dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    return data.filter(pa.array(first))


def build_pk_runs_table(path: Path, run_files: Sequence[Path], options: dict[str, str],
                        dynamic: dict[str, str] | None = None) -> None:
    """A primary-key table with one commit per run file, plus ``floor/<bucket>.parquet``: each
    bucket's merged rows in the key-value layout (what the floor writes)."""
    wh = fixtures.warehouse_of(path)
    create_table(wh, options, primary_keys=fixtures.PK_KEYS)
    write_commits(wh, (pq.read_table(f) for f in run_files), dynamic)
    tdir = fixtures.table_dir(wh)
    by_bucket: dict[str, list[Path]] = {}
    for f in fixtures.data_files(tdir):
        by_bucket.setdefault(f.parent.name, []).append(f)
    (path / "floor").mkdir()
    for bucket, files in sorted(by_bucket.items()):
        pq.write_table(merge_kv_layout(files), path / "floor" / f"{bucket}.parquet", **fixtures.ZSTD1)


def build_compacted(path: Path, source: Path) -> None:
    """A copy of the table in ``source``, fully compacted by us (the read-after-compaction fixture)."""
    from paimon_core import FileSystemCatalog

    fixtures.link_tree(Path(fixtures.warehouse_of(source)), Path(fixtures.warehouse_of(path)))
    FileSystemCatalog(fixtures.warehouse_of(path)).get_table(fixtures.TABLE).maintenance.compact(options=COMPACT_OPTIONS)


# ---------------------------------------------------------------------------------------------
# checks on disk
# ---------------------------------------------------------------------------------------------

def latest(tdir: Path) -> tuple[int, dict[str, Any]]:
    snaps = fixtures.snapshots(tdir)
    if not snaps:
        return 0, {}
    last = max(snaps)
    return last, snaps[last]


def live_paths(tdir: Path) -> tuple[dict[str, tuple[bytes, int, int]], dict[str, Path], list[str]]:
    """(live files of the latest snapshot, their paths, problems: live files missing on disk)."""
    _, snap = latest(tdir)
    live = fixtures.live_data_files(tdir, snap) if snap else {}
    on_disk = {f.name: f for f in fixtures.data_files(tdir)}
    missing = sorted(set(live) - set(on_disk))
    return live, {n: on_disk[n] for n in live if n in on_disk}, [f"live file missing on disk: {n}" for n in missing[:3]]


def check_compact_snapshot(tdir: Path, before: int) -> list[str]:
    last, snap = latest(tdir)
    if last != before + 1:
        return [f"latest snapshot is {last}, want {before + 1} (one COMPACT commit)"]
    if snap.get("commitKind") != "COMPACT":
        return [f"snapshot {last} commitKind {snap.get('commitKind')!r}, want 'COMPACT'"]
    return []


class _CompactCase(Case):
    """Shared by the compaction cases: run dirs are hard-linked copies of ``self.table``."""

    sides: tuple[str, ...] = (OURS, FLOOR)
    not_applicable: ClassVar[dict[str, str]] = NOT_APPLICABLE
    full_only = True  # left out of the small default set (the smoke test); runnable by name
    #: The floor reads with ``iter_batches`` and writes batch by batch (bounded memory) instead
    #: of ``pq.read_table`` + ``pq.write_table``.
    streaming_floor = False
    table: Path
    floor_groups: list[dict[str, Any]]
    snapshots_before: int
    input_names: set[str]

    def unavailable(self, ctx: Context) -> str | None:
        from bench.cases_maint import _missing_module

        return _missing_module("paimon_core.operation.compact.table_compact", "compaction")

    def _fixture_facts(self) -> None:
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        self.snapshots_before = latest(tdir)[0]
        files = fixtures.data_files(tdir)
        self.input_names = {f.name for f in files}
        self.input_files = len(files)
        self.data_bytes = fixtures.dir_bytes(files)

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        run_dir.mkdir(parents=True)
        if side == FLOOR:
            groups = [dict(g, output=str(run_dir / f"out-{i}.parquet")) for i, g in enumerate(self.floor_groups)]
            (run_dir / "groups.json").write_text(json.dumps(groups))
            return {"op": "rewrite", "groups_file": str(run_dir / "groups.json"), "streaming": self.streaming_floor}
        fixtures.link_tree(Path(fixtures.warehouse_of(self.table)), run_dir / "wh")
        return {"op": "compact", "warehouse": str(run_dir / "wh"), "table": fixtures.TABLE,
                "options": COMPACT_OPTIONS}

    def _floor_verdict(self, run_dir: Path, pk: bool) -> Verdict:
        files = sorted(run_dir.glob("out-*.parquet"))
        got = table_checksum(fixtures.read_files(files))
        problems = compare_checksums(self.expected, got)
        if pk:  # the floor writes the key-value layout; its rows must still be one per key
            ids = pa.concat_arrays([pq.read_table(f, columns=["id"]).column("id").combine_chunks() for f in files])
            if pc.count_distinct(ids).as_py() != len(ids):
                problems.append("floor output has duplicate keys")
        return Verdict(got, problems, {"files_written": len(files), "bytes_written": fixtures.dir_bytes(files)})

    def _ours_common(self, run_dir: Path, result: dict[str, Any]) -> tuple[Path, dict[str, tuple[bytes, int, int]],
                                                                            dict[str, Path], list[str]]:
        tdir = fixtures.table_dir(str(run_dir / "wh"))
        problems = check_compact_snapshot(tdir, self.snapshots_before)
        live, paths, missing = live_paths(tdir)
        problems += missing
        still = sorted(set(live) & self.input_names)
        if still:
            problems.append(f"{len(still)} input file(s) still live after the compaction, e.g. {still[0]}")
        return tdir, live, paths, problems

    def _extra(self, live: dict[str, Any], paths: dict[str, Path], result: dict[str, Any]) -> dict[str, Any]:
        new = [p for n, p in paths.items() if n not in self.input_names]
        return {"files_before": self.input_files, "files_after": len(live), "files_written": len(new),
                "bytes_written": fixtures.dir_bytes(new), "result": result.get("result"),
                "input_bytes": self.data_bytes}


# ---------------------------------------------------------------------------------------------
# 1. append bin-packing
# ---------------------------------------------------------------------------------------------

class CompactAppendBinpack(_CompactCase):
    """Unaware-bucket append table, many small files per partition, ``table.maintenance.compact()``."""

    name = "compact_append_binpack"

    def setup(self, ctx: Context) -> None:
        p = SIZES[ctx.size]
        rows, commits = p["append_rows"], p["append_commits"]
        inp = ctx.input_file(rows)
        self.table = ctx.fixture(f"compact-append-{rows}x{commits}", {"rows": rows, "commits": commits,
                                                                      "options": APPEND_OPTIONS},
                                 lambda d: build_append_files(d, inp, commits))
        self._fixture_facts()
        self.rows = rows
        self.expected = table_checksum(pq.read_table(inp))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        by_part: dict[str, list[str]] = {}
        for f in fixtures.data_files(tdir):
            by_part.setdefault(f.parent.parent.name, []).append(str(f))
        self.partitions = len(by_part)
        self.floor_groups = [{"inputs": files} for _, files in sorted(by_part.items())]
        self.params = {"rows": rows, "commits": commits, "partitions": self.partitions,
                       "data_files": self.input_files, "data_bytes": self.data_bytes,
                       "options": APPEND_OPTIONS, "compact_options": COMPACT_OPTIONS,
                       "expected_files_after": self.partitions}
        self.description = (f"table.maintenance.compact() of an unaware-bucket append table partitioned by dt: {self.input_files} "
                            f"files of ~{rows // max(1, self.input_files)} rows ({commits} commits x {self.partitions} "
                            f"partitions, {self.data_bytes / 1e6:.0f} MB), open-file-cost 1 kb: one bin per partition "
                            f"-> {self.partitions} files; floor: per partition pq.read_table of its files + "
                            "pq.write_table zstd(1)")

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side == FLOOR:
            return self._floor_verdict(run_dir, pk=False)
        tdir, live, paths, problems = self._ours_common(run_dir, result)
        if len(live) != self.partitions:
            problems.append(f"{len(live)} live files after the compaction, want {self.partitions} (one per partition)")
        if len({part for part, _, _ in live.values()}) != len(live):
            problems.append("more than one live file in a partition")
        got = table_checksum(fixtures.read_files(list(paths.values())))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, self._extra(live, paths, result))


# ---------------------------------------------------------------------------------------------
# 2. / 4. full compaction of a primary-key table
# ---------------------------------------------------------------------------------------------

class PkRuns:
    """The run files (``run-k.parquet``) and the merged result of a primary-key fixture (cached)."""

    def __init__(self, ctx: Context, keys: int, runs: int) -> None:
        self.keys, self.runs = keys, runs
        base = ctx.input_file(keys)
        self.dir = ctx.fixture(f"compact-pk-runs-{keys}x{runs}", {"keys": keys, "runs": runs, "seed": SEED,
                                                                  "fraction": UPSERT_FRACTION},
                               lambda d: write_pk_runs(d, base, runs))
        self.files = [self.dir / f"run-{k}.parquet" for k in range(runs)]
        self.merged = self.dir / "merged.parquet"


class CompactPkFull(_CompactCase):
    """Full compaction of a primary-key table whose buckets hold several overlapping sorted runs."""

    def __init__(self, name: str, keys_key: str, runs_key: str, options: dict[str, str],
                 write_options: dict[str, str] | None = None, *, streaming_floor: bool = False,
                 default: bool = True) -> None:
        super().__init__()
        self.name = name
        self.streaming_floor = streaming_floor
        self.default = default
        self.keys_key, self.runs_key = keys_key, runs_key
        self.options = options
        self.write_options = write_options

    def setup(self, ctx: Context) -> None:
        p = SIZES[ctx.size]
        runs = PkRuns(ctx, p[self.keys_key], p[self.runs_key])
        opts, wopts = self.options, self.write_options
        self.table = ctx.fixture(f"compact-pk-{runs.keys}x{runs.runs}-b{opts['bucket']}",
                                 {"keys": runs.keys, "runs": runs.runs, "options": opts, "write": wopts},
                                 lambda d: build_pk_runs_table(d, runs.files, opts, wopts))
        self._fixture_facts()
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        files = fixtures.data_files(tdir)
        self.expected = table_checksum(pq.read_table(runs.merged))
        problems = compare_checksums(self.expected, table_checksum(fixtures.read_pk_files(files)))
        if problems:  # the fixture must merge right before a compaction is judged by it
            raise RuntimeError(f"fixture {self.table.name} merges wrong (plain pyarrow): {problems[:3]}")
        by_bucket: dict[str, list[str]] = {}
        for f in files:
            by_bucket.setdefault(f.parent.name, []).append(str(f))
        self.buckets = len(by_bucket)
        runs_per_bucket = sorted({len(v) for v in by_bucket.values()})
        self.floor_groups = [{"inputs": fs, "rows": str(self.table / "floor" / f"{b}.parquet")}
                             for b, fs in sorted(by_bucket.items())]
        self.rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)  # rows read and merged
        self.params = {"keys": runs.keys, "runs": runs.runs, "upsert_fraction": UPSERT_FRACTION,
                       "input_rows": self.rows, "buckets": self.buckets, "data_files": self.input_files,
                       "files_per_bucket": runs_per_bucket, "data_bytes": self.data_bytes,
                       "bytes_per_bucket_max": max(sum(Path(f).stat().st_size for f in fs)
                                                   for fs in by_bucket.values()),
                       "options": opts, "fixture_write_options": wopts, "compact_options": COMPACT_OPTIONS}
        buf = f", write-buffer-size {opts['write-buffer-size']}" if "write-buffer-size" in opts else ""
        self.description = (f"table.maintenance.compact() (full) of a primary-key table (id, {self.buckets} bucket(s), "
                            f"deduplicate{buf}): {runs.keys} keys in {runs.runs} sorted runs per bucket (all keys, "
                            f"then {runs.runs - 1} upserts of {UPSERT_FRACTION:.0%} of the keys), {self.rows} rows / "
                            f"{self.data_bytes / 1e6:.0f} MB of input -> one run per bucket on the max level; "
                            + ("floor (streaming): per bucket its files read with ParquetFile.iter_batches, the "
                               "merged rows (key-value layout, loaded before the timer) written batch by batch with "
                               "ParquetWriter" if self.streaming_floor else
                               "floor: per bucket pq.read_table of its files + pq.write_table zstd(1) of the merged "
                               "rows (key-value layout, loaded before the timer)"))

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side == FLOOR:
            return self._floor_verdict(run_dir, pk=True)
        tdir, live, paths, problems = self._ours_common(run_dir, result)
        levels: dict[tuple[bytes, int], set[int]] = {}
        for part, bucket, level in live.values():
            levels.setdefault((part, bucket), set()).add(level)
        if len(levels) != self.buckets:
            problems.append(f"live files in {len(levels)} buckets, want {self.buckets}")
        for (_, bucket), lv in sorted(levels.items()):
            if len(lv) != 1 or 0 in lv:
                problems.append(f"bucket {bucket}: live files on levels {sorted(lv)}, want one level > 0")
        got = table_checksum(fixtures.read_pk_files(list(paths.values())))
        problems += compare_checksums(self.expected, got)
        extra = self._extra(live, paths, result)
        extra["levels_after"] = sorted({lv for s in levels.values() for lv in s})
        return Verdict(got, problems, extra)


# ---------------------------------------------------------------------------------------------
# 3. merged read after compaction, and the append read of the same rows
# ---------------------------------------------------------------------------------------------

class PkReadAfterCompaction(Case):
    """Read the fully compacted primary-key table (one run per bucket) into one Arrow table."""

    name = "pk_merged_read_after_compaction_1m"
    full_only = True

    def unavailable(self, ctx: Context) -> str | None:
        return CompactAppendBinpack().unavailable(ctx)

    def setup(self, ctx: Context) -> None:
        source = CompactPkFull(*PK_FULL_ARGS)
        source.setup(ctx)
        p = SIZES[ctx.size]
        runs = PkRuns(ctx, p["pk_rows"], p["pk_runs"])
        src = source.table
        self.table = ctx.fixture(f"compacted-pk-{runs.keys}x{runs.runs}", {"source": json.dumps(source.params,
                                                                                               sort_keys=True)},
                                 lambda d: build_compacted(d, src))
        self.floor = runs.merged
        self.rows = runs.keys
        self.expected = table_checksum(pq.read_table(self.floor))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        live, paths, missing = live_paths(tdir)
        problems = missing + compare_checksums(self.expected, table_checksum(fixtures.read_pk_files(list(paths.values()))))
        if problems:
            raise RuntimeError(f"fixture {self.table.name} merges wrong (plain pyarrow): {problems[:3]}")
        self.data_bytes = fixtures.dir_bytes(paths.values())
        self.params = {"rows": self.rows, "live_files": len(live), "levels": sorted({lv for _, _, lv in live.values()}),
                       "data_bytes": self.data_bytes, "floor_bytes": self.floor.stat().st_size,
                       "compacted_from": source.params}
        self.description = (f"read the primary-key table of compact_pk_full_1m_10runs after its full compaction "
                            f"({len(live)} files, one sorted run per bucket on level {self.params['levels']}) into one "
                            "Arrow table; target: within 1.1x of append_read_compacted_rows_1m (the same rows from an "
                            "append table); floor: pq.read_table of the rows as one file")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            return {"op": "read", "mode": "table", "path": str(self.floor)}
        return {"op": "read", "mode": "table", "warehouse": fixtures.warehouse_of(self.table), "table": fixtures.TABLE}


class AppendReadCompactedRows(AppendRead):
    """``append_read_1m`` over the rows the compacted primary-key table holds (the target's baseline)."""

    def __init__(self) -> None:
        super().__init__("append_read_compacted_rows_1m", "rows_1m", "table", full_only=True)
        self.description = ("read an unpartitioned append table (our writer, one commit) of the same rows as "
                            "pk_merged_read_after_compaction_1m into one Arrow table (the baseline of its target); "
                            "floor: pq.read_table")

    def setup(self, ctx: Context) -> None:
        p = SIZES[ctx.size]
        runs = PkRuns(ctx, p["pk_rows"], p["pk_runs"])
        self.rows = runs.keys
        inp = runs.merged
        self.table = ctx.fixture(f"append-compacted-rows-{runs.keys}x{runs.runs}", {"rows": self.rows},
                                 lambda d: fixtures.build_table(d, inp))
        self.floor = runs.dir  # holds merged.parquet, written with zstd(1) like the floor files
        self.expected = table_checksum(pq.read_table(inp))
        files = fixtures.data_files(fixtures.table_dir(fixtures.warehouse_of(self.table)))
        self.data_bytes = fixtures.dir_bytes(files)
        self.params = {"rows": self.rows, "mode": self.mode, "data_files": len(files), "data_bytes": self.data_bytes,
                       "floor_bytes": inp.stat().st_size}

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            return {"op": "read", "mode": self.mode, "path": str(self.floor / "merged.parquet")}
        return super().prepare(side, run_dir)


# ---------------------------------------------------------------------------------------------
# 5. plan (+ commit) over 10,000 files
# ---------------------------------------------------------------------------------------------

class CompactManyFiles(_CompactCase):
    """``compact()`` of the ``plan_10k_files`` table: 100 partitions x 100 tiny files."""

    throughput = "files"

    def __init__(self, name: str, *, dry_run: bool, streaming_floor: bool = False, default: bool = True) -> None:
        super().__init__()
        self.name = name
        self.dry_run = dry_run
        self.streaming_floor = streaming_floor
        self.default = default
        if dry_run:
            self.sides = (OURS,)
            self.not_applicable = NOT_APPLICABLE_PLAN

    def setup(self, ctx: Context) -> None:
        from bench.cases import SIZES as BASE_SIZES

        p = BASE_SIZES[ctx.size]
        commits, parts, per = p["plan_commits"], p["plan_partitions"], p["plan_rows_per_file"]
        # The very fixture of plan_10k_files (same name and parameters: built once for both).
        self.table = ctx.fixture(f"manyfiles-{commits}x{parts}x{per}",
                                 {"commits": commits, "partitions": parts, "rows": per},
                                 lambda d: fixtures.build_many_files(d, commits, parts, per, seed=SEED))
        self._fixture_facts()
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        by_part: dict[str, list[str]] = {}
        for f in fixtures.data_files(tdir):
            by_part.setdefault(f.parent.parent.name, []).append(str(f))
        self.partitions = len(by_part)
        self.floor_groups = [{"inputs": files} for _, files in sorted(by_part.items())]
        self.rows = self.input_files  # throughput unit: files
        self.row_checksum = table_checksum(fixtures.read_files(fixtures.data_files(tdir)))
        if self.dry_run:
            self.expected = {"tasks": self.partitions, "input_files": self.input_files, "snapshots_after":
                             self.snapshots_before}
        else:
            self.expected = self.row_checksum
        self.params = {"commits": commits, "partitions": parts, "rows_per_file": per, "data_files": self.input_files,
                       "data_bytes": self.data_bytes, "compact_options": COMPACT_OPTIONS, "dry_run": self.dry_run}
        what = ("table.maintenance.compact(dry_run=True): plan only" if self.dry_run else
                "table.maintenance.compact(): plan + rewrite + commit (phases), one file per partition after; floor: per "
                "partition pq.read_table of its files + pq.write_table")
        self.description = (f"{what}, on the plan_10k_files table ({commits} commits x {parts} partitions = "
                            f"{self.input_files} files of {per} rows, unaware-bucket append, default options)")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        spec = super().prepare(side, run_dir)
        if self.dry_run:
            spec["dry_run"] = True
        return spec

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side == FLOOR:
            return self._floor_verdict(run_dir, pk=False)
        if self.dry_run:
            tdir = fixtures.table_dir(str(run_dir / "wh"))
            got = {"tasks": result.get("plan_tasks"), "input_files": result.get("plan_input_files"),
                   "snapshots_after": latest(tdir)[0]}
            return Verdict(got, compare_checksums(self.expected, got), {"result": result.get("result")})
        tdir, live, paths, problems = self._ours_common(run_dir, result)
        if len(live) != self.partitions:
            problems.append(f"{len(live)} live files after the compaction, want {self.partitions} (one per partition)")
        got = table_checksum(fixtures.read_files(list(paths.values())))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, self._extra(live, paths, result))


PK_FULL_ARGS: tuple[Any, ...] = ("compact_pk_full_1m_10runs", "pk_rows", "pk_runs", PK_OPTIONS)


def compaction_cases() -> list[Case]:
    """The compaction cases, in report order (fresh instances)."""
    return [
        CompactAppendBinpack(),
        CompactPkFull(*PK_FULL_ARGS),
        PkReadAfterCompaction(),
        AppendReadCompactedRows(),
        CompactPkFull("compact_pk_large_bucket", "large_keys", "large_runs", LARGE_OPTIONS, LARGE_WRITE_OPTIONS),
        # By name only: the same compaction against the streaming floor, and at 2/3 and 2x the keys
        # (peak memory must not grow with the bucket).
        CompactPkFull("compact_pk_large_bucket_streaming_floor", "large_keys", "large_runs", LARGE_OPTIONS,
                      LARGE_WRITE_OPTIONS, streaming_floor=True, default=False),
        CompactPkFull("compact_pk_large_bucket_3m", "large_keys_3m", "large_runs", LARGE_OPTIONS,
                      LARGE_WRITE_OPTIONS, default=False),
        CompactPkFull("compact_pk_large_bucket_9m", "large_keys_9m", "large_runs", LARGE_OPTIONS,
                      LARGE_WRITE_OPTIONS, default=False),
        CompactManyFiles("compact_plan_10k_files", dry_run=True),
        CompactManyFiles("compact_plan_commit_10k_files", dry_run=False),
        CompactManyFiles("compact_plan_commit_10k_files_streaming_floor", dry_run=False, streaming_floor=True,
                         default=False),
    ]
