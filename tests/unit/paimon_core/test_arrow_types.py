"""Paimon <-> pyarrow type mapping (Java ArrowFieldTypeConversion / pypaimon)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_core.exceptions import SchemaError
from paimon_core.format.arrow_types import (
    FIELD_ID_KEY,
    fields_from_arrow_schema,
    from_arrow_schema,
    from_arrow_type,
    to_arrow_field,
    to_arrow_schema,
    to_arrow_type,
)
from paimon_core.schema.data_types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)


@pytest.mark.parametrize(
    ("t", "arrow"),
    [
        (BooleanType(), pa.bool_()),
        (TinyIntType(), pa.int8()),
        (SmallIntType(), pa.int16()),
        (IntType(), pa.int32()),
        (BigIntType(), pa.int64()),
        (FloatType(), pa.float32()),
        (DoubleType(), pa.float64()),
        (DecimalType(10, 2), pa.decimal128(10, 2)),
        (DecimalType(38, 4), pa.decimal128(38, 4)),
        (CharType(3), pa.string()),
        (VarCharType(10), pa.string()),
        (STRING, pa.string()),
        (BinaryType(4), pa.binary()),
        (BYTES, pa.binary()),
        (DateType(), pa.date32()),
        (TimeType(0), pa.time32("ms")),
        (TimeType(6), pa.time32("ms")),
        (TimestampType(0), pa.timestamp("s")),
        (TimestampType(3), pa.timestamp("ms")),
        (TimestampType(4), pa.timestamp("us")),
        (TimestampType(6), pa.timestamp("us")),
        (TimestampType(9), pa.timestamp("ns")),
        (LocalZonedTimestampType(3), pa.timestamp("ms", tz="UTC")),
        (LocalZonedTimestampType(6), pa.timestamp("us", tz="UTC")),
        (ArrayType(IntType(nullable=False)), pa.list_(pa.field("item", pa.int32(), nullable=False))),
        (MapType(STRING, DoubleType()), pa.map_(pa.string(), pa.float64())),
        (
            RowType((DataField(1, "a", IntType(nullable=False)), DataField(2, "b", STRING))),
            pa.struct([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string())]),
        ),
    ],
)
def test_to_arrow_type(t: DataType, arrow: pa.DataType) -> None:
    assert to_arrow_type(t) == arrow


@pytest.mark.parametrize(
    ("arrow", "t"),
    [
        (pa.large_string(), STRING),
        (pa.string_view(), STRING),
        (pa.large_binary(), BYTES),
        (pa.binary_view(), BYTES),
        (pa.binary(7), BinaryType(7)),
        (pa.large_list(pa.int64()), ArrayType(BigIntType())),
        (pa.timestamp("ns", tz="Europe/Paris"), LocalZonedTimestampType(9)),
        (pa.timestamp("s"), TimestampType(0)),
        (pa.decimal256(38, 10), DecimalType(38, 10)),
        (pa.decimal32(5, 2), DecimalType(5, 2)),
        (pa.uint8(), SmallIntType()),
        (pa.uint16(), IntType()),
        (pa.uint32(), BigIntType()),
        (pa.float16(), FloatType()),
        (pa.date64(), DateType()),
        (pa.time64("us"), TimeType(6)),
        (pa.time32("s"), TimeType(0)),
        (pa.dictionary(pa.int32(), pa.string()), STRING),
        (pa.map_(pa.string(), pa.int32()), MapType(STRING.copy(nullable=False), IntType())),
    ],
)
def test_from_arrow_type_lenient(arrow: pa.DataType, t: DataType) -> None:
    assert from_arrow_type(arrow) == t


@pytest.mark.parametrize("arrow", [pa.uint64(), pa.decimal256(40, 2), pa.null(), pa.duration("s")])
def test_from_arrow_type_refuses(arrow: pa.DataType) -> None:
    with pytest.raises(SchemaError):
        from_arrow_type(arrow)


def test_to_arrow_field_ids_and_nullability() -> None:
    f = DataField(7, "x", BigIntType(nullable=False), "about x")
    af = to_arrow_field(f)
    assert af.name == "x" and af.type == pa.int64() and not af.nullable
    assert af.metadata[FIELD_ID_KEY] == b"7"
    assert af.metadata[b"description"] == b"about x"
    assert to_arrow_field(f, field_ids=False).metadata == {b"description": b"about x"}
    nested = DataField(1, "r", RowType((DataField(2, "a", IntType()),)))
    struct_type = to_arrow_field(nested).type
    assert struct_type.field(0).metadata[FIELD_ID_KEY] == b"2"
    schema = to_arrow_schema([f, nested])
    assert schema.names == ["x", "r"]
    # equal to the id-less schema when metadata is ignored
    assert schema.equals(to_arrow_schema([f, nested], field_ids=False))


def test_from_arrow_schema() -> None:
    schema = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string())])
    assert from_arrow_schema(schema) == [("a", BigIntType(nullable=False)), ("b", STRING)]


def test_fields_from_arrow_schema_ids_like_java() -> None:
    # the pyarrow schema that pypaimon 2.1.0 turned into ids 0..12 (nested a=8, b=9 after ROW 7)
    schema = pa.schema(
        [
            ("k1", pa.string()),
            ("k2", pa.int32()),
            ("v", pa.int64()),
            ("d", pa.date32()),
            ("ts", pa.timestamp("us")),
            ("ltz", pa.timestamp("ms", tz="UTC")),
            ("dec", pa.decimal128(10, 2)),
            ("nested", pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
            ("m", pa.map_(pa.string(), pa.float64())),
            ("bin", pa.binary()),
            ("fb", pa.binary(4)),
        ]
    )
    fields, highest = fields_from_arrow_schema(schema)
    assert [f.id for f in fields] == [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12]
    assert highest == 12
    nested = fields[7].type
    assert isinstance(nested, RowType)
    assert [(f.id, f.name) for f in nested.fields] == [(8, "a"), (9, "b")]
    assert fields[5].type == LocalZonedTimestampType(3)
    assert fields[10].type == BinaryType(4)


def test_fields_from_arrow_schema_deep_nesting_children_first() -> None:
    # Java ReassignFieldId: a nested field's own children take ids before the field itself
    schema = pa.schema(
        [
            ("a", pa.int32()),
            ("b", pa.struct([("x", pa.struct([("p", pa.int8())])), ("y", pa.int8())])),
            ("c", pa.int8()),
        ]
    )
    fields, highest = fields_from_arrow_schema(schema, first_id=10)
    b = fields[1].type
    assert isinstance(b, RowType)
    x = b.fields[0].type
    assert isinstance(x, RowType)
    assert (fields[0].id, fields[1].id, x.fields[0].id, b.fields[0].id, b.fields[1].id, fields[2].id) == (
        10,
        11,
        12,
        13,
        14,
        15,
    )
    assert highest == 15
    assert fields_from_arrow_schema(pa.schema([])) == ([], -1)


# --- hypothesis: Paimon -> Arrow -> Paimon is the identity on canonical types -----------------

_canonical_atomic = st.one_of(
    st.sampled_from(
        [
            BooleanType(),
            TinyIntType(),
            SmallIntType(),
            IntType(),
            BigIntType(),
            FloatType(),
            DoubleType(),
            STRING,
            BYTES,
            DateType(),
            TimeType(3),
        ]
    ),
    st.builds(lambda p, s: DecimalType(p, min(s, p)), st.integers(1, 38), st.integers(0, 38)),
    st.builds(TimestampType, st.sampled_from([0, 3, 6, 9])),
    st.builds(LocalZonedTimestampType, st.sampled_from([0, 3, 6, 9])),
).flatmap(lambda t: st.booleans().map(lambda n: t.copy(nullable=n)))


def _nested(children: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    return st.one_of(
        st.builds(lambda e, n: ArrayType(e, nullable=n), children, st.booleans()),
        st.builds(
            lambda k, v, n: MapType(k.copy(nullable=False), v, nullable=n), children, children, st.booleans()
        ),
        st.builds(
            lambda ts, n: RowType(tuple(DataField(i, f"f{i}", t) for i, t in enumerate(ts)), nullable=n),
            st.lists(children, min_size=1, max_size=3),
            st.booleans(),
        ),
    )


_paimon_types = st.recursive(_canonical_atomic, _nested, max_leaves=6)


@given(_paimon_types)
def test_paimon_arrow_round_trip(t: DataType) -> None:
    assert from_arrow_type(to_arrow_type(t), t.nullable) == t


@given(_paimon_types)
def test_arrow_paimon_arrow_round_trip(t: DataType) -> None:
    arrow = to_arrow_type(t)
    assert to_arrow_type(from_arrow_type(arrow)) == arrow
