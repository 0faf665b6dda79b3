"""Value ranges of table options, as Java parses and checks them (Paimon's ``SchemaValidation``).

Java parses an ``int`` option into a Java ``int`` and a ``long`` one into a ``long``: a value
outside that range fails to parse. ``SchemaValidation`` then checks the counts that must be
positive (``snapshot.num-retained.min`` at least 1 and not above ``.max`` ...) and the bucket
number. The same rules apply here in two places:

- when a table is created or altered (``validate_table_schema`` calls
  :func:`check_option_values`), and when a table handle gets dynamic options
  (``validate_options``, per key), so a bad value is refused before anything is written;
- when a table that already holds such a value (written by another engine, or before these
  checks existed) is used: the typed accessors of :class:`~paimon_core.options.CoreOptions`
  parse through :func:`parse_int_option`, so the first operation that reads the option (a
  write, a commit, an expiry) fails with the same :class:`InvalidOptionError` naming the
  option and its value, instead of an ``OverflowError`` deep inside a writer. Writes and
  commits also check the options of post-commit maintenance up front
  (:func:`check_maintenance_options`): otherwise every commit would land and its expiry fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidOptionError
from paimon_core.options_catalog import OPTION_KINDS

if TYPE_CHECKING:
    from paimon_core.options import CoreOptions

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "LONG_MAX",
    "LONG_MIN",
    "MIN_VALUES",
    "check_maintenance_options",
    "check_option_values",
    "parse_int_option",
]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

#: Smallest value of options that count something (Java's SchemaValidation and the
#: procedures reading them; a 0 there silently turns a feature off or fails every run).
MIN_VALUES: dict[str, int] = {
    "commit.max-retries": 0,
    "snapshot.num-retained.min": 1,
    "snapshot.num-retained.max": 1,
    "snapshot.expire.limit": 1,
    "changelog.num-retained.min": 1,
    "changelog.num-retained.max": 1,
    "dynamic-bucket.target-row-num": 1,
    "target-file-row-num": 1,
}

_BUCKET_RULE = (
    "-1 (dynamic or bucket-unaware), -2 (postpone, primary-key tables only) "
    f"or a number of buckets from 1 to {INT_MAX}"
)


def parse_int_option(key: str, raw: str) -> int:
    """``raw`` as the integer option ``key``: InvalidOptionError naming the option and the value
    when it is not an integer, does not fit the option's Java type, or is below its minimum."""
    try:
        n = int(raw.strip())
    except ValueError:
        raise InvalidOptionError(f"Option '{key}' must be an integer, got {raw!r}", key=key, value=raw) from None
    if key == "bucket":
        if n == -1 or n == -2 or 1 <= n <= INT_MAX:
            return n
        raise InvalidOptionError(f"Option 'bucket' must be {_BUCKET_RULE}; got {raw!r}", key=key, value=raw)
    kind = OPTION_KINDS.get(key, ("int", ()))[0]
    lo, hi = (LONG_MIN, LONG_MAX) if kind == "long" else (INT_MIN, INT_MAX)
    lo = MIN_VALUES.get(key, lo)
    if n < lo:
        raise InvalidOptionError(f"Option '{key}' must be {lo} or more, got {raw!r}", key=key, value=raw)
    if n > hi:
        raise InvalidOptionError(
            f"Option '{key}' must be at most {hi} (a Java {'long' if kind == 'long' else 'int'}), got {raw!r}",
            key=key,
            value=raw,
        )
    return n


def check_maintenance_options(options: CoreOptions, *, table: str) -> None:
    """The options post-commit maintenance reads (snapshot and changelog retention, expiry
    limit), checked before a write or commit starts; nothing to check with ``write-only``.

    A bad value there would let every commit land and its expiry fail (maintenance silently
    off), so the write is refused instead, naming the option and how to fix it.
    """
    if options.write_only:
        return
    try:
        _ = (
            options.snapshot_num_retained_min,
            options.snapshot_expire_limit,
            options.snapshot_time_retained_ms,
            options.changelog_num_retained_min,
            options.changelog_time_retained_ms,
        )
    except InvalidOptionError as e:
        raise InvalidOptionError(
            f"Table {table}: {e} (post-commit snapshot expiry reads it; fix the option with "
            "alter_table, or set write-only=true and expire snapshots in a separate job)",
            **e.context,
        ) from None


def check_option_values(options: CoreOptions) -> None:
    """The range and cross-option checks of Java's ``SchemaValidation`` on option values
    (create and alter) beyond the per-key ones of ``validate_options``: the bucket number,
    retention min <= max, the ``dynamic-bucket.*`` settings."""
    _ = (options.bucket, options.snapshot_num_retained_min, options.changelog_num_retained_min)
    from paimon_core.index.bucket_assigner import DynamicBucketConfig

    DynamicBucketConfig.from_options(options.options)
