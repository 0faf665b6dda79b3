"""``compact_manifest``: full manifest compaction of a table (Paimon's ``CALL sys.compact_manifest``).

::

    python -m spark_jobs compact_manifest --warehouse W --table db.t [--options 'k=v,...'] [--dry-run]

Merges the latest snapshot's data manifests into few (ADD/DELETE pairs cancelled, small manifests
rewritten together) and commits them as a COMPACT snapshot whose delta is empty; data files are
untouched (:class:`paimon_core.operation.manifest_compact.ManifestCompact`). ``options``: dynamic
table options for this run (e.g. ``manifest.target-file-size=16mb``). ``--dry-run`` reports the
manifests and entries it would merge and changes nothing.

A driver-only metadata procedure: no Spark session is started (see
:mod:`spark_jobs.common.procedure`). Prints one JSON line with the core result
(snapshot_id, manifests_before/after, entries_before, live_files, bytes_before/after ...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "compact_manifest"
PARAMS = (Param("options", "str", "dynamic table options for this run: 'k=v,k2=v2'"),)


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    return parse_procedure_args(JOB, "Compact the manifests of a Paimon table.", PARAMS, argv, dry_run=True)


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    from spark_jobs.compact import _options

    options = _options(args.get("options"))
    if options:
        table = table.copy(options)
    return result_dict(table.compact_manifest(dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 failed, 2 bad arguments)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
