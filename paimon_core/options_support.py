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

__all__ = ["UNSUPPORTED_OPTIONS", "check_supported_options"]


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
        _not("none", "input"),
        "paimon_core produces no 'lookup' or 'full-compaction' changelog yet; use 'none' or 'input', "
        "or write this table with Flink",
    ),
    "full-compaction.delta-commits": Unsupported(
        _always,
        "paimon_core writers do not compact inline; schedule the dedicated compaction job "
        "(python -m spark_jobs compact --compact_strategy full) instead",
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
