"""``table.remove_unexisting_files``: drop the entries of data files that are gone, in one
OVERWRITE commit; bulk existence checks; conflicts and deletion vectors leave the table unchanged."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, DataFileNotFoundError, InvalidArgumentError
from paimon_core.io.file_io import join
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.operation.remove_unexisting_files import RemoveUnexistingFiles
from paimon_core.table.table import FileStoreTable
from tests.fixtures.tables import sample_rows


def _path(t: FileStoreTable, e: ManifestEntry) -> str:
    return join(t.bucket_path(e.partition, e.bucket), e.file.file_name)


def _live(t: FileStoreTable) -> list[ManifestEntry]:
    return t.new_file_store_scan().live_entries(t.latest_snapshot())


def test_primary_key_table_on_local_and_fsspec_memory(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.pk",
        sample_rows(1).schema,
        primary_keys=["id", "dt"],
        partition_keys=["dt"],
        options={"bucket": "2"},
    )
    t.write_arrow(sample_rows(40))
    t.write_arrow(sample_rows(40, start=40))
    entries = _live(t)
    gone = entries[0]
    assert t.file_io.delete(_path(t, gone))
    with pytest.raises(DataFileNotFoundError):
        t.to_arrow()
    dry = t.maintenance.remove_unexisting_files(dry_run=True)
    assert dry.removed_files == 1 and dry.checked_files == len(entries) and t.latest_snapshot().id == 2
    assert [p.files for p in dry.partitions] == [(_path(t, gone),)]
    assert (
        dry.partitions[0].partition == t.partition_path(gone.partition)
        and dry.to_dict()["partitions"][0]["row_count"] == gone.file.row_count
    )
    res = t.maintenance.remove_unexisting_files(dry_run=False)
    assert (
        res.committed_snapshot_id == 3
        and res.commit_kind == "OVERWRITE"
        and res.removed_rows == gone.file.row_count
    )
    assert t.to_arrow().num_rows == 80 - gone.file.row_count
    assert {e.file.file_name for e in _live(t)} == {e.file.file_name for e in entries[1:]}
    assert all(t.file_io.exists(_path(t, e)) for e in entries[1:])  # nothing else touched


def test_unpartitioned_and_empty_tables(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema)
    empty = t.maintenance.remove_unexisting_files(dry_run=False)
    assert empty.snapshot_id is None and empty.removed_files == 0 and empty.committed_snapshot_id is None
    t.write_arrow(sample_rows(5))
    t.write_arrow(sample_rows(5, start=5))
    assert t.file_io.delete(_path(t, _live(t)[1]))
    res = t.maintenance.remove_unexisting_files(dry_run=False)
    assert [p.partition for p in res.partitions] == [""] and res.committed_snapshot_id == 3
    assert t.to_arrow().num_rows == 5


def test_existence_is_checked_by_listing_each_bucket_directory_once(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema, options={"bucket": "1", "bucket-key": "id"})
    for i in range(12):
        t.write_arrow(sample_rows(3, start=3 * i))
    single = catalog.create_table("db.one", sample_rows(1).schema)
    single.write_arrow(sample_rows(3))
    entries, single_entries = _live(t), _live(single)
    assert len(entries) == 12 and t.file_io.delete(_path(t, entries[5]))
    calls: dict[str, list[str]] = {"exists": [], "list_status": []}
    real_exists, real_list = t.file_io.exists, t.file_io.list_status

    def exists(path: str) -> bool:
        calls["exists"].append(path)
        return real_exists(path)

    def list_status(path: str) -> Any:
        calls["list_status"].append(path)
        return real_list(path)

    monkeypatch.setattr(t.file_io, "exists", exists)
    monkeypatch.setattr(t.file_io, "list_status", list_status)
    missing = RemoveUnexistingFiles(t.store).list_missing(entries)
    assert [e.file.file_name for e, _ in missing] == [entries[5].file.file_name]
    # one listing of the bucket directory, one confirming probe of the file it misses
    assert calls["list_status"] == [t.bucket_path(entries[0].partition, 0)] and calls["exists"] == [
        _path(t, entries[5])
    ]
    calls["exists"].clear()
    calls["list_status"].clear()
    monkeypatch.setattr(single.file_io, "exists", exists)
    monkeypatch.setattr(single.file_io, "list_status", list_status)
    assert RemoveUnexistingFiles(single.store).list_missing(single_entries) == []
    assert calls["list_status"] == [] and len(calls["exists"]) == 1  # a lone file: one probe, no listing


def test_a_concurrent_commit_that_removed_the_file_fails_it_cleanly(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema, partition_keys=["dt"])
    t.write_arrow(sample_rows(8))
    gone = _live(t)[0]
    assert t.file_io.delete(_path(t, gone))
    replacement = sample_rows(8).filter(
        pa.compute.equal(sample_rows(8)["dt"], t.partition_codec.decode(gone.partition)[0])
    )

    class Racing(RemoveUnexistingFiles):
        def list_missing(self, entries: Any) -> Any:
            out = super().list_missing(entries)
            # meanwhile someone overwrites that partition: the missing file's entry is gone already
            t.write_arrow(replacement, overwrite={"dt": t.partition_codec.decode(gone.partition)[0]})
            return out

    with pytest.raises(CommitConflictError, match=gone.file.file_name):
        Racing(t.store).run()
    assert t.latest_snapshot().id == 2 and t.to_arrow().num_rows == 8  # the overwrite stands, nothing else


def test_deletion_vector_tables_refuse_files_with_vectors(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = catalog.create_table(
        "db.dv", schema, primary_keys=["id"], options={"bucket": "1", "deletion-vectors.enabled": "true"}
    )
    t.write_arrow(pa.table({"id": pa.array(range(10), pa.int64()), "v": ["a"] * 10}))
    t.maintenance.compact()
    t.write_arrow(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["b"] * 2}))
    t.maintenance.compact(compact_strategy="minor")  # rows 1, 2 of the max-level file now have a deletion vector
    entries = sorted(_live(t), key=lambda e: -e.file.level)
    assert t.latest_snapshot().index_manifest is not None and len(entries) == 2
    latest = t.latest_snapshot().id
    assert t.file_io.delete(_path(t, entries[0]))
    for dry_run in (True, False):
        with pytest.raises(InvalidArgumentError, match="deletion vectors"):
            t.maintenance.remove_unexisting_files(dry_run=dry_run)
    assert t.latest_snapshot().id == latest


def test_bad_parallelism(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema)
    for bad in (0, -1, True, "4"):
        with pytest.raises(InvalidArgumentError, match="parallelism"):
            t.maintenance.remove_unexisting_files(parallelism=bad, dry_run=False)  # type: ignore[arg-type]
