"""A ledger row's status and metric columns from what an action reported (its result's ``to_dict()``).

Pure functions over JSON-safe dicts, one rule per action, so the same row comes out whichever
entry point ran the action (the table facade, a ``spark_jobs`` job's JSON line, an Airflow
operator's XCom value). Counts an action does not report stay null.

* ``files_read``/``bytes_read``: data files the action read (compaction and rescale input;
  manifests for ``compact_manifest``);
* ``files_written``/``bytes_written``/``rows_written``: files written (compaction output, merge
  and migrate files, ``_SUCCESS`` files of ``mark_partition_done``);
* ``files_deleted``/``bytes_deleted``: files removed from storage (expiry: data, changelog,
  manifest, index, statistics and snapshot files; orphan clean) or from the table's state
  (``expire_partitions``, ``remove_unexisting_files``: the files' entries).

``status``: ``dry_run`` when the call was a dry run, ``no_op`` when it changed nothing (expiry that
deleted nothing, an empty compaction plan, a retry whose commit had landed, a tag that exists),
else ``success``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["METRIC_COLUMNS", "metrics_of", "status_of"]

METRIC_COLUMNS = (
    "snapshot_before",
    "snapshot_after",
    "files_read",
    "bytes_read",
    "files_written",
    "bytes_written",
    "files_deleted",
    "bytes_deleted",
    "rows_written",
    "table_files",
    "table_bytes",
    "health_score",
)

Result = Mapping[str, Any]


def _int(r: Result, *keys: str) -> int | None:
    """Sum of the keys present (None if none is)."""
    vals = [r[k] for k in keys if isinstance(r.get(k), int | float) and not isinstance(r.get(k), bool)]
    return int(sum(vals)) if vals else None


def _len(r: Result, key: str) -> int:
    v = r.get(key)
    return len(v) if isinstance(v, list | tuple) else 0


def _compact(r: Result) -> dict[str, int | None]:
    return {
        "files_read": _int(r, "files_read"),
        "bytes_read": _int(r, "bytes_read"),
        "files_written": _int(r, "files_written"),
        "bytes_written": _int(r, "bytes_written"),
        "rows_written": _int(r, "rows_written"),
    }


_EXPIRED_FILES = (
    "deleted_data_files",
    "deleted_changelog_files",
    "deleted_manifest_files",
    "deleted_index_files",
    "deleted_statistics_files",
    "deleted_snapshot_files",
)


def _deleted(r: Result) -> dict[str, int | None]:
    return {"files_deleted": _int(r, *_EXPIRED_FILES), "bytes_deleted": _int(r, "deleted_bytes")}


def _expire_tags(r: Result) -> dict[str, int | None]:
    deletion = r.get("deletion")
    return _deleted(deletion) if isinstance(deletion, Mapping) else {}


def _orphans(r: Result) -> dict[str, int | None]:
    return {"files_deleted": _int(r, "deleted_file_count"), "bytes_deleted": _int(r, "deleted_bytes")}


def _compact_manifest(r: Result) -> dict[str, int | None]:
    return {
        "files_read": _int(r, "manifests_before"),
        "bytes_read": _int(r, "bytes_before"),
        "files_written": _int(r, "manifests_written"),
        "bytes_written": _int(r, "bytes_after"),
    }


def _merge_into(r: Result) -> dict[str, int | None]:
    rows = _int(r, "updated_rows", "inserted_rows", "kept_rows")
    return {
        "files_written": _int(r, "added_files"),
        "files_deleted": _int(r, "deleted_files"),
        "rows_written": rows,
    }


_METRICS: dict[str, Callable[[Result], dict[str, int | None]]] = {
    "compact": _compact,
    "sort_compact": _compact,
    "compact_database": _compact,
    "compact_manifest": _compact_manifest,
    "expire_snapshots": _deleted,
    "expire_changelogs": _deleted,
    "delete_tag": _deleted,
    "expire_tags": _expire_tags,
    "remove_orphan_files": _orphans,
    "remove_unexisting_files": lambda r: {"files_deleted": _int(r, "removed_files")},
    "expire_partitions": lambda r: {"files_deleted": _int(r, "deleted_files")},
    "mark_partition_done": lambda r: {"files_written": _len(r, "success_files")},
    "rescale": lambda r: {"files_read": _int(r, "files_before"), "rows_written": _int(r, "rows")},
    "merge_into": _merge_into,
    "migrate_table": lambda r: {"files_written": _int(r, "files"), "rows_written": _int(r, "rows")},
    "drop_partition": lambda r: {"files_deleted": _int(r, "deleted_files")},
    "purge_files": lambda r: {
        "files_deleted": _int(r, "deleted_data_files", "deleted_manifest_files", "deleted_orphan_files"),
        "bytes_deleted": _int(r, "deleted_bytes"),
    },
}


def metrics_of(action: str, result: Result) -> dict[str, int | None]:
    """The metric columns ``action`` reported in ``result`` (missing ones absent or None)."""
    fn = _METRICS.get(action)
    return {k: v for k, v in (fn(result) if fn else {}).items() if v is not None}


def _changed(action: str, r: Result) -> bool:
    """Whether the (non dry-run) action changed anything, from its result."""
    if r.get("already_committed") or r.get("done_before"):
        return False
    if action in ("compact", "sort_compact", "compact_database", "compact_manifest", "rescale", "merge_into"):
        return r.get("snapshot_id") is not None or bool(r.get("snapshot_ids")) or bool(r.get("commits"))
    if action == "expire_snapshots":
        return bool(r.get("expired_snapshot_ids"))
    if action == "expire_changelogs":
        return bool(r.get("expired_changelog_ids"))
    if action == "expire_tags":
        return bool(r.get("expired_tags"))
    if action == "delete_tag":
        return bool(r.get("deleted_tags"))
    if action == "expire_partitions":
        return bool(r.get("expired_partitions"))
    if action == "remove_orphan_files":
        return int(r.get("deleted_file_count") or 0) > 0
    if action == "remove_unexisting_files":
        return int(r.get("removed_files") or 0) > 0
    if action == "mark_partition_done":
        return bool(r.get("partitions"))
    if action == "trigger_tag_automatic_creation":
        return bool(r.get("created_tags") or r.get("expired_tags"))
    if action in ("create_tag", "create_branch"):
        return r.get("created", True) is not False
    if action == "clear_consumers":
        return bool(r.get("cleared_consumers"))
    if action == "reset_consumer":
        return bool(r.get("deleted")) or r.get("previous_next_snapshot_id") != r.get("next_snapshot_id")
    if action == "delete_branch":
        return bool(r.get("deleted_branches"))
    if action == "repair":
        return False  # a filesystem catalog has no metastore to sync
    if action in ("drop_partition", "merge_branch", "remove_unexisting_manifests"):
        return r.get("snapshot_id") is not None
    if action == "repair_earliest_snapshot":
        return r.get("previous_earliest_snapshot_id") != r.get("current_earliest_snapshot_id")
    if action == "rewrite_file_index":
        return int(r.get("rewritten_files") or 0) > 0
    if action in ("rollback_to", "rollback_to_timestamp", "rollback_to_watermark"):
        return bool(
            r.get("deleted_snapshot_ids") or r.get("deleted_tags") or r.get("deleted_changelogs")
        ) or (r.get("previous_snapshot_id") != r.get("current_snapshot_id"))
    if action == "rollback_to_as_latest":
        return r.get("previous_snapshot_id") != r.get("current_snapshot_id")
    return True


def status_of(action: str, result: Result, *, dry_run: bool = False) -> str:
    """``dry_run``, ``no_op`` or ``success`` for an action that returned ``result``."""
    if dry_run or result.get("dry_run") is True:
        return "dry_run"
    return "success" if _changed(action, result) else "no_op"
