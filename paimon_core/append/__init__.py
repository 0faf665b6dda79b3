"""Compaction of append tables (Java ``org.apache.paimon.append``).

Planning is pure: :mod:`.append_compact_coordinator` (unaware-bucket tables, Java
``AppendCompactCoordinator``) and :mod:`.bucketed_append_compact_manager` (fixed-bucket tables,
Java ``BucketedAppendCompactManager``). :mod:`.append_compact_rewriter` executes one planned unit
and returns its commit message (Java ``BaseAppendFileStoreWrite.compactRewrite``).
"""

from __future__ import annotations

from paimon_core.append.append_compact_coordinator import (
    COMPACT_AGE,
    REMOVE_AGE,
    AppendCompactConfig,
    AppendCompactCoordinator,
    AppendCompactTask,
    plan_unaware_bucket_compaction,
)
from paimon_core.append.append_compact_rewriter import rewrite_append_files
from paimon_core.append.append_deletion_index import DeletionIndex, DeletionIndexChanges
from paimon_core.append.bucketed_append_compact_manager import (
    FULL_COMPACT_MIN_FILE,
    BucketPick,
    order_by_sequence,
    pick_compact_before,
    pick_full_compaction,
)

__all__ = [
    "COMPACT_AGE",
    "FULL_COMPACT_MIN_FILE",
    "REMOVE_AGE",
    "AppendCompactConfig",
    "AppendCompactCoordinator",
    "AppendCompactTask",
    "BucketPick",
    "DeletionIndex",
    "DeletionIndexChanges",
    "order_by_sequence",
    "pick_compact_before",
    "pick_full_compaction",
    "plan_unaware_bucket_compaction",
    "rewrite_append_files",
]
