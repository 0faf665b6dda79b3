"""Table options (Paimon's CoreOptions): keys, defaults, typed getters, validation."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from paimon_core.exceptions import InvalidOptionError
from paimon_core.options_catalog import OPTION_ALIASES, OPTION_KINDS
from paimon_core.options_validation import parse_int_option

# --- keys and defaults used by paimon_core (names exactly as Paimon's) -----------
BUCKET = "bucket"
BUCKET_DEFAULT = -1
BUCKET_KEY = "bucket-key"
FILE_FORMAT = "file.format"
FILE_FORMAT_DEFAULT = "parquet"
FILE_COMPRESSION = "file.compression"
TARGET_FILE_SIZE = "target-file-size"
TARGET_FILE_SIZE_PK_DEFAULT = 128 * 1024 * 1024
TARGET_FILE_SIZE_APPEND_DEFAULT = 256 * 1024 * 1024
DATA_FILE_PREFIX = "data-file.prefix"
DATA_FILE_PREFIX_DEFAULT = "data-"
CHANGELOG_FILE_PREFIX = "changelog-file.prefix"
CHANGELOG_FILE_PREFIX_DEFAULT = "changelog-"
PARTITION_DEFAULT_NAME = "partition.default-name"
PARTITION_DEFAULT_NAME_DEFAULT = "__DEFAULT_PARTITION__"
MANIFEST_TARGET_FILE_SIZE = "manifest.target-file-size"
MANIFEST_TARGET_FILE_SIZE_DEFAULT = 8 * 1024 * 1024
MANIFEST_FULL_COMPACTION_SIZE = "manifest.full-compaction-threshold-size"
MANIFEST_FULL_COMPACTION_SIZE_DEFAULT = 16 * 1024 * 1024
MANIFEST_MERGE_MIN_COUNT = "manifest.merge-min-count"
MANIFEST_MERGE_MIN_COUNT_DEFAULT = 30
COMMIT_MAX_RETRIES = "commit.max-retries"
COMMIT_MAX_RETRIES_DEFAULT = 10
COMMIT_MIN_RETRY_WAIT = "commit.min-retry-wait"
COMMIT_MIN_RETRY_WAIT_DEFAULT_MS = 10
COMMIT_MAX_RETRY_WAIT = "commit.max-retry-wait"
COMMIT_MAX_RETRY_WAIT_DEFAULT_MS = 10_000
COMMIT_TIMEOUT = "commit.timeout"
COMMIT_USER_PREFIX = "commit.user-prefix"
DYNAMIC_PARTITION_OVERWRITE = "dynamic-partition-overwrite"
METADATA_STATS_MODE = "metadata.stats-mode"
METADATA_STATS_MODE_DEFAULT = "truncate(16)"
MERGE_ENGINE = "merge-engine"
SCAN_SNAPSHOT_ID = "scan.snapshot-id"
SCAN_TAG_NAME = "scan.tag-name"
SCAN_TIMESTAMP_MILLIS = "scan.timestamp-millis"
INCREMENTAL_BETWEEN = "incremental-between"
INCREMENTAL_BETWEEN_TIMESTAMP = "incremental-between-timestamp"
PATH = "path"

# Options that are not table options but may legitimately sit in a schema written by
# other engines (Flink connector options, format passthrough, per-field options).
_PASSTHROUGH_PREFIXES = (
    "fields.",
    "parquet.",
    "orc.",
    "avro.",
    "fs.",
    "s3.",
    "oss.",
    "hadoop.",
    "file-index.",
    "sink.",
    "lookup.",
    "scan.infer-parallelism",
    "scan.parallelism",
    "streaming-read.",
    "changelog-producer.",
    "log.",
)

_MEMORY_UNITS = {
    "b": 1,
    "bytes": 1,
    "k": 1024,
    "kb": 1024,
    "kibibytes": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mebibytes": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gibibytes": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
    "tebibytes": 1024**4,
}
_DURATION_UNITS_MS = {
    "ns": 1e-6,
    "nano": 1e-6,
    "nanos": 1e-6,
    "nanosecond": 1e-6,
    "nanoseconds": 1e-6,
    "us": 1e-3,
    "µs": 1e-3,
    "micro": 1e-3,
    "micros": 1e-3,
    "microsecond": 1e-3,
    "microseconds": 1e-3,
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "secs": 1000,
    "second": 1000,
    "seconds": 1000,
    "min": 60_000,
    "m": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}
_NUM_UNIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Zµ]*)\s*$")


def parse_memory_size(text: str, *, key: str = "") -> int:
    """Parse ``128 mb``, ``8mb``, ``1 gb``, ``1024`` (bytes) into bytes."""
    m = _NUM_UNIT.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _MEMORY_UNITS and unit != "":
        raise InvalidOptionError(f"Invalid memory size {text!r}{_for(key)}: expected e.g. '128 mb'", key=key)
    return int(float(m.group(1)) * (_MEMORY_UNITS[unit] if unit else 1))


def parse_duration_ms(text: str, *, key: str = "") -> int:
    """Parse ``10 s``, ``1h``, ``100 ms``, ``1 d``, ``500`` (millis) into milliseconds."""
    m = _NUM_UNIT.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _DURATION_UNITS_MS and unit != "":
        raise InvalidOptionError(f"Invalid duration {text!r}{_for(key)}: expected e.g. '10 s' or '1 h'", key=key)
    return int(float(m.group(1)) * (_DURATION_UNITS_MS[unit] if unit else 1))


def _for(key: str) -> str:
    return f" for option '{key}'" if key else ""


def _check_value(key: str, value: str, kind: str, enum_values: tuple[str, ...]) -> None:
    if kind == "bool":
        if value.lower() not in ("true", "false"):
            raise InvalidOptionError(f"Option '{key}' must be true or false, got {value!r}", key=key)
    elif kind in ("int", "long"):
        parse_int_option(key, value)  # the Java int/long range and the option's minimum
    elif kind == "double":
        try:
            float(value)
        except ValueError:
            raise InvalidOptionError(f"Option '{key}' must be a number, got {value!r}", key=key) from None
    elif kind == "memory":
        parse_memory_size(value, key=key)
    elif kind == "duration":
        parse_duration_ms(value, key=key)
    elif kind == "enum" and enum_values and value.lower() not in enum_values:
        raise InvalidOptionError(
            f"Option '{key}' must be one of {', '.join(enum_values)}; got {value!r}", key=key
        )


def validate_options(options: Mapping[str, str]) -> None:
    """Reject unknown keys and malformed values, naming the offending option."""
    for key, value in options.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidOptionError(f"Option keys and values must be strings: {key!r}={value!r}", key=str(key))
        spec = OPTION_KINDS.get(key) or OPTION_KINDS.get(OPTION_ALIASES.get(key, ""))
        if spec is None:
            if key.startswith(_PASSTHROUGH_PREFIXES):
                continue
            close = difflib.get_close_matches(key, OPTION_KINDS.keys(), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise InvalidOptionError(f"Unknown table option '{key}'{hint}", key=key)
        _check_value(key, value, *spec)
    if METADATA_STATS_MODE in options:
        _check_stats_mode(options[METADATA_STATS_MODE], METADATA_STATS_MODE)
    for key, value in options.items():
        if key.startswith("fields.") and key.endswith(".stats-mode"):
            _check_stats_mode(value, key)


def _check_stats_mode(value: str, key: str) -> None:
    v = value.strip().lower()
    if v in ("none", "counts", "full") or re.fullmatch(r"truncate\(\d+\)", v):
        return
    raise InvalidOptionError(
        f"Option '{key}' must be none, counts, full or truncate(N); got {value!r}", key=key
    )


class CoreOptions:
    """Typed, read-only view over a table's options."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options: dict[str, str] = dict(options)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def _int(self, key: str, default: int) -> int:
        v = self.options.get(key)
        return default if v is None else parse_int_option(key, v)

    def _bool(self, key: str, default: bool) -> bool:
        v = self.options.get(key)
        return default if v is None else v.strip().lower() == "true"

    def _memory(self, key: str, default: int) -> int:
        v = self.options.get(key)
        return default if v is None else parse_memory_size(v, key=key)

    def _duration(self, key: str, default: int) -> int:
        v = self.options.get(key)
        return default if v is None else parse_duration_ms(v, key=key)

    @property
    def bucket(self) -> int:
        return self._int(BUCKET, BUCKET_DEFAULT)

    @property
    def bucket_function_type(self) -> str:
        """``bucket-function.type``: ``default`` (Murmur hash) or ``mod`` (lower case as given)."""
        return (self.options.get("bucket-function.type") or "default").strip().lower()

    @property
    def bucket_key(self) -> list[str]:
        v = self.options.get(BUCKET_KEY)
        return [k.strip() for k in v.split(",") if k.strip()] if v else []

    @property
    def file_format(self) -> str:
        return (self.options.get(FILE_FORMAT) or FILE_FORMAT_DEFAULT).lower()

    def target_file_size(self, *, has_primary_key: bool) -> int:
        default = TARGET_FILE_SIZE_PK_DEFAULT if has_primary_key else TARGET_FILE_SIZE_APPEND_DEFAULT
        return self._memory(TARGET_FILE_SIZE, default)

    @property
    def data_file_prefix(self) -> str:
        return self.options.get(DATA_FILE_PREFIX, DATA_FILE_PREFIX_DEFAULT)

    @property
    def partition_default_name(self) -> str:
        return self.options.get(PARTITION_DEFAULT_NAME, PARTITION_DEFAULT_NAME_DEFAULT)

    @property
    def manifest_target_file_size(self) -> int:
        return self._memory(MANIFEST_TARGET_FILE_SIZE, MANIFEST_TARGET_FILE_SIZE_DEFAULT)

    @property
    def manifest_full_compaction_size(self) -> int:
        return self._memory(MANIFEST_FULL_COMPACTION_SIZE, MANIFEST_FULL_COMPACTION_SIZE_DEFAULT)

    @property
    def manifest_merge_min_count(self) -> int:
        return self._int(MANIFEST_MERGE_MIN_COUNT, MANIFEST_MERGE_MIN_COUNT_DEFAULT)

    @property
    def commit_strict_mode_last_safe_snapshot(self) -> int | None:
        """``commit.strict-mode.last-safe-snapshot``: None when unset (or negative), as Java."""
        v = self.options.get("commit.strict-mode.last-safe-snapshot")
        if v is None:
            return None
        n = parse_int_option("commit.strict-mode.last-safe-snapshot", v)
        return n if n >= 0 else None

    @property
    def commit_max_retries(self) -> int:
        return self._int(COMMIT_MAX_RETRIES, COMMIT_MAX_RETRIES_DEFAULT)

    @property
    def commit_min_retry_wait_ms(self) -> int:
        return self._duration(COMMIT_MIN_RETRY_WAIT, COMMIT_MIN_RETRY_WAIT_DEFAULT_MS)

    @property
    def commit_max_retry_wait_ms(self) -> int:
        return self._duration(COMMIT_MAX_RETRY_WAIT, COMMIT_MAX_RETRY_WAIT_DEFAULT_MS)

    @property
    def commit_timeout_ms(self) -> int | None:
        v = self.options.get(COMMIT_TIMEOUT)
        return None if v is None else parse_duration_ms(v, key=COMMIT_TIMEOUT)

    @property
    def dynamic_partition_overwrite(self) -> bool:
        return self._bool(DYNAMIC_PARTITION_OVERWRITE, True)

    @property
    def stats_mode(self) -> str:
        return self.options.get(METADATA_STATS_MODE, METADATA_STATS_MODE_DEFAULT)

    def get_with_fallback(self, key: str, default: str | None = None) -> str | None:
        """The value of ``key`` or of one of its fallback/deprecated keys (Java's withFallbackKeys)."""
        if key in self.options:
            return self.options[key]
        for alias, target in OPTION_ALIASES.items():
            if target == key and alias in self.options:
                return self.options[alias]
        return default

    @property
    def ignore_delete(self) -> bool:
        return (self.get_with_fallback("ignore-delete", "false") or "false").strip().lower() == "true"

    @property
    def ignore_update_before(self) -> bool:
        return (self.options.get("ignore-update-before", "false")).strip().lower() == "true"

    @property
    def deletion_vectors_enabled(self) -> bool:
        """``deletion-vectors.enabled``: reads apply DV index files; PK compaction maintains them."""
        return self._bool("deletion-vectors.enabled", False)

    @property
    def merge_engine(self) -> str:
        return self.options.get(MERGE_ENGINE, "deduplicate")

    # --- maintenance: snapshot / changelog expiry, consumers, tags ----------------------
    @property
    def snapshot_num_retained_min(self) -> int:
        return self._at_most("snapshot.num-retained.min", 10, "snapshot.num-retained.max", self.snapshot_num_retained_max)

    @property
    def snapshot_num_retained_max(self) -> int:
        return self._int("snapshot.num-retained.max", 2**31 - 1)

    @property
    def snapshot_time_retained_ms(self) -> int:
        return self._duration("snapshot.time-retained", 3_600_000)

    @property
    def snapshot_expire_limit(self) -> int:
        return self._int("snapshot.expire.limit", 50)

    @property
    def snapshot_clean_empty_directories(self) -> bool:
        return (self.get_with_fallback("snapshot.clean-empty-directories", "false") or "false").lower() == "true"

    @property
    def changelog_num_retained_min(self) -> int:
        return self._at_most(
            "changelog.num-retained.min", self.snapshot_num_retained_min, "changelog.num-retained.max",
            self.changelog_num_retained_max,
        )

    def _at_most(self, key: str, default: int, max_key: str, maximum: int) -> int:
        """Option ``key``, which must not be larger than option ``max_key`` (Java's SchemaValidation)."""
        n = self._int(key, default)
        if n > maximum:
            raise InvalidOptionError(
                f"Option '{key}' ({n}) should not be larger than '{max_key}' ({maximum})", key=key, value=str(n)
            )
        return n

    @property
    def changelog_num_retained_max(self) -> int:
        return self._int("changelog.num-retained.max", self.snapshot_num_retained_max)

    @property
    def changelog_time_retained_ms(self) -> int:
        return self._duration("changelog.time-retained", self.snapshot_time_retained_ms)

    @property
    def changelog_lifecycle_decoupled(self) -> bool:
        """Java's changelogLifecycleDecoupled: a changelog limit set above the snapshot one."""
        return (
            self.changelog_num_retained_max > self.snapshot_num_retained_max
            or self.changelog_time_retained_ms > self.snapshot_time_retained_ms
            or self.changelog_num_retained_min > self.snapshot_num_retained_min
        )

    @property
    def consumer_expiration_time_ms(self) -> int | None:
        v = self.options.get("consumer.expiration-time")
        return None if v is None else parse_duration_ms(v, key="consumer.expiration-time")

    @property
    def consumer_changelog_only(self) -> bool:
        return self._bool("consumer.changelog-only", False)

    @property
    def consumer_ignore_progress(self) -> bool:
        return self._bool("consumer.ignore-progress", False)

    @property
    def write_only(self) -> bool:
        return (self.get_with_fallback("write-only", "false") or "false").lower() == "true"

    @property
    def tag_automatic_creation(self) -> str:
        return self.options.get("tag.automatic-creation", "none")

    @property
    def tag_creation_period(self) -> str:
        return self.options.get("tag.creation-period", "daily")

    @property
    def tag_creation_period_duration_ms(self) -> int | None:
        v = self.options.get("tag.creation-period-duration")
        return None if v is None else parse_duration_ms(v, key="tag.creation-period-duration")

    @property
    def tag_creation_delay_ms(self) -> int:
        return self._duration("tag.creation-delay", 0)

    @property
    def tag_period_formatter(self) -> str:
        return self.options.get("tag.period-formatter", "with_dashes")

    @property
    def tag_num_retained_max(self) -> int | None:
        v = self.options.get("tag.num-retained-max")
        return None if v is None else self._int("tag.num-retained-max", 0)

    @property
    def tag_default_time_retained_ms(self) -> int | None:
        v = self.options.get("tag.default-time-retained")
        return None if v is None else parse_duration_ms(v, key="tag.default-time-retained")

    @property
    def tag_time_expire_enabled(self) -> bool:
        return self._bool("tag.time-expire-enabled", True)

    @property
    def tag_automatic_completion(self) -> bool:
        return self._bool("tag.automatic-completion", False)

    # --- partitions: expiry (Java PartitionExpire) and mark-done -------------------------
    @property
    def partition_expiration_time_ms(self) -> int | None:
        """``partition.expiration-time``: None (the default) turns partition expiry off."""
        v = self.options.get("partition.expiration-time")
        return None if v is None else parse_duration_ms(v, key="partition.expiration-time")

    @property
    def partition_expiration_check_interval_ms(self) -> int:
        return self._duration("partition.expiration-check-interval", 3_600_000)

    @property
    def partition_expiration_strategy(self) -> str:
        return self.options.get("partition.expiration-strategy", "values-time").strip().lower()

    @property
    def partition_expiration_max_num(self) -> int:
        return self._int("partition.expiration-max-num", 100)

    @property
    def partition_timestamp_formatter(self) -> str | None:
        return self.options.get("partition.timestamp-formatter")

    @property
    def partition_timestamp_pattern(self) -> str | None:
        return self.options.get("partition.timestamp-pattern")

    @property
    def end_input_check_partition_expire(self) -> bool:
        return self._bool("end-input.check-partition-expire", False)

    @property
    def partition_mark_done_actions(self) -> list[str]:
        """``partition.mark-done-action`` (default ``success-file``), comma-separated."""
        v = self.options.get("partition.mark-done-action", "success-file")
        return [a.strip().lower() for a in v.split(",") if a.strip()]
