"""alter_table: add, drop, rename, widen columns; options; old files read by field id."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, SchemaError
from paimon_core.exceptions import InvalidOptionError
from paimon_core.schema.data_types import BigIntType, DoubleType, IntType, VarCharType
from paimon_core.schema.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnType,
)


def _base(catalog: FileSystemCatalog) -> None:
    data = pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"], "score": pa.array([1.5, 2.5], pa.float32())})
    t = catalog.create_table("db.e", data.schema, partition_keys=[])
    t.write_arrow(data)


def test_add_rename_drop_widen_and_read_old_files(catalog: FileSystemCatalog) -> None:
    _base(catalog)
    t = catalog.alter_table(
        "db.e",
        [
            AddColumn("extra", VarCharType(VarCharType.MAX_LENGTH)),
            RenameColumn("name", "label"),
            UpdateColumnType("id", BigIntType()),
            UpdateColumnType("score", DoubleType()),
        ],
    )
    assert t.schema.id == 1
    assert t.schema.field_names == ["id", "label", "score", "extra"]
    t.write_arrow(pa.table({"id": [3], "label": ["c"], "score": [3.5], "extra": ["x"]}))
    out = t.to_arrow().sort_by("id")
    assert out.schema.field("id").type == pa.int64()
    assert out.column("label").to_pylist() == ["a", "b", "c"]
    assert out.column("extra").to_pylist() == [None, None, "x"]
    assert out.column("score").to_pylist() == [1.5, 2.5, 3.5]
    # Filters on a renamed column see old files through the field id.
    pb = t.new_read_builder().new_predicate_builder()
    assert t.to_arrow(predicate=pb.equal("label", "a")).column("id").to_pylist() == [1]
    t = catalog.alter_table("db.e", [DropColumn("label")])
    t.write_arrow(pa.table({"id": [4], "score": [4.5], "extra": ["y"]}))
    assert t.to_arrow().sort_by("id").column("id").to_pylist() == [1, 2, 3, 4]
    # Re-adding a dropped name gets a fresh id: old values do not come back.
    t = catalog.alter_table("db.e", [AddColumn("label", VarCharType(VarCharType.MAX_LENGTH))])
    assert t.to_arrow().column("label").null_count == 4


def test_options_and_bad_changes(catalog: FileSystemCatalog) -> None:
    _base(catalog)
    t = catalog.alter_table("db.e", [SetOption("snapshot.num-retained.min", "5")])
    assert t.schema.options["snapshot.num-retained.min"] == "5"
    t = catalog.alter_table("db.e", [RemoveOption("snapshot.num-retained.min")])
    assert "snapshot.num-retained.min" not in t.schema.options
    with pytest.raises(InvalidOptionError, match="snapshot.num-retained.min"):
        catalog.alter_table("db.e", [SetOption("snapshot.num-retained.min", "many")])
    with pytest.raises(SchemaError, match="not a safe widening"):
        catalog.alter_table("db.e", [UpdateColumnType("score", IntType())])
    with pytest.raises(SchemaError, match="does not exist"):
        catalog.alter_table("db.e", [DropColumn("nope")])
    with pytest.raises(SchemaError, match="cannot be changed"):
        catalog.alter_table("db.e", [SetOption("bucket", "4")])
    assert catalog.get_table("db.e").schema.id == 2  # failed changes wrote nothing
