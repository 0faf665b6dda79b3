"""``compact_manifest``: full manifest compaction of a table (Paimon's ``CALL sys.compact_manifest``).

::

    python -m spark_jobs compact_manifest --warehouse W --table db.t [--options 'k=v,...'] [--dry-run] \\
        [--manifest_sort_enabled true --manifest_sort_partition_field dt --manifest_sort_max_rewrite_size '1 gb']

Merges the latest snapshot's data manifests into few (ADD/DELETE pairs cancelled, small manifests
rewritten together) and commits them as a COMPACT snapshot whose delta is empty; data files are
untouched (:class:`paimon_core.operation.manifest_compact.ManifestCompact`). ``options``: dynamic
table options for this run (e.g. ``manifest.target-file-size=16mb``). ``--dry-run`` reports the
manifests and entries it would merge and changes nothing.

With ``manifest-sort.enabled`` (the table's option, or ``--manifest_sort_enabled true``, Java's
procedure arguments) it is a full manifest sort: manifests rewritten sorted by the partition
field, non-overlapping, so a partition filter reads few of them; ``--dry-run`` then also reports
the sorted runs per level, the manifests and bytes it would sort, and the most manifests one
partition value falls in.

A driver-only metadata procedure: no Spark session is started (see
:mod:`spark_jobs.common.procedure`). Prints one JSON line with the core result
(snapshot_id, manifests_before/after, entries_before, live_files, bytes_before/after ...).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import parse_options
from spark_jobs.common.procedure import Param, ProcedureArgs, parse_procedure_args, result_dict, run_procedure

__all__ = ["JOB", "PARAMS", "call", "main", "parse_args"]

JOB = "compact_manifest"
PARAMS = (
    Param("options", "str", "dynamic table options for this run: 'k=v,k2=v2'"),
    Param("manifest_sort_enabled", "bool", "full manifest sort by a partition field for this run (Paimon 2.0)"),
    Param("manifest_sort_partition_field", "str", "the partition field to sort by (default: the first)"),
    Param("manifest_sort_max_rewrite_size", "str", "most manifest bytes one sort rewrites, e.g. '1 gb'"),
)

#: Java's ``CompactManifestProcedure`` arguments and the table options they set.
_SORT_OPTIONS = {
    "manifest_sort_enabled": "manifest-sort.enabled",
    "manifest_sort_partition_field": "manifest-sort.partition-field",
    "manifest_sort_max_rewrite_size": "manifest-sort.max-rewrite-size",
}


def parse_args(argv: Sequence[str]) -> ProcedureArgs:
    args = parse_procedure_args(JOB, "Compact the manifests of a Paimon table.", PARAMS, argv, dry_run=True)
    parse_options(args.get("options"))  # refused before the table is opened
    return args


def call(table: FileStoreTable, args: ProcedureArgs) -> Mapping[str, Any]:
    options = parse_options(args.get("options"))
    for arg, key in _SORT_OPTIONS.items():  # over --options, as Java's procedure
        value = args.get(arg)
        if value is not None:
            options[key] = str(value).lower() if isinstance(value, bool) else str(value)
    if options:
        table = table.copy(options)
    return result_dict(table.maintenance.compact_manifest(dry_run=args.dry_run))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad arguments, 3 failed, 75 failed but retryable)."""
    return run_procedure(JOB, argv, parse_args, call)


if __name__ == "__main__":
    sys.exit(main())
