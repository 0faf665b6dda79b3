"""Manifest sort (Paimon 2.0): what a full ``compact_manifest`` sort buys a single-partition plan.

    python -m bench.manifest_sort [--files 100000] [--partitions 1000] [--commits 100] \\
        [--target-file-size 256kb,8mb] [--repeat 3] [--no-peer] [--out bench/results/manifest-sort.md] [--workdir DIR]

An append table ``id BIGINT, p INT, v BIGINT`` partitioned by ``p`` holds ``--files`` data files
over ``--partitions`` partitions, committed by our committer in ``--commits`` commits whose files
fall in random partitions (the table's ordinary manifest merge runs on every commit, with
``manifest.target-file-size`` from ``--target-file-size``: one table per size given, Java's
default 8 MB among them; our fixture's entries are small, ~36 bytes each, so 100k files fit in
one or two 8 MB manifests, where Java tables with full value stats have many). The fixture is
metadata-cheap: one real commit writes one small Parquet file per partition, and every later
file is a hard link of its partition's file under a new name with a copy of its meta (the
committer checks that files exist; the planner never opens them).

Measured, each in a fresh process (the manifest decode cache is per process), ``--repeat`` times
(median): the plan of a scan filtered on one partition (``p = partitions / 2``), wall and CPU
(user + system of the process), with the manifests it read and the files it planned; by our
planner and by pypaimon 2.1.0 (pure Python, native plan off; peers venv ``.cache/peers-venv``)
on the same table. Then ``compact_manifest`` with ``manifest-sort.enabled`` (the full sort),
wall and CPU, manifests before/after and the most manifests one partition falls in; then the
same plans again. Every plan's file count is checked against the fixture.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

SEED = 20261128
TABLE = "db.t"
ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = Path(os.environ.get("PAIMON_PEERS_PYTHON", ROOT / ".cache" / "peers-venv" / "bin" / "python"))

#: Plan one partition in a fresh process; prints one JSON line. argv: side, warehouse, partition.
_OURS = r"""
import json, resource, sys, time
from paimon_core import FileSystemCatalog
from paimon_core.operation.scan import FileStoreScan
wh, p = sys.argv[1], int(sys.argv[2])
t = FileSystemCatalog(wh).get_table("db.t")
read = []
orig = FileStoreScan._read_all
def spy(self, paths):
    read.append(len(paths))
    return orig(self, paths)
FileStoreScan._read_all = spy
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, w0 = cpu(), time.perf_counter()
rb = t.new_read_builder()
plan = rb.with_filter(rb.new_predicate_builder().equal("p", p)).plan()
wall, cpu_s = time.perf_counter() - w0, cpu() - c0
files = sum(len(s.files) for s in plan.splits)
print(json.dumps({"wall": wall, "cpu": cpu_s, "files": files, "manifests_read": sum(read)}))
"""

_PEER = r"""
import json, resource, sys, time
from pypaimon import CatalogFactory
wh, p = sys.argv[1], int(sys.argv[2])
off = {"scan.native-plan.enabled": "false", "read.native.enabled": "false",
       "commit.native.enabled": "false", "write.native.enabled": "false"}
t = CatalogFactory.create({"warehouse": wh}).get_table("db.t").copy(off)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, w0 = cpu(), time.perf_counter()
rb = t.new_read_builder()
rb = rb.with_filter(rb.new_predicate_builder().equal("p", p))
splits = rb.new_scan().plan().splits()
wall, cpu_s = time.perf_counter() - w0, cpu() - c0
print(json.dumps({"wall": wall, "cpu": cpu_s, "files": sum(len(s.files) for s in splits)}))
"""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def build(
    wh: Path, *, files: int, partitions: int, commits: int, target: str, sort_on_commit: bool = False
) -> dict[int, int]:
    """The fixture (see the module docstring); returns the live file count per partition."""
    from paimon_core import FileSystemCatalog
    from paimon_core.table.commit_message import CommitMessage

    cat = FileSystemCatalog(str(wh))
    cat.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.int32()), pa.field("v", pa.int64())])
    t = cat.create_table(TABLE, schema, partition_keys=["p"], options={
        "write-only": "true", "manifest.target-file-size": target, "snapshot.num-retained.min": "1000000",
        "snapshot.num-retained.max": "1000000", "manifest-sort.enabled": str(sort_on_commit).lower()})  # fmt: skip
    t.write_arrow(pa.table({"id": list(range(partitions)), "p": pa.array(range(partitions), pa.int32()),
                            "v": [0] * partitions}, schema=schema))  # fmt: skip
    template = {}
    codec = t.new_file_store_scan().codec
    for e in t.new_file_store_scan().live_entries(t.latest_snapshot()):
        template[codec.decode(e.partition)[0]] = e
    assert len(template) == partitions
    counts = dict.fromkeys(range(partitions), 1)
    rnd = random.Random(SEED)
    per_commit = -(-(files - partitions) // max(1, commits - 1))
    left = files - partitions
    for c in range(1, commits):
        messages = []
        for _ in range(min(per_commit, left)):
            p = rnd.randrange(partitions)
            e = template[p]
            meta = e.file.copy(file_name=f"data-{uuid.uuid4()}-{c}.parquet")
            bucket_dir = t.bucket_path(e.partition, e.bucket)
            os.link(f"{bucket_dir}/{e.file.file_name}", f"{bucket_dir}/{meta.file_name}")
            messages.append(CommitMessage(e.partition, e.bucket, e.total_buckets, new_files=(meta,)))
            counts[p] += 1
        left -= len(messages)
        t.new_batch_write_builder().new_commit().commit(messages)
    return counts


def _plan(python: Path, script: str, wh: Path, p: int, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([str(python), "-c", script, str(wh), str(p)], check=True, capture_output=True,
                             text=True, cwd=ROOT).stdout  # fmt: skip
        runs.append(json.loads(out.strip().splitlines()[-1]))
    return {
        "wall": statistics.median(r["wall"] for r in runs),
        "cpu": statistics.median(r["cpu"] for r in runs),
        "files": runs[0]["files"],
        "manifests_read": runs[0].get("manifests_read"),
        "walls": [round(r["wall"], 4) for r in runs],
    }


def _manifests(wh: Path) -> tuple[int, int, int]:
    """Manifests, their bytes, the most manifests one partition falls in (latest snapshot)."""
    from paimon_core import FileSystemCatalog
    from paimon_core.manifest.sorter import ManifestSortKey, manifests_per_value

    t = FileSystemCatalog(str(wh)).get_table(TABLE)
    scan = t.new_file_store_scan()
    metas = scan.data_manifests(t.latest_snapshot())  # type: ignore[arg-type]
    return len(metas), sum(m.file_size for m in metas), manifests_per_value(metas, ManifestSortKey(scan.codec, 0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=100)
    ap.add_argument("--target-file-size", default="256kb,8mb", help="comma-separated: one table per size")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "manifest-sort.md"))
    ap.add_argument("--workdir")
    args = ap.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="paimon-bench-manifest-sort-"))
    sizes = [s.strip() for s in args.target_file_size.split(",") if s.strip()]
    head = [
        "# Manifest sort: single-partition plan before and after `compact_manifest` (full sort)",
        "",
        f"Generated by `python -m bench.manifest_sort --files {args.files} --partitions {args.partitions} "
        f"--commits {args.commits} --target-file-size {','.join(sizes)} --repeat {args.repeat}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores (shared, loaded machine: "
        "compare ratios rather than absolute times).",
    ]
    text = "\n".join(head + [line for size in sizes for line in _one(args, work / f"wh-{size}", size)])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _one(args: argparse.Namespace, wh: Path, size: str) -> list[str]:
    """One table with ``manifest.target-file-size`` = ``size``: the report's section."""
    if wh.exists():
        shutil.rmtree(wh)
    t0, c0 = time.perf_counter(), _cpu()
    counts = build(wh, files=args.files, partitions=args.partitions, commits=args.commits, target=size)
    build_s = (time.perf_counter() - t0, _cpu() - c0)
    p = args.partitions // 2
    peer = not args.no_peer and PEER_PYTHON.exists()
    sides = [("ours", Path(sys.executable), _OURS)] + ([("pypaimon 2.1.0", PEER_PYTHON, _PEER)] if peer else [])

    before_m = _manifests(wh)
    before = {name: _plan(py, s, wh, p, args.repeat) for name, py, s in sides}

    from paimon_core import FileSystemCatalog

    t = FileSystemCatalog(str(wh)).get_table(TABLE).copy({"manifest-sort.enabled": "true"})
    dry = t.maintenance.compact_manifest(dry_run=True)
    t0, c0 = time.perf_counter(), _cpu()
    res = t.maintenance.compact_manifest()
    compact_s = (time.perf_counter() - t0, _cpu() - c0)
    after_m = _manifests(wh)
    after = {name: _plan(py, s, wh, p, args.repeat) for name, py, s in sides}
    wh_c = wh.with_name(wh.name + "-sort-on-commit")
    t0, c0 = time.perf_counter(), _cpu()
    counts_c = build(wh_c, files=args.files, partitions=args.partitions, commits=args.commits, target=size,
                     sort_on_commit=True)  # fmt: skip
    build_c = (time.perf_counter() - t0, _cpu() - c0)
    assert counts_c == counts
    commit_m = _manifests(wh_c)
    on_commit = {name: _plan(py, s, wh_c, p, args.repeat) for name, py, s in sides}

    for phase in (before, after, on_commit):
        for name, r in phase.items():
            assert r["files"] == counts[p], (name, r["files"], counts[p])  # the plan's answer is right

    lines = [
        "",
        f"## manifest.target-file-size {size}",
        "",
        f"Table: append, partitioned by `p` ({args.partitions} partitions), {args.files} data files in "
        f"{args.commits} commits of random partitions, `manifest.target-file-size` {size}; "
        f"fixture built in {build_s[0]:.1f} s wall / {build_s[1]:.1f} s CPU. Plan filter: `p = {p}` "
        f"({counts[p]} files). Median of {args.repeat} fresh processes.",
        "",
        "| | manifests | manifest bytes | most manifests one partition falls in |",
        "|---|---:|---:|---:|",
        f"| before (ordinary merge) | {before_m[0]} | {before_m[1]:,} | {res.max_manifests_per_partition_before} |",
        f"| after full sort | {after_m[0]} | {after_m[1]:,} | {res.max_manifests_per_partition_after} |",
        f"| another table, manifest-sort.enabled on every commit | {commit_m[0]} | {commit_m[1]:,} | {commit_m[2]} |",
        "",
        f"`compact_manifest` (manifest-sort.enabled, full sort): {compact_s[0]:.2f} s wall, {compact_s[1]:.2f} s "
        f"CPU; sorted {res.manifests_sorted} manifests ({res.bytes_sorted:,} bytes), snapshot {res.snapshot_id}. "
        f"Dry run first: levels L0..L4 = {list(dry.sort_levels or ())}, would sort {dry.manifests_sorted} "
        f"manifests ({dry.bytes_sorted:,} bytes).",
        "",
        "| planner | before wall s | before CPU s | manifests read | after wall s | after CPU s | manifests read "
        "| wall ratio before/after | CPU ratio before/after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, _, _ in sides:
        b, a = before[name], after[name]
        mr_b = "" if b["manifests_read"] is None else b["manifests_read"]
        mr_a = "" if a["manifests_read"] is None else a["manifests_read"]
        lines.append(
            f"| {name} | {b['wall']:.3f} | {b['cpu']:.3f} | {mr_b} | {a['wall']:.3f} | {a['cpu']:.3f} | {mr_a} "
            f"| {b['wall'] / a['wall']:.2f}x | {b['cpu'] / max(a['cpu'], 1e-9):.2f}x |"
        )
    lines += [
        "",
        f"Sorted on commit (`manifest-sort.enabled` from the start, the same commits): building took "
        f"{build_c[0]:.1f} s wall / {build_c[1]:.1f} s CPU against {build_s[0]:.1f} s / {build_s[1]:.1f} s with the "
        f"ordinary merge ({build_c[0] / build_s[0]:.2f}x, {args.commits} commits). Single-partition plan:",
        "",
        "| planner | wall s | CPU s | manifests read | wall ratio unsorted/sorted-on-commit |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, _, _ in sides:
        c, b = on_commit[name], before[name]
        mr = "" if c["manifests_read"] is None else c["manifests_read"]
        lines.append(f"| {name} | {c['wall']:.3f} | {c['cpu']:.3f} | {mr} | {b['wall'] / c['wall']:.2f}x |")
    if len(sides) > 1:
        o, pp = sides[0][0], sides[1][0]
        lines += [
            "",
            f"Ours vs pypaimon (wall, ours / theirs; < 1: ours faster): before {before[o]['wall'] / before[pp]['wall']:.2f}, "
            f"after {after[o]['wall'] / after[pp]['wall']:.2f}. pypaimon reads the sorted manifests written by "
            "our compaction and plans the same files.",
        ]
    elif not peer:
        lines += ["", f"pypaimon: not run ({'--no-peer' if args.no_peer else f'no peer interpreter at {PEER_PYTHON}'})."]
    lines += ["", "Raw walls (s): " + json.dumps({"before": {k: v["walls"] for k, v in before.items()},
                                                   "after": {k: v["walls"] for k, v in after.items()},
                                                   "sorted_on_commit": {k: v["walls"] for k, v in on_commit.items()}}),
              ""]  # fmt: skip
    return lines


if __name__ == "__main__":
    sys.exit(main())
