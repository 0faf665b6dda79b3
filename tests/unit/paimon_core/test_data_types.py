"""Paimon types and their schema-JSON form (Java's serializeJson / DataTypeJsonParser)."""

from __future__ import annotations

import json

import pytest

from paimon_core.exceptions import SchemaError
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
    is_binary,
    is_integer,
    is_nested,
    is_string,
    parse_data_type,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
BYTES = VarBinaryType(VarBinaryType.MAX_LENGTH)

# (type, exact Java JSON value)
ATOMIC_CASES: list[tuple[DataType, str]] = [
    (BooleanType(), "BOOLEAN"),
    (TinyIntType(), "TINYINT"),
    (SmallIntType(), "SMALLINT"),
    (IntType(), "INT"),
    (BigIntType(nullable=False), "BIGINT NOT NULL"),
    (FloatType(), "FLOAT"),
    (DoubleType(), "DOUBLE"),
    (DecimalType(10, 2), "DECIMAL(10, 2)"),
    (DecimalType(38, 4, nullable=False), "DECIMAL(38, 4) NOT NULL"),
    (CharType(5), "CHAR(5)"),
    (VarCharType(10), "VARCHAR(10)"),
    (STRING, "STRING"),
    (STRING.copy(nullable=False), "STRING NOT NULL"),
    (BinaryType(4), "BINARY(4)"),
    (VarBinaryType(8), "VARBINARY(8)"),
    (BYTES, "BYTES"),
    (DateType(), "DATE"),
    (TimeType(), "TIME(0)"),
    (TimeType(3), "TIME(3)"),
    (TimestampType(3), "TIMESTAMP(3)"),
    (TimestampType(), "TIMESTAMP(6)"),
    (TimestampType(9, nullable=False), "TIMESTAMP(9) NOT NULL"),
    (LocalZonedTimestampType(6), "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
    (LocalZonedTimestampType(3, nullable=False), "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL"),
]


@pytest.mark.parametrize(("t", "expected"), ATOMIC_CASES, ids=[c[1] for c in ATOMIC_CASES])
def test_atomic_json_round_trip(t: DataType, expected: str) -> None:
    assert t.to_json() == expected
    assert str(t) == expected
    assert parse_data_type(expected) == t
    assert parse_data_type(t.to_json()) == t  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("INTEGER", IntType()),
        ("int not null", IntType(nullable=False)),
        ("DECIMAL(10,2)", DecimalType(10, 2)),
        ("DECIMAL", DecimalType(10, 0)),
        ("NUMERIC(5)", DecimalType(5, 0)),
        ("VARCHAR(2147483647)", STRING),
        ("VARBINARY(2147483647)", BYTES),
        ("TIMESTAMP", TimestampType(6)),
        ("TIMESTAMP(3) WITHOUT TIME ZONE", TimestampType(3)),
        ("TIMESTAMP_LTZ(6)", LocalZonedTimestampType(6)),
        ("TIMESTAMP_LTZ(3) NOT NULL", LocalZonedTimestampType(3, nullable=False)),
        ("TIMESTAMP_LTZ", LocalZonedTimestampType(6)),
        ("TIME", TimeType(0)),
        ("DOUBLE PRECISION", DoubleType()),
        ("CHAR", CharType(1)),
        ("BIGINT NULL", BigIntType()),
        ("ARRAY<INT NOT NULL> NOT NULL", ArrayType(IntType(nullable=False), nullable=False)),
        ("MAP<STRING NOT NULL, DECIMAL(5, 1)>", MapType(STRING.copy(nullable=False), DecimalType(5, 1))),
    ],
)
def test_parse_spellings(text: str, expected: DataType) -> None:
    assert parse_data_type(text) == expected


def test_ltz_is_written_the_java_way() -> None:
    # Java LocalZonedTimestampType.FORMAT = "TIMESTAMP(%d) WITH LOCAL TIME ZONE"
    assert parse_data_type("TIMESTAMP_LTZ(6)").to_json() == "TIMESTAMP(6) WITH LOCAL TIME ZONE"


@pytest.mark.parametrize(
    "bad",
    [
        "DECIMAL(0, 0)",
        "DECIMAL(39, 2)",
        "DECIMAL(5, 6)",
        "TIMESTAMP(10)",
        "TIME(10)",
        "VARCHAR(0)",
        "CHAR(0)",
        "BINARY(0)",
        "FOO",
        "INT INT",
        "DECIMAL(10, 2",
        "TIMESTAMP_LTZ(12)",
        "",
    ],
)
def test_invalid_types_raise_schema_error(bad: str) -> None:
    with pytest.raises(SchemaError):
        parse_data_type(bad)


def test_constructor_validation() -> None:
    with pytest.raises(SchemaError):
        DecimalType(39, 0)
    with pytest.raises(SchemaError):
        TimestampType(-1)
    with pytest.raises(SchemaError):
        LocalZonedTimestampType(10)
    with pytest.raises(SchemaError):
        RowType((DataField(0, "a", IntType()), DataField(1, "a", IntType())))


def test_multiset_not_supported() -> None:
    with pytest.raises(SchemaError, match="MULTISET is not supported"):
        parse_data_type({"type": "MULTISET", "element": "INT"})
    with pytest.raises(SchemaError, match="MULTISET is not supported"):
        parse_data_type("MULTISET<INT>")


def test_nested_json_exact() -> None:
    row = RowType(
        (
            DataField(4, "a", IntType(nullable=False)),
            DataField(5, "b", ArrayType(STRING), "the b"),
            DataField(6, "m", MapType(STRING.copy(nullable=False), DoubleType(), nullable=False)),
        ),
        nullable=False,
    )
    expected = {
        "type": "ROW NOT NULL",
        "fields": [
            {"id": 4, "name": "a", "type": "INT NOT NULL"},
            {"id": 5, "name": "b", "type": {"type": "ARRAY", "element": "STRING"}, "description": "the b"},
            {
                "id": 6,
                "name": "m",
                "type": {"type": "MAP NOT NULL", "key": "STRING NOT NULL", "value": "DOUBLE"},
            },
        ],
    }
    assert row.to_json() == expected
    # key order is part of the format
    assert json.dumps(row.to_json()) == json.dumps(expected)
    assert parse_data_type(expected) == row
    assert str(row) == (
        "ROW<`a` INT NOT NULL, `b` ARRAY<STRING> COMMENT 'the b', "
        "`m` MAP<STRING NOT NULL, DOUBLE> NOT NULL> NOT NULL"
    )
    assert row.field_names == ["a", "b", "m"]
    assert row.get_field("b").id == 5
    with pytest.raises(SchemaError):
        row.field_index("zz")


def test_data_field_json_round_trip() -> None:
    f = DataField(3, "x", DecimalType(20, 3), "desc", "1.5")
    assert f.to_json() == {
        "id": 3,
        "name": "x",
        "type": "DECIMAL(20, 3)",
        "description": "desc",
        "defaultValue": "1.5",
    }
    assert list(f.to_json()) == ["id", "name", "type", "description", "defaultValue"]
    assert DataField.from_json(f.to_json()) == f
    assert DataField.from_json({"id": 0, "name": "a", "type": "INT"}) == DataField(0, "a", IntType())
    with pytest.raises(SchemaError):
        DataField.from_json({"name": "a", "type": "INT"})


def test_copy_and_predicates() -> None:
    assert BigIntType().copy(nullable=False) == BigIntType(nullable=False)
    assert BigIntType() != BigIntType(nullable=False)
    assert BigIntType().type_root == "BIGINT"
    assert LocalZonedTimestampType().type_root == "TIMESTAMP_LTZ"
    assert is_integer(TinyIntType()) and not is_integer(DecimalType())
    assert is_string(CharType(2)) and is_string(STRING) and not is_string(BYTES)
    assert is_binary(BinaryType(3)) and is_binary(BYTES)
    assert is_nested(ArrayType(IntType())) and not is_nested(IntType())
    assert hash(parse_data_type("STRING")) == hash(STRING)


# The `fields` of a schema-0 written by pypaimon 2.1.0 (copied verbatim from a real file).
PYPAIMON_FIELDS_JSON = """
[
    {"id": 0, "name": "k1", "type": "STRING"},
    {"id": 1, "name": "k2", "type": "INT"},
    {"id": 2, "name": "v", "type": "BIGINT"},
    {"id": 3, "name": "d", "type": "DATE"},
    {"id": 4, "name": "ts", "type": "TIMESTAMP(6)"},
    {"id": 5, "name": "ltz", "type": "TIMESTAMP_LTZ(3)"},
    {"id": 6, "name": "dec", "type": "DECIMAL(10, 2)"},
    {"id": 7, "name": "nested", "type": {"type": "ROW", "fields": [
        {"id": 8, "name": "a", "type": "INT"},
        {"id": 9, "name": "b", "type": {"type": "ARRAY", "element": "STRING", "nullable": true}}
      ], "nullable": true}},
    {"id": 10, "name": "m", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "DOUBLE", "nullable": true}},
    {"id": 11, "name": "bin", "type": "BYTES"},
    {"id": 12, "name": "fb", "type": "BINARY(4)"},
    {"id": 13, "name": "pk", "type": "BIGINT NOT NULL"}
]
"""


def test_parse_pypaimon_schema_fields() -> None:
    fields = [DataField.from_json(d) for d in json.loads(PYPAIMON_FIELDS_JSON)]
    by_name = {f.name: f for f in fields}
    assert by_name["ltz"].type == LocalZonedTimestampType(3)
    assert by_name["nested"].type == RowType(
        (DataField(8, "a", IntType()), DataField(9, "b", ArrayType(STRING)))
    )
    assert by_name["m"].type == MapType(STRING.copy(nullable=False), DoubleType())
    assert by_name["fb"].type == BinaryType(4)
    assert by_name["pk"].type == BigIntType(nullable=False)
    # Java's form drops pypaimon's "nullable" key and spells LTZ the Java way
    assert by_name["ltz"].to_json()["type"] == "TIMESTAMP(3) WITH LOCAL TIME ZONE"
    assert by_name["m"].to_json()["type"] == {"type": "MAP", "key": "STRING NOT NULL", "value": "DOUBLE"}
    # and what we write parses back to the same fields
    assert [DataField.from_json(f.to_json()) for f in fields] == fields
