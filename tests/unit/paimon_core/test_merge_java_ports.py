"""Java's own merge-function tests, ported.

Sources (apache/paimon, paimon-core/src/test/java/org/apache/paimon/mergetree/compact/):
``PartialUpdateMergeFunctionTest``, ``aggregate/AggregateMergeFunctionTest``,
``aggregate/FieldAggregatorTest``, ``aggregate/FieldAggregatorRetractNullTest``.

Java drives one merge function row by row and checks its state after some rows; here
each check merges the rows added so far as one key (checks after a single row are left
out: Java's readers never pass a lone row through the merge function). Aggregator-level
tests call :meth:`FieldAggregator.fold` on one key: ``agg(acc, v)`` is a reset to ``acc``
followed by an ``agg`` of ``v``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidOptionError
from paimon_core.format.arrow_types import to_arrow_type
from paimon_core.mergetree.agg_factory import create_field_aggregator
from paimon_core.mergetree.aggregators import OP_AGG, OP_RETRACT, OP_SKIP
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_function import create_merge_function
from paimon_core.mergetree.segments import Segments
from paimon_core.schema.data_types import (
    ArrayType,
    BigIntType,
    BooleanType,
    DataField,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    MapType,
    RowType,
    SmallIntType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

INS, UB, UA, D = 0, 1, 2, 3
STRING = VarCharType(VarCharType.MAX_LENGTH)


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def _fields(types: Sequence[DataType], names: Sequence[str] | None = None) -> list[DataField]:
    names = names or [f"f{i}" for i in range(len(types))]
    return [DataField(i, n, t) for i, (n, t) in enumerate(zip(names, types, strict=True))]


def _merge(
    options: Mapping[str, str],
    rows: Sequence[tuple[int, Sequence[Any]]],
    types: Sequence[DataType],
    *,
    names: Sequence[str] | None = None,
    pk: str | None = "f0",
) -> dict[str, Any] | None:
    """Merge ``rows`` (kind, values) as one key; ``pk=None`` adds a constant key column ``k``."""
    fields = _fields(types, names)
    if pk is None:
        key = DataField(100, "k", IntType(nullable=False))
        fields = [key, *fields]
        rows = [(kind, [1, *values]) for kind, values in rows]
    else:
        key = next(f for f in fields if f.name == pk)
    mf = create_merge_function([key], fields, dict(options))
    cols = {
        f.name: pa.array([r[1][i] for r in rows], type=to_arrow_type(f.type)) for i, f in enumerate(fields)
    }
    cols["_SEQUENCE_NUMBER"] = pa.array(range(len(rows)), pa.int64())
    cols["_VALUE_KIND"] = pa.array([r[0] for r in rows], pa.int8())
    out = mf.merge(pa.table(cols), drop_retracts=False).to_pylist()
    assert len(out) <= 1
    if not out:
        return None
    if pk is None:
        out[0].pop("k")
    return out[0]


def _values(row: dict[str, Any] | None) -> list[Any]:
    assert row is not None
    return [v for k, v in row.items() if not k.startswith("_")]


class Steps:
    """Java's ``add(...)`` / ``validate(...)`` sequence, checked on the rows so far."""

    def __init__(self, options: Mapping[str, str], types: Sequence[DataType], **kwargs: Any) -> None:
        self.options, self.types, self.kwargs = options, types, kwargs
        self.rows: list[tuple[int, Sequence[Any]]] = []

    def add(self, *values: Any, kind: int = INS) -> Steps:
        self.rows.append((kind, list(values)))
        return self

    def validate(self, *expected: Any) -> Steps:
        assert len(self.rows) >= 2, "a single row is passed through, not merged"
        assert _values(_merge(self.options, self.rows, self.types, **self.kwargs)) == list(expected)
        return self

    def reset(self) -> Steps:
        self.rows = []
        return self


INT7 = [IntType()] * 7


def _fold(
    function: str,
    t: DataType,
    values: Sequence[Any],
    ops: Sequence[int],
    options: Mapping[str, str] | None = None,
) -> Any:
    """One key: reset to ``values[0]``, then apply ``ops[1:]`` (Java's reduce / agg / retract)."""
    field = DataField(0, "fieldName", t)
    agg = create_field_aggregator(field, function, options or {})
    arr = pa.array(list(values), type=to_arrow_type(t))
    seg = Segments.from_starts(np.array([0], dtype=np.int64), len(values))
    reset = np.zeros(len(values), dtype=np.bool_)
    reset[0] = True
    out = agg.fold(arr, seg, np.array([OP_SKIP, *ops[1:]], dtype=np.int8), reset)
    return out.to_pylist()[0]


def agg(function: str, t: DataType, acc: Any, value: Any, options: Mapping[str, str] | None = None) -> Any:
    return _fold(function, t, [acc, value], [OP_SKIP, OP_AGG], options)


def retract(
    function: str, t: DataType, acc: Any, value: Any, options: Mapping[str, str] | None = None
) -> Any:
    return _fold(function, t, [acc, value], [OP_SKIP, OP_RETRACT], options)


def reduce(
    function: str, t: DataType, values: Sequence[Any], options: Mapping[str, str] | None = None
) -> Any:
    return _fold(function, t, values, [OP_SKIP] + [OP_AGG] * (len(values) - 1), options)


# ======================================================================================
# PartialUpdateMergeFunctionTest
# ======================================================================================

PU = {"merge-engine": "partial-update"}


def test_update_non_null() -> None:
    Steps(PU, INT7).add(1, 1, 1, 1, 1, 1, 1).add(1, 2, 2, 2, 2, 2, None).validate(1, 2, 2, 2, 2, 2, 1)


def test_sequence_group() -> None:
    options = {**PU, "fields.f3.sequence-group": "f1,f2", "fields.f6.sequence-group": "f4,f5"}
    s = Steps(options, INT7)
    s.add(1, 1, 1, 1, 1, 1, 1).add(1, 2, 2, 2, 2, 2, None).validate(1, 2, 2, 2, 1, 1, 1)
    s.add(1, 3, 3, 1, 3, 3, 3).validate(1, 2, 2, 2, 3, 3, 3)
    s.add(1, 1, 1, 3, 1, 1, None, kind=D).validate(1, None, None, 3, 3, 3, 3)
    s.add(1, 1, 1, 3, 1, 1, 4, kind=D).validate(1, None, None, 3, None, None, 4)
    s.add(1, 4, 4, 4, 5, 5, 5).validate(1, 4, 4, 4, 5, 5, 5)
    s.add(1, 1, 1, 6, 1, 1, 6, kind=D).validate(1, None, None, 6, None, None, 6)


def test_sequence_group_partial_delete() -> None:
    options = {
        **PU,
        "fields.f3.sequence-group": "f1,f2",
        "fields.f6.sequence-group": "f4,f5",
        "partial-update.remove-record-on-sequence-group": "f6",
    }
    s = Steps(options, INT7)
    s.add(1, 1, 1, 1, 1, 1, 1).add(1, 2, 2, 2, 2, 2, None).validate(1, 2, 2, 2, 1, 1, 1)
    s.add(1, 3, 3, 1, 3, 3, 3).validate(1, 2, 2, 2, 3, 3, 3)
    s.add(1, 1, 1, 3, 1, 1, None, kind=D).validate(1, None, None, 3, 3, 3, 3)
    s.add(1, 1, 1, 3, 1, 1, 4, kind=D).validate(1, 1, 1, 3, 1, 1, 4)
    s.add(1, 4, 4, 4, 5, 5, 5).validate(1, 4, 4, 4, 5, 5, 5)
    s.add(1, 1, 1, 6, 1, 1, 6, kind=D).validate(1, 1, 1, 6, 1, 1, 6)
    assert _merge(options, s.rows, INT7)["_VALUE_KIND"] == D  # type: ignore[index]


def test_sequence_group_partial_delete_reordered_fields() -> None:
    """testSequenceGroupPartialDeleteWithProjection, on the full (reordered) row."""
    options = {
        **PU,
        "fields.f3.sequence-group": "f1,f2",
        "fields.f6.sequence-group": "f4,f5",
        "partial-update.remove-record-on-sequence-group": "f3,f6",
    }
    names = ["f3", "f6", "f0", "f1", "f2", "f4", "f5"]
    row = [11, 22, 100, 200, 1, 12, 21]
    out = _merge(options, [(INS, row), (D, row)], INT7, names=names)
    assert _values(out) == row and out is not None and out["_VALUE_KIND"] == D


def test_multi_sequence_fields() -> None:
    options = {**PU, "fields.f3,f4.sequence-group": "f1,f2", "fields.f7,f8.sequence-group": "f5,f6"}
    s = Steps(options, [IntType()] * 9)
    # null sequence fields
    s.add(1, None, None, None, None, 1, 1, 1, 3).add(1, 2, 2, None, None, 2, 2, 1, 3)
    s.validate(1, None, None, None, None, 2, 2, 1, 3)
    s.reset()
    s.add(1, 1, 1, 1, 1, 1, 1, 1, 3).add(1, 2, 2, 2, 2, 2, 1, 1, None).validate(1, 2, 2, 2, 2, 1, 1, 1, 3)
    s.add(1, 1, 3, 1, 3, 3, 3, 3, 2).validate(1, 2, 2, 2, 2, 3, 3, 3, 2)
    s.add(1, 1, 1, 3, 3, 1, 1, None, None, kind=D).validate(1, None, None, 3, 3, 3, 3, 3, 2)
    s.add(1, 1, 1, 3, 1, 1, 1, 4, 4, kind=D).validate(1, None, None, 3, 3, None, None, 4, 4)
    s.add(1, 4, 4, 4, 4, 5, 5, 5, 5).validate(1, 4, 4, 4, 4, 5, 5, 5, 5)
    s.add(1, 1, 1, 6, 1, 1, 1, 6, 1, kind=D).validate(1, None, None, 6, 1, None, None, 6, 1)


def test_sequence_group_default_agg_func() -> None:
    options = {
        **PU,
        "fields.f3.sequence-group": "f1,f2",
        "fields.f6.sequence-group": "f4,f5",
        "fields.default-aggregate-function": "last_non_null_value",
    }
    s = Steps(options, INT7)
    s.add(1, 1, 1, 1, 1, 1, 1).add(1, 2, 2, 2, 2, 2, None).validate(1, 2, 2, 2, 1, 1, 1)
    s.add(1, 3, 3, 1, 3, 3, 3).validate(1, 2, 2, 2, 3, 3, 3)
    s.add(1, 4, None, 4, 5, None, 5).validate(1, 4, 2, 4, 5, 3, 5)


def test_multi_sequence_fields_default_agg_func() -> None:
    options = {
        **PU,
        "fields.f3,f4.sequence-group": "f1,f2",
        "fields.f7,f8.sequence-group": "f5,f6",
        "fields.default-aggregate-function": "last_non_null_value",
    }
    s = Steps(options, [IntType()] * 9)
    s.add(1, 1, 1, 1, 1, 1, 1, 1, 1).add(1, 2, 2, 2, 2, 2, 2, None, None).validate(1, 2, 2, 2, 2, 1, 1, 1, 1)
    s.add(1, 3, 3, 1, 1, 3, 3, 3, 3).validate(1, 2, 2, 2, 2, 3, 3, 3, 3)
    s.add(1, 4, None, 4, 4, 5, None, 5, 5).validate(1, 4, 2, 4, 4, 5, 3, 5, 5)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"fields.f3.sequence-group": "f1,f2,f7", "fields.f6.sequence-group": "f4,f5"},
            "can not be found in table schema",
        ),
        (
            {"fields.f2,f3.sequence-group": "f1,f7", "fields.f5,f6.sequence-group": "f4"},
            "can not be found in table schema",
        ),
        (
            {"fields.f3.sequence-group": "f1,f2", "fields.f4.sequence-group": "f1,f2"},
            "is defined repeatedly by multiple groups",
        ),
        (
            {"fields.f3,f4.sequence-group": "f1,f2", "fields.f5,f6.sequence-group": "f1,f2"},
            "is defined repeatedly by multiple groups",
        ),
        (
            {"fields.f0.sequence-group": "f1,f2"},
            "The sequence-group 'fields.f0.sequence-group' contains primary key field 'f0'",
        ),
        (
            {"fields.f4.sequence-group": "f0,f2"},
            "The sequence-group 'fields.f4.sequence-group' contains primary key field 'f0'",
        ),
        (
            {"fields.f1.aggregate-function": "listagg"},
            "Must use sequence group for aggregation functions but not found for field f1.",
        ),
        (
            {
                "fields.g.sequence-group": "f1",
                "fields.f1.aggregate-function": "sum",
                "fields.f2.aggregate-function": "sum",
            },
            "Must use sequence group for aggregation functions but not found for field f2.",
        ),
    ],
)
def test_partial_update_invalid_options(options: dict[str, str], message: str) -> None:
    fields = _fields(INT7) + [DataField(7, "g", IntType())]
    with pytest.raises(InvalidOptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        create_merge_function(fields[:1], fields, {**PU, **options})


def test_sequence_field_null_does_not_update_group() -> None:
    """testAdjustProjectionSequenceFieldsProject on the full row: f4 null leaves f1/f3 alone."""
    options = {**PU, "fields.f4.sequence-group": "f1,f3", "fields.f5.sequence-group": "f7"}
    rows = [(INS, [1, 1, None, 1, 1, 1, None, 1]), (INS, [1, 1, None, 2, None, 2, None, 2])]
    assert _values(_merge(options, rows, [IntType()] * 8)) == [1, 1, None, 1, 1, 2, None, 2]


def test_multi_sequence_fields_one_null() -> None:
    """testMultiSequenceFieldsAdjustProjectionProject on the full row: (f2, f4) = (1, null) vs (1, 1)."""
    options = {**PU, "fields.f2,f4.sequence-group": "f1,f3", "fields.f5,f6.sequence-group": "f7"}
    rows = [(INS, [1, 1, 1, 1, 1, 1, 1, 1]), (INS, [1, 3, 1, 1, None, 2, 2, 2])]
    # (1, null) < (1, 1): group f1/f3 stays; (2, 2) > (1, 1): f7 updates
    assert _values(_merge(options, rows, [IntType()] * 8)) == [1, 1, 1, 1, 1, 2, 2, 2]


def test_unprotected_field_not_updated_by_null() -> None:
    """testAdjustProjectionAllFieldsProject / NonProject (key held separately: f0 changes)."""
    options = {**PU, "fields.f4.sequence-group": "f1,f3", "fields.f5.sequence-group": "f7"}
    rows = [(INS, [1, 1, 1, 1, 1, 1, 1, 1]), (INS, [4, 2, 4, 2, 2, 0, None, 3])]
    assert _values(_merge(options, rows, [IntType()] * 8, pk=None)) == [4, 2, 4, 2, 2, 1, 1, 1]


def test_no_sequence_group_never_updates_by_null() -> None:
    """testAdjustProjectionNoSequenceGroup (key held separately: f0 changes)."""
    s = Steps(PU, [IntType()] * 5, pk=None)
    s.add(1, 1, 1, 1, 1).add(3, 3, None, 3, 3).validate(3, 3, 1, 3, 3)
    s.add(2, 2, 2, 2, 2).validate(2, 2, 2, 2, 2)


def test_first_value_in_sequence_group() -> None:
    options = {
        **PU,
        "fields.f1.sequence-group": "f2,f3",
        "fields.f2.aggregate-function": "first_value",
        "fields.f3.aggregate-function": "last_value",
    }
    s = Steps(options, [IntType()] * 4)
    s.add(1, 1, 1, 1).add(1, 2, 2, 2).validate(1, 2, 1, 2)
    s.add(1, 0, 3, 3).validate(1, 2, 3, 2)


def test_multi_sequence_fields_first_value() -> None:
    options = {
        **PU,
        "fields.f1,f2.sequence-group": "f3,f4",
        "fields.f3.aggregate-function": "first_value",
        "fields.f4.aggregate-function": "last_value",
    }
    s = Steps(options, [IntType()] * 5)
    s.add(1, 1, 1, 1, 1).add(1, 2, 2, 2, 2).validate(1, 2, 2, 1, 2)
    s.add(1, 0, 1, 3, 3).validate(1, 2, 2, 3, 2)


def test_partial_update_with_aggregation() -> None:
    options = {
        **PU,
        "fields.f1.sequence-group": "f2,f3,f4",
        "fields.f7.sequence-group": "f6",
        "fields.f0.aggregate-function": "listagg",
        "fields.f2.aggregate-function": "sum",
        "fields.f4.aggregate-function": "last_value",
        "fields.f6.aggregate-function": "last_non_null_value",
        "fields.f4.ignore-retract": "true",
        "fields.f6.ignore-retract": "true",
    }
    s = Steps(options, [IntType()] * 8)
    s.add(1, 1, 1, 1, 1, 1, 1, 1).add(1, 2, 1, 2, 2, 2, 2, 0).validate(1, 2, 2, 2, 2, 2, 1, 1)
    # g_1, g_2 not advanced
    s.add(1, 1, 1, 1, 1, 1, 2, 0).validate(1, 2, 3, 2, 2, 1, 1, 1)
    s.add(1, 1, -1, 1, 1, 2, 2, 0)
    # null
    s.add(1, 3, None, None, None, None, None, 2).validate(1, 3, 2, None, None, 2, 1, 2)
    # retract
    s.add(1, 3, 1, 1, 1, 1, 1, 3).validate(1, 3, 3, 1, 1, 1, 1, 3)
    s.add(1, 3, 2, 1, 1, 1, 1, 3, kind=UB).validate(1, 3, 1, None, 1, 1, 1, 3)
    s.add(1, 3, 2, 1, 1, 1, 1, 3, kind=D).validate(1, 3, -1, None, 1, 1, 1, 3)
    # retract for an old sequence
    s.add(1, 2, 2, 1, 1, 1, 1, 3, kind=D).validate(1, 3, -3, None, 1, 1, 1, 3)


def test_partial_update_with_aggregation_subset_of_fields() -> None:
    """testPartialUpdateWithAggregationProjectPushDown, on the full row (f4, f6, f7 stay null)."""
    options = {
        **PU,
        "fields.f1.sequence-group": "f2,f3,f4",
        "fields.f7.sequence-group": "f6",
        "fields.f0.aggregate-function": "listagg",
        "fields.f2.aggregate-function": "sum",
        "fields.f4.aggregate-function": "last_value",
        "fields.f6.aggregate-function": "last_non_null_value",
        "fields.f4.ignore-retract": "true",
        "fields.f6.ignore-retract": "true",
    }
    names = ["f3", "f2", "f5", "f1", "f0", "f4", "f6", "f7"]
    s = Steps(options, [IntType()] * 8, names=names)

    def row(f3: Any, f2: Any, f5: Any, f1: Any) -> list[Any]:
        return [f3, f2, f5, f1, 1, None, None, None]

    s.add(*row(1, 1, 1, 1)).add(*row(2, 1, 2, 2)).validate(*row(2, 2, 2, 2))
    s.add(*row(None, None, None, 3)).validate(*row(None, 2, 2, 3))
    s.add(*row(1, 2, 1, 3), kind=UB).validate(*row(None, 0, 2, 3))
    s.add(*row(1, 2, 1, 3), kind=D).validate(*row(None, -2, 2, 3))


def test_delete_reproduces_sequence_number() -> None:
    options = {**PU, "partial-update.remove-record-on-delete": "true"}
    out = _merge(options, [(INS, [1, 1, 1, 1, 1]), (D, [1, 1, 1, 1, 1])], [IntType()] * 5)
    assert out is not None and out["_SEQUENCE_NUMBER"] == 1 and out["_VALUE_KIND"] == D


def test_init_row_with_nullable_field_on_delete() -> None:
    options = {**PU, "partial-update.remove-record-on-delete": "true"}
    types = [IntType(nullable=False), IntType(nullable=False), IntType(), IntType()]
    s = Steps(options, types)
    s.add(1, 3, 5, 7).add(1, 2, 2, None, kind=D).validate(1, 2, 2, None)


def test_partial_update_rejects_delete_by_default() -> None:
    with pytest.raises(MergeError, match="Partial update can not accept delete records"):
        _merge(PU, [(INS, [1, 1]), (D, [1, 1])], [IntType()] * 2)


# ======================================================================================
# AggregateMergeFunctionTest
# ======================================================================================

AGG = {"merge-engine": "aggregation"}


def test_default_agg_func() -> None:
    options = {
        **AGG,
        "fields.default-aggregate-function": "first_non_null_value",
        "fields.b.aggregate-function": "sum",
    }
    rows = [
        (INS, [1, None, 1, 1, 1]),
        (INS, [1, 2, None, 2, 2]),
        (INS, [1, 3, 3, None, 3]),
        (INS, [1, 4, 4, 4, None]),
        (INS, [1, 5, 5, 5, 5]),
    ]
    out = _merge(options, rows, [IntType()] * 5, names=["k", "a", "b", "c", "d"], pk="k")
    assert _values(out) == [1, 2, 13, 1, 1]


def test_list_agg_func() -> None:
    options = {
        **AGG,
        "fields.a.aggregate-function": "listagg",
        "fields.b.aggregate-function": "listagg",
        "fields.b.list-agg-delimiter": "-",
        "fields.d.aggregate-function": "listagg",
        "fields.d.list-agg-delimiter": "/",
    }
    rows = [(INS, [1, str(i), str(i), i, str(i)]) for i in range(1, 6)]
    out = _merge(
        options, rows, [IntType(), STRING, STRING, IntType(), STRING], names=["k", "a", "b", "c", "d"], pk="k"
    )
    assert _values(out) == [1, "1,2,3,4,5", "1-2-3-4-5", 5, "1/2/3/4/5"]


def test_aggregation_init_row_with_nullable_field_on_delete() -> None:
    options = {
        **AGG,
        "fields.default-aggregate-function": "sum",
        "aggregation.remove-record-on-delete": "true",
    }
    types = [IntType(nullable=False), IntType(nullable=False), IntType(), IntType()]
    out = _merge(
        options, [(INS, [1, 0, 0, 5]), (D, [1, 2, 2, None])], types, names=["k", "a", "b", "c"], pk="k"
    )
    assert _values(out) == [1, 2, 2, None] and out is not None and out["_VALUE_KIND"] == D


def test_aggregation_not_null_on_delete_reset() -> None:
    options = {**AGG, "aggregation.remove-record-on-delete": "true"}
    types = [IntType(nullable=False), IntType(nullable=False)]
    with pytest.raises(MergeError, match="can not be null"):
        _merge(options, [(INS, [1, 0]), (D, [1, None])], types, names=["k", "a"], pk="k")


# ======================================================================================
# FieldAggregatorTest
# ======================================================================================


def test_bool_and_or() -> None:
    assert agg("bool_and", BooleanType(), False, True) is False
    assert agg("bool_and", BooleanType(), True, True) is True
    assert agg("bool_or", BooleanType(), False, True) is True
    assert agg("bool_or", BooleanType(), False, False) is False


def test_last_non_null_and_last_value() -> None:
    assert agg("last_non_null_value", IntType(), None, 1) == 1
    assert agg("last_non_null_value", IntType(), 1, None) == 1
    assert agg("last_value", IntType(), None, 1) == 1
    assert agg("last_value", IntType(), 1, None) is None


def test_first_value_and_first_non_null_value() -> None:
    # agg(null, 1) = 1; agg(1, 2) = 1 (same aggregator); reset; agg(1, 3) = 3
    assert _fold("first_value", IntType(), [None, 1, 2], [OP_SKIP, OP_AGG, OP_AGG]) == 1
    assert agg("first_value", IntType(), 1, 3) == 3
    assert (
        _fold("first_non_null_value", IntType(), [None, None, 1, 2], [OP_SKIP, OP_AGG, OP_AGG, OP_AGG]) == 1
    )
    assert agg("first_non_null_value", IntType(), None, None) is None
    assert agg("first_non_null_value", IntType(), 1, 3) == 3


DISTINCT = {"fields.fieldName.distinct": "true"}


@pytest.mark.parametrize(
    ("values", "options", "expected"),
    [
        (["user1", "user2"], {}, "user1,user2"),
        (["user1", "user2", "user1", "user3"], DISTINCT, "user1,user2,user3"),
        (["", ""], {**DISTINCT, "fields.fieldName.list-agg-delimiter": ";"}, ""),
        (["user1", "user2", "user1,user3"], DISTINCT, "user1,user2,user3"),
        (["", "user2", "user1,user3"], DISTINCT, "user2,user1,user3"),
        (
            ["k1=v1;k2=v2", "k1=v1;k3=v3", ""],
            {**DISTINCT, "fields.fieldName.list-agg-delimiter": ";"},
            "k1=v1;k2=v2;k3=v3",
        ),
        (
            ["k1=v1 k2=v2", " k1=v1  k3=v3", " "],
            {**DISTINCT, "fields.fieldName.list-agg-delimiter": " "},
            "k1=v1 k2=v2 k3=v3",
        ),
        (["k1=v1,k2=v2", "k1=v1,k2=v3", ""], DISTINCT, "k1=v1,k2=v2,k2=v3"),
        (["user1", "user2"], {"fields.fieldName.list-agg-delimiter": "-"}, "user1-user2"),
        (["abc,def,asd", "ab,xy"], DISTINCT, "abc,def,asd,ab,xy"),
        (
            ["abc;def;asd", "ab;xy;def"],
            {**DISTINCT, "fields.fieldName.list-agg-delimiter": ";"},
            "abc;def;asd;ab;xy",
        ),
        (
            [
                "user1",
                "",
                " ",
                "   ",
                "\t",
                "\n",
                "\r",
                "\r\n",
                " \t\n ",
                " \t\n\r\n \u3000 ",
                "user2",
                "\u3000",
                "\u2000",
            ],
            {},
            "user1,user2",
        ),
        (
            [
                "user1",
                "user2",
                "user1",
                "user3",
                "",
                " ",
                "   ",
                "\t",
                "\n",
                "\r",
                "\r\n",
                " \t\n ",
                " \t\n\r\n \u3000 ",
                "user2",
                "user3",
                "\u3000",
                "\u2000",
            ],
            DISTINCT,
            "user1,user2,user3",
        ),
        ([None, " ", "first line"], {}, "first line"),
        # re-splitting the accumulator: an empty delimiter joins with "" but splits on " "
        (["a", "b", "a"], {**DISTINCT, "fields.fieldName.list-agg-delimiter": ""}, "aba"),
        (["x-", "-y", "x"], {**DISTINCT, "fields.fieldName.list-agg-delimiter": "--"}, "x----y"),
    ],
)
def test_listagg(values: list[str | None], options: dict[str, str], expected: str) -> None:
    assert reduce("listagg", STRING, values, options) == expected


def test_listagg_needs_unbounded_string() -> None:
    with pytest.raises(InvalidOptionError, match=r"STRING \(unbounded VARCHAR\)"):
        create_field_aggregator(DataField(0, "f", VarCharType(100)), "listagg", {})


def test_max_min() -> None:
    assert agg("max", IntType(), 1, 10) == 10
    assert agg("min", IntType(), 1, 10) == 1
    for acc, value, mx, mn in [
        (None, True, True, True),
        (False, None, False, False),
        (False, True, True, False),
        (True, False, True, False),
        (True, True, True, True),
        (False, False, False, False),
    ]:
        assert agg("max", BooleanType(), acc, value) is mx
        assert agg("min", BooleanType(), acc, value) is mn


@pytest.mark.parametrize(
    ("t", "value"),
    [
        (BooleanType(), True),
        (TinyIntType(), 1),
        (SmallIntType(), 1),
        (IntType(), 1),
        (BigIntType(), 1),
        (FloatType(), 1.0),
        (DoubleType(), 1.0),
        (DecimalType(4, 2), Decimal("0.01")),
        (STRING, "a"),
        (VarBinaryType(1), b"\x01"),
    ],
)
def test_max_min_on_comparable_types(t: DataType, value: Any) -> None:
    assert agg("max", t, value, value) == value
    assert agg("min", t, value, value) == value


@pytest.mark.parametrize(
    "t",
    [ArrayType(IntType()), MapType(IntType(), IntType()), RowType(fields=(DataField(0, "f0", IntType()),))],
)
def test_max_min_reject_incomparable_types(t: DataType) -> None:
    for fn in ("max", "min"):
        with pytest.raises(InvalidOptionError, match="comparable"):
            create_field_aggregator(DataField(0, "label", t), fn, {})


@pytest.mark.parametrize(
    "t",
    [TinyIntType(), SmallIntType(), IntType(), BigIntType(), FloatType(), DoubleType(), DecimalType(10, 0)],
)
def test_sum_and_product(t: DataType) -> None:
    def n(x: int) -> Any:
        return (
            float(x)
            if isinstance(t, (FloatType, DoubleType))
            else Decimal(x)
            if isinstance(t, DecimalType)
            else x
        )

    assert agg("sum", t, None, n(10)) == n(10)
    assert agg("sum", t, n(1), n(10)) == n(11)
    assert retract("sum", t, n(10), n(5)) == n(5)
    assert retract("sum", t, None, n(5)) == n(-5)
    assert agg("product", t, None, n(10)) == n(10)
    assert agg("product", t, n(1), n(10)) == n(10)
    assert retract("product", t, n(10), n(5)) == n(2)
    assert retract("product", t, None, n(5)) is None


@pytest.mark.parametrize(
    ("t", "op", "acc", "value"),
    [
        (TinyIntType(), "agg", 64, 2),
        (TinyIntType(), "agg", -64, 4),
        (SmallIntType(), "agg", 1000, 100),
        (SmallIntType(), "agg", -(2**15), 2),
        (IntType(), "agg", 100_000, 100_000),
        (IntType(), "agg", -(2**31), -1),
        (BigIntType(), "agg", 2**63 - 1, 2),
        (BigIntType(), "agg", -(2**63), -1),
        (TinyIntType(), "retract", -128, -1),
        (SmallIntType(), "retract", -(2**15), -1),
        (IntType(), "retract", -(2**31), -1),
        (BigIntType(), "retract", -(2**63), -1),
    ],
)
def test_product_overflow(t: DataType, op: str, acc: int, value: int) -> None:
    with pytest.raises(MergeError):
        (agg if op == "agg" else retract)("product", t, acc, value)


@pytest.mark.parametrize(
    ("t", "op", "acc", "value"),
    [
        (TinyIntType(), "agg", 127, 1),
        (TinyIntType(), "agg", -128, -1),
        (SmallIntType(), "agg", 2**15 - 1, 1),
        (SmallIntType(), "agg", -(2**15), -1),
        (IntType(), "agg", 2**31 - 1, 1),
        (IntType(), "agg", -(2**31), -1),
        (BigIntType(), "agg", 2**63 - 1, 1),
        (BigIntType(), "agg", -(2**63), -1),
        (TinyIntType(), "retract", -128, 1),
        (TinyIntType(), "retract", 127, -1),
        (TinyIntType(), "retract", None, -128),
        (SmallIntType(), "retract", -(2**15), 1),
        (SmallIntType(), "retract", 2**15 - 1, -1),
        (SmallIntType(), "retract", None, -(2**15)),
        (IntType(), "retract", -(2**31), 1),
        (IntType(), "retract", 2**31 - 1, -1),
        (IntType(), "retract", None, -(2**31)),
        (BigIntType(), "retract", -(2**63), 1),
        (BigIntType(), "retract", 2**63 - 1, -1),
        (BigIntType(), "retract", None, -(2**63)),
    ],
)
def test_sum_overflow(t: DataType, op: str, acc: int | None, value: int) -> None:
    with pytest.raises(MergeError, match="overflow"):
        (agg if op == "agg" else retract)("sum", t, acc, value)


ARRAY_INT = ArrayType(IntType())


def test_collect_distinct() -> None:
    assert agg("collect", ARRAY_INT, None, None, DISTINCT) is None
    assert sorted(agg("collect", ARRAY_INT, None, [1, 1, 2], DISTINCT)) == [1, 2]
    assert sorted(agg("collect", ARRAY_INT, [1, 1, 2], [2, 3], DISTINCT)) == [1, 2, 3]


def test_collect_distinct_binary() -> None:
    t = ArrayType(VarBinaryType(10))
    assert sorted(agg("collect", t, [b"\x01\x02"], [b"\x01\x02", b"\x03\x04"], DISTINCT)) == [
        b"\x01\x02",
        b"\x03\x04",
    ]
    assert retract("collect", t, [b"\x01\x02", b"\x03\x04"], [b"\x01\x02"], DISTINCT) == [b"\x03\x04"]


def test_collect_distinct_rows_arrays_maps() -> None:
    row = RowType(fields=(DataField(0, "a", IntType()), DataField(1, "b", STRING)))
    t = ArrayType(row)
    in1 = [{"a": 1, "b": "A"}, {"a": 1, "b": "B"}]
    in2 = [{"a": 1, "b": "A"}, {"a": 2, "b": "A"}]
    assert agg("collect", t, None, None, DISTINCT) is None
    assert agg("collect", t, None, in1, DISTINCT) == in1
    assert agg("collect", t, in1, in2, DISTINCT) == [*in1, {"a": 2, "b": "A"}]
    arrays = ArrayType(ArrayType(IntType()))
    assert agg("collect", arrays, [[1, 1], [1, 2]], [[1, 1], [1, 2], [2, 1]], DISTINCT) == [
        [1, 1],
        [1, 2],
        [2, 1],
    ]
    maps = ArrayType(MapType(IntType(), STRING))
    got = agg(
        "collect",
        maps,
        [[(1, "A")], [(1, "A"), (2, "B")]],
        [[(1, "A")], [(2, "B"), (1, "A")], [(1, "C")]],
        DISTINCT,
    )
    assert [dict(m) for m in got] == [{1: "A"}, {1: "A", 2: "B"}, {1: "C"}]


def test_collect_without_distinct() -> None:
    options = {"fields.fieldName.distinct": "false"}
    assert agg("collect", ARRAY_INT, None, None, options) is None
    assert agg("collect", ARRAY_INT, None, [1, 1, 2], options) == [1, 1, 2]
    assert agg("collect", ARRAY_INT, [1, 1, 2], [2, 3], options) == [1, 1, 2, 2, 3]


def test_collect_retract() -> None:
    assert sorted(retract("collect", ARRAY_INT, [1, 2, 3], [1], DISTINCT)) == [2, 3]
    assert sorted(retract("collect", ARRAY_INT, [1, 1, 2, 2, 3], [1, 2, 3], DISTINCT)) == [1, 2]
    row = RowType(fields=(DataField(0, "a", IntType()), DataField(1, "b", STRING)))
    acc = [{"a": 1, "b": "A"}, {"a": 1, "b": "A"}, {"a": 1, "b": "B"}, {"a": 2, "b": "B"}]
    assert retract("collect", ArrayType(row), acc, [{"a": 1, "b": "A"}, {"a": 2, "b": "B"}], DISTINCT) == [
        {"a": 1, "b": "A"},
        {"a": 1, "b": "B"},
    ]
    arrays = ArrayType(ArrayType(IntType()))
    assert retract("collect", arrays, [[1, 1], [1, 1], [1, 2], [2, 1]], [[1, 1], [1, 2]], DISTINCT) == [
        [1, 1],
        [2, 1],
    ]
    maps = ArrayType(MapType(IntType(), STRING))
    got = retract(
        "collect",
        maps,
        [[(1, "A")], [(1, "A")], [(2, "B"), (1, "A")], [(1, "C")]],
        [[(1, "A")], [(1, "A"), (2, "B")]],
        DISTINCT,
    )
    assert [dict(m) for m in got] == [{1: "A"}, {1: "C"}]


MAP_INT_STRING = MapType(IntType(), STRING)


def test_merge_map() -> None:
    assert agg("merge_map", MAP_INT_STRING, None, None) is None
    assert dict(agg("merge_map", MAP_INT_STRING, None, [(1, "A")])) == {1: "A"}
    assert dict(
        reduce("merge_map", MAP_INT_STRING, [[(1, "A")], [(1, "A"), (2, "B")], [(1, "a"), (3, "c")]])
    ) == {1: "a", 2: "B", 3: "c"}


def test_merge_map_retract() -> None:
    got = retract("merge_map", MAP_INT_STRING, [(1, "A"), (2, "B"), (3, "C")], [(1, "A"), (2, "A")])
    assert dict(got) == {3: "C"}


def test_merge_map_binary_key() -> None:
    t = MapType(VarBinaryType(10), STRING)
    assert dict(reduce("merge_map", t, [[(b"\x01", "A")], [(b"\x01", "B"), (b"\x02", "C")]])) == {
        b"\x01": "B",
        b"\x02": "C",
    }
    assert dict(retract("merge_map", t, [(b"\x01", "A"), (b"\x02", "C")], [(b"\x01", "x")])) == {b"\x02": "C"}


# ======================================================================================
# FieldAggregatorRetractNullTest
# ======================================================================================


@pytest.mark.parametrize(
    ("function", "t", "acc", "value"),
    [
        ("first_value", IntType(), 1, 1),
        ("first_non_null_value", IntType(), 1, 1),
        ("min", IntType(), 1, 1),
        ("max", IntType(), 1, 1),
        ("listagg", STRING, "1", "1"),
        ("bool_and", BooleanType(), True, True),
        ("bool_or", BooleanType(), True, True),
    ],
)
def test_retract_unsupported(function: str, t: DataType, acc: Any, value: Any) -> None:
    with pytest.raises(MergeError, match=f"Aggregate function '{function}' does not support retraction"):
        retract(function, t, acc, value)
    # ignore-retract keeps the accumulator
    assert retract(function, t, acc, value, {"fields.fieldName.ignore-retract": "true"}) == acc


@pytest.mark.parametrize(
    ("function", "t", "acc", "value", "expected"),
    [
        ("sum", IntType(), 1, 1, 0),
        ("last_value", IntType(), 1, 1, None),
        ("last_non_null_value", IntType(), 1, 1, None),
        ("product", IntType(), 1, 1, 1),
        ("collect", ARRAY_INT, [], [], []),
    ],
)
def test_retract_supported(function: str, t: DataType, acc: Any, value: Any, expected: Any) -> None:
    assert retract(function, t, acc, value) == expected
