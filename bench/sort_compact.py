"""Sort compaction (order / zorder / hilbert): what it buys a selective read, and what it costs.

    python -m bench.sort_compact [--rows 10000000] [--commits 20] [--target-file-size 64mb] \\
        [--strategies order,zorder,hilbert] [--in-memory] [--out bench/results/sort-compact.md] [--workdir DIR]

An unaware-bucket append table ``id BIGINT, a BIGINT, b BIGINT, v DOUBLE, s STRING`` with
``--rows`` rows written by paimon_core in ``--commits`` commits (every file spans the whole range
of ``a`` and ``b``, uniform in [0, 1e6)). Per strategy, on a hard-linked copy of that table:

* the sort compaction (``SortCompaction``, local executor, ``order_by a,b``), wall and CPU time
  (this process' user + system, Arrow's threads included), files before/after. By default a
  partition beyond ``write-buffer-size`` (256 MB) is sorted by sampled ranges with spill files;
  ``--in-memory`` sorts it whole in memory instead;
* three selective reads through our reader with the filter pushed down (min/max file skipping):
  ``a`` in a 1% range, ``b`` in a 1% range, both in a 10% range each; per query the files
  scanned, rows read (rows of the scanned files), rows returned and wall time, before (the
  unsorted table) and after.

Floor for the compaction: plain pyarrow reading all input Parquet files, sorting by ``a, b``
(``Table.sort_by``) and writing files of the same count (zstd level 1, like the table's writer),
wall and CPU. Rows are checked identical (count and sums) after every compaction.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20261127
QUERIES = {
    "a 1%": "a >= 500000 AND a < 510000",
    "b 1%": "b >= 250000 AND b < 260000",
    "a,b 10% x 10%": "a >= 100000 AND a < 200000 AND b >= 700000 AND b < 800000",
}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _batch(start: int, n: int) -> pa.Table:
    rng = np.random.default_rng([SEED, start])
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({
        "id": ids,
        "a": rng.integers(0, 1_000_000, n),
        "b": rng.integers(0, 1_000_000, n),
        "v": rng.uniform(0, 1, n),
        "s": pa.array(np.char.add("k", (ids % 100_000).astype(str)).astype(object)),
    })  # fmt: skip


def _build(wh: Path, rows: int, commits: int, target: str) -> None:
    from paimon_core import FileSystemCatalog

    cat = FileSystemCatalog(str(wh))
    cat.create_database("db")
    step = -(-rows // commits)
    t = cat.create_table("db.t", _batch(0, 1).schema,
                         options={"write-only": "true", "target-file-size": target,
                                  "snapshot.num-retained.min": "1000000"})  # fmt: skip
    for start in range(0, rows, step):
        t.write_arrow(_batch(start, min(step, rows - start)))


def _link_copy(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, copy_function=os.link)


def _query(t: Any, text: str) -> dict[str, Any]:
    from paimon_core.predicate.parser import parse_predicate

    pred = parse_predicate(text, list(t.schema.fields))
    start = time.perf_counter()
    rb = t.new_read_builder().with_filter(pred)
    plan = rb.new_scan().plan()
    files = [f for s in plan.splits for f in s.files]
    got = rb.new_read().to_arrow(plan.splits)
    wall = time.perf_counter() - start
    return {"files": len(files), "rows_read": sum(f.row_count for f in files), "rows": got.num_rows,
            "wall_s": round(wall, 3)}  # fmt: skip


def _checksum(t: Any) -> tuple[int, int, int]:
    import pyarrow.compute as pc

    data = t.to_arrow(columns=["id", "a", "b"])
    return data.num_rows, pc.sum(data["id"]).as_py(), pc.sum(data["a"]).as_py() + pc.sum(data["b"]).as_py()


def _live_files(t: Any) -> list[Any]:
    return [e.file for e in t.new_file_store_scan().live_entries(t.latest_snapshot())]


def _floor(t: Any, out: Path, files_out: int) -> dict[str, Any]:
    """pyarrow: read every input file, sort by a, b, write ``files_out`` files."""
    paths = [f"{t.bucket_path(e.partition, e.bucket)}/{e.file.file_name}"
             for e in t.new_file_store_scan().live_entries(t.latest_snapshot())]  # fmt: skip
    out.mkdir(parents=True)
    c0, w0 = _cpu(), time.perf_counter()
    data = pa.concat_tables([pq.read_table(p) for p in paths])
    data = data.sort_by([("a", "ascending"), ("b", "ascending")])
    step = -(-data.num_rows // max(1, files_out))
    for i, lo in enumerate(range(0, data.num_rows, step)):
        pq.write_table(data.slice(lo, step), out / f"part-{i}.parquet", compression="zstd", compression_level=1)
    wall, cpu = time.perf_counter() - w0, _cpu() - c0
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "rows": data.num_rows, "files": files_out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sort_compact", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--commits", type=int, default=20)
    ap.add_argument("--target-file-size", default="64mb")
    ap.add_argument("--strategies", default="order,zorder,hilbert")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "sort-compact.md")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--in-memory", action="store_true", help="sort each partition whole in memory (no spill)")
    ns = ap.parse_args(argv)

    from paimon_core import FileSystemCatalog
    from paimon_core.operation.compact.sort_compact import SortCompaction
    from paimon_core.operation.compact.sort_task import local_sort_executor
    from paimon_core.sort.table_sorter import SortSpec

    executor = local_sort_executor(budget=1 << 62) if ns.in_memory else local_sort_executor()

    work = Path(tempfile.mkdtemp(prefix="sort-compact-", dir=ns.workdir))
    try:
        base = work / "base"
        t0 = time.perf_counter()
        _build(base, ns.rows, ns.commits, ns.target_file_size)
        print(f"built {ns.rows} rows in {time.perf_counter() - t0:.1f} s", flush=True)
        unsorted = FileSystemCatalog(str(base)).get_table("db.t")
        want = _checksum(unsorted)
        files_before = len(_live_files(unsorted))
        reads_before = {q: _query(unsorted, text) for q, text in QUERIES.items()}
        runs: dict[str, dict[str, Any]] = {}
        for strategy in [s.strip() for s in ns.strategies.split(",") if s.strip()]:
            wh = work / strategy
            _link_copy(base, wh)
            t = FileSystemCatalog(str(wh)).get_table("db.t")
            c0, w0 = _cpu(), time.perf_counter()
            result = SortCompaction(t.store, SortSpec.of(strategy, "a,b", t.options.options), executor=executor).run()
            wall, cpu = time.perf_counter() - w0, _cpu() - c0
            t = FileSystemCatalog(str(wh)).get_table("db.t")
            ok = _checksum(t) == want
            runs[strategy] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "files_after": result.files_written,
                              "ok": ok, "reads": {q: _query(t, text) for q, text in QUERIES.items()}}  # fmt: skip
            print(f"{strategy}: {runs[strategy]}", flush=True)
            shutil.rmtree(wh)
        files_out = max(r["files_after"] for r in runs.values()) if runs else files_before
        floor = _floor(unsorted, work / "floor", files_out)
        print(f"floor: {floor}", flush=True)
        _report(ns, files_before, reads_before, runs, floor)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["ok"] for r in runs.values()) else 1


def _report(ns: argparse.Namespace, files_before: int, before: dict[str, Any], runs: dict[str, Any],
            floor: dict[str, Any]) -> None:
    load = os.getloadavg()
    lines = [
        "# Sort compaction bench (`python -m bench.sort_compact`)",
        "",
        f"{ns.rows:,} rows, {ns.commits} commits, target-file-size {ns.target_file_size}, "
        f"{'in memory' if ns.in_memory else 'spill beyond write-buffer-size'}; machine: "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the end (a shared, loaded machine).",
        "",
        "## Sort compaction against the pyarrow floor (read + sort + write)",
        "",
        "| strategy | wall s | CPU s | x floor (wall) | files before -> after | rows identical |",
        "|---|---|---|---|---|---|",
    ]
    for s, r in runs.items():
        lines.append(f"| {s} | {r['wall_s']} | {r['cpu_s']} | {r['wall_s'] / max(floor['wall_s'], 1e-9):.2f} | "
                     f"{files_before} -> {r['files_after']} | {r['ok']} |")  # fmt: skip
    lines.append(f"| floor (pyarrow, sort_by a,b) | {floor['wall_s']} | {floor['cpu_s']} | 1.00 | "
                 f"{files_before} -> {floor['files']} | - |")  # fmt: skip
    lines += ["", "## Selective reads (files scanned / rows read / rows returned / wall s)", "",
              "| query | unsorted | " + " | ".join(runs) + " |", "|---|---|" + "---|" * len(runs)]  # fmt: skip
    for q in QUERIES:
        cells = [before[q]] + [r["reads"][q] for r in runs.values()]
        lines.append(f"| {q} | " + " | ".join(f"{c['files']} / {c['rows_read']:,} / {c['rows']:,} / {c['wall_s']}"
                                              for c in cells) + " |")  # fmt: skip
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
