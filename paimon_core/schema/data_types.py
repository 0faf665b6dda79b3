"""Paimon's logical type system and its JSON form, byte-compatible with Java's schema files.

Atomic types serialize to Java's SQL strings (``BIGINT NOT NULL``, ``DECIMAL(10, 2)``,
``STRING``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE`` ...), nested types to objects
(``{"type": "ARRAY", "element": ...}``), exactly as ``DataType.serializeJson`` does in
``org.apache.paimon.types``. :func:`parse_data_type` reads everything Java and pypaimon
write, including pypaimon's extra ``nullable`` key and the ``TIMESTAMP_LTZ(p)`` keyword.

Every type is an immutable dataclass; ``nullable`` is keyword-only and defaults to ``True``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from paimon_core.exceptions import SchemaError, UnsupportedTableKindError
from paimon_core.options_support import UNSUPPORTED_TYPES, unsupported_type_error

__all__ = [
    "ArrayType",
    "BigIntType",
    "BinaryType",
    "BooleanType",
    "CharType",
    "DataField",
    "DataType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FloatType",
    "IntType",
    "LocalZonedTimestampType",
    "MapType",
    "RowType",
    "SmallIntType",
    "TimeType",
    "TimestampType",
    "TinyIntType",
    "VarBinaryType",
    "VarCharType",
    "is_atomic",
    "is_binary",
    "is_decimal",
    "is_floating",
    "is_integer",
    "is_nested",
    "is_numeric",
    "is_string",
    "is_temporal",
    "is_timestamp",
    "parse_data_type",
]

_INT_MAX = 2**31 - 1
_NOT_NULL = " NOT NULL"


@dataclass(frozen=True)
class DataType:
    """Base of all Paimon types. ``nullable`` is keyword-only."""

    nullable: bool = field(default=True, kw_only=True)

    #: Short SQL name of the type's root (``"BIGINT"``, ``"DECIMAL"``, ``"TIMESTAMP_LTZ"`` ...).
    ROOT: ClassVar[str] = ""

    @property
    def type_root(self) -> str:
        """Short name of the type family, e.g. ``"BIGINT"`` or ``"VARCHAR"``."""
        return self.ROOT

    def _sql_body(self) -> str:
        """SQL string without the nullability suffix."""
        return self.ROOT

    def as_sql_string(self) -> str:
        """Java's ``asSQLString()``: the SQL type with ``NOT NULL`` when not nullable."""
        return self._sql_body() + ("" if self.nullable else _NOT_NULL)

    def to_json(self) -> str | dict[str, object]:
        """The JSON value Java's ``serializeJson`` writes for this type."""
        return self.as_sql_string()

    def copy(self, *, nullable: bool) -> DataType:
        """Return the same type with the given nullability."""
        return dataclasses.replace(self, nullable=nullable)

    def not_null(self) -> DataType:
        """Shorthand for ``copy(nullable=False)``."""
        return self.copy(nullable=False)

    def __str__(self) -> str:
        return self.as_sql_string()


def _check_range(name: str, what: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(f"{name} {what} must be an integer, got {value!r}")
    if value < low or value > high:
        raise SchemaError(f"{name} {what} must be between {low} and {high} (both inclusive), got {value}")


@dataclass(frozen=True)
class BooleanType(DataType):
    """BOOLEAN."""

    ROOT: ClassVar[str] = "BOOLEAN"


@dataclass(frozen=True)
class TinyIntType(DataType):
    """TINYINT: 1-byte signed integer."""

    ROOT: ClassVar[str] = "TINYINT"


@dataclass(frozen=True)
class SmallIntType(DataType):
    """SMALLINT: 2-byte signed integer."""

    ROOT: ClassVar[str] = "SMALLINT"


@dataclass(frozen=True)
class IntType(DataType):
    """INT: 4-byte signed integer."""

    ROOT: ClassVar[str] = "INT"


@dataclass(frozen=True)
class BigIntType(DataType):
    """BIGINT: 8-byte signed integer."""

    ROOT: ClassVar[str] = "BIGINT"


@dataclass(frozen=True)
class FloatType(DataType):
    """FLOAT: 4-byte IEEE 754."""

    ROOT: ClassVar[str] = "FLOAT"


@dataclass(frozen=True)
class DoubleType(DataType):
    """DOUBLE: 8-byte IEEE 754."""

    ROOT: ClassVar[str] = "DOUBLE"


@dataclass(frozen=True)
class DecimalType(DataType):
    """DECIMAL(p, s) with 1 <= p <= 38 and 0 <= s <= p."""

    precision: int = 10
    scale: int = 0

    ROOT: ClassVar[str] = "DECIMAL"
    MIN_PRECISION: ClassVar[int] = 1
    MAX_PRECISION: ClassVar[int] = 38
    MAX_COMPACT_PRECISION: ClassVar[int] = 18

    def __post_init__(self) -> None:
        _check_range("DECIMAL", "precision", self.precision, self.MIN_PRECISION, self.MAX_PRECISION)
        _check_range("DECIMAL", "scale", self.scale, 0, self.precision)

    @property
    def is_compact(self) -> bool:
        """Whether the unscaled value fits a long (precision <= 18)."""
        return self.precision <= self.MAX_COMPACT_PRECISION

    def _sql_body(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"


@dataclass(frozen=True)
class CharType(DataType):
    """CHAR(n), 1 <= n <= 2^31-1."""

    length: int = 1

    ROOT: ClassVar[str] = "CHAR"
    MAX_LENGTH: ClassVar[int] = _INT_MAX

    def __post_init__(self) -> None:
        _check_range("CHAR", "length", self.length, 1, self.MAX_LENGTH)

    def _sql_body(self) -> str:
        return f"CHAR({self.length})"


@dataclass(frozen=True)
class VarCharType(DataType):
    """VARCHAR(n); ``VarCharType(VarCharType.MAX_LENGTH)`` is STRING."""

    length: int = 1

    ROOT: ClassVar[str] = "VARCHAR"
    MAX_LENGTH: ClassVar[int] = _INT_MAX

    def __post_init__(self) -> None:
        _check_range("VARCHAR", "length", self.length, 1, self.MAX_LENGTH)

    def _sql_body(self) -> str:
        return "STRING" if self.length == self.MAX_LENGTH else f"VARCHAR({self.length})"


@dataclass(frozen=True)
class BinaryType(DataType):
    """BINARY(n), 1 <= n <= 2^31-1."""

    length: int = 1

    ROOT: ClassVar[str] = "BINARY"
    MAX_LENGTH: ClassVar[int] = _INT_MAX

    def __post_init__(self) -> None:
        _check_range("BINARY", "length", self.length, 1, self.MAX_LENGTH)

    def _sql_body(self) -> str:
        return f"BINARY({self.length})"


@dataclass(frozen=True)
class VarBinaryType(DataType):
    """VARBINARY(n); ``VarBinaryType(VarBinaryType.MAX_LENGTH)`` is BYTES."""

    length: int = 1

    ROOT: ClassVar[str] = "VARBINARY"
    MAX_LENGTH: ClassVar[int] = _INT_MAX

    def __post_init__(self) -> None:
        _check_range("VARBINARY", "length", self.length, 1, self.MAX_LENGTH)

    def _sql_body(self) -> str:
        return "BYTES" if self.length == self.MAX_LENGTH else f"VARBINARY({self.length})"


@dataclass(frozen=True)
class DateType(DataType):
    """DATE: days since 1970-01-01."""

    ROOT: ClassVar[str] = "DATE"


@dataclass(frozen=True)
class TimeType(DataType):
    """TIME(p), 0 <= p <= 9; values are milliseconds of the day."""

    precision: int = 0

    ROOT: ClassVar[str] = "TIME"

    def __post_init__(self) -> None:
        _check_range("TIME", "precision", self.precision, 0, 9)

    def _sql_body(self) -> str:
        return f"TIME({self.precision})"


@dataclass(frozen=True)
class TimestampType(DataType):
    """TIMESTAMP(p) without time zone, 0 <= p <= 9."""

    precision: int = 6

    ROOT: ClassVar[str] = "TIMESTAMP"
    MAX_COMPACT_PRECISION: ClassVar[int] = 3

    def __post_init__(self) -> None:
        _check_range("TIMESTAMP", "precision", self.precision, 0, 9)

    @property
    def is_compact(self) -> bool:
        """Whether the value is stored as epoch millis only (precision <= 3)."""
        return self.precision <= self.MAX_COMPACT_PRECISION

    def _sql_body(self) -> str:
        return f"TIMESTAMP({self.precision})"


@dataclass(frozen=True)
class LocalZonedTimestampType(DataType):
    """TIMESTAMP(p) WITH LOCAL TIME ZONE (a.k.a. TIMESTAMP_LTZ(p)): a UTC instant."""

    precision: int = 6

    ROOT: ClassVar[str] = "TIMESTAMP_LTZ"
    MAX_COMPACT_PRECISION: ClassVar[int] = 3

    def __post_init__(self) -> None:
        _check_range("TIMESTAMP_LTZ", "precision", self.precision, 0, 9)

    @property
    def is_compact(self) -> bool:
        """Whether the value is stored as epoch millis only (precision <= 3)."""
        return self.precision <= self.MAX_COMPACT_PRECISION

    def _sql_body(self) -> str:
        # Java: LocalZonedTimestampType.FORMAT = "TIMESTAMP(%d) WITH LOCAL TIME ZONE"
        return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"


@dataclass(frozen=True)
class ArrayType(DataType):
    """ARRAY<element>."""

    element: DataType

    ROOT: ClassVar[str] = "ARRAY"

    def _sql_body(self) -> str:
        return f"ARRAY<{self.element.as_sql_string()}>"

    def to_json(self) -> dict[str, object]:
        return {"type": "ARRAY" + ("" if self.nullable else _NOT_NULL), "element": self.element.to_json()}


@dataclass(frozen=True)
class MapType(DataType):
    """MAP<key, value>."""

    key: DataType
    value: DataType

    ROOT: ClassVar[str] = "MAP"

    def _sql_body(self) -> str:
        return f"MAP<{self.key.as_sql_string()}, {self.value.as_sql_string()}>"

    def to_json(self) -> dict[str, object]:
        return {
            "type": "MAP" + ("" if self.nullable else _NOT_NULL),
            "key": self.key.to_json(),
            "value": self.value.to_json(),
        }


@dataclass(frozen=True)
class DataField:
    """A named, id-carrying field of a row (a table column or a nested ROW field).

    ``default_value`` mirrors Java's ``DataField.defaultValue`` so that it survives a round trip.
    """

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

    def to_json(self) -> dict[str, object]:
        """Java's JSON form: keys ``id``, ``name``, ``type`` [, ``description``, ``defaultValue``]."""
        out: dict[str, object] = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        if self.default_value is not None:
            out["defaultValue"] = self.default_value
        return out

    @staticmethod
    def from_json(d: Mapping[str, object]) -> DataField:
        """Parse a field object as written by Java or pypaimon."""
        return _parse_field(d)

    def as_sql_string(self) -> str:
        """Java's ``DataField.asSQLString()``: ```name` TYPE [COMMENT '...']``."""
        out = "`" + self.name.replace("`", "``") + "` " + self.type.as_sql_string()
        if self.description:
            out += " COMMENT '" + self.description.replace("'", "''") + "'"
        if self.default_value is not None:
            out += " DEFAULT " + self.default_value
        return out

    def __str__(self) -> str:
        return self.as_sql_string()


@dataclass(frozen=True)
class RowType(DataType):
    """ROW<fields...>; field names must be unique."""

    fields: tuple[DataField, ...]

    ROOT: ClassVar[str] = "ROW"

    def __post_init__(self) -> None:
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))
        seen: set[str] = set()
        for f in self.fields:
            if not isinstance(f, DataField):
                raise SchemaError(f"ROW fields must be DataField, got {f!r}")
            if f.name in seen:
                raise SchemaError(f"Field names must be unique. Found duplicate: {f.name}")
            seen.add(f.name)

    @property
    def field_names(self) -> list[str]:
        """Names of the fields, in order."""
        return [f.name for f in self.fields]

    @property
    def field_types(self) -> list[DataType]:
        """Types of the fields, in order."""
        return [f.type for f in self.fields]

    def field_index(self, name: str) -> int:
        """Position of the field called ``name``; raises :class:`SchemaError` if absent."""
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        raise SchemaError(f"Field {name!r} not found in {self}")

    def get_field(self, name: str) -> DataField:
        """The field called ``name``; raises :class:`SchemaError` if absent."""
        return self.fields[self.field_index(name)]

    def _sql_body(self) -> str:
        return "ROW<" + ", ".join(f.as_sql_string() for f in self.fields) + ">"

    def to_json(self) -> dict[str, object]:
        return {
            "type": "ROW" + ("" if self.nullable else _NOT_NULL),
            "fields": [f.to_json() for f in self.fields],
        }


# --------------------------------------------------------------------------------------------
# predicates
# --------------------------------------------------------------------------------------------

_INTEGER_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType)


def is_integer(t: DataType) -> bool:
    """TINYINT, SMALLINT, INT or BIGINT."""
    return isinstance(t, _INTEGER_TYPES)


def is_floating(t: DataType) -> bool:
    """FLOAT or DOUBLE."""
    return isinstance(t, (FloatType, DoubleType))


def is_decimal(t: DataType) -> bool:
    """DECIMAL(p, s)."""
    return isinstance(t, DecimalType)


def is_numeric(t: DataType) -> bool:
    """Integer, floating point or decimal."""
    return is_integer(t) or is_floating(t) or is_decimal(t)


def is_string(t: DataType) -> bool:
    """CHAR or VARCHAR (incl. STRING)."""
    return isinstance(t, (CharType, VarCharType))


def is_binary(t: DataType) -> bool:
    """BINARY or VARBINARY (incl. BYTES)."""
    return isinstance(t, (BinaryType, VarBinaryType))


def is_timestamp(t: DataType) -> bool:
    """TIMESTAMP or TIMESTAMP WITH LOCAL TIME ZONE."""
    return isinstance(t, (TimestampType, LocalZonedTimestampType))


def is_temporal(t: DataType) -> bool:
    """DATE, TIME or a timestamp type."""
    return isinstance(t, (DateType, TimeType)) or is_timestamp(t)


def is_nested(t: DataType) -> bool:
    """ARRAY, MAP or ROW."""
    return isinstance(t, (ArrayType, MapType, RowType))


def is_atomic(t: DataType) -> bool:
    """Any non-nested type."""
    return not is_nested(t)


# --------------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\s*(?:(?P<int>\d+)|(?P<word>[A-Za-z_][A-Za-z_0-9]*)|(?P<sym>[(),<>]))")


class _SqlTypeParser:
    """Recursive-descent parser of Paimon's SQL type strings (after Java's DataTypeJsonParser)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN_RE.match(stripped, pos)
            if m is None or m.end() == pos:
                raise SchemaError(f"Cannot parse data type {text!r}: unexpected character at {pos}")
            pos = m.end()
            if m.group("int") is not None:
                self.tokens.append(("int", m.group("int")))
            elif m.group("word") is not None:
                self.tokens.append(("word", m.group("word").upper()))
            else:
                self.tokens.append(("sym", m.group("sym")))
        self.i = 0

    def _error(self, cause: str) -> SchemaError:
        return SchemaError(f"Cannot parse data type {self.text!r}: {cause}")

    def _peek(self, offset: int = 0) -> tuple[str, str] | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def _next(self) -> tuple[str, str]:
        tok = self._peek()
        if tok is None:
            raise self._error("unexpected end")
        self.i += 1
        return tok

    def _expect(self, kind: str, value: str | None = None) -> str:
        tok = self._next()
        if tok[0] != kind or (value is not None and tok[1] != value):
            raise self._error(f"expected {value or kind}, got {tok[1]!r}")
        return tok[1]

    def _accept_word(self, *words: str) -> bool:
        for k, w in enumerate(words):
            tok = self._peek(k)
            if tok is None or tok != ("word", w):
                return False
        self.i += len(words)
        return True

    def _accept_sym(self, sym: str) -> bool:
        if self._peek() == ("sym", sym):
            self.i += 1
            return True
        return False

    def parse(self) -> DataType:
        t = self._type_with_nullability()
        rest = self._peek()
        if rest is not None:
            raise self._error(f"unexpected token {rest[1]!r}")
        return t

    def _nullability(self) -> bool:
        if self._accept_word("NOT", "NULL"):
            return False
        self._accept_word("NULL")
        return True

    def _type_with_nullability(self) -> DataType:
        t = self._type_by_keyword()
        return t.copy(nullable=self._nullability())

    def _int_params(self, max_count: int) -> list[int]:
        if not self._accept_sym("("):
            return []
        params = [int(self._expect("int"))]
        while len(params) < max_count and self._accept_sym(","):
            params.append(int(self._expect("int")))
        self._expect("sym", ")")
        return params

    def _type_by_keyword(self) -> DataType:
        kind, word = self._next()
        if kind != "word":
            raise self._error(f"expected a type keyword, got {word!r}")
        simple: dict[str, type[DataType]] = {
            "BOOLEAN": BooleanType,
            "TINYINT": TinyIntType,
            "SMALLINT": SmallIntType,
            "INT": IntType,
            "INTEGER": IntType,
            "BIGINT": BigIntType,
            "FLOAT": FloatType,
            "DATE": DateType,
        }
        if word in simple:
            return simple[word]()
        if word == "DOUBLE":
            self._accept_word("PRECISION")
            return DoubleType()
        if word == "STRING":
            return VarCharType(VarCharType.MAX_LENGTH)
        if word == "BYTES":
            return VarBinaryType(VarBinaryType.MAX_LENGTH)
        length_types: dict[str, type[CharType | VarCharType | BinaryType | VarBinaryType]] = {
            "CHAR": CharType,
            "VARCHAR": VarCharType,
            "BINARY": BinaryType,
            "VARBINARY": VarBinaryType,
        }
        if word in length_types:
            params = self._int_params(1)
            return length_types[word](params[0]) if params else length_types[word]()
        if word in ("DECIMAL", "NUMERIC", "DEC"):
            params = self._int_params(2)
            precision = params[0] if params else 10
            scale = params[1] if len(params) > 1 else 0
            return DecimalType(precision, scale)
        if word == "TIME":
            params = self._int_params(1)
            self._accept_word("WITHOUT", "TIME", "ZONE")
            return TimeType(params[0] if params else 0)
        if word == "TIMESTAMP":
            params = self._int_params(1)
            precision = params[0] if params else 6
            if self._accept_word("WITH", "LOCAL", "TIME", "ZONE"):
                return LocalZonedTimestampType(precision)
            self._accept_word("WITHOUT", "TIME", "ZONE")
            return TimestampType(precision)
        if word == "TIMESTAMP_LTZ":
            params = self._int_params(1)
            return LocalZonedTimestampType(params[0] if params else 6)
        if word == "ARRAY":
            self._expect("sym", "<")
            element = self._type_with_nullability()
            self._expect("sym", ">")
            return ArrayType(element)
        if word == "MAP":
            self._expect("sym", "<")
            key = self._type_with_nullability()
            self._expect("sym", ",")
            value = self._type_with_nullability()
            self._expect("sym", ">")
            return MapType(key, value)
        if word == "MULTISET":
            raise SchemaError("MULTISET is not supported")
        if word in UNSUPPORTED_TYPES:  # Paimon 2.x types: the table kind is refused, naming it
            raise unsupported_type_error(word)
        raise self._error(f"unsupported type {word}")


def _parse_sql(text: str) -> DataType:
    if re.search(r"\bMULTISET\b", text, flags=re.IGNORECASE):
        raise SchemaError("MULTISET is not supported")
    return _SqlTypeParser(text).parse()


def _parse_field(d: Mapping[str, object]) -> DataField:
    if not isinstance(d, Mapping):
        raise SchemaError(f"A data field must be a JSON object, got {d!r}")
    try:
        raw_id, name, raw_type = d["id"], d["name"], d["type"]
    except KeyError as e:
        raise SchemaError(f"Data field {dict(d)!r} lacks key {e.args[0]!r}") from e
    if isinstance(raw_id, bool) or not isinstance(raw_id, int):
        raise SchemaError(f"Field id must be an integer, got {raw_id!r}")
    if not isinstance(name, str):
        raise SchemaError(f"Field name must be a string, got {name!r}")
    description = d.get("description")
    default_value = d.get("defaultValue")
    try:
        data_type = parse_data_type(raw_type)  # type: ignore[arg-type]
    except UnsupportedTableKindError as e:  # name the column
        raise unsupported_type_error(e.type_name or "", column=name) from None
    return DataField(
        raw_id,
        name,
        data_type,
        None if description is None else str(description),
        None if default_value is None else str(default_value),
    )


def parse_data_type(value: str | Mapping[str, object]) -> DataType:
    """Parse a type as found in schema JSON: an SQL string, or an object for nested types.

    Accepts Java's and pypaimon's spellings (``INTEGER``, ``STRING``, ``BYTES``, ``DECIMAL(p,s)``,
    ``TIMESTAMP(p) WITH LOCAL TIME ZONE``, ``TIMESTAMP_LTZ(p)``, ``... NOT NULL``) and ignores
    pypaimon's extra ``nullable`` key on nested objects, as Java does.
    """
    if isinstance(value, str):
        return _parse_sql(value)
    if isinstance(value, DataType):
        return value
    if not isinstance(value, Mapping):
        raise SchemaError(f"Cannot parse data type {value!r}")
    type_string = value.get("type")
    if not isinstance(type_string, str):
        raise SchemaError(f"Nested data type {dict(value)!r} lacks a string 'type'")
    nullable = _NOT_NULL.strip() not in type_string.upper()
    head = type_string.strip().upper()
    if head.startswith("ARRAY"):
        return ArrayType(parse_data_type(_require(value, "element")), nullable=nullable)  # type: ignore[arg-type]
    if head.startswith("MAP"):
        return MapType(
            parse_data_type(_require(value, "key")),  # type: ignore[arg-type]
            parse_data_type(_require(value, "value")),  # type: ignore[arg-type]
            nullable=nullable,
        )
    if head.startswith("ROW"):
        raw_fields = _require(value, "fields")
        if not isinstance(raw_fields, Sequence) or isinstance(raw_fields, (str, bytes)):
            raise SchemaError(f"ROW 'fields' must be a list, got {raw_fields!r}")
        return RowType(tuple(_parse_field(f) for f in raw_fields), nullable=nullable)
    if head.startswith("MULTISET"):
        raise SchemaError("MULTISET is not supported")
    # Java only accepts nested types as objects; an atomic type in "type" is a lenient extra.
    return _parse_sql(type_string)


def _require(d: Mapping[str, object], key: str) -> object:
    if key not in d:
        raise SchemaError(f"Nested data type {dict(d)!r} lacks key {key!r}")
    return d[key]
