"""Column layout of primary-key (KeyValue) data files.

Java's ``KeyValue.schema`` / ``SpecialFields`` (and pypaimon) lay a primary-key data file out as::

    _KEY_<k1> .. _KEY_<kn>, _SEQUENCE_NUMBER BIGINT NOT NULL, _VALUE_KIND TINYINT NOT NULL, <value fields>

where the key fields are the *trimmed* primary key (primary key minus partition keys). With
``data-file.thin-mode`` (written by pypaimon-rust and by Java when the option is on) the
``_KEY_`` columns are left out and readers take the key from the value columns of the same
field id; Java only enables it when every key field is also a value field
(``KeyValueFileWriterFactory.supportsThinMode``).

Field ids (``SpecialFields``): a key field has id ``KEY_FIELD_ID_START + <value field id>``
(``KEY_FIELD_ID_START = Integer.MAX_VALUE / 2``), ``_SEQUENCE_NUMBER`` has
``Integer.MAX_VALUE - 1`` and ``_VALUE_KIND`` ``Integer.MAX_VALUE - 2``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa

from paimon_core.exceptions import InvalidArgumentError, SchemaMismatchError
from paimon_core.format.arrow_types import to_arrow_field
from paimon_core.schema.data_types import DataField

__all__ = [
    "KEY_FIELD_ID_START",
    "KEY_FIELD_PREFIX",
    "LEVEL",
    "LEVEL_FIELD_ID",
    "SEQUENCE_NUMBER",
    "SEQUENCE_NUMBER_FIELD_ID",
    "SYSTEM_FIELD_ID_START",
    "VALUE_KIND",
    "VALUE_KIND_FIELD_ID",
    "detect_thin_mode",
    "is_system_field",
    "key_column_names",
    "key_field",
    "key_value_arrow_schema",
    "sequence_number_field",
    "supports_thin_mode",
    "value_kind_field",
]

_INT_MAX = 2**31 - 1

KEY_FIELD_PREFIX = "_KEY_"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
LEVEL = "_LEVEL"

SYSTEM_FIELD_ID_START = _INT_MAX // 2  # 1073741823
KEY_FIELD_ID_START = SYSTEM_FIELD_ID_START
SEQUENCE_NUMBER_FIELD_ID = _INT_MAX - 1  # 2147483646
VALUE_KIND_FIELD_ID = _INT_MAX - 2  # 2147483645
LEVEL_FIELD_ID = _INT_MAX - 3

_FIELD_ID_KEY = b"PARQUET:field_id"


def _with_id(field: pa.Field, field_id: int | None) -> pa.Field:
    if field_id is None:
        return field
    metadata = dict(field.metadata or {})
    metadata[_FIELD_ID_KEY] = str(field_id).encode()
    return field.with_metadata(metadata)


def sequence_number_field(*, field_ids: bool = True) -> pa.Field:
    """``_SEQUENCE_NUMBER int64 NOT NULL``."""
    return _with_id(
        pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False), SEQUENCE_NUMBER_FIELD_ID if field_ids else None
    )


def value_kind_field(*, field_ids: bool = True) -> pa.Field:
    """``_VALUE_KIND int8 NOT NULL`` (0 +I, 1 -U, 2 +U, 3 -D)."""
    return _with_id(
        pa.field(VALUE_KIND, pa.int8(), nullable=False), VALUE_KIND_FIELD_ID if field_ids else None
    )


def key_field(field: DataField, *, field_ids: bool = True) -> pa.Field:
    """The ``_KEY_<name>`` Arrow field of a key field, with id ``KEY_FIELD_ID_START + id``."""
    renamed = dataclasses.replace(field, id=field.id + KEY_FIELD_ID_START, name=KEY_FIELD_PREFIX + field.name)
    return to_arrow_field(renamed, field_ids=field_ids)


def supports_thin_mode(key_fields: Sequence[DataField], value_fields: Sequence[DataField]) -> bool:
    """Whether every key field is also a value field (by id), Java's condition for thin mode."""
    value_ids = {f.id for f in value_fields}
    return all(f.id in value_ids for f in key_fields)


def key_value_arrow_schema(
    key_fields: Sequence[DataField],
    value_fields: Sequence[DataField],
    *,
    thin_mode: bool,
    field_ids: bool = True,
) -> pa.Schema:
    """Arrow schema of a primary-key data file.

    ``key_fields`` are the trimmed primary-key fields (as table fields, without the prefix).
    With ``thin_mode`` the ``_KEY_`` columns are omitted; that requires every key field to be a
    value field (:func:`supports_thin_mode`), else :class:`InvalidArgumentError`. With
    ``field_ids`` every field carries Java's Parquet field id.
    """
    if thin_mode and not supports_thin_mode(key_fields, value_fields):
        raise InvalidArgumentError(
            "Thin mode needs every key field among the value fields; missing: "
            f"{[f.name for f in key_fields if f.id not in {v.id for v in value_fields}]}"
        )
    fields: list[pa.Field] = []
    if not thin_mode:
        fields.extend(key_field(f, field_ids=field_ids) for f in key_fields)
    fields.append(sequence_number_field(field_ids=field_ids))
    fields.append(value_kind_field(field_ids=field_ids))
    fields.extend(to_arrow_field(f, field_ids=field_ids) for f in value_fields)
    return pa.schema(fields)


def detect_thin_mode(file_schema: pa.Schema, key_names: Sequence[str]) -> bool:
    """Whether a primary-key data file was written in thin mode (no ``_KEY_`` columns).

    ``key_names`` are the trimmed primary-key names without prefix. A file with only some of
    the ``_KEY_`` columns, or without ``_SEQUENCE_NUMBER``/``_VALUE_KIND``, is not a valid
    primary-key data file: :class:`SchemaMismatchError`.
    """
    names = set(file_schema.names)
    missing_system = [n for n in (SEQUENCE_NUMBER, VALUE_KIND) if n not in names]
    if missing_system:
        raise SchemaMismatchError(
            f"Not a primary-key data file: columns {missing_system} are missing (columns: {file_schema.names})"
        )
    present = [k for k in key_names if KEY_FIELD_PREFIX + k in names]
    if len(present) == len(key_names) and key_names:
        return False
    if present:
        raise SchemaMismatchError(
            f"Primary-key data file has only some key columns: {[KEY_FIELD_PREFIX + k for k in present]} "
            f"of {[KEY_FIELD_PREFIX + k for k in key_names]}"
        )
    missing_values = [k for k in key_names if k not in names]
    if missing_values:
        raise SchemaMismatchError(
            f"Primary-key data file has neither _KEY_ columns nor value columns for keys {missing_values}"
        )
    return True


def key_column_names(key_names: Sequence[str], *, thin_mode: bool) -> list[str]:
    """The physical columns holding the key: ``_KEY_<k>``, or ``<k>`` itself in thin mode."""
    return list(key_names) if thin_mode else [KEY_FIELD_PREFIX + k for k in key_names]


def is_system_field(name: str) -> bool:
    """Java's ``SpecialFields.isSystemField(name)`` for the KeyValue columns."""
    return name.startswith(KEY_FIELD_PREFIX) or name in (SEQUENCE_NUMBER, VALUE_KIND, LEVEL)
