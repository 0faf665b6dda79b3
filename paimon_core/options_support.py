"""Table options Paimon defines whose values paimon_core cannot honour (yet).

``validate_options`` accepts every key and value Paimon defines. Some values change what a
writer must produce (a changelog, a compaction every N commits, expiring records), and a
writer that silently ignored them would leave a table that Flink or Spark read differently
from what the option promises. Such values are refused when a table is created or altered
here, and when a table that has them (written by another engine) is written here, with an
error that names the option and what to use instead. Reads are never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from paimon_core.exceptions import InvalidOptionError

__all__ = ["UNSUPPORTED_OPTIONS", "check_lookup_merge_engine", "check_supported_options"]


@dataclass(frozen=True)
class Unsupported:
    """A refused option value: ``applies(value)`` says whether the value is one we cannot honour."""

    applies: Callable[[str], bool]
    reason: str


def _not(*ok: str) -> Callable[[str], bool]:
    return lambda v: v.strip().lower() not in ok


def _always(_: str) -> bool:
    return True


UNSUPPORTED_OPTIONS: dict[str, Unsupported] = {
    "changelog-producer": Unsupported(
        _not("none", "input", "full-compaction", "lookup"),
        "use 'none', 'input', 'full-compaction' or 'lookup', or write this table with Flink",
    ),
    "full-compaction.delta-commits": Unsupported(
        lambda v: not v.strip().isdigit() or int(v) < 1,
        "it must be a positive number of commits",
    ),
    "record-level.expire-time": Unsupported(_always, "record-level expiry is not implemented by paimon_core"),
}


def check_supported_options(options: Mapping[str, str], *, action: str) -> None:
    """Raise :class:`InvalidOptionError` naming the first option whose value we cannot honour.

    ``action`` says what was refused ("create or alter the table", "write").
    """
    for key, spec in UNSUPPORTED_OPTIONS.items():
        value = options.get(key)
        if value is not None and spec.applies(value):
            raise InvalidOptionError(
                f"Cannot {action}: option '{key}' = '{value}' is not supported: {spec.reason}", key=key
            )
    producer = (options.get("changelog-producer") or "none").strip().lower()
    engine = (options.get("merge-engine") or "deduplicate").strip().lower()
    if engine == "first-row" and producer == "full-compaction":  # Java's SchemaValidation
        raise InvalidOptionError(
            f"Cannot {action}: the first-row merge engine supports only 'none' and 'lookup' changelog-producer, "
            "not 'full-compaction'",
            key="changelog-producer",
        )
    dv = (options.get("deletion-vectors.enabled") or "false").strip().lower() == "true"
    if producer == "full-compaction" and dv:  # Java's SchemaValidation.validateForDeletionVectors
        raise InvalidOptionError(
            f"Cannot {action}: deletion vectors mode is only supported for the 'none', 'input' and 'lookup' "
            "changelog-producer, not 'full-compaction'",
            key="changelog-producer",
        )
    if engine == "first-row" and dv:  # Java's SchemaValidation.validateForDeletionVectors
        raise InvalidOptionError(
            f"Cannot {action}: merge-engine = 'first-row' cannot be combined with deletion-vectors.enabled = true "
            "(the first-row merge engine never deletes old rows, so it does not need deletion vectors); "
            "set deletion-vectors.enabled = false",
            key="deletion-vectors.enabled",
        )
    check_lookup_merge_engine(options, action=action)


def check_lookup_merge_engine(options: Mapping[str, str], *, action: str) -> None:
    """Refuse ``changelog-producer = lookup`` without deletion vectors for engines other than
    deduplicate and first-row (checked on create/alter/write and before a lookup compaction).

    Without deletion vectors, Java reads lookup tables with ``LookupMergeFunction`` (only the
    newest high-level row of a key counts); paimon_core's reads merge every level, which equals
    that only for the deduplicate and first-row engines.
    """
    producer = (options.get("changelog-producer") or "none").strip().lower()
    engine = (options.get("merge-engine") or "deduplicate").strip().lower()
    dv = (options.get("deletion-vectors.enabled") or "false").strip().lower() == "true"
    if producer == "lookup" and not dv and engine not in ("deduplicate", "first-row"):
        raise InvalidOptionError(
            f"Cannot {action}: changelog-producer = 'lookup' without deletion-vectors.enabled = true is supported "
            f"by paimon_core for the deduplicate and first-row merge engines only, not '{engine}' (its reads merge "
            "every level, which would count values a lookup compaction already merged); enable deletion vectors "
            "or write this table with Flink",
            key="changelog-producer",
        )
