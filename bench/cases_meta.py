"""Metadata cases: planning 100,000 files in 1,000 manifests, and one whole expiry job process.

* ``plan_100k_files_1000_manifests``: plan a full scan (splits, no data read) of a table whose
  1,000 commits of 100 files each stay 1,000 manifests (``manifest.merge-min-count`` 1,000,000,
  ``manifest.target-file-size`` 64 MB: no manifest compaction). All three sides plan it. The
  fixture is cheap to build: one real commit of 100 files (one per partition) is written by our
  writer, and 999 more commits add hard links of those files under new names, with copies of
  their metas, through our committer: the manifests are exactly what our committer writes,
  without writing 100,000 Parquet files (every side's answer is checked against the 100,000
  files and their rows).
* ``expire_process_1000_snapshots``: the wall and CPU time of the whole process
  ``python -m spark_jobs expire_snapshots --retain-max 10 --retain-min 10 ...`` on a copy of
  the 1,000-snapshot table of ``commit_latency_1000_snapshots``: interpreter start, imports,
  table load, expiry and the JSON line, which is what an Airflow task pays. Ours only (the
  peers have no expiry); checked on disk like ``expire_10k_snapshots``.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, ClassVar

from bench import fixtures
from bench.cases import OURS, SEED, TABLE_SIDES, Case, Context
from bench.cases_maint import FAR_FUTURE_MILLIS, NOT_APPLICABLE, ExpireSnapshots

SIZES = {"full": {"commits": 1000, "files": 100}, "small": {"commits": 10, "files": 10}}
ROWS_PER_FILE = 10
#: Table options that keep every commit's manifest as it is (no minor/full manifest compaction).
NO_MANIFEST_MERGE = {"manifest.merge-min-count": "1000000", "manifest.target-file-size": "64 mb"}


def build_many_manifests(path: Path, commits: int, files: int) -> None:
    """``commits`` commits of ``files`` files each (one per partition), one manifest per commit."""
    from paimon_core import FileSystemCatalog
    from paimon_core.table.commit_message import CommitMessage

    wh = fixtures.warehouse_of(path)
    fixtures.create_empty_table(wh, ["dt"], options=NO_MANIFEST_MERGE)
    fixtures.write_commits(wh, [fixtures.many_files_commit(0, files, ROWS_PER_FILE, seed=SEED)])
    table = FileSystemCatalog(wh).get_table(fixtures.TABLE)
    template = table.new_file_store_scan().live_entries(table.latest_snapshot())
    for c in range(1, commits):
        messages = []
        for e in template:
            meta = e.file.copy(file_name=f"data-{uuid.uuid4()}-{c}.parquet")
            bucket_dir = table.bucket_path(e.partition, e.bucket)
            os.link(f"{bucket_dir}/{e.file.file_name}", f"{bucket_dir}/{meta.file_name}")  # the committer checks
            messages.append(CommitMessage(e.partition, e.bucket, e.total_buckets, new_files=(meta,)))
        table.new_batch_write_builder().new_commit().commit(messages)


class PlanManyManifests(Case):
    """Plan a scan of 100,000 files listed in 1,000 manifests."""

    name = "plan_100k_files_1000_manifests"
    sides = TABLE_SIDES
    throughput = "files"

    def setup(self, ctx: Context) -> None:
        commits, files = SIZES[ctx.size]["commits"], SIZES[ctx.size]["files"]
        self.table = ctx.fixture(f"manymanifests-{commits}x{files}", {"commits": commits, "files": files,
                                                                     "rows": ROWS_PER_FILE},
                                 lambda d: build_many_manifests(d, commits, files))
        tdir = fixtures.table_dir(fixtures.warehouse_of(self.table))
        manifests = [p for p in (tdir / "manifest").glob("manifest-*") if not p.name.startswith("manifest-list")]
        self.rows = commits * files * ROWS_PER_FILE
        self.expected = {"files": commits * files, "rows": self.rows}
        self.params = {"commits": commits, "files_per_commit": files, "rows_per_file": ROWS_PER_FILE,
                       "manifests": len(manifests), "manifest_bytes": fixtures.dir_bytes(manifests),
                       "options": NO_MANIFEST_MERGE}
        self.description = (f"plan a full scan (splits, no data read) of {commits * files} data files listed in "
                            f"{len(manifests)} manifests ({commits} commits x {files} partitions; metadata-only "
                            "fixture, see bench/cases_meta.py)")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        return {"op": "plan", "warehouse": fixtures.warehouse_of(self.table), "table": fixtures.TABLE}


class ExpireProcess(ExpireSnapshots):
    """The whole ``python -m spark_jobs expire_snapshots`` process on 1,000 snapshots."""

    name = "expire_process_1000_snapshots"
    sides = (OURS,)
    not_applicable: ClassVar[dict[str, str]] = NOT_APPLICABLE

    #: the table of commit_latency_1000_snapshots (same fixture: history-<snaps>x<per>)
    sizes = ("snapshots_many", "history_rows")

    def setup(self, ctx: Context) -> None:
        super().setup(ctx)
        self.description = (f"the whole process `python -m spark_jobs expire_snapshots --retain-max {self.retain} "
                            f"--retain-min {self.retain} --max-deletes 10000 --older-than <2100-01-01>` on a table of "
                            f"{self.snapshots} append snapshots (built by our writer): start-up, imports, table "
                            f"load, expiry of {self.rows} snapshots, JSON line (what an Airflow task pays)")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        spec = super().prepare(side, run_dir)
        argv = ["-m", "spark_jobs", "expire_snapshots", "--warehouse", spec["warehouse"], "--table", spec["table"],
                "--retain-max", str(self.retain), "--retain-min", str(self.retain), "--max-deletes", "10000",
                "--older-than", str(FAR_FUTURE_MILLIS)]
        return {"op": "process", "argv": argv}



def meta_cases() -> list[Case]:
    return [PlanManyManifests(), ExpireProcess()]
