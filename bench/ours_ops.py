"""Our side of each measurement: one operation with paimon_core, in a fresh process.

    python -m bench.ours_ops '{"op": "read", "warehouse": "/w", "table": "db.t", "mode": "table"}'

Imports (all of paimon_core, including the modules the library imports lazily, as the peers'
extension modules load whole), opening the catalog/table and loading the input Parquet happen
before the timer; only the operation itself is timed (see :class:`bench.sidekit.Stopwatch`). Ops:

* ``write`` {warehouse, table, input}: write the rows and commit once (phases ``write``, ``commit``).
* ``read`` {warehouse, table, mode: table|stream, filter, pruning_baseline}: plan and read
  (``table``: everything into one Arrow table; ``stream``: ``to_arrow_batch_reader``, only counted).
* ``plan`` {warehouse, table}: scan to splits, no data read.
* ``expire`` {warehouse, table, retain_max, retain_min, max_deletes, older_than}:
  ``table.maintenance.expire_snapshots(...)``; ``orphan_clean`` {warehouse, table, older_than}:
  ``table.maintenance.remove_orphan_files(older_than=..., force=True)``. Both answer ``result``, the call's
  result as a dict with every collection replaced by its size.
* ``compact`` {warehouse, table, options, dry_run, compact_strategy, parallelism}: ``table.maintenance.compact(...)``,
  timed as one call; phases split it by timing the steps inside (``plan``: the planner,
  ``rewrite``: the task executor, ``commit``: the snapshot commit, ``maintain``: post-commit
  maintenance, ``summary``: the result's per-bucket summary, ``other``: the rest). Answers
  ``result`` (summarized as above) and the dry-run plan's totals (``plan_tasks``,
  ``plan_input_files``, ``plan_input_bytes``, ``plan_input_rows``).

* ``process`` {argv}: a whole child process ``python <argv>`` (e.g. ``-m spark_jobs expire_snapshots
  ...``), timed from outside: its wall time and, from ``RUSAGE_CHILDREN``, its CPU time; answers
  the job's JSON line as ``result``.

A ``filter`` is a list of ``[op, field, value]`` conjuncts, op one of ``= < <= > >=``.
"""

from __future__ import annotations

import contextlib
import cProfile
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow.parquet as pq

from bench.sidekit import Checksum, Stopwatch, serve, stream_read, table_checksum
from paimon_core import FileStoreTable, FileSystemCatalog, Predicate
from paimon_core.table.builders import ReadBuilder
from paimon_core.table.source import DataSplit


def _preload() -> None:
    """Import every paimon_core module now, so no run times a first import."""
    import importlib
    import pkgutil

    import paimon_core

    for info in pkgutil.walk_packages(paimon_core.__path__, "paimon_core."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    # Third-party modules paimon_core imports on first use (pyarrow.dataset on the first Parquet
    # read, fsspec for a remote FileIO), so metadata-only processes never pay for them.
    for name in ("pyarrow.dataset", "fsspec"):
        importlib.import_module(name)


_preload()


def _table(spec: dict[str, Any]) -> FileStoreTable:
    return FileSystemCatalog(spec["warehouse"]).get_table(spec["table"])


def _predicate(rb: ReadBuilder, conjuncts: Sequence[Sequence[Any]]) -> Predicate:
    pb = rb.new_predicate_builder()
    makers = {"=": pb.equal, "<": pb.less_than, "<=": pb.less_or_equal, ">": pb.greater_than,
              ">=": pb.greater_or_equal}
    preds = [makers[op](field, value) for op, field, value in conjuncts]
    return preds[0] if len(preds) == 1 else pb.and_(*preds)


def _read_builder(table: FileStoreTable, conjuncts: Sequence[Sequence[Any]] | None) -> ReadBuilder:
    rb = table.new_read_builder()
    return rb.with_filter(_predicate(rb, conjuncts)) if conjuncts else rb


def _plan_info(splits: Sequence[DataSplit]) -> dict[str, int]:
    return {"splits": len(splits), "files": sum(len(s.files) for s in splits),
            "rows": sum(s.row_count for s in splits)}


def op_write(spec: dict[str, Any]) -> dict[str, Any]:
    data = pq.read_table(spec["input"])
    table = _table(spec)
    sw = Stopwatch()
    with sw.phase("write"):
        builder = table.new_batch_write_builder()
        write = builder.new_write()
        write.write_arrow(data)
        messages = write.prepare_commit()
    with sw.phase("commit"):
        result = builder.new_commit().commit(messages)
    return sw.result(rows=data.num_rows, snapshot_id=result.snapshot_id,
                     files_written=sum(len(m.new_files) for m in messages))


def op_read(spec: dict[str, Any]) -> dict[str, Any]:
    table = _table(spec)
    conjuncts = spec.get("filter")
    sw = Stopwatch()
    acc = Checksum()
    with sw.phase("plan"):
        rb = _read_builder(table, conjuncts)
        splits = rb.new_scan().plan().splits
    if spec.get("mode", "table") == "stream":
        streamed = stream_read(lambda: rb.new_read().to_arrow_batch_reader(splits), sw)
    else:
        with sw.phase("read"):
            out = rb.new_read().to_arrow(splits)
        acc.add(out)
        streamed = {"rows": acc.rows, "checksum": acc.result()}
    result = sw.result(plan=_plan_info(splits), **streamed)
    if spec.get("pruning_baseline"):
        result["plan_unfiltered"] = _plan_info(table.new_read_builder().new_scan().plan().splits)
    return result


def op_plan(spec: dict[str, Any]) -> dict[str, Any]:
    table = _table(spec)
    sw = Stopwatch()
    with sw.phase("plan"):
        splits = table.new_read_builder().new_scan().plan().splits
    # splits make their DataFileMeta objects on first access: what making every one costs on
    # top of the plan (not a phase: the peers' plans are opaque, their file objects not counted)
    t0 = time.perf_counter()
    info = _plan_info(splits)
    return sw.result(rows=info["rows"], checksum={"files": info["files"], "rows": info["rows"]}, plan=info,
                     every_file_object_s=round(time.perf_counter() - t0, 6))


def summarize(result: Any) -> dict[str, Any]:
    """A maintenance result as a small dict: ``to_dict()`` with collections replaced by their sizes."""
    doc: dict[str, Any] = result.to_dict()
    return {k: len(v) if isinstance(v, (list, tuple, set, frozenset, dict)) else v for k, v in doc.items()}


def op_expire(spec: dict[str, Any]) -> dict[str, Any]:
    table = _table(spec)
    sw = Stopwatch()
    with sw.phase("expire"):
        result = table.maintenance.expire_snapshots(retain_max=spec["retain_max"], retain_min=spec["retain_min"],
                                        max_deletes=spec["max_deletes"], older_than=spec["older_than"])
    return sw.result(result=summarize(result))


def op_orphan_clean(spec: dict[str, Any]) -> dict[str, Any]:
    table = _table(spec)
    sw = Stopwatch()
    with sw.phase("clean"):
        result = table.maintenance.remove_orphan_files(older_than=spec["older_than"], force=True, dry_run=False)
    return sw.result(result=summarize(result))


@contextlib.contextmanager
def _compact_phases() -> Iterator[dict[str, float]]:
    """Time the steps of ``table.maintenance.compact()`` from outside: wrap the planner, the task executor, the
    commit, the post-commit maintenance and the result summary (restored on exit). The wrappers
    add one ``perf_counter`` pair per call; the code path is the public call's own."""
    from paimon_core.operation.commit import committer
    from paimon_core.operation.compact import compact_planner, table_compact

    timings: dict[str, float] = {}

    def timed(phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                timings[phase] = timings.get(phase, 0.0) + time.perf_counter() - t0
        return run

    real_executor = table_compact.local_executor
    patches = [
        (compact_planner.CompactPlanner, "plan", timed("plan", compact_planner.CompactPlanner.plan)),
        (table_compact, "local_executor", lambda parallelism=None: timed("rewrite", real_executor(parallelism))),
        (committer.FileStoreCommit, "commit", timed("commit", committer.FileStoreCommit.commit)),
        (table_compact, "maintain_after_commit", timed("maintain", table_compact.maintain_after_commit)),
        (table_compact.TableCompact, "_bucket_summaries", timed("summary", table_compact.TableCompact._bucket_summaries)),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, fn in patches:
        setattr(owner, name, fn)
    try:
        yield timings
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)


def op_compact(spec: dict[str, Any]) -> dict[str, Any]:
    table = _table(spec)
    kwargs = {k: spec[k] for k in ("compact_strategy", "options", "parallelism", "dry_run") if spec.get(k) is not None}
    sw = Stopwatch()
    with _compact_phases() as timings, sw.phase("compact"):
        result = table.maintenance.compact(**kwargs)
    total = sw.phases.pop("compact")
    sw.phases = {k: v for k, v in timings.items() if v > 0}
    sw.phases["other"] = max(0.0, total - sum(sw.phases.values()))
    plan = list(result.plan)
    return sw.result(result=summarize(result), plan_tasks=len(plan),
                     plan_input_files=sum(t["input_files"] for t in plan),
                     plan_input_bytes=sum(t["input_bytes"] for t in plan),
                     plan_input_rows=sum(t["input_rows"] for t in plan))


def op_process(spec: dict[str, Any]) -> dict[str, Any]:
    """A whole child process ``python <argv>`` (e.g. ``-m spark_jobs expire_snapshots ...``): its wall
    time and CPU time (from ``RUSAGE_CHILDREN``); answers the job's JSON line as ``result``."""
    import json
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *spec["argv"]], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr[-2000:]}{proc.stdout[-2000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    doc = json.loads(line)
    sw = Stopwatch()
    sw.add("process", wall)
    sw.user_seconds = after.ru_utime - before.ru_utime
    sw.sys_seconds = after.ru_stime - before.ru_stime
    return sw.result(result={k: len(v) if isinstance(v, (list, dict)) else v for k, v in doc.items()},
                     child_peak_rss_mb=after.ru_maxrss / 1024)


def op_checksum(spec: dict[str, Any]) -> dict[str, Any]:
    """Untimed helper: the checksum of a whole table as we read it."""
    return {"checksum": table_checksum(_table(spec).to_arrow())}


def profiled(handler: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """With ``spec["profile"]`` set, run the op under cProfile and dump the stats there.

    For diagnosis only (``python -m bench.run --profile-ours DIR``): profiling slows the op down.
    cProfile sees the main thread only; time spent waiting for worker threads shows up as
    ``acquire`` of a lock.
    """

    def run(spec: dict[str, Any]) -> dict[str, Any]:
        target = spec.get("profile")
        if not target:
            return handler(spec)
        prof = cProfile.Profile()
        prof.enable()
        try:
            return handler(spec)
        finally:
            prof.disable()
            prof.dump_stats(target)

    return run


HANDLERS = {name: profiled(h) for name, h in
            {"write": op_write, "read": op_read, "plan": op_plan, "checksum": op_checksum, "expire": op_expire,
             "orphan_clean": op_orphan_clean, "compact": op_compact, "process": op_process}.items()}

if __name__ == "__main__":
    sys.exit(serve(HANDLERS))
