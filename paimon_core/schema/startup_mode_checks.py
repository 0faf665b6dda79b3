"""The scan options of a table's schema must agree with its startup mode (Java's
``SchemaValidation.validateStartupMode``).

``scan.mode`` (or, with ``default``, the first scan option present) decides where a read
starts; each mode needs some options and forbids the others. Checked when a table is created
or altered, so a table never stores, say, both ``scan.snapshot-id`` and ``scan.timestamp-millis``.
"""

from __future__ import annotations

from collections.abc import Mapping

from paimon_core.exceptions import InvalidOptionError

__all__ = ["check_startup_mode", "startup_mode"]

TS_MILLIS = "scan.timestamp-millis"
TS = "scan.timestamp"
SNAPSHOT_ID = "scan.snapshot-id"
TAG_NAME = "scan.tag-name"
WATERMARK = "scan.watermark"
VERSION = "scan.version"
FILE_CREATION = "scan.file-creation-time-millis"
CREATION = "scan.creation-time-millis"
BETWEEN = "incremental-between"
BETWEEN_TS = "incremental-between-timestamp"
TO_AUTO_TAG = "incremental-to-auto-tag"

#: mode -> (options of which exactly one must be set, options that must not be set)
_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "from-timestamp": ((TS_MILLIS, TS), (SNAPSHOT_ID, FILE_CREATION, TAG_NAME, BETWEEN_TS, BETWEEN, TO_AUTO_TAG)),
    "from-snapshot": ((SNAPSHOT_ID, TAG_NAME, WATERMARK), (TS_MILLIS, TS, FILE_CREATION, BETWEEN_TS, BETWEEN, TO_AUTO_TAG)),
    "incremental": ((BETWEEN, BETWEEN_TS, TO_AUTO_TAG), (SNAPSHOT_ID, TS_MILLIS, FILE_CREATION, TS, TAG_NAME)),
    "from-snapshot-full": ((SNAPSHOT_ID,), (TS_MILLIS, TS, FILE_CREATION, TAG_NAME, BETWEEN_TS, BETWEEN, TO_AUTO_TAG)),
    "from-file-creation-time": ((FILE_CREATION,), (SNAPSHOT_ID, TS_MILLIS, TAG_NAME, BETWEEN_TS, BETWEEN, TO_AUTO_TAG)),
}
#: the options no other mode may have (latest-full, latest, compacted-full ...)
_OTHERS = (TS_MILLIS, FILE_CREATION, TS, SNAPSHOT_ID, TAG_NAME, BETWEEN_TS, BETWEEN, TO_AUTO_TAG)


def startup_mode(options: Mapping[str, str]) -> str:
    """``scan.mode`` with ``default`` and ``full`` resolved (Java's ``CoreOptions.startupMode``)."""
    mode = options.get("scan.mode", "default").strip().lower()
    if mode == "full":
        return "latest-full"
    if mode != "default":
        return mode
    if TS_MILLIS in options or TS in options:
        return "from-timestamp"
    if any(k in options for k in (SNAPSHOT_ID, TAG_NAME, WATERMARK, VERSION)):
        return "from-snapshot"
    if FILE_CREATION in options:
        return "from-file-creation-time"
    if CREATION in options:
        return "from-creation-timestamp"
    if BETWEEN in options or BETWEEN_TS in options:
        return "incremental"
    return "latest-full"


def check_startup_mode(options: Mapping[str, str]) -> None:
    """InvalidOptionError naming the option that is missing or conflicts with the startup mode."""
    mode = startup_mode(options)
    if mode == "from-creation-timestamp":
        return
    need, forbidden = _RULES.get(mode, ((), _OTHERS))
    if need and sum(k in options for k in need) != 1:
        raise InvalidOptionError(
            f"scan.mode '{mode}' needs exactly one of options {list(need)}; set: "
            f"{[k for k in need if k in options] or 'none'}",
            key="scan.mode",
        )
    for key in forbidden:
        if key in options:
            raise InvalidOptionError(
                f"Option '{key}' = '{options[key]}' cannot be used with scan.mode '{mode}'", key=key, value=options[key]
            )
