"""Merge-engine options (Paimon's ``CoreOptions`` keys), parsed and validated.

Validation follows Java's ``SchemaValidation`` and the merge function factories: an
invalid combination raises :class:`InvalidOptionError` naming the option when the
merge function is created, not when rows arrive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paimon_core.exceptions import InvalidOptionError

__all__ = [
    "AGGREGATE_FUNCTION",
    "AGGREGATION_REMOVE_RECORD_ON_DELETE",
    "DISTINCT",
    "ENGINES",
    "FIELDS_DEFAULT_AGG_FUNC",
    "IGNORE_DELETE",
    "IGNORE_DELETE_FALLBACK_KEYS",
    "IGNORE_RETRACT",
    "LIST_AGG_DELIMITER",
    "MERGE_ENGINE",
    "PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE",
    "PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP",
    "SEQUENCE_FIELD",
    "SEQUENCE_FIELD_SORT_ORDER",
    "SEQUENCE_GROUP",
    "SequenceGroup",
    "check_field_options",
    "engine_of",
    "field_option",
    "get_bool",
    "parse_sequence_groups",
    "sequence_fields",
]

MERGE_ENGINE = "merge-engine"
ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")
IGNORE_DELETE = "ignore-delete"
IGNORE_DELETE_FALLBACK_KEYS = (
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
)
PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE = "partial-update.remove-record-on-delete"
PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP = "partial-update.remove-record-on-sequence-group"
AGGREGATION_REMOVE_RECORD_ON_DELETE = "aggregation.remove-record-on-delete"
SEQUENCE_FIELD = "sequence.field"
SEQUENCE_FIELD_SORT_ORDER = "sequence.field.sort-order"
FIELDS_PREFIX = "fields"
FIELDS_DEFAULT_AGG_FUNC = "fields.default-aggregate-function"
AGGREGATE_FUNCTION = "aggregate-function"
IGNORE_RETRACT = "ignore-retract"
LIST_AGG_DELIMITER = "list-agg-delimiter"
DISTINCT = "distinct"
SEQUENCE_GROUP = "sequence-group"
#: ``fields.<f>.<suffix>`` options read by the merge engines.
_FIELD_SUFFIXES = (AGGREGATE_FUNCTION, IGNORE_RETRACT, LIST_AGG_DELIMITER, DISTINCT, SEQUENCE_GROUP)


def get_bool(
    options: Mapping[str, str], key: str, default: bool = False, fallback_keys: Sequence[str] = ()
) -> bool:
    """A boolean option (``true``/``false``, any case), trying ``fallback_keys`` after ``key``."""
    for k in (key, *fallback_keys):
        value = options.get(k)
        if value is None:
            continue
        text = value.strip().lower()
        if text not in ("true", "false"):
            raise InvalidOptionError(f"Option '{k}' must be true or false, got {value!r}", key=k)
        return text == "true"
    return default


def field_option(options: Mapping[str, str], field: str, suffix: str) -> str | None:
    """The value of ``fields.<field>.<suffix>``, if set."""
    return options.get(f"{FIELDS_PREFIX}.{field}.{suffix}")


def engine_of(options: Mapping[str, str]) -> str:
    """The ``merge-engine`` (default ``deduplicate``), validated."""
    engine = options.get(MERGE_ENGINE, "deduplicate").strip().lower()
    if engine not in ENGINES:
        raise InvalidOptionError(
            f"Option '{MERGE_ENGINE}' must be one of {', '.join(ENGINES)}; got {options[MERGE_ENGINE]!r}",
            key=MERGE_ENGINE,
        )
    return engine


def sequence_fields(options: Mapping[str, str], field_names: Sequence[str]) -> list[str]:
    """``sequence.field`` as a list, checked like Java's ``SchemaValidation.validateSequenceField``."""
    text = options.get(SEQUENCE_FIELD)
    order = options.get(SEQUENCE_FIELD_SORT_ORDER)
    if order is not None and order.strip().lower() not in ("ascending", "descending"):
        raise InvalidOptionError(
            f"Option '{SEQUENCE_FIELD_SORT_ORDER}' must be ascending or descending; got {order!r}",
            key=SEQUENCE_FIELD_SORT_ORDER,
        )
    if not text:
        return []
    fields = [s.strip() for s in text.split(",")]
    for name in fields:
        if name not in field_names:
            raise InvalidOptionError(
                f"Sequence field: '{name}' can not be found in table schema ({SEQUENCE_FIELD}={text!r}).",
                key=SEQUENCE_FIELD,
            )
        if field_option(options, name, AGGREGATE_FUNCTION) is not None:
            key = f"{FIELDS_PREFIX}.{name}.{AGGREGATE_FUNCTION}"
            raise InvalidOptionError(
                f"Should not define aggregation on sequence field: '{name}' ({key}).", key=key
            )
        if fields.count(name) > 1:
            raise InvalidOptionError(
                f"Sequence field '{name}' is defined repeatedly ({SEQUENCE_FIELD}={text!r}).",
                key=SEQUENCE_FIELD,
            )
    return fields


def check_field_options(options: Mapping[str, str], field_names: Sequence[str]) -> None:
    """``fields.<f>.<suffix>`` merge options must name existing fields (Java's ``validateFieldsPrefix``)."""
    for key in options:
        if not key.startswith(FIELDS_PREFIX + ".") or key == FIELDS_DEFAULT_AGG_FUNC:
            continue
        body = key[len(FIELDS_PREFIX) + 1 :]
        suffix = next((s for s in _FIELD_SUFFIXES if body.endswith("." + s)), None)
        if suffix is None:
            continue
        for name in body[: -len(suffix) - 1].split(","):
            if name not in field_names:
                raise InvalidOptionError(
                    f"Field {name} can not be found in table schema (option '{key}').", key=key
                )


@dataclass(frozen=True)
class SequenceGroup:
    """``fields.<s1>,<s2>.sequence-group = <f1>,<f2>``: fields updated only when ``(s1, s2)`` is not older."""

    option_key: str
    sequence_fields: tuple[str, ...]
    protected_fields: tuple[str, ...]


def parse_sequence_groups(
    options: Mapping[str, str], field_names: Sequence[str], primary_keys: Sequence[str]
) -> list[SequenceGroup]:
    """Sequence groups of a partial-update table, validated like Java's ``PartialUpdateMergeFunction``.

    Deviation: Java lets a later group silently take over a field already used as another
    group's sequence field; paimon_core rejects any field claimed by two groups.
    """
    groups: list[SequenceGroup] = []
    owner: dict[str, str] = {}
    suffix = "." + SEQUENCE_GROUP
    for key in sorted(options):
        if not (key.startswith(FIELDS_PREFIX + ".") and key.endswith(suffix)):
            continue
        seq = tuple(s for s in key[len(FIELDS_PREFIX) + 1 : -len(suffix)].split(","))
        protected = tuple(p.strip() for p in options[key].split(",") if p.strip())
        for name in (*seq, *protected):
            if name not in field_names:
                raise InvalidOptionError(
                    f"Field {name} can not be found in table schema (option '{key}').", key=key
                )
            if name in primary_keys:
                raise InvalidOptionError(
                    f"The sequence-group '{key}' contains primary key field '{name}', which is not allowed. "
                    "Primary key columns cannot be put in sequence-group.",
                    key=key,
                )
        protected = tuple(p for p in protected if p not in seq)
        for name in (*protected, *seq):
            if name in owner and owner[name] != key:
                raise InvalidOptionError(
                    f"Field {name} is defined repeatedly by multiple groups: {key} (also in {owner[name]}).",
                    key=key,
                )
            if name in protected and protected.count(name) > 1:
                raise InvalidOptionError(
                    f"Field {name} is defined repeatedly by multiple groups: {key}", key=key
                )
            owner[name] = key
        groups.append(SequenceGroup(key, seq, protected))
    return groups
