"""Schema changes for ``alter_table`` (Paimon's SchemaChange)."""

from __future__ import annotations

from dataclasses import dataclass

from paimon_core.schema.data_types import DataType


@dataclass(frozen=True)
class SetOption:
    key: str
    value: str


@dataclass(frozen=True)
class RemoveOption:
    key: str


@dataclass(frozen=True)
class AddColumn:
    name: str
    type: DataType
    comment: str | None = None
    #: None: append at the end; "" (empty): first; otherwise after that column.
    after: str | None = None


@dataclass(frozen=True)
class RenameColumn:
    name: str
    new_name: str


@dataclass(frozen=True)
class DropColumn:
    name: str


@dataclass(frozen=True)
class UpdateColumnType:
    name: str
    new_type: DataType


@dataclass(frozen=True)
class UpdateColumnComment:
    name: str
    comment: str | None


@dataclass(frozen=True)
class UpdateComment:
    comment: str | None


SchemaChange = (
    SetOption | RemoveOption | AddColumn | RenameColumn | DropColumn | UpdateColumnType | UpdateColumnComment | UpdateComment
)
