"""The maintenance settings of one table: the registry's knobs and what the planner needs on top.

:class:`MaintenanceSettings` takes the registry's per-table settings (``dags/_paimon_registry.py``
``TableSettings``: ``compaction``, ``compaction_mode``, ``snapshot_retain_max/min``,
``tag_period``, ``tag_retention``, ``orphan_min_age_days``, ``partition_idle_time``,
``partition_expiration_time``) plus the planner's own: how often orphan cleanup and expiry run,
the compaction debt a table may carry, whether compactions wait for the table's off-peak hours,
and the size above which a compaction goes to Spark instead of the task process.

Durations are Paimon durations (``'1 d'``, ``'12 h'``, ``'30 min'``) or millis; a bad value is an
:class:`~paimon_core.exceptions.InvalidArgumentError` naming the setting, raised when the settings
are built (:meth:`MaintenanceSettings.from_mapping` or the constructor).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paimon_core.exceptions import InvalidArgumentError, PaimonError
from paimon_core.results import _ToDict

__all__ = [
    "COMPACTIONS",
    "COMPACTION_MODES",
    "DEFAULT_IN_PROCESS_MAX_BYTES",
    "TAG_PERIODS",
    "MaintenanceSettings",
]

logger = logging.getLogger(__name__)

COMPACTIONS = ("full", "minor", "none")
COMPACTION_MODES = ("distributed", "local")
TAG_PERIODS = ("daily", "none")

#: A compaction rewriting at most this many bytes runs in the task process (no JVM); the same
#: default as the Airflow operators' ``DEFAULT_IN_PROCESS_MAX_BYTES``.
DEFAULT_IN_PROCESS_MAX_BYTES = 64 * 1024 * 1024

_DURATIONS = (
    "tag_retention",
    "partition_idle_time",
    "partition_expiration_time",
    "orphan_clean_interval",
    "expire_interval",
    "lag_grace",
)


@dataclass(frozen=True)
class MaintenanceSettings(_ToDict):
    """How one table is maintained (registry defaults merged with the table's overrides).

    Registry settings:

    * ``compaction``: ``minor`` (Paimon's own pick: what the table's compaction strategy would
      compact now), ``full`` (every bucket with more than one sorted run, or small files, into
      one run) or ``none``;
    * ``compaction_mode``: ``distributed`` (big compactions go to Spark) or ``local`` (always in
      the task process);
    * ``snapshot_retain_max`` / ``snapshot_retain_min``: override ``snapshot.num-retained.max/min``;
    * ``tag_period`` (``daily`` / ``none``) and ``tag_retention``: one tag per UTC day, named
      ``YYYY-MM-DD``, kept that long (a table with ``tag.automatic-creation`` uses its own tags);
    * ``orphan_min_age_days``: orphan cleanup only deletes files older than this (>= 1);
    * ``partition_idle_time``: compact only partitions without a new file for this long;
    * ``partition_expiration_time``: drop partitions older than this (default: the table's
      ``partition.expiration-time``; neither: no partition expiry).

    Planner settings:

    * ``orphan_clean_interval``: orphan cleanup runs when the last successful one is this old
      (None: never);
    * ``expire_interval``: expiry (snapshots, tags, partitions) runs at most this often;
    * ``max_compaction_debt``: the debt (sorted runs / ``num-sorted-run.stop-trigger``) above
      which a table lags (see :mod:`paimon_core.maintenance.lag`);
    * ``lag_grace``: how long a debt or an overdue action may last before it is a lag alert;
    * ``respect_offpeak``: a table with ``compaction.offpeak.start.hour`` / ``end.hour`` is only
      compacted in those hours, unless its writers are stalled (debt >= 1);
    * ``in_process_max_bytes``: compactions reading more than this need Spark;
    * ``manifest_compaction``: plan ``compact_manifest`` when manifests pile up.
    """

    compaction: str = "minor"
    compaction_mode: str = "distributed"
    snapshot_retain_max: int | None = None
    snapshot_retain_min: int | None = None
    tag_period: str = "daily"
    tag_retention: str | None = "7 d"
    orphan_min_age_days: int = 2
    partition_idle_time: str | None = None
    partition_expiration_time: str | None = None
    orphan_clean_interval: str | None = "7 d"
    expire_interval: str = "1 h"
    max_compaction_debt: float = 0.8
    lag_grace: str = "1 d"
    respect_offpeak: bool = True
    in_process_max_bytes: int = DEFAULT_IN_PROCESS_MAX_BYTES
    manifest_compaction: bool = True

    def __post_init__(self) -> None:
        _choice("compaction", self.compaction, COMPACTIONS)
        _choice("compaction_mode", self.compaction_mode, COMPACTION_MODES)
        _choice("tag_period", self.tag_period, TAG_PERIODS)
        for name in ("snapshot_retain_max", "snapshot_retain_min"):
            value = getattr(self, name)
            if value is not None:
                _int(name, value, minimum=1)
        if (
            self.snapshot_retain_max is not None
            and self.snapshot_retain_min is not None
            and self.snapshot_retain_max < self.snapshot_retain_min
        ):
            raise InvalidArgumentError(
                f"snapshot_retain_max ({self.snapshot_retain_max}) must not be less than "
                f"snapshot_retain_min ({self.snapshot_retain_min})",
                argument="snapshot_retain_max",
            )
        _int("orphan_min_age_days", self.orphan_min_age_days, minimum=1)
        _int("in_process_max_bytes", self.in_process_max_bytes, minimum=0)
        for name in _DURATIONS:
            value = getattr(self, name)
            if value is not None:
                _duration_ms(name, value)
        if isinstance(self.max_compaction_debt, bool) or not isinstance(
            self.max_compaction_debt, int | float
        ):
            raise InvalidArgumentError(
                f"max_compaction_debt must be a number > 0, got {self.max_compaction_debt!r}",
                argument="max_compaction_debt",
            )
        if not self.max_compaction_debt > 0:
            raise InvalidArgumentError(
                f"max_compaction_debt must be a number > 0, got {self.max_compaction_debt!r}",
                argument="max_compaction_debt",
            )
        for name in ("respect_offpeak", "manifest_compaction"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgumentError(
                    f"{name} must be true or false, got {getattr(self, name)!r}", argument=name
                )

    # --- construction ------------------------------------------------------------------
    @staticmethod
    def from_mapping(raw: Mapping[str, Any] | None = None, **overrides: Any) -> MaintenanceSettings:
        """Settings from a mapping (e.g. the registry's ``TableSettings.to_dict()``), then
        ``overrides``; None values mean the default. Unknown keys are an error naming them."""
        merged = {**dict(raw or {}), **overrides}
        known = {f.name for f in dataclasses.fields(MaintenanceSettings)}
        unknown = sorted(set(merged) - known)
        if unknown:
            raise InvalidArgumentError(
                f"unknown maintenance settings {unknown}; known: {sorted(known)}", argument=unknown[0]
            )
        values: dict[str, Any] = {}
        for key, value in merged.items():
            if value is None and key not in _NULLABLE:
                continue  # the default
            values[key] = value
        return MaintenanceSettings(**values)

    # --- derived values ----------------------------------------------------------------
    def millis(self, name: str) -> int | None:
        """The duration setting ``name`` in millis (None when unset)."""
        value = getattr(self, name)
        return None if value is None else _duration_ms(name, value)

    @property
    def in_process_max_mib(self) -> float:
        return self.in_process_max_bytes / (1024 * 1024)


#: Settings whose None is a value of its own, not "the default".
_NULLABLE = frozenset(
    {
        "snapshot_retain_max",
        "snapshot_retain_min",
        "tag_retention",
        "partition_idle_time",
        "partition_expiration_time",
        "orphan_clean_interval",
    }
)


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidArgumentError(
            f"{name} must be one of {', '.join(allowed)}; got {value!r}", argument=name
        )


def _int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgumentError(f"{name} must be an integer >= {minimum}, got {value!r}", argument=name)


def _duration_ms(name: str, value: object) -> int:
    if not isinstance(value, int | str) or isinstance(value, bool):
        raise InvalidArgumentError(
            f"{name} must be a duration like '1 d' or '12 h' (or millis), got {value!r}", argument=name
        )
    return _parsed_duration_ms(name, value)


@functools.lru_cache(maxsize=1024)
def _parsed_duration_ms(name: str, value: int | str) -> int:
    """The millis of a duration setting, memoised: a pass and the console parse the same few
    values for every table (an invalid one raises each time: errors are not cached)."""
    from paimon_core.utils.time_util import to_duration_millis

    try:
        return to_duration_millis(value, name=name)
    except (PaimonError, ValueError):
        raise InvalidArgumentError(
            f"{name} must be a duration like '1 d' or '12 h' (or millis), got {value!r}", argument=name
        ) from None
