"""``remove_orphan_files``: delete the files no snapshot, tag or changelog of any branch references.

::

    python -m spark_jobs remove_orphan_files --warehouse W --table DB.T|DB.* \\
        [--older-than ISO|millis] [--dry-run [true|false]] [--force] [--parallelism N] [--mode distributed|local]

* ``--dry-run`` is on by default (the orphans are listed, nothing is deleted); ``--dry-run false``
  deletes. Paimon's ``remove_orphan_files`` procedure defaults to deleting (``dry_run`` false).

* ``--older-than``: only files modified before it are deleted (default: now - 1 day). A time in
  the future is refused, one less than an hour ago only with ``--force``.
* ``--mode distributed`` (default; Java's ``SparkOrphanFilesClean``): the driver plans the
  candidate directories and reads the snapshot / tag / changelog files; executors list the
  directories, read manifest lists and manifests into referenced file names, a left-anti join of
  candidates against them (DataFrames, less the files commits in flight announced) gives the
  orphans. Only counts and the first 1000 paths reach the driver. The candidates are listed and
  materialized *before* the references are read (Paimon issue #3074); a failure to read a
  reference fails the job before anything is deleted. The delete is the core's protocol
  (:mod:`paimon_core.operation.orphan_trash`): executors move the orphans into
  ``_orphan_trash/<run>``, the driver reads the announcements and the roots that appeared since
  again (their new manifests on executors), executors move back what is referenced now and
  delete the rest; so no commit that returns success loses a file, whatever ``--older-than``
  and ``--force`` say.
* ``--mode local``: the whole clean in this process (``paimon_core``'s ``OrphanFilesClean``); no
  Spark session is started.

With ``--table DB.*`` a table of a kind paimon_core refuses (a chain table, a BLOB column ...:
:class:`~paimon_core.exceptions.UnsupportedTableKindError`) is left alone byte for byte and the
others are cleaned: it is listed in ``tables`` as ``skipped`` with the reason (and in
``skipped_tables``), with a ``skipped`` ledger row. Named alone (``--table DB.T``) it is refused.

Prints one JSON line: job, status, mode, table, deleted_file_count, deleted_bytes, deleted_paths
(first 1000, sorted), candidates_scanned, older_than_millis, dry_run, tables (per-table counts),
skipped_tables, seconds. Bad arguments exit 2; a failed or aborted clean exits 3 (75 when a retry
may pass; one JSON line and one log line, as every job: a missing database fails before a Spark
session starts).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from paimon_core import FileSystemCatalog, PaimonError
from paimon_core.exceptions import InvalidArgumentError, OrphanCleanAbortedError
from paimon_core.io.file_io import FileIO
from paimon_core.operation.commit.pending_commits import PendingFiles, read_pending
from paimon_core.operation.orphan_candidates import (
    CandidateDir,
    list_candidate_files,
    plan_candidate_dirs,
    prune_empty_dirs,
)
from paimon_core.operation.orphan_files_clean import (
    MAX_REPORTED_PATHS,
    OrphanFilesClean,
    OrphanFilesCleanResult,
    candidate_io,
    combine_results,
    resolve_older_than,
    valid_branches,
)
from paimon_core.operation.orphan_trash import (
    Trashed,
    check_trash_root,
    list_trash,
    move_to_trash,
    new_run_id,
    prune_trash,
    purge,
    restore,
    root_of,
    trash_path,
)
from paimon_core.operation.referenced_files import (
    MAIN_BRANCH,
    ReferenceReader,
    RootRefs,
    collect_roots,
    list_branches,
)
from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import JobConfig, UsageError, add_dry_run_flag, base_parser, parse_job_args
from spark_jobs.common.ledger import job_recording
from spark_jobs.common.runner import JobContext, SkippedTable, open_or_skip, run_job

if TYPE_CHECKING:
    from pyspark import Broadcast
    from pyspark.sql import Column, DataFrame, Row, SparkSession

    from spark_jobs.common.ledger import WorkerCpu

__all__ = ["OrphanCleanPlan", "clean_table_distributed", "main", "parse_args", "run"]

logger = logging.getLogger(__name__)

JOB = "remove_orphan_files"
Mode = Literal["distributed", "local"]
_CANDIDATES = "name string, path string, size long, mtime long, dir_id int"
_TRASHED = "name string, path string, trash string, size long, dir_id int, root_id int"


@dataclass(frozen=True)
class OrphanCleanPlan:
    """What the job was asked to do (pure; no Spark, no IO)."""

    config: JobConfig
    older_than: str | None = None
    dry_run: bool = True
    force: bool = False
    parallelism: int | None = None
    mode: Mode = "distributed"

    @property
    def database(self) -> str:
        return self.config.table.split(".", 1)[0]

    @property
    def all_tables(self) -> bool:
        return self.config.table.split(".", 1)[1] == "*"


def parse_args(argv: Sequence[str] | None) -> OrphanCleanPlan:
    """Parse the command line (raises :class:`UsageError`)."""
    p = base_parser(JOB, "Delete files of a Paimon table (or DB.*) that nothing references.")
    p.add_argument("--older-than", help="ISO-8601 time or epoch millis (default: now - 1 day)")
    add_dry_run_flag(p, default=True, help="report the orphans, delete nothing")
    p.add_argument("--force", action="store_true", help="allow --older-than less than 1 hour ago")
    p.add_argument("--parallelism", type=int, help="tasks / threads (default: Spark's default parallelism)")
    p.add_argument("--mode", default="distributed", choices=("distributed", "local"))
    config, ns = parse_job_args(JOB, p, argv)
    if ns.parallelism is not None and ns.parallelism <= 0:
        raise UsageError(f"--parallelism must be > 0, got {ns.parallelism}")
    plan = OrphanCleanPlan(config, ns.older_than, ns.dry_run, ns.force, ns.parallelism, ns.mode)
    try:  # validate the cutoff before any table or Spark work
        resolve_older_than(plan.older_than, int(time.time() * 1000), force=plan.force)
    except InvalidArgumentError as e:
        raise UsageError(f"--older-than: {e}") from None
    return plan


# --------------------------------------------------------------------------------------------
# the distributed clean of one table
# --------------------------------------------------------------------------------------------


def _list_dir(item: tuple[int, CandidateDir]) -> list[tuple[str, str, int, int, int]]:
    dir_id, d = item
    return [(s.name, s.path, s.size, s.mtime_millis, dir_id) for s in list_candidate_files(d)]


def _root_rows(
    idxs: Iterable[int], reader: ReferenceReader, roots: Broadcast[list[RootRefs]]
) -> Iterator[tuple[str, bool, int]]:
    for idx in idxs:
        for name, is_manifest in reader.root_files(roots.value[idx]) or ():
            yield (name, is_manifest, idx)


def _manifest_rows(
    rows: Iterable[Row], reader: ReferenceReader, roots: Broadcast[list[RootRefs]]
) -> Iterator[tuple[str]]:
    for row in rows:
        for name in reader.manifest_files(row["name"], roots.value[row["root"]]) or ():
            yield (name,)


@dataclass(frozen=True)
class _TrashPlan:
    """What executors need to move, restore and purge (picklable)."""

    run_id: str
    roots: tuple[str, ...]  # where trash directories are: the table directory
    ios: tuple[FileIO, ...]  # one per root
    dirs: tuple[CandidateDir, ...]


def _move_rows(rows: Iterable[Row], plan: Broadcast[_TrashPlan]) -> Iterator[tuple[str, str, str, int, int, int]]:
    """Move one partition's orphans into the run's trash; yields those moved."""
    p = plan.value
    for row in rows:
        d = p.dirs[row["dir_id"]]
        root = root_of(row["path"], p.roots)
        if root is None:
            logger.error("Refusing to delete %s in orphan clean: not under %s", row["path"], list(p.roots))
            continue
        trash = trash_path(root, p.run_id, row["path"])
        if move_to_trash(d.file_io, row["path"], trash):
            yield (row["name"], row["path"], trash, row["size"], row["dir_id"], p.roots.index(root))


def _restore_rows(rows: Iterable[Row], plan: Broadcast[_TrashPlan]) -> Iterator[tuple[int]]:
    p = plan.value
    n = 0
    for row in rows:
        item = Trashed(row["trash"], row["path"], row["size"])
        if restore(p.ios[row["root_id"]], item):
            n += 1
        else:
            logger.error("Could not move %s back from %s", row["path"], row["trash"])
    yield (n,)


def _purge_rows(rows: Iterable[Row], plan: Broadcast[_TrashPlan]) -> Iterator[tuple[int, int]]:
    """Delete one partition's trashed orphans, then prune the data directories that became
    empty; yields (files, bytes) deleted."""
    p = plan.value
    count = size = 0
    touched: set[int] = set()
    for row in rows:
        if purge(p.ios[row["root_id"]], Trashed(row["trash"], row["path"], row["size"])):
            count, size = count + 1, size + row["size"]
            if row["dir_id"] >= 0:
                touched.add(row["dir_id"])
    prune_empty_dirs(p.dirs[i] for i in sorted(touched))
    yield (count, size)


def _cause(e: BaseException) -> str:
    """The last ``...Error: message`` line of an executor's Python traceback."""
    lines = [ln.strip() for ln in str(e).splitlines() if "Error:" in ln or "Exception:" in ln]
    return lines[-1] if lines else f"{type(e).__name__}: {str(e).strip()[:500]}"


def _not_pending(pending: PendingFiles) -> Column:
    """A filter: the name is not one a commit in flight announced."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    cond = F.lit(True)
    if pending.names:
        cond = cond & ~F.col("name").isin(sorted(pending.names))
    for prefix in pending.prefixes:
        cond = cond & ~F.col("name").startswith(prefix)
    return cond


class _References:
    """Distributed reads of what roots reference (the manifests read are remembered, so a
    second read only reads manifests that appeared since)."""

    def __init__(self, spark: SparkSession, table: FileStoreTable, parallelism: int, cpu: WorkerCpu) -> None:
        self.spark, self.table, self.parallelism, self.cpu = spark, table, parallelism, cpu
        self.reader = ReferenceReader(table.file_io, table.path)
        self.root_keys: set[tuple[tuple[str, ...], str | None, str | None]] = set()
        self.manifests: DataFrame | None = None
        self._broadcasts: list[Broadcast[list[RootRefs]]] = []

    def read(self, branches: Sequence[str]) -> DataFrame:
        """Names every root of ``branches`` not read before references (checkpointed)."""
        from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

        spark, sc, table, cpu, reader = self.spark, self.spark.sparkContext, self.table, self.cpu, self.reader
        try:
            roots = [r for r in collect_roots(table.file_io, table.path, branches) if r.key not in self.root_keys]
            self.root_keys.update(r.key for r in roots)
            b_roots = sc.broadcast(roots)
            self._broadcasts.append(b_roots)
            sc.setJobDescription(f"orphan clean {table.name}: read {len(roots)} snapshots/tags/changelogs")
            first = sc.parallelize(range(len(roots)), _slices(len(roots), self.parallelism)).mapPartitions(
                cpu.partitions(lambda idxs: _root_rows(idxs, reader, b_roots))
            )
            named = spark.createDataFrame(first, "name string, is_manifest boolean, root int").localCheckpoint(
                eager=True
            )
            manifests = named.where("is_manifest").groupBy("name").agg(F.max("root").alias("root"))
            if self.manifests is not None:
                manifests = manifests.join(self.manifests, "name", "left_anti")
            manifests = manifests.localCheckpoint(eager=True)
            seen = manifests.select("name")
            self.manifests = seen if self.manifests is None else self.manifests.union(seen).localCheckpoint(eager=True)
            sc.setJobDescription(f"orphan clean {table.name}: read manifests")
            data = manifests.repartition(self.parallelism).rdd.mapPartitions(
                cpu.partitions(lambda rows: _manifest_rows(rows, reader, b_roots))
            )
            referenced = named.select("name").union(spark.createDataFrame(data, "name string"))
            return referenced.localCheckpoint(eager=True)
        except OrphanCleanAbortedError:
            raise
        except Exception as e:
            raise OrphanCleanAbortedError(
                f"Orphan clean of {table.name} aborted, nothing deleted: cannot read what the table references: "
                f"{_cause(e)}",
                table=table.name,
            ) from e

    def close(self) -> None:
        for b in self._broadcasts:
            b.unpersist()


def clean_table_distributed(
    spark: SparkSession, table: FileStoreTable, *, cutoff: int, dry_run: bool, parallelism: int
) -> OrphanFilesCleanResult:
    """Orphan clean of one table on the cluster (``cutoff`` already validated)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    from spark_jobs.common.ledger import worker_cpu

    sc = spark.sparkContext
    cpu = worker_cpu(spark)  # the workers' CPU, for the ledger row
    branches = valid_branches(table.file_io, table.path)
    dirs = plan_candidate_dirs(table.store, branches)
    # 1. Candidates first, materialized with their lineage cut: never re-listed later.
    sc.setJobDescription(f"orphan clean {table.name}: list {len(dirs)} directories")
    listing = sc.parallelize(list(enumerate(dirs)), _slices(len(dirs), parallelism)).flatMap(cpu.each(_list_dir))
    candidates = spark.createDataFrame(listing, _CANDIDATES).localCheckpoint(eager=True)
    # 2. Then what commits in flight announce and what is referenced: a commit that landed
    # meanwhile is seen.
    refs = _References(spark, table, parallelism, cpu)
    trash = None if dry_run else _trash_plan(table, dirs)
    # Files earlier runs left in the trash (they died before deleting): listed before the reads,
    # whose verdict then holds for them too.
    leftovers = [] if trash is None else _leftovers(trash)
    try:
        pending = read_pending(table.file_io, table.path)
        referenced = refs.read(branches)
        # 3. Orphans: candidates nobody references or announces, older than the cutoff.
        sc.setJobDescription(f"orphan clean {table.name}: find orphans")
        orphans = (
            candidates.join(referenced, "name", "left_anti")
            .where((F.col("mtime") < F.lit(cutoff)) & _not_pending(pending))
            .localCheckpoint(eager=True)
        )
        count, size = _count(orphans)
        sample = tuple(
            r["path"] for r in orphans.select("path").orderBy("path").limit(MAX_REPORTED_PATHS).collect()
        )
        scanned = candidates.count()
        if trash is not None and (count or leftovers):
            count, size, sample = _delete_safely(
                spark, table, trash, orphans, leftovers, referenced, refs, parallelism, cpu
            )
    finally:
        refs.close()
        sc.setJobDescription(None)  # type: ignore[arg-type]
    logger.info(
        "Orphan clean of %s%s: %d of %d files (%d bytes) %s",
        table.name,
        " (dry run)" if dry_run else "",
        count,
        scanned,
        size,
        "found" if dry_run else "deleted",
    )
    return OrphanFilesCleanResult(table.name, sample, count, size, scanned, cutoff, dry_run)


def _count(df: DataFrame) -> tuple[int, int]:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    found = df.agg(F.count(F.lit(1)).alias("n"), F.coalesce(F.sum("size"), F.lit(0)).alias("b")).first()
    return (int(found["n"]), int(found["b"])) if found is not None else (0, 0)


def _trash_plan(table: FileStoreTable, dirs: list[CandidateDir]) -> _TrashPlan:
    roots = (table.path,)  # candidates are never outside the table directory
    ios = tuple(candidate_io(dirs, r, table.file_io) for r in roots)
    for root, io in zip(roots, ios, strict=True):
        check_trash_root(io, root)
    return _TrashPlan(new_run_id(), roots, ios, tuple(dirs))


def _leftovers(plan: _TrashPlan) -> list[tuple[str, str, str, int, int, int]]:
    return [
        (t.name, t.original, t.trash, t.size, -1, k)
        for k, (root, io) in enumerate(zip(plan.roots, plan.ios, strict=True))
        for t in list_trash(io, root, exclude_run=plan.run_id)
    ]


def _delete_safely(
    spark: SparkSession,
    table: FileStoreTable,
    plan: _TrashPlan,
    orphans: DataFrame,
    leftovers: list[tuple[str, str, str, int, int, int]],
    referenced: DataFrame,
    refs: _References,
    parallelism: int,
    cpu: WorkerCpu,
) -> tuple[int, int, tuple[str, ...]]:
    """The protocol of :meth:`OrphanFilesClean.delete_safely` on the cluster: executors move the
    orphans into this run's trash; the driver reads the announcements, then the roots that
    appeared since (their new manifests on executors); executors move back what is referenced
    now (``leftovers`` of earlier runs: also what the first read, ``referenced``, found) and
    delete the rest. Returns (files, bytes, first paths) deleted."""
    sc = spark.sparkContext
    b_plan = sc.broadcast(plan)
    try:
        sc.setJobDescription(f"orphan clean {table.name}: move orphans aside")
        moved_rdd = orphans.repartition(parallelism, "dir_id").rdd.mapPartitions(
            cpu.partitions(lambda rows: _move_rows(rows, b_plan))
        )
        moved = spark.createDataFrame(moved_rdd, _TRASHED)
        if leftovers:
            moved = moved.union(spark.createDataFrame(leftovers, _TRASHED))
        moved = moved.localCheckpoint(eager=True)
        try:
            pending = read_pending(table.file_io, table.path)
            again = refs.read([MAIN_BRANCH, *list_branches(table.file_io, table.path)]).union(referenced)
            back = moved.join(again.distinct(), "name", "left_semi").union(moved.where(~_not_pending(pending)))
            back = back.distinct().localCheckpoint(eager=True)
        except Exception:
            sc.setJobDescription(f"orphan clean {table.name}: move everything back")
            undone = moved.repartition(parallelism).rdd.mapPartitions(lambda rows: _restore_rows(rows, b_plan))
            logger.error("Orphan clean of %s: the second read failed; moved %d files back", table.name,
                         sum(n for (n,) in undone.collect()))  # fmt: skip
            raise
        if not back.isEmpty():
            sc.setJobDescription(f"orphan clean {table.name}: move back files referenced meanwhile")
            restored = back.repartition(parallelism).rdd.mapPartitions(lambda rows: _restore_rows(rows, b_plan))
            logger.warning("Orphan clean of %s: %d moved files became referenced meanwhile (a commit landed); "
                           "moved back", table.name, sum(n for (n,) in restored.collect()))  # fmt: skip
        rest = moved.join(back.select("trash"), "trash", "left_anti").localCheckpoint(eager=True)
        sc.setJobDescription(f"orphan clean {table.name}: delete")
        done = rest.repartition(parallelism, "dir_id").rdd.mapPartitions(
            cpu.partitions(lambda rows: _purge_rows(rows, b_plan))
        ).collect()
        sample = tuple(r["path"] for r in rest.select("path").orderBy("path").limit(MAX_REPORTED_PATHS).collect())
        for root, io in zip(plan.roots, plan.ios, strict=True):
            prune_trash(io, root)
        return sum(c for c, _ in done), sum(b for _, b in done), sample
    finally:
        b_plan.unpersist()


def _slices(n: int, parallelism: int) -> int:
    return max(1, min(n, parallelism))


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------


def _catalog(plan: OrphanCleanPlan) -> FileSystemCatalog:
    return FileSystemCatalog(plan.config.warehouse, storage_options=dict(plan.config.storage_options) or None)


def _table_names(catalog: FileSystemCatalog, plan: OrphanCleanPlan) -> list[str]:
    if plan.all_tables:
        return [f"{plan.database}.{t}" for t in catalog.list_tables(plan.database)]
    return [plan.config.table]


def run(spark: SparkSession | None, plan: OrphanCleanPlan) -> dict[str, Any]:
    """Clean with an existing session (None for ``--mode local``); returns the JSON-safe result.

    With ``DB.*`` a table that fails does not stop the others; the first failure is then
    raised as :class:`OrphanCleanAbortedError` naming every failed table; a table whose kind
    paimon_core refuses is skipped and listed (see the module docstring). Each table is one row
    of the warehouse's maintenance ledger (:mod:`spark_jobs.common.ledger`).
    """
    started = time.monotonic()
    catalog = _catalog(plan)
    cutoff = resolve_older_than(plan.older_than, catalog.clock.now_millis(), force=plan.force)
    names = _table_names(catalog, plan)
    results: list[OrphanFilesCleanResult] = []
    skipped: list[SkippedTable] = []
    failed: dict[str, PaimonError] = {}
    for name in names:
        try:
            with job_recording(plan.config, name, JOB, catalog=catalog, dry_run=plan.dry_run) as recording:
                # DB.*: a refused table is skipped; named alone (DB.T), it is refused
                table = open_or_skip(catalog, name, recording) if plan.all_tables else catalog.get_table(name)
                if isinstance(table, SkippedTable):
                    skipped.append(table)
                    continue
                recording.set_table(table)
                if plan.mode == "local" or spark is None:
                    clean = OrphanFilesClean(table.store, parallelism=plan.parallelism or 8)
                    result = clean.clean(older_than=cutoff, dry_run=plan.dry_run, force=True)
                else:
                    parallelism = plan.parallelism or spark.sparkContext.defaultParallelism
                    result = clean_table_distributed(
                        spark, table, cutoff=cutoff, dry_run=plan.dry_run, parallelism=parallelism
                    )
                recording.set_result(result)
            results.append(result)
        except PaimonError as e:
            if not plan.all_tables:
                raise
            logger.error("Orphan clean of %s failed: %s", name, e)
            failed[name] = e
    if failed:
        raise OrphanCleanAbortedError(
            f"Orphan clean failed for {sorted(failed)}; {len(results)} other table(s) done: "
            + "; ".join(f"{t}: {e}" for t, e in sorted(failed.items())),
            tables=sorted(failed),
        ) from next(iter(failed.values()))
    total = combine_results(results, table=plan.config.table)
    counts = ("table", "deleted_file_count", "deleted_bytes", "candidates_scanned")
    tables = [{"status": "ok", **{k: r.to_dict()[k] for k in counts}} for r in results]
    return {
        "job": JOB,
        "status": "ok",
        "mode": plan.mode,
        **total.to_dict(),
        "older_than_millis": cutoff,
        "dry_run": plan.dry_run,
        "tables": sorted([*tables, *(s.to_dict() for s in skipped)], key=lambda t: str(t["table"])),
        "skipped_tables": [s.table for s in skipped],
        "seconds": round(time.monotonic() - started, 3),
    }


def _body(ctx: JobContext[OrphanCleanPlan]) -> Mapping[str, Any]:
    """``--mode local`` in this process; else the database is checked first (a missing one fails
    before a JVM starts), then the clean runs on Spark."""
    plan = ctx.args
    if plan.mode == "local":
        return run(None, plan)
    _table_names(_catalog(plan), plan)  # a missing database fails here, before a JVM starts
    return run(ctx.spark(), plan)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, clean, print one JSON line; returns the exit code (0 ok, 2 bad
    arguments, 3 failed, 75 failed but retryable).

    A session this call creates is stopped at the end; one that was already active (a
    notebook, a test run) is reused and left running.
    """
    return run_job(JOB, argv, parse_args, _body, needs_spark=True, ledger="tables")


if __name__ == "__main__":
    sys.exit(main())
