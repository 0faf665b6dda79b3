"""Bad input gets a clear error naming the problem, and changes nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core import (
    CorruptFileError,
    DatabaseNotFoundError,
    FileSystemCatalog,
    InvalidOptionError,
    SchemaError,
    SchemaMismatchError,
    TableAlreadyExistsError,
)
from paimon_core.io.file_io import join
from tests.fixtures.tables import sample_rows


def test_create_table_errors(catalog: FileSystemCatalog) -> None:
    schema = sample_rows(1).schema
    with pytest.raises(InvalidOptionError, match="Unknown table option 'buckets'.*did you mean 'bucket'"):
        catalog.create_table("db.x", schema, options={"buckets": "2"})
    with pytest.raises(InvalidOptionError, match="'bucket' must be an integer"):
        catalog.create_table("db.x", schema, options={"bucket": "two"})
    with pytest.raises(SchemaError, match="Partition key column 'nope'"):
        catalog.create_table("db.x", schema, partition_keys=["nope"])
    with pytest.raises(SchemaError, match="must contain all partition keys"):
        catalog.create_table("db.x", schema, primary_keys=["id"], partition_keys=["dt"], options={"bucket": "2"})
    nested = pa.schema([("id", pa.int64()), ("m", pa.map_(pa.string(), pa.int32()))])
    with pytest.raises(SchemaError, match="nested types cannot be keys"):
        catalog.create_table("db.x", nested, primary_keys=["m"])
    with pytest.raises(DatabaseNotFoundError, match="Database 'nodb' does not exist"):
        catalog.create_table("nodb.x", schema)
    assert not catalog.table_exists("db.x")
    catalog.create_table("db.x", schema)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("db.x", schema)


def test_null_in_not_null_column_is_refused(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog.create_table("db.nn", schema)
    with pytest.raises(SchemaMismatchError, match="'id' is NOT NULL but 1 row"):
        t.write_arrow(pa.table({"id": pa.array([1, None], pa.int64()), "v": ["a", "b"]}))
    assert t.latest_snapshot() is None


@pytest.mark.parametrize("what", ["snapshot", "schema", "manifest-list", "manifest"])
def test_corrupt_metadata_names_the_file(catalog: FileSystemCatalog, what: str) -> None:
    t = catalog.create_table("db.c", sample_rows(1).schema)
    t.write_arrow(sample_rows(10))
    snap = t.latest_snapshot()
    io = t.file_io
    if what == "snapshot":
        path = t.paths.snapshot_path(1)
    elif what == "schema":
        path = t.paths.schema_path(0)
    elif what == "manifest-list":
        path = t.paths.manifest_path(snap.delta_manifest_list)
    else:
        path = t.paths.manifest_path(t.new_file_store_scan().delta_manifests(snap)[0].file_name)
    good = io.read_bytes(path)
    io.write_bytes(path, good[: len(good) // 2], overwrite=True)
    with pytest.raises(CorruptFileError) as info:
        catalog.get_table("db.c").to_arrow()
    assert path.split("/")[-1] in str(info.value)


def test_missing_data_file_is_reported(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.d", sample_rows(1).schema)
    t.write_arrow(sample_rows(10))
    e = t.new_file_store_scan().live_entries(t.latest_snapshot())[0]
    t.file_io.delete(join(t.bucket_path(e.partition, e.bucket), e.file.file_name))
    with pytest.raises(Exception, match=e.file.file_name):
        t.to_arrow()
