"""Spark's Python worker daemon, with paimon_core and the ``paimon`` data source imported up front.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module> <worker module>``,
default ``pyspark.daemon``) and forks every Python worker from it. A worker imports what its task
needs only after the fork, so every fresh worker spent over a second importing: pyspark from
``pyspark.zip`` on the workers' ``PYTHONPATH`` (a zip without bytecode: zipimport compiles every
module on every import) and paimon_core with its dependencies. This module imports all of that
once, in the daemon, then runs ``pyspark.daemon``'s own loop: forked workers start with the
modules loaded (shared copy-on-write).

:func:`spark_jobs.common.session.get_spark` sets ``spark.python.daemon.module`` to this module
unless the user set that conf. Preloading never stops the daemon: a module that fails to import
is skipped (the worker imports it itself, as before). Nothing is written to stdout before
``pyspark.daemon`` writes its port there (Spark reads it).

Fork safety: pyspark imports its worker after the fork because pyarrow and numpy start threads
at import (jemalloc's background thread, OpenBLAS' pool); both register fork handlers (the
standard ``fork`` start method of multiprocessing relies on the same), and Arrow's CPU pool is
only started by compute calls, which importing does not make.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["DAEMON_ENV", "PRELOAD", "main", "preload", "prefer_installed_pyspark"]

#: Set in the daemon to its pid; workers inherit it (tests and diagnostics: "forked from us").
DAEMON_ENV = "PAIMON_SPARK_DAEMON_PID"

#: Imported before the first fork: what the paimon data source's tasks and Spark's Python
#: workers (UDFs, Arrow UDFs, data source planning/writing/committing) import.
PRELOAD: tuple[str, ...] = (
    "numpy",
    "pyarrow",
    "pyarrow.compute",
    "pyarrow.dataset",
    "pyarrow.parquet",
    "pyspark.worker",
    "pyspark.sql.worker.create_data_source",
    "pyspark.sql.worker.plan_data_source_read",
    "pyspark.sql.worker.write_into_data_source",
    "pyspark.sql.worker.commit_data_source_write",
    "pyspark.sql.worker.python_streaming_sink_runner",
    "paimon_core",
    "paimon_core.table.table_write",
    "paimon_core.table.table_read",
    "paimon_core.mergetree.writer",
    "paimon_core.mergetree.merge_function",
    "paimon_core.operation.commit.committer",
    "spark_jobs.datasource",
    "spark_jobs.datasource.paimon_source",
    "spark_jobs.datasource.stream_writer",
    "spark_jobs.datasource.stream_reader",
)

#: The modules :func:`main` imported in this daemon (empty outside a daemon).
PRELOADED: tuple[str, ...] = ()


def prefer_installed_pyspark(path: list[str] | None = None) -> list[str]:
    """Move ``pyspark.zip`` / ``py4j-*.zip`` entries of ``path`` (default ``sys.path``) that lie
    inside the installed ``pyspark`` package to its end, so imports use the installed copy of
    the same files (with compiled bytecode) instead of compiling them from the zip.

    Only zips shipped inside the importable pyspark package are moved (same release by
    construction); a ``SPARK_HOME`` distribution elsewhere keeps its precedence. Returns the
    entries moved. Must run before pyspark is imported.
    """
    entries = sys.path if path is None else path
    installed = _installed_pyspark_dir(entries)
    if installed is None:
        return []
    lib = os.path.join(installed, "python", "lib") + os.sep
    moved = [p for p in entries if p.endswith(".zip") and os.path.abspath(p).startswith(lib)]
    for p in moved:
        entries.remove(p)
    entries.extend(moved)
    return moved


def _installed_pyspark_dir(entries: Sequence[str]) -> str | None:
    for entry in entries:
        if not entry or entry.endswith(".zip"):
            continue
        candidate = os.path.join(os.path.abspath(entry), "pyspark")
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    return None


def preload(modules: Sequence[str] = PRELOAD) -> tuple[str, ...]:
    """Import ``modules`` (skipping any that fail); return those imported. Output of imports goes
    to stderr: the daemon's stdout carries its port to Spark."""
    loaded: list[str] = []
    with contextlib.redirect_stdout(sys.stderr):
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as e:  # never stop the daemon: the worker imports it itself
                print(f"spark_jobs.daemon: not preloading {name}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            loaded.append(name)
    return tuple(loaded)


def main() -> None:
    """Preload, then run ``pyspark.daemon``'s manager (argv[1], if any, is Spark's worker module)."""
    global PRELOADED
    prefer_installed_pyspark()
    worker_module = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].startswith("pyspark") else None
    PRELOADED = preload((*PRELOAD, worker_module) if worker_module else PRELOAD)
    os.environ[DAEMON_ENV] = str(os.getpid())
    from pyspark import daemon

    daemon.manager()


if __name__ == "__main__":
    main()
