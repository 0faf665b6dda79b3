"""Value ranges of table options, as Java parses and checks them (Paimon's ``SchemaValidation``).

Java parses an ``int`` option into a Java ``int`` and a ``long`` one into a ``long``: a value
outside that range fails to parse. ``SchemaValidation`` then checks the counts that must be
positive (``snapshot.num-retained.min`` at least 1 and not above ``.max`` ...) and the bucket
number. The same rules apply here:

- when a table is created or altered (``validate_table_schema`` calls
  :func:`check_option_values`), and when a table handle gets dynamic options
  (``validate_options``, per key), so a bad value is refused before anything is written;
- when a table is created or altered, the values every later write would fail on
  (:func:`check_write_options`: ``num-levels`` < 2, a compaction trigger < 1, a stop trigger
  below it, a zero write buffer, a relative ``data-file.external-paths``);
- when a table that already holds such a value (written by another engine, or before these
  checks existed) is used: the typed accessors of :class:`~paimon_core.options.CoreOptions`
  parse through :func:`parse_int_option`, so the first operation that reads the option (a
  write, a commit, an expiry) fails with the same :class:`InvalidOptionError` naming the
  option and its value, instead of an ``OverflowError`` deep inside a writer. Writes and
  commits also check the options of post-commit maintenance up front
  (:func:`check_maintenance_options`): otherwise every commit would land and its expiry fail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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
    "check_write_options",
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

NUM_LEVELS = "num-levels"
NUM_SORTED_RUN_COMPACTION_TRIGGER = "num-sorted-run.compaction-trigger"
NUM_SORTED_RUN_STOP_TRIGGER = "num-sorted-run.stop-trigger"
WRITE_BUFFER_SIZE = "write-buffer-size"
PAGE_SIZE = "page-size"
EXTERNAL_PATHS = "data-file.external-paths"
#: Java's message (``Levels``)
LEVELS_MESSAGE = "Number of levels must be at least 2."
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

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
    retention min <= max, the ``dynamic-bucket.*`` settings; and the values every later write
    would fail on (:func:`check_write_options`)."""
    _ = (options.bucket, options.snapshot_num_retained_min, options.changelog_num_retained_min)
    from paimon_core.index.bucket_assigner import DynamicBucketConfig

    DynamicBucketConfig.from_options(options.options)
    check_write_options(options.options)


def _refuse(key: str, value: str, why: str) -> InvalidOptionError:
    return InvalidOptionError(f"Option '{key}' = '{value}': {why}", key=key, value=value)


def check_write_options(options: Mapping[str, str]) -> None:
    """InvalidOptionError for option values that make every later write (or compaction) of the
    table fail, refused when the table is created or altered instead; Java's message where Java
    has one (Java checks them only when a writer starts):

    * ``num-levels`` below 2 (Java's ``Levels``: "Number of levels must be at least 2.");
    * ``num-sorted-run.compaction-trigger`` below 1 (its default ``num-levels`` is the trigger
      + 1: Java fails with the same message);
    * ``num-sorted-run.stop-trigger`` below the compaction trigger (writers would stall before
      compaction starts; Java silently lifts it to the trigger, which hides the mistake);
    * ``write-buffer-size`` or ``page-size`` of 0 (a buffer that holds nothing; Java's sort
      buffer needs three pages, but paimon_core's writer has no pages: smaller buffers stay
      allowed, as tests use them to force flushes);
    * a relative ``data-file.external-paths`` entry (it would resolve against the current
      directory of each process; Java: "scheme should not be null").
    """
    trigger_raw = options.get(NUM_SORTED_RUN_COMPACTION_TRIGGER)
    trigger = 5 if trigger_raw is None else parse_int_option(NUM_SORTED_RUN_COMPACTION_TRIGGER, trigger_raw)
    if trigger < 1:
        raise _refuse(
            NUM_SORTED_RUN_COMPACTION_TRIGGER,
            str(trigger_raw),
            f"must be 1 or more: num-levels defaults to the trigger + 1, and every write would fail "
            f"with Java's \"{LEVELS_MESSAGE}\"",
        )
    levels_raw = options.get(NUM_LEVELS)
    if levels_raw is not None and parse_int_option(NUM_LEVELS, levels_raw) < 2:
        raise _refuse(NUM_LEVELS, levels_raw, f"{LEVELS_MESSAGE} (level 0 and at least one sorted level)")
    stop_raw = options.get(NUM_SORTED_RUN_STOP_TRIGGER)
    if stop_raw is not None:
        stop = parse_int_option(NUM_SORTED_RUN_STOP_TRIGGER, stop_raw)
        if stop < trigger:
            raise InvalidOptionError(
                f"Option '{NUM_SORTED_RUN_STOP_TRIGGER}' ({stop}) should not be smaller than "
                f"'{NUM_SORTED_RUN_COMPACTION_TRIGGER}' ({trigger}): writes would stop before compaction starts",
                key=NUM_SORTED_RUN_STOP_TRIGGER,
                value=stop_raw,
            )
    from paimon_core.options import parse_memory_size

    for key in (WRITE_BUFFER_SIZE, PAGE_SIZE):
        raw = options.get(key)
        if raw is not None and parse_memory_size(raw, key=key) <= 0:
            raise _refuse(key, raw, "must be more than 0 bytes")
    _check_external_paths(options)


def _check_external_paths(options: Mapping[str, str]) -> None:
    value = options.get(EXTERNAL_PATHS)
    if value is None:
        return
    for entry in value.split(","):
        path = entry.strip()
        if not path:
            continue
        scheme = _URI_SCHEME.match(path)
        rest = path[scheme.end() :] if scheme else path
        if not rest.startswith("/"):
            java = "" if scheme else f' (Java: "scheme should not be null: {path}")'
            raise _refuse(
                EXTERNAL_PATHS,
                value,
                f"'{path}' is a relative path{java}; it would resolve against the current directory of "
                "each process. Give an absolute path or URI, e.g. file:///data/ext, s3://bucket/ext or /data/ext",
            )
