"""Primary-key data-file layout: ``_KEY_`` columns, system columns, thin mode, field ids."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
from paimon_core.format.file_format import conform_to_schema, open_writer, read_file, read_file_schema
from paimon_core.format.key_value import (
    KEY_FIELD_ID_START,
    KEY_FIELD_PREFIX,
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_FIELD_ID,
    VALUE_KIND,
    VALUE_KIND_FIELD_ID,
    detect_thin_mode,
    is_system_field,
    key_column_names,
    key_value_arrow_schema,
    supports_thin_mode,
)
from paimon_core.io.local_io import LocalFileIO
from paimon_core.schema.data_types import (
    BigIntType,
    DataField,
    DoubleType,
    IntType,
    VarCharType,
)

STRING = VarCharType(VarCharType.MAX_LENGTH)
FIELDS = [
    DataField(0, "id", BigIntType(nullable=False)),
    DataField(1, "dt", STRING),
    DataField(2, "k2", IntType(nullable=False)),
    DataField(3, "v", DoubleType()),
]
KEYS = [FIELDS[0], FIELDS[2]]  # trimmed primary key (id, k2); dt is the partition key


def _field_id(f: pa.Field) -> int | None:
    meta = f.metadata or {}
    return int(meta[b"PARQUET:field_id"]) if b"PARQUET:field_id" in meta else None


def test_special_field_ids_match_java() -> None:
    # SpecialFields.java: SYSTEM_FIELD_ID_START = Integer.MAX_VALUE / 2, SEQUENCE_NUMBER = MAX - 1,
    # VALUE_KIND = MAX - 2; key fields are value field id + KEY_FIELD_ID_START.
    assert KEY_FIELD_ID_START == 1_073_741_823
    assert SEQUENCE_NUMBER_FIELD_ID == 2_147_483_646
    assert VALUE_KIND_FIELD_ID == 2_147_483_645
    assert (KEY_FIELD_PREFIX, SEQUENCE_NUMBER, VALUE_KIND) == ("_KEY_", "_SEQUENCE_NUMBER", "_VALUE_KIND")
    assert is_system_field("_KEY_id") and is_system_field(VALUE_KIND) and not is_system_field("id")


def test_key_value_schema_full_layout() -> None:
    schema = key_value_arrow_schema(KEYS, FIELDS, thin_mode=False)
    assert schema.names == ["_KEY_id", "_KEY_k2", SEQUENCE_NUMBER, VALUE_KIND, "id", "dt", "k2", "v"]
    assert [str(t) for t in schema.types] == [
        "int64",
        "int32",
        "int64",
        "int8",
        "int64",
        "string",
        "int32",
        "double",
    ]
    assert [f.nullable for f in schema] == [False, False, False, False, False, True, False, True]
    assert [_field_id(f) for f in schema] == [
        KEY_FIELD_ID_START + 0,
        KEY_FIELD_ID_START + 2,
        SEQUENCE_NUMBER_FIELD_ID,
        VALUE_KIND_FIELD_ID,
        0,
        1,
        2,
        3,
    ]


def test_key_value_schema_thin_and_without_ids() -> None:
    thin = key_value_arrow_schema(KEYS, FIELDS, thin_mode=True)
    assert thin.names == [SEQUENCE_NUMBER, VALUE_KIND, "id", "dt", "k2", "v"]
    plain = key_value_arrow_schema(KEYS, FIELDS, thin_mode=False, field_ids=False)
    assert all(_field_id(f) is None for f in plain)
    assert supports_thin_mode(KEYS, FIELDS)
    assert not supports_thin_mode(KEYS, FIELDS[:2])
    with pytest.raises(InvalidArgumentError, match="k2"):
        key_value_arrow_schema(KEYS, FIELDS[:2], thin_mode=True)


def test_detect_thin_mode() -> None:
    names = ["id", "k2"]
    assert detect_thin_mode(key_value_arrow_schema(KEYS, FIELDS, thin_mode=False), names) is False
    assert detect_thin_mode(key_value_arrow_schema(KEYS, FIELDS, thin_mode=True), names) is True
    assert key_column_names(names, thin_mode=False) == ["_KEY_id", "_KEY_k2"]
    assert key_column_names(names, thin_mode=True) == ["id", "k2"]
    partial = pa.schema(
        [
            ("_KEY_id", pa.int64()),
            (SEQUENCE_NUMBER, pa.int64()),
            (VALUE_KIND, pa.int8()),
            ("id", pa.int64()),
            ("k2", pa.int32()),
        ]
    )
    with pytest.raises(SchemaMismatchError, match="only some key columns"):
        detect_thin_mode(partial, names)
    with pytest.raises(SchemaMismatchError, match="_SEQUENCE_NUMBER"):
        detect_thin_mode(pa.schema([("id", pa.int64()), ("k2", pa.int32())]), names)
    with pytest.raises(SchemaMismatchError, match="k2"):
        detect_thin_mode(
            pa.schema([(SEQUENCE_NUMBER, pa.int64()), (VALUE_KIND, pa.int8()), ("id", pa.int64())]), names
        )


def _kv_batch(schema: pa.Schema) -> pa.RecordBatch:
    data = {
        "_KEY_id": [1, 2, 3],
        "_KEY_k2": [10, 20, 30],
        SEQUENCE_NUMBER: [0, 1, 2],
        VALUE_KIND: [0, 2, 3],
        "id": [1, 2, 3],
        "dt": ["a", None, "ü"],
        "k2": [10, 20, 30],
        "v": [0.5, None, 1.5],
    }
    return pa.RecordBatch.from_pydict({n: data[n] for n in schema.names}, schema=schema)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
@pytest.mark.parametrize("thin", [False, True])
def test_write_and_read_key_value_files(tmp_path: Path, fmt: str, thin: bool) -> None:
    io = LocalFileIO()
    schema = key_value_arrow_schema(KEYS, FIELDS, thin_mode=thin)
    batch = _kv_batch(schema)
    path = str(tmp_path / f"data-kv-0.{fmt}")
    w = open_writer(io, path, schema, fmt, {})
    w.write(batch)
    w.close()
    file_schema = read_file_schema(io, path, fmt)
    assert detect_thin_mode(file_schema, ["id", "k2"]) is thin
    keys = key_column_names(["id", "k2"], thin_mode=thin)
    got = pa.Table.from_batches([conform_to_schema(b, schema) for b in read_file(io, path, fmt)])
    assert got.equals(pa.Table.from_batches([batch]))
    projected = next(iter(read_file(io, path, fmt, columns=[*keys, VALUE_KIND])))
    assert projected.column(VALUE_KIND).to_pylist() == [0, 2, 3]
    assert projected.column(keys[1]).to_pylist() == [10, 20, 30]
    if fmt == "parquet":
        pf = pq.ParquetFile(path)
        ids = {pf.schema.column(i).name: pf.schema.column(i) for i in range(len(pf.schema))}
        # As Java writes: field ids on every column, system columns required.
        assert ids[SEQUENCE_NUMBER].max_definition_level == 0
        assert ids[VALUE_KIND].max_definition_level == 0
        assert "Int(bitWidth=8, isSigned=true)" in str(ids[VALUE_KIND].logical_type)
        arrow = pf.schema_arrow
        assert _field_id(arrow.field(SEQUENCE_NUMBER)) == SEQUENCE_NUMBER_FIELD_ID
        if not thin:
            assert _field_id(arrow.field("_KEY_k2")) == KEY_FIELD_ID_START + 2
