"""Reads and writes ``schema/schema-N`` (Paimon's SchemaManager).

A new schema version is published with the same no-overwrite primitive as
snapshots, so two concurrent ``alter_table`` calls cannot both win: the loser
re-applies its changes on top of the winner's schema.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from paimon_core.exceptions import SchemaError, TableAlreadyExistsError
from paimon_core.io.file_io import FileIO
from paimon_core.options import PATH
from paimon_core.paths import SCHEMA_PREFIX, PathFactory
from paimon_core.schema.data_types import DataField
from paimon_core.schema.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnType,
    UpdateComment,
)
from paimon_core.schema.schema_validation import validate_table_schema
from paimon_core.schema.table_schema import TableSchema, max_field_id
from paimon_core.schema.type_casts import is_safe_widening
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)

# Options that cannot change once data exists (they decide where rows live).
IMMUTABLE_OPTIONS = {"bucket", "bucket-key", "merge-engine", "sequence.field", "partition.default-name"}


def _check_bucket_change(old: str | None, new: str) -> None:
    """A fixed bucket count may change (Java's ``checkAlterTableOption``); the files already written
    keep their count until ``rescale`` rewrites their partition. Dynamic (-1) and postpone (-2)
    bucket modes cannot be entered or left."""
    try:
        before, after = int(old if old is not None else "-1"), int(new)
    except ValueError as e:
        raise SchemaError(f"Option 'bucket' must be an integer, got {new!r}") from e
    if before <= 0:
        raise SchemaError(
            f"Option 'bucket' cannot be changed on a table with bucket = {before} (only fixed bucket counts change)"
        )
    if after <= 0:
        raise SchemaError(
            f"Option 'bucket' cannot be changed from {before} to {after}: only to another fixed bucket count"
        )


class SchemaManager:
    """Schema files of one table."""

    def __init__(self, file_io: FileIO, paths: PathFactory, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.file_io = file_io
        self.paths = paths
        self.clock = clock

    def list_ids(self) -> list[int]:
        ids = []
        for st in self.file_io.list_files(self.paths.schema_dir):
            suffix = st.name[len(SCHEMA_PREFIX) :] if st.name.startswith(SCHEMA_PREFIX) else ""
            if suffix.isdigit():
                ids.append(int(suffix))
        return sorted(ids)

    def schema(self, schema_id: int) -> TableSchema:
        path = self.paths.schema_path(schema_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise SchemaError(f"Schema {schema_id} does not exist: {path}", schema_id=schema_id) from None
        return TableSchema.from_json(data, path=path)

    def latest(self) -> TableSchema | None:
        ids = self.list_ids()
        return self.schema(ids[-1]) if ids else None

    def list_all(self) -> list[TableSchema]:
        return [self.schema(i) for i in self.list_ids()]

    def create_table(
        self,
        fields: Sequence[DataField],
        *,
        partition_keys: Sequence[str] = (),
        primary_keys: Sequence[str] = (),
        options: dict[str, str] | None = None,
        comment: str | None = None,
    ) -> TableSchema:
        """Write ``schema-0``; TableAlreadyExistsError if a schema is already there."""
        opts = {k: v for k, v in (options or {}).items() if k != PATH}
        pk_set = set(primary_keys)
        # Java makes primary-key columns NOT NULL.
        fixed = tuple(f if f.name not in pk_set else _not_null(f) for f in fields)
        schema = TableSchema(
            id=0,
            fields=fixed,
            highest_field_id=max_field_id(fixed),
            partition_keys=tuple(partition_keys),
            primary_keys=tuple(primary_keys),
            options=opts,
            comment=comment,
            time_millis=self.clock.now_millis(),
        )
        validate_table_schema(schema)
        if self.list_ids():
            raise TableAlreadyExistsError(f"Table already exists at {self.paths.table_path}")
        if not self.file_io.try_write_atomic(self.paths.schema_path(0), schema.to_json().encode()):
            raise TableAlreadyExistsError(f"Table already exists at {self.paths.table_path}")
        return schema

    def commit_changes(self, changes: Sequence[SchemaChange], *, max_attempts: int = 10) -> TableSchema:
        """Apply changes to the latest schema and publish it as the next version."""
        for _ in range(max_attempts):
            old = self.latest()
            if old is None:
                raise SchemaError(f"No schema at {self.paths.table_path}: the table does not exist")
            new = apply_changes(old, changes).copy(id=old.id + 1, time_millis=self.clock.now_millis())
            validate_table_schema(new)
            if self.file_io.try_write_atomic(self.paths.schema_path(new.id), new.to_json().encode()):
                logger.info("Committed schema %d of %s", new.id, self.paths.table_path)
                return new
        raise SchemaError(f"Could not commit schema changes to {self.paths.table_path}: too many concurrent changes")


def _not_null(f: DataField) -> DataField:
    return DataField(f.id, f.name, f.type.copy(nullable=False), f.description)


def apply_changes(schema: TableSchema, changes: Sequence[SchemaChange]) -> TableSchema:
    """Pure function: the schema after the changes, or SchemaError naming the bad change."""
    fields = list(schema.fields)
    options = dict(schema.options)
    highest = schema.highest_field_id
    comment = schema.comment
    keys = set(schema.partition_keys) | set(schema.primary_keys)

    def index_of(name: str) -> int:
        for i, f in enumerate(fields):
            if f.name == name:
                return i
        raise SchemaError(f"Column '{name}' does not exist", column=name)

    for ch in changes:
        if isinstance(ch, SetOption):
            if ch.key == "bucket" and options.get(ch.key) != ch.value:
                _check_bucket_change(options.get(ch.key), ch.value)
            elif ch.key in IMMUTABLE_OPTIONS and options.get(ch.key) != ch.value:
                raise SchemaError(f"Option '{ch.key}' cannot be changed after the table is created")
            options[ch.key] = ch.value
        elif isinstance(ch, RemoveOption):
            if ch.key in IMMUTABLE_OPTIONS:
                raise SchemaError(f"Option '{ch.key}' cannot be removed")
            options.pop(ch.key, None)
        elif isinstance(ch, AddColumn):
            if any(f.name == ch.name for f in fields):
                raise SchemaError(f"Column '{ch.name}' already exists", column=ch.name)
            if not ch.type.nullable:
                raise SchemaError(f"Cannot add NOT NULL column '{ch.name}': existing rows have no value for it")
            highest += 1
            new_field = DataField(highest, ch.name, ch.type, ch.comment)
            highest = max(highest, max_field_id([new_field]))
            if ch.after is None:
                fields.append(new_field)
            elif ch.after == "":
                fields.insert(0, new_field)
            else:
                fields.insert(index_of(ch.after) + 1, new_field)
        elif isinstance(ch, RenameColumn):
            i = index_of(ch.name)
            if ch.name in keys:
                raise SchemaError(f"Cannot rename key column '{ch.name}'", column=ch.name)
            if any(f.name == ch.new_name for f in fields):
                raise SchemaError(f"Column '{ch.new_name}' already exists", column=ch.new_name)
            f = fields[i]
            fields[i] = DataField(f.id, ch.new_name, f.type, f.description)
        elif isinstance(ch, DropColumn):
            i = index_of(ch.name)
            if ch.name in keys:
                raise SchemaError(f"Cannot drop key column '{ch.name}'", column=ch.name)
            if len(fields) == 1:
                raise SchemaError("Cannot drop the last column")
            del fields[i]
        elif isinstance(ch, UpdateColumnType):
            i = index_of(ch.name)
            f = fields[i]
            if ch.name in keys:
                raise SchemaError(f"Cannot change the type of key column '{ch.name}'", column=ch.name)
            if not is_safe_widening(f.type, ch.new_type):
                raise SchemaError(
                    f"Cannot change column '{ch.name}' from {f.type} to {ch.new_type}: not a safe widening",
                    column=ch.name,
                )
            fields[i] = DataField(f.id, f.name, ch.new_type, f.description)
        elif isinstance(ch, UpdateColumnComment):
            i = index_of(ch.name)
            f = fields[i]
            fields[i] = DataField(f.id, f.name, f.type, ch.comment)
        elif isinstance(ch, UpdateComment):
            comment = ch.comment
        else:  # pragma: no cover - exhaustive
            raise SchemaError(f"Unknown schema change {ch!r}")
    return schema.copy(fields=tuple(fields), options=options, highest_field_id=highest, comment=comment)
