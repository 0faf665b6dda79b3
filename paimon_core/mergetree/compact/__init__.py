"""LSM compaction planning for primary-key tables (Java ``org.apache.paimon.mergetree.compact``).

Pure policy, no I/O: strategies pick a :class:`CompactUnit` from ``Levels.level_sorted_runs()``;
:func:`plan_compact_task` turns a unit into ordered upgrade/rewrite steps for an executor.
"""

from __future__ import annotations

from paimon_core.mergetree.compact.compact_options import (
    compact_strategy_from_options,
    compaction_file_size,
    force_keep_delete,
    need_lookup,
    num_levels,
    num_sorted_run_stop_trigger,
)
from paimon_core.mergetree.compact.compact_strategy import (
    CompactStrategy,
    filter_trivial_unit,
    pick_full_compaction,
)
from paimon_core.mergetree.compact.compact_task_plan import (
    CompactStep,
    RewriteStep,
    UpgradeStep,
    drop_delete,
    plan_compact_task,
)
from paimon_core.mergetree.compact.compact_unit import CompactUnit
from paimon_core.mergetree.compact.early_full_compaction import (
    EarlyFullCompaction,
    estimate_last_full_compaction_time,
)
from paimon_core.mergetree.compact.force_up_level0 import ForceUpLevel0Compaction
from paimon_core.mergetree.compact.interval_partition import interval_partition
from paimon_core.mergetree.compact.off_peak_hours import OffPeakHours
from paimon_core.mergetree.compact.universal_compaction import UniversalCompaction

__all__ = [
    "CompactStep",
    "CompactStrategy",
    "CompactUnit",
    "EarlyFullCompaction",
    "ForceUpLevel0Compaction",
    "OffPeakHours",
    "RewriteStep",
    "UniversalCompaction",
    "UpgradeStep",
    "compact_strategy_from_options",
    "compaction_file_size",
    "drop_delete",
    "estimate_last_full_compaction_time",
    "filter_trivial_unit",
    "force_keep_delete",
    "interval_partition",
    "need_lookup",
    "num_levels",
    "num_sorted_run_stop_trigger",
    "pick_full_compaction",
    "plan_compact_task",
]
