"""Primary-key cases: write 1M rows into 4 buckets, upsert 100k of them, merged read.

Every side works on a primary-key table on ``id`` with ``bucket = 4`` (created by our catalog,
default options otherwise); the floor moves the same rows with plain ``pq.write_table`` /
``pq.read_table`` (zstd level 1). What a side wrote is verified neutrally: its data files are
read with plain pyarrow and merged by key (:func:`bench.fixtures.read_pk_files`: highest
``_SEQUENCE_NUMBER`` wins), never by the writer's own reader.

* ``pk_write_1m``: the 1M input rows into an empty table, one commit.
* ``pk_upsert_100k``: 100k of those rows with ``v = -1`` (random order) on a table holding the
  1M rows **written by the same side** (peers: a fixture written by the peer in its venv).
* ``pk_merged_read_1m``: read a table of base + upsert (two sorted runs per bucket, so every
  reader must merge), written by our writer like every read fixture of the suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from bench import datagen, fixtures
from bench.cases import FLOOR, OURS, SEED, Case, Context, Verdict, check_snapshot
from bench.sidekit import compare_checksums, table_checksum

BUCKETS = int(fixtures.PK_OPTIONS["bucket"])


class PkInputs:
    """The base rows, the upserts and the merged result (Parquet files in one cached fixture)."""

    def __init__(self, ctx: Context) -> None:
        self.rows = ctx.p["rows_1m"]
        self.upserts = ctx.p["pk_upserts"]
        self.base = ctx.input_file(self.rows)
        base = self.base
        d = ctx.fixture(f"pk-upserts-{self.rows}-{self.upserts}", {"rows": self.rows, "upserts": self.upserts,
                                                                   "seed": SEED},
                        lambda p: _write_upserts(p, base, self.upserts))
        self.upsert_file = d / "upserts.parquet"
        self.merged_file = d / "merged.parquet"


def _write_upserts(path: Path, base: Path, n: int) -> None:
    up, merged = datagen.upserts(pq.read_table(base), n, seed=SEED)
    pq.write_table(up, path / "upserts.parquet", **fixtures.ZSTD1)
    pq.write_table(merged, path / "merged.parquet", **fixtures.ZSTD1)


def check_buckets(files: list[Path], rows: int) -> list[str]:
    """Data files only in ``bucket-0`` .. ``bucket-3``, and (with enough rows) in all four."""
    dirs = fixtures.bucket_dirs(files)
    want = {f"bucket-{i}" for i in range(BUCKETS)}
    problems = [f"data files in unexpected bucket directories {sorted(dirs - want)}"] if dirs - want else []
    if rows >= 100 and dirs != want:
        problems.append(f"rows in buckets {sorted(dirs)}, want all of {sorted(want)}")
    return problems


def _table_files(run_dir: Path) -> tuple[Path, list[Path]]:
    tdir = fixtures.table_dir(str(run_dir / "wh"))
    return tdir, fixtures.data_files(tdir)


class PkWrite(Case):
    """Write N rows into an empty primary-key table (4 buckets), one commit."""

    name = "pk_write_1m"

    def setup(self, ctx: Context) -> None:
        self.rows = ctx.p["rows_1m"]
        self.input = ctx.input_file(self.rows)
        self.expected = table_checksum(pq.read_table(self.input))
        self.data_bytes = self.input.stat().st_size
        self.params = {"rows": self.rows, "primary_keys": list(fixtures.PK_KEYS), "options": fixtures.PK_OPTIONS}
        self.description = (f"write {self.rows} rows (id, dt, v, s) into an empty primary-key table (id, "
                            f"{BUCKETS} buckets), one commit; floor: pq.write_table zstd(1)")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            run_dir.mkdir(parents=True)
            return {"op": "write", "input": str(self.input), "path": str(run_dir / "out.parquet")}
        fixtures.create_empty_pk_table(str(run_dir / "wh"))
        return {"op": "write", "input": str(self.input), "warehouse": str(run_dir / "wh"), "table": fixtures.TABLE}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side == FLOOR:
            files = [run_dir / "out.parquet"]
            got = table_checksum(fixtures.read_files(files))
            problems: list[str] = []
        else:
            tdir, files = _table_files(run_dir)
            problems = check_snapshot(fixtures.snapshots(tdir), 1, self.rows, self.rows)
            problems += check_buckets(files, self.rows)
            got = table_checksum(fixtures.read_pk_files(files))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, {"files_written": len(files), "bytes_written": fixtures.dir_bytes(files)})


class PkUpsert(Case):
    """Upsert M rows (write + commit) into a table of N rows written by the same side."""

    name = "pk_upsert_100k"

    def setup(self, ctx: Context) -> None:
        self.ctx = ctx
        self.inputs = PkInputs(ctx)
        self.rows = self.inputs.upserts
        self.expected = table_checksum(pq.read_table(self.inputs.merged_file))
        self.upsert_checksum = table_checksum(pq.read_table(self.inputs.upsert_file))
        self.data_bytes = self.inputs.upsert_file.stat().st_size
        self.base_files: dict[str, set[Path]] = {}
        self.params = {"base_rows": self.inputs.rows, "upserts": self.rows, "primary_keys": list(fixtures.PK_KEYS),
                       "options": fixtures.PK_OPTIONS, "upsert_value_v": datagen.UPSERT_V}
        self.description = (f"upsert {self.rows} rows (v = {datagen.UPSERT_V}, random order; write + commit) into a "
                            f"primary-key table of {self.inputs.rows} rows written by the same side "
                            "(peers: by the peer); floor: pq.write_table of the upsert rows")

    def base_table(self, side: str) -> Path:
        """The side's own table of the base rows (cached; peers write it in their venv)."""
        ctx, inp = self.ctx, self.inputs
        if side == OURS:
            return ctx.fixture(f"pk-base-{inp.rows}-ours", {"rows": inp.rows, "writer": OURS},
                               lambda d: fixtures.build_pk_table(d, [inp.base]))
        params = {"rows": inp.rows, "writer": side, "peers": ctx.peer_versions, "peer_py": ctx.peer_py}
        return ctx.fixture(f"pk-base-{inp.rows}-{side}", params, lambda d: self._peer_base(side, d),
                           ours_source=False)

    def _peer_base(self, side: str, path: Path) -> None:
        from bench.runner import run_side

        wh = fixtures.warehouse_of(path)
        fixtures.create_empty_pk_table(wh)
        answer = run_side(side, {"op": "write", "input": str(self.inputs.base), "warehouse": wh,
                                 "table": fixtures.TABLE}, self.ctx.peer_py)
        if not answer.get("ok"):
            raise RuntimeError(f"{side} could not write the base table: {answer.get('error_type')}: "
                               f"{answer.get('error')}\n{answer.get('traceback') or answer.get('stderr') or ''}")
        got = table_checksum(fixtures.read_pk_files(fixtures.data_files(fixtures.table_dir(wh))))
        problems = compare_checksums(table_checksum(pq.read_table(self.inputs.base)), got)
        if problems:
            raise RuntimeError(f"the base table {side} wrote reads back wrong: {problems[:3]}")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            run_dir.mkdir(parents=True)
            return {"op": "write", "input": str(self.inputs.upsert_file), "path": str(run_dir / "out.parquet")}
        base = self.base_table(side)
        tdir = fixtures.table_dir(fixtures.warehouse_of(base))
        hint = tdir / "snapshot" / "LATEST"
        if list(fixtures.snapshots(tdir)) != [1] or (hint.exists() and hint.read_text().strip() != "1"):
            raise RuntimeError(f"fixture {base} was modified (want exactly snapshot 1): delete it to rebuild")
        self.base_files[side] = {f.relative_to(tdir) for f in fixtures.data_files(tdir)}
        run_dir.mkdir(parents=True)
        fixtures.link_tree(Path(fixtures.warehouse_of(base)), run_dir / "wh")
        return {"op": "write", "input": str(self.inputs.upsert_file), "warehouse": str(run_dir / "wh"),
                "table": fixtures.TABLE}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        if side == FLOOR:
            files = [run_dir / "out.parquet"]
            got = table_checksum(fixtures.read_files(files))
            # The floor only writes the upsert rows (nothing to merge into): judged against those.
            return Verdict(got, compare_checksums(self.upsert_checksum, got),
                           {"files_written": 1, "bytes_written": fixtures.dir_bytes(files),
                            "expected_checksum": self.upsert_checksum})
        tdir, files = _table_files(run_dir)
        total = self.inputs.rows + self.rows
        problems = check_snapshot(fixtures.snapshots(tdir), 2, self.rows, total)
        new = [f for f in files if f.relative_to(tdir) not in self.base_files.get(side, set())]
        problems += [f"new files: {p}" for p in compare_checksums(self.upsert_checksum,
                                                                   table_checksum(fixtures.read_pk_files(new)))]
        problems += check_buckets(new, self.rows)
        got = table_checksum(fixtures.read_pk_files(files))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, {"files_written": len(new), "bytes_written": fixtures.dir_bytes(new)})


class PkMergedRead(Case):
    """Read a primary-key table of base + upserts (merge on read) into one Arrow table."""

    name = "pk_merged_read_1m"

    def setup(self, ctx: Context) -> None:
        inp = PkInputs(ctx)
        self.rows = inp.rows
        self.table = ctx.fixture(f"pk-merged-{inp.rows}-{inp.upserts}", {"rows": inp.rows, "upserts": inp.upserts},
                                 lambda d: fixtures.build_pk_table(d, [inp.base, inp.upsert_file]))
        self.floor = inp.merged_file
        self.expected = table_checksum(pq.read_table(self.floor))
        files = fixtures.data_files(fixtures.table_dir(fixtures.warehouse_of(self.table)))
        problems = compare_checksums(self.expected, table_checksum(fixtures.read_pk_files(files)))
        if problems:  # the fixture itself must be right before any reader is judged by it
            raise RuntimeError(f"fixture {self.table.name} merges wrong (plain pyarrow): {problems[:3]}")
        self.data_bytes = fixtures.dir_bytes(files)
        self.params = {"rows": inp.rows, "upserts": inp.upserts, "data_files": len(files),
                       "data_bytes": self.data_bytes, "floor_bytes": self.floor.stat().st_size}
        self.description = (f"read a primary-key table ({BUCKETS} buckets) of {inp.rows} rows + {inp.upserts} "
                            "upserts (two sorted runs per bucket, written by our writer) merged into one Arrow "
                            "table; floor: pq.read_table of the merged rows")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        if side == FLOOR:
            return {"op": "read", "mode": "table", "path": str(self.floor)}
        return {"op": "read", "mode": "table", "warehouse": fixtures.warehouse_of(self.table),
                "table": fixtures.TABLE}
