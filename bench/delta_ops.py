"""The delta-rs side of the delta cases (``bench/cases_delta.py``); runs INSIDE the peer virtualenv.

    <peers-venv>/bin/python bench/delta_ops.py '{"op": "compact", "path": "/run/delta", ...}'

Imports only the standard library, pyarrow (19 there), ``deltalake`` (delta-rs, pinned in
tests/interop/requirements-peers.txt) and the sibling ``sidekit.py``. Timed ops (a fresh process
per run, as every side; the import is outside the timer):

* ``compact`` {path, target_size, zstd_level}: ``DeltaTable(path)`` (phase ``open``: the log replay,
  which is what our compaction's plan reads from snapshot and manifests) then
  ``dt.optimize.compact(target_size=..., writer_properties=zstd(level))`` (phase ``compact``);
  answers the optimize metrics.
* ``vacuum`` {path, retention_hours, full (default true)}: ``DeltaTable(path)`` (``open``) then
  ``dt.vacuum(retention_hours=..., enforce_retention_duration=False, dry_run=False, full=True)``
  (``vacuum``); answers the number of files it deleted. ``full=True`` is the mode that removes
  files the log never referenced (the default "lite" mode only removes files the log removed).

Untimed fixture builders (called once by the case's setup):

* ``build_append`` {path, input, commits, partition_by, zstd_level}: the input in ``commits``
  slices of ascending ids, one ``write_deltalake(mode="append")`` each (delta-rs's own writer).
* ``build_adds`` {path, commits_file}: a Delta table (schema id int64, dt string, v double,
  s string, partitioned by dt) whose log adds files that are already in place (the same files
  as a Paimon table's, hard-linked at the same relative paths): one commit per list of
  ``{path, size, dt, mtime_ms, rows}`` via ``create_write_transaction``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

try:  # run as a script: this directory is sys.path[0]
    from sidekit import Stopwatch, serve  # type: ignore[import-not-found]
except ImportError:  # imported as bench.delta_ops (e.g. by a linter or a test)
    from bench.sidekit import Stopwatch, serve

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])


def _writer_properties(level: int) -> Any:
    from deltalake import WriterProperties  # type: ignore[import-not-found]

    return WriterProperties(compression="ZSTD", compression_level=level)


def op_build_append(spec: dict[str, Any]) -> dict[str, Any]:
    from deltalake import write_deltalake

    data = pq.read_table(spec["input"])
    commits = int(spec["commits"])
    step = -(-data.num_rows // commits)
    props = _writer_properties(int(spec.get("zstd_level", 1)))
    for start in range(0, data.num_rows, step):
        write_deltalake(spec["path"], data.slice(start, step), mode="append",
                        partition_by=list(spec.get("partition_by") or []) or None, writer_properties=props)
    return {"commits": commits, "rows": data.num_rows}


def op_build_adds(spec: dict[str, Any]) -> dict[str, Any]:
    from deltalake import DeltaTable
    from deltalake.transaction import AddAction  # type: ignore[import-not-found]

    with open(spec["commits_file"], encoding="utf-8") as f:
        commits = json.load(f)
    table = DeltaTable.create(spec["path"], SCHEMA, partition_by=["dt"])
    files = 0
    for files_of_commit in commits:
        actions = [AddAction(path=a["path"], size=int(a["size"]), partition_values={"dt": a["dt"]},
                             modification_time=int(a["mtime_ms"]), data_change=True,
                             stats=json.dumps({"numRecords": int(a["rows"])}))
                   for a in files_of_commit]
        table.create_write_transaction(actions, mode="append", schema=SCHEMA, partition_by=["dt"])
        files += len(actions)
    return {"commits": len(commits), "files": files, "version": DeltaTable(spec["path"]).version()}


def op_compact(spec: dict[str, Any]) -> dict[str, Any]:
    from deltalake import DeltaTable

    props = _writer_properties(int(spec.get("zstd_level", 1)))
    sw = Stopwatch()
    with sw.phase("open"):
        table = DeltaTable(spec["path"])
    with sw.phase("compact"):
        metrics = table.optimize.compact(target_size=int(spec["target_size"]), writer_properties=props)
    summary = {k: v for k, v in dict(metrics).items() if not isinstance(v, (dict, list))}
    return sw.result(result=summary, version=table.version())


def op_vacuum(spec: dict[str, Any]) -> dict[str, Any]:
    from deltalake import DeltaTable

    sw = Stopwatch()
    with sw.phase("open"):
        table = DeltaTable(spec["path"])
    with sw.phase("vacuum"):
        deleted = table.vacuum(retention_hours=int(spec["retention_hours"]), dry_run=False,
                               enforce_retention_duration=False, full=bool(spec.get("full", True)))
    return sw.result(result={"deleted_file_count": len(deleted)})


def op_info(spec: dict[str, Any]) -> dict[str, Any]:
    from importlib import metadata

    return {"python": sys.version.split()[0],
            "versions": {"pyarrow": pa.__version__, "deltalake": metadata.version("deltalake")}}


HANDLERS = {"build_append": op_build_append, "build_adds": op_build_adds, "compact": op_compact,
            "vacuum": op_vacuum, "info": op_info}

if __name__ == "__main__":
    sys.exit(serve(HANDLERS))
