"""The ``schema/schema-N`` JSON model (Paimon's TableSchema)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from paimon_core.exceptions import CorruptFileError, SchemaError
from paimon_core.options import CoreOptions
from paimon_core.options_support import check_table_kind
from paimon_core.schema.data_types import ArrayType, DataField, DataType, MapType, RowType
from paimon_core.utils.json_util import dumps_java, loads_checked

SCHEMA_VERSION = 3


@dataclass(frozen=True)
class TableSchema:
    """A table's schema at one version: fields with ids, keys, options."""

    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int = 0
    version: int = SCHEMA_VERSION

    # --- derived ----------------------------------------------------------------
    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"Column '{name}' does not exist (columns: {', '.join(self.field_names)})", column=name)

    def fields_of(self, names: Sequence[str]) -> list[DataField]:
        return [self.field(n) for n in names]

    @property
    def partition_fields(self) -> list[DataField]:
        return self.fields_of(self.partition_keys)

    @property
    def trimmed_primary_keys(self) -> list[str]:
        """Primary key minus the partition keys (what ``_KEY_`` columns hold)."""
        if not self.primary_keys:
            return []
        trimmed = [k for k in self.primary_keys if k not in self.partition_keys]
        if not trimmed:
            raise SchemaError(
                f"Primary key {list(self.primary_keys)} must contain fields other than the "
                f"partition keys {list(self.partition_keys)}"
            )
        return trimmed

    @property
    def bucket_keys(self) -> list[str]:
        """``bucket-key`` if set, else the trimmed primary key (empty for append tables)."""
        keys = CoreOptions(self.options).bucket_key
        return keys if keys else self.trimmed_primary_keys

    @property
    def core_options(self) -> CoreOptions:
        return CoreOptions(self.options)

    # --- JSON -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
            "comment": self.comment,
            "timeMillis": self.time_millis,
        }

    def to_json(self) -> str:
        return dumps_java(self.to_dict())

    @staticmethod
    def from_json(text: str | bytes, *, path: str = "<schema>") -> TableSchema:
        obj = loads_checked(text, path=path, what="schema")
        raw_options = obj.get("options") if isinstance(obj, dict) else None
        if isinstance(raw_options, dict):  # a table kind named by its options, before its column types
            check_table_kind({str(k): str(v) for k, v in raw_options.items()}, action="open the table")
        try:
            fields = tuple(DataField.from_json(f) for f in obj["fields"])
            highest = obj.get("highestFieldId")
            return TableSchema(
                id=int(obj["id"]),
                fields=fields,
                highest_field_id=int(highest) if highest is not None else max_field_id(fields),
                partition_keys=tuple(obj.get("partitionKeys") or ()),
                primary_keys=tuple(obj.get("primaryKeys") or ()),
                options={str(k): str(v) for k, v in (obj.get("options") or {}).items()},
                comment=obj.get("comment"),
                time_millis=int(obj.get("timeMillis") or 0),
                version=int(obj.get("version", 1)),
            )
        except (KeyError, TypeError, ValueError, SchemaError) as e:
            raise CorruptFileError(f"Corrupt schema file {path}: {e}", path=path) from e

    def copy(self, **changes: Any) -> TableSchema:
        return replace(self, **changes)


def max_field_id(fields: Sequence[DataField]) -> int:
    """Highest field id, nested fields included (-1 when there are none)."""
    best = -1
    for f in fields:
        best = max(best, f.id, _nested_max_id(f.type))
    return best


def _nested_max_id(t: DataType) -> int:
    if isinstance(t, RowType):
        return max_field_id(t.fields)
    if isinstance(t, ArrayType):
        return _nested_max_id(t.element)
    if isinstance(t, MapType):
        return max(_nested_max_id(t.key), _nested_max_id(t.value))
    return -1
