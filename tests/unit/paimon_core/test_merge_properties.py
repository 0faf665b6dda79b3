"""Property tests: the vectorized merge engines equal the row-by-row model of Java's merge functions.

Random runs of +I/-U/+U/-D rows over a small key space, nulls in the values, random
engine options; the output (values, kinds, sequence numbers) or the error must match
:mod:`test_merge_model`, with and without dropping retractions.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_merge_model import KV, Field, ModelError, model_merge

from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_function import create_merge_function
from paimon_core.schema.data_types import (
    ArrayType,
    BigIntType,
    BooleanType,
    DataField,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    MapType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
EXAMPLES = int(os.environ.get("MERGE_PROPERTY_EXAMPLES", "250"))
ROWS_FACTOR = int(os.environ.get("MERGE_PROPERTY_ROWS_FACTOR", "1"))
KEYS = int(os.environ.get("MERGE_PROPERTY_KEYS", "4"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KIND = st.sampled_from([0, 0, 0, 2, 2, 1, 3, 3])
SMALL_INT = st.one_of(st.none(), st.integers(-3, 3))


def _values_for(t: Any) -> st.SearchStrategy[Any]:
    if isinstance(t, IntType):
        return SMALL_INT
    if isinstance(t, BigIntType):
        return st.one_of(st.none(), st.integers(-(2**40), 2**40))
    if isinstance(t, DoubleType):
        return st.one_of(
            st.none(), st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from([0.1, -0.0, 0.0, 1e300])
        )
    if isinstance(t, FloatType):
        return st.one_of(st.none(), st.floats(-1e4, 1e4, width=32, allow_nan=False))
    if isinstance(t, DecimalType):
        return st.one_of(st.none(), st.decimals(-1000, 1000, places=2, allow_nan=False, allow_infinity=False))
    if isinstance(t, BooleanType):
        return st.one_of(st.none(), st.booleans())
    if isinstance(t, VarCharType):
        return st.sampled_from(
            [None, "a", "b", "a,b", "b;a", "", " ", "\u3000", "x y", "a,,c", ",a", "a-", "-a", "a--b"]
        )
    if isinstance(t, ArrayType):
        return st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=3))
    if isinstance(t, MapType):
        return st.one_of(
            st.none(),
            st.dictionaries(
                st.sampled_from(["x", "y", "z"]), st.one_of(st.none(), st.integers(0, 9)), max_size=3
            ),
        )
    raise AssertionError(t)


@st.composite
def rows_for(draw: st.DrawFn, fields: Sequence[Field], max_rows: int = 16) -> list[KV]:
    """Rows in arrival order (seq = index), then sorted by key like the caller does."""
    n = draw(st.integers(1, max_rows * ROWS_FACTOR))
    out = []
    for seq in range(n):
        key = draw(st.integers(0, KEYS - 1))
        values = [key] + [draw(_values_for(f.type)) for f in fields[1:]]
        for i, f in enumerate(fields):
            if isinstance(f.type, MapType) and values[i] is not None:
                values[i] = list(values[i].items())
        out.append(KV((key,), seq, draw(KIND), values))
    return sorted(out, key=lambda kv: (kv.key, kv.seq))


def _table(fields: Sequence[Field], rows: Sequence[KV]) -> pa.Table:
    cols = {
        f.name: pa.array([r.value[i] for r in rows], type=to_arrow_type(f.type)) for i, f in enumerate(fields)
    }
    cols["_SEQUENCE_NUMBER"] = pa.array([r.seq for r in rows], pa.int64())
    cols["_VALUE_KIND"] = pa.array([r.kind for r in rows], pa.int8())
    return pa.table(cols)


def _same(a: Any, b: Any, *, unordered: bool = False) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list) and isinstance(b, list):
        if (
            a and isinstance(a[0], tuple) or b and isinstance(b[0], tuple)
        ):  # maps: HashMap order is unspecified
            return dict(a) == dict(b) and len(a) == len(b)
        if unordered:  # HashSet order is unspecified
            return sorted(a, key=repr) == sorted(b, key=repr)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b
    return bool(a == b) and type(a) is type(b) or (a is None and b is None)


def check(fields: Sequence[Field], options: Mapping[str, str], rows: Sequence[KV]) -> None:
    """The engine's output (or error) equals the model's, with and without dropping retractions."""
    key_fields = [DataField(0, fields[0].name, fields[0].type.copy(nullable=False))]
    value_fields = [DataField(i, f.name, f.type.copy(nullable=f.nullable)) for i, f in enumerate(fields)]
    mf = create_merge_function(key_fields, value_fields, dict(options))
    table = _table(fields, rows)
    unordered = {f.name for f in fields if options.get(f"fields.{f.name}.distinct", "false") == "true"}
    for drop in (True, False):
        try:
            expected = model_merge(fields, [fields[0].name], options, rows, drop_retracts=drop)
        except ModelError as e:
            event(f"java throws: {str(e)[:40]}")
            with pytest.raises(MergeError):
                mf.merge(table, drop_retracts=drop)
            continue
        event(f"compared {min(len(expected), 3)}+ keys" if expected else "compared: no key")
        actual = mf.merge(table, drop_retracts=drop).to_pylist()
        assert len(actual) == len(expected), (actual, expected)
        for got, want in zip(actual, expected, strict=True):
            assert got["_VALUE_KIND"] == want.kind, (got, want)
            assert got["_SEQUENCE_NUMBER"] == want.seq, (got, want)
            for i, f in enumerate(fields):
                assert _same(got[f.name], want.value[i], unordered=f.name in unordered), (
                    f.name,
                    got[f.name],
                    want.value[i],
                    options,
                )


# ======================================================================================
# deduplicate / first-row
# ======================================================================================

SIMPLE_FIELDS = [Field("k", IntType()), Field("a", IntType()), Field("b", STRING)]


@SETTINGS
@given(
    engine=st.sampled_from(["deduplicate", "first-row"]),
    ignore=st.sampled_from([None, "ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete"]),
    data=st.data(),
)
def test_deduplicate_and_first_row_match_model(engine: str, ignore: str | None, data: st.DataObject) -> None:
    options = {"merge-engine": engine}
    if ignore:
        options[ignore] = "true"
    check(SIMPLE_FIELDS, options, data.draw(rows_for(SIMPLE_FIELDS)))


# ======================================================================================
# partial-update
# ======================================================================================

PU_FIELDS = [
    Field("k", IntType()),
    Field("a", IntType()),
    Field("s1", IntType()),
    Field("b", IntType()),
    Field("s2", IntType()),
    Field("c", IntType()),
    Field("s3", IntType()),
    Field("d", IntType()),
]
PU_AGGS = [
    None,
    None,
    "sum",
    "product",
    "last_value",
    "last_non_null_value",
    "first_value",
    "first_non_null_value",
    "max",
    "min",
]


@st.composite
def partial_update_options(draw: st.DrawFn) -> dict[str, str]:
    options = {"merge-engine": "partial-update"}
    if not draw(st.booleans()):
        mode = draw(
            st.sampled_from(
                [
                    None,
                    "ignore-delete",
                    "partial-update.ignore-delete",
                    "partial-update.remove-record-on-delete",
                ]
            )
        )
        if mode:
            options[mode] = "true"
        if draw(st.booleans()):
            options["fields.default-aggregate-function"] = "last_non_null_value"
        return options
    seq1 = draw(st.sampled_from(["s1", "s1,s2"]))
    protected1 = draw(st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2, unique=True))
    if seq1 == "s1" and draw(st.booleans()):
        protected1.append("s2")
    options[f"fields.{seq1}.sequence-group"] = ",".join(protected1)
    groups = [seq1]
    protected = list(protected1)
    if draw(st.booleans()):
        options["fields.s3.sequence-group"] = "c"
        groups.append("s3")
        protected.append("c")
    for name in protected:
        fn = draw(st.sampled_from(PU_AGGS))
        if fn:
            options[f"fields.{name}.aggregate-function"] = fn
        if draw(st.booleans()):
            options[f"fields.{name}.ignore-retract"] = "true"
    if draw(st.booleans()):
        options["ignore-delete"] = "true"
    elif draw(st.booleans()):
        seq_fields = [s for g in groups for s in g.split(",")]
        chosen = draw(st.lists(st.sampled_from(seq_fields), min_size=1, max_size=2, unique=True))
        options["partial-update.remove-record-on-sequence-group"] = ",".join(chosen)
    return options


@SETTINGS
@given(options=partial_update_options(), data=st.data())
def test_partial_update_matches_model(options: dict[str, str], data: st.DataObject) -> None:
    check(PU_FIELDS, options, data.draw(rows_for(PU_FIELDS, max_rows=14)))


PU_TYPED_FIELDS = [
    Field("k", IntType()),
    Field("txt", STRING),
    Field("s1", IntType()),
    Field("arr", ArrayType(IntType())),
    Field("m", MapType(STRING.not_null(), IntType())),
    Field("s2", IntType()),
    Field("dbl", DoubleType()),
    Field("dec", DecimalType(10, 2)),
]
PU_TYPED_AGGS = {
    "txt": ["listagg", "first_non_null_value", "max"],
    "arr": ["collect", "last_value"],
    "m": ["merge_map"],
    "dbl": ["sum", "product", "min"],
    "dec": ["sum", "product", "last_non_null_value"],
}


@st.composite
def partial_update_typed_options(draw: st.DrawFn) -> dict[str, str]:
    options = {"merge-engine": "partial-update"}
    names = list(PU_TYPED_AGGS)
    first = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    second = [n for n in names if n not in first and draw(st.booleans())]
    options["fields.s1.sequence-group"] = ",".join(first)
    if second:
        options["fields.s2.sequence-group"] = ",".join(second)
    for name in first + second:
        fn = draw(st.sampled_from([*PU_TYPED_AGGS[name], None]))
        if fn:
            options[f"fields.{name}.aggregate-function"] = fn
        if draw(st.booleans()):
            options[f"fields.{name}.ignore-retract"] = "true"
        if fn in ("listagg", "collect") and draw(st.booleans()):
            options[f"fields.{name}.distinct"] = "true"
        if fn == "listagg":
            delimiter = draw(st.sampled_from([None, ";", "", "--"]))
            if delimiter is not None:
                options[f"fields.{name}.list-agg-delimiter"] = delimiter
    if draw(st.booleans()):
        options["ignore-delete"] = "true"
    elif draw(st.booleans()):
        options["partial-update.remove-record-on-sequence-group"] = draw(
            st.sampled_from(["s1", "s2"] if second else ["s1"])
        )
    return options


@SETTINGS
@given(options=partial_update_typed_options(), data=st.data())
def test_partial_update_typed_aggregations_match_model(options: dict[str, str], data: st.DataObject) -> None:
    check(PU_TYPED_FIELDS, options, data.draw(rows_for(PU_TYPED_FIELDS, max_rows=12)))


@settings(max_examples=max(60, EXAMPLES // 4), deadline=None)
@given(
    mode=st.sampled_from([None, "ignore-delete", "partial-update.remove-record-on-delete"]), data=st.data()
)
def test_partial_update_not_null_fields_match_model(mode: str | None, data: st.DataObject) -> None:
    fields = [Field("k", IntType()), Field("a", IntType(), nullable=False), Field("b", IntType())]
    options = {"merge-engine": "partial-update"}
    if mode:
        options[mode] = "true"
    check(fields, options, data.draw(rows_for(fields)))


# ======================================================================================
# aggregation
# ======================================================================================

AGG_COLUMNS: list[tuple[Field, list[str]]] = [
    (
        Field("i", IntType()),
        [
            "sum",
            "product",
            "max",
            "min",
            "last_value",
            "last_non_null_value",
            "first_value",
            "first_non_null_value",
            "first_not_null_value",
        ],
    ),
    (Field("l", BigIntType()), ["sum", "product", "max"]),
    (Field("dbl", DoubleType()), ["sum", "product", "max", "min"]),
    (Field("flt", FloatType()), ["sum", "product", "min"]),
    (Field("dec", DecimalType(10, 2)), ["sum", "max", "min", "product"]),
    (Field("wide", DecimalType(20, 2)), ["sum", "product"]),
    (Field("s", STRING), ["listagg", "max", "min", "last_value", "first_non_null_value"]),
    (Field("bo", BooleanType()), ["bool_and", "bool_or", "last_non_null_value"]),
    (Field("arr", ArrayType(IntType())), ["collect", "last_value"]),
    (Field("m", MapType(STRING.not_null(), IntType())), ["merge_map"]),
]


@st.composite
def aggregation_case(draw: st.DrawFn) -> tuple[list[Field], dict[str, str]]:
    chosen = draw(st.lists(st.sampled_from(range(len(AGG_COLUMNS))), min_size=1, max_size=4, unique=True))
    fields = [Field("k", IntType())] + [AGG_COLUMNS[i][0] for i in sorted(chosen)]
    options = {"merge-engine": "aggregation"}
    remove_on_delete = draw(st.booleans())
    if remove_on_delete:
        options["aggregation.remove-record-on-delete"] = "true"
    for i in sorted(chosen):
        field, functions = AGG_COLUMNS[i]
        fn = draw(st.sampled_from([*functions, None]))
        if fn is None:
            continue  # default last_non_null_value
        options[f"fields.{field.name}.aggregate-function"] = fn
        if not remove_on_delete and draw(st.booleans()):
            options[f"fields.{field.name}.ignore-retract"] = "true"
        if fn in ("listagg", "collect") and draw(st.booleans()):
            options[f"fields.{field.name}.distinct"] = "true"
        if fn == "listagg":
            delimiter = draw(st.sampled_from([None, ";", "", "--"]))
            if delimiter is not None:
                options[f"fields.{field.name}.list-agg-delimiter"] = delimiter
    return fields, options


@SETTINGS
@given(case=aggregation_case(), data=st.data())
def test_aggregation_matches_model(case: tuple[list[Field], dict[str, str]], data: st.DataObject) -> None:
    fields, options = case
    check(fields, options, data.draw(rows_for(fields)))


@settings(max_examples=max(100, EXAMPLES // 2), deadline=None)
@given(fn=st.sampled_from(["sum", "product", "last_non_null_value"]), data=st.data())
def test_aggregation_default_function_and_sequence_field_match_model(fn: str, data: st.DataObject) -> None:
    fields = [Field("k", IntType()), Field("a", IntType()), Field("b", IntType()), Field("ts", IntType())]
    options = {
        "merge-engine": "aggregation",
        "fields.default-aggregate-function": fn,
        "fields.b.aggregate-function": "max",
        "fields.b.ignore-retract": "true",
        "sequence.field": "ts",
    }
    check(fields, options, data.draw(rows_for(fields)))


@settings(max_examples=max(150, EXAMPLES // 2), deadline=None)
@given(
    fn=st.sampled_from(["sum", "product"]),
    t=st.sampled_from([IntType(), BigIntType()]),
    values=st.lists(
        st.one_of(st.none(), st.sampled_from([2**31 - 1, -(2**31), 2**62, -(2**63), 2**63 - 1, 3, -1, 0])),
        min_size=2,
        max_size=6,
    ),
    kinds=st.lists(KIND, min_size=6, max_size=6),
)
def test_integer_overflow_matches_model(fn: str, t: Any, values: list[int | None], kinds: list[int]) -> None:
    low, high = (-(2**31), 2**31 - 1) if isinstance(t, IntType) else (-(2**63), 2**63 - 1)
    values = [v if v is None or low <= v <= high else high for v in values]
    fields = [Field("k", IntType()), Field("v", t)]
    rows = [KV((1,), i, kinds[i], [1, v]) for i, v in enumerate(values)]
    check(fields, {"merge-engine": "aggregation", "fields.v.aggregate-function": fn}, rows)
