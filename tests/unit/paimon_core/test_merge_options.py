"""Merge-engine option validation: clear errors naming the option, at creation time."""

from __future__ import annotations

from typing import Any

import pytest

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.merge_function import (
    DeduplicateMergeFunction,
    FirstRowMergeFunction,
    create_merge_function,
)
from paimon_core.mergetree.partial_update import PartialUpdateMergeFunction
from paimon_core.schema.data_types import (
    ArrayType,
    BigIntType,
    BooleanType,
    CharType,
    DataField,
    IntType,
    MapType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
FIELDS = [
    DataField(0, "id", BigIntType(nullable=False)),
    DataField(1, "a", IntType()),
    DataField(2, "s", STRING),
    DataField(3, "b", BooleanType()),
    DataField(4, "arr", ArrayType(IntType())),
    DataField(5, "m", MapType(STRING.not_null(), IntType())),
    DataField(6, "ts", BigIntType()),
    DataField(7, "c", CharType(3)),
]


def create(**options: Any) -> Any:
    return create_merge_function(FIELDS[:1], FIELDS, {k.replace("__", "."): v for k, v in options.items()})


def invalid(options: dict[str, str], key: str, match: str) -> None:
    with pytest.raises(InvalidOptionError, match=match) as info:
        create_merge_function(FIELDS[:1], FIELDS, options)
    assert info.value.key == key  # type: ignore[attr-defined]
    assert key in str(info.value) or key in ("merge-engine",)


def test_engines_by_name() -> None:
    assert isinstance(create_merge_function(FIELDS[:1], FIELDS, {}), DeduplicateMergeFunction)
    assert isinstance(
        create_merge_function(FIELDS[:1], FIELDS, {"merge-engine": "first-row"}), FirstRowMergeFunction
    )
    assert isinstance(
        create_merge_function(FIELDS[:1], FIELDS, {"merge-engine": "partial-update"}),
        PartialUpdateMergeFunction,
    )


@pytest.mark.parametrize(
    ("options", "key", "match"),
    [
        ({"merge-engine": "dedup"}, "merge-engine", "must be one of"),
        ({"ignore-delete": "yes"}, "ignore-delete", "true or false"),
        (
            {"merge-engine": "first-row", "sequence.field": "ts"},
            "sequence.field",
            "Do not support use sequence field on FIRST_ROW",
        ),
        ({"sequence.field": "nope"}, "sequence.field", "can not be found in table schema"),
        ({"sequence.field": "ts,ts"}, "sequence.field", "defined repeatedly"),
        (
            {"sequence.field": "ts", "fields.ts.aggregate-function": "max"},
            "fields.ts.aggregate-function",
            "Should not define aggregation on sequence field",
        ),
        ({"sequence.field.sort-order": "up"}, "sequence.field.sort-order", "ascending or descending"),
        (
            {"merge-engine": "aggregation", "fields.nope.aggregate-function": "sum"},
            "fields.nope.aggregate-function",
            "Field nope can not be found",
        ),
        # aggregation
        (
            {"merge-engine": "aggregation", "fields.a.aggregate-function": "count"},
            "fields.a.aggregate-function",
            "unsupported aggregation: 'count'",
        ),
        (
            {"merge-engine": "aggregation", "fields.default-aggregate-function": "avg"},
            "fields.default-aggregate-function",
            "unsupported aggregation: 'avg'",
        ),
        (
            {"merge-engine": "aggregation", "fields.s.aggregate-function": "sum"},
            "fields.s.aggregate-function",
            "needs a numeric type",
        ),
        (
            {"merge-engine": "aggregation", "fields.a.aggregate-function": "bool_or"},
            "fields.a.aggregate-function",
            "needs BOOLEAN",
        ),
        (
            {"merge-engine": "aggregation", "fields.c.aggregate-function": "listagg"},
            "fields.c.aggregate-function",
            r"needs STRING \(unbounded VARCHAR\)",
        ),
        (
            {"merge-engine": "aggregation", "fields.a.aggregate-function": "collect"},
            "fields.a.aggregate-function",
            "needs ARRAY",
        ),
        (
            {"merge-engine": "aggregation", "fields.arr.aggregate-function": "merge_map"},
            "fields.arr.aggregate-function",
            "needs MAP",
        ),
        (
            {"merge-engine": "aggregation", "fields.m.aggregate-function": "max"},
            "fields.m.aggregate-function",
            "needs a comparable type",
        ),
        (
            {"merge-engine": "aggregation", "fields.s.aggregate-function": "rbm32"},
            "fields.s.aggregate-function",
            "not supported by paimon_core yet",
        ),
        (
            {
                "merge-engine": "aggregation",
                "fields.a.aggregate-function": "sum",
                "fields.a.ignore-retract": "true",
                "aggregation.remove-record-on-delete": "true",
            },
            "fields.a.ignore-retract",
            "conflicting behavior",
        ),
        (
            {"merge-engine": "aggregation", "fields.a.ignore-retract": "maybe"},
            "fields.a.ignore-retract",
            "true or false",
        ),
        # partial-update
        (
            {"merge-engine": "partial-update", "fields.ts.sequence-group": "a,zz"},
            "fields.ts.sequence-group",
            "Field zz can not be found in table schema",
        ),
        (
            {"merge-engine": "partial-update", "fields.ts.sequence-group": "id"},
            "fields.ts.sequence-group",
            "contains primary key field 'id'",
        ),
        (
            {
                "merge-engine": "partial-update",
                "fields.ts.sequence-group": "a",
                "fields.b.sequence-group": "a",
            },
            "fields.ts.sequence-group",
            "defined repeatedly by multiple groups",
        ),
        (
            {
                "merge-engine": "partial-update",
                "ignore-delete": "true",
                "partial-update.remove-record-on-delete": "true",
            },
            "partial-update.remove-record-on-delete",
            "conflicting behavior",
        ),
        (
            {
                "merge-engine": "partial-update",
                "ignore-delete": "true",
                "fields.ts.sequence-group": "a",
                "partial-update.remove-record-on-sequence-group": "ts",
            },
            "partial-update.remove-record-on-sequence-group",
            "conflicting behavior",
        ),
        (
            {
                "merge-engine": "partial-update",
                "fields.ts.sequence-group": "a",
                "partial-update.remove-record-on-delete": "true",
            },
            "partial-update.remove-record-on-delete",
            "conflicting behavior",
        ),
        (
            {
                "merge-engine": "partial-update",
                "fields.ts.sequence-group": "a",
                "partial-update.remove-record-on-sequence-group": "a",
            },
            "partial-update.remove-record-on-sequence-group",
            "must be part of sequence groups",
        ),
        (
            {"merge-engine": "partial-update", "fields.a.aggregate-function": "sum"},
            "fields.a.aggregate-function",
            "Must use sequence group for aggregation functions but not found for field a",
        ),
        (
            {"merge-engine": "partial-update", "fields.default-aggregate-function": "sum"},
            "fields.default-aggregate-function",
            "Must use sequence group",
        ),
        (
            {
                "merge-engine": "partial-update",
                "fields.ts.sequence-group": "s",
                "fields.s.aggregate-function": "sum",
            },
            "fields.s.aggregate-function",
            "needs a numeric type",
        ),
    ],
)
def test_invalid_options(options: dict[str, str], key: str, match: str) -> None:
    invalid(options, key, match)


def test_valid_combinations() -> None:
    create(
        **{
            "merge-engine": "aggregation",
            "fields.default-aggregate-function": "last_value",
            "fields__a__aggregate-function": "SUM",
            "fields__s__aggregate-function": "listagg",
            "fields__b__aggregate-function": "bool_and",
            "fields__arr__aggregate-function": "collect",
            "fields__m__aggregate-function": "merge_map",
            "fields__c__aggregate-function": "first_not_null_value",
        }
    )
    # the primary key keeps its value whatever its option says (Java ignores it)
    create(**{"merge-engine": "aggregation", "fields__id__aggregate-function": "listagg"})
    create(
        **{
            "merge-engine": "partial-update",
            "fields__ts__sequence-group": "a,s",
            "fields__a__aggregate-function": "sum",
            "fields__default-aggregate-function": "last_non_null_value",
            "partial-update__remove-record-on-sequence-group": "ts",
        }
    )
    create(**{"merge-engine": "first-row", "first-row__ignore-delete": "TRUE"})
    create(
        **{
            "deduplicate.ignore-delete": "true",
            "sequence__field": "ts",
            "sequence__field__sort-order": "descending",
        }
    )


def test_ignore_delete_fallback_keys() -> None:
    for key in (
        "ignore-delete",
        "first-row.ignore-delete",
        "deduplicate.ignore-delete",
        "partial-update.ignore-delete",
    ):
        mf = create_merge_function(FIELDS[:1], FIELDS, {"merge-engine": "first-row", key: "true"})
        assert isinstance(mf, FirstRowMergeFunction) and mf.ignore_delete
    mf = create_merge_function(
        FIELDS[:1], FIELDS, {"ignore-delete": "false", "deduplicate.ignore-delete": "true"}
    )
    assert isinstance(mf, DeduplicateMergeFunction) and not mf.ignore_delete


def test_primary_key_must_be_a_field() -> None:
    with pytest.raises(InvalidOptionError, match="not table fields"):
        create_merge_function([DataField(9, "zz", IntType())], FIELDS, {})
