"""A data file that is gone when read: a PaimonError naming the file and the snapshot."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import DataFileNotFoundError, PaimonError
from paimon_core.io.file_io import join
from paimon_core.table.table import FileStoreTable
from tests.fixtures.tables import sample_rows


def _delete_one_data_file(t: FileStoreTable) -> str:
    snap = t.latest_snapshot()
    e = t.new_file_store_scan().live_entries(snap)[0]
    path = join(t.bucket_path(e.partition, e.bucket), e.file.file_name)
    assert t.file_io.delete(path)
    return path


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_missing_data_file_is_a_paimon_error(catalog: FileSystemCatalog, fmt: str) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema, options={"file.format": fmt})
    t.write_arrow(sample_rows(10))
    t.write_arrow(sample_rows(10, start=10))
    path = _delete_one_data_file(t)
    with pytest.raises(DataFileNotFoundError) as info:
        t.to_arrow()
    err = info.value
    assert isinstance(err, PaimonError) and isinstance(err, FileNotFoundError)  # old callers keep working
    assert err.path == path and err.snapshot_id == 2  # type: ignore[attr-defined]
    assert path in str(err) and "snapshot 2" in str(err) and "db.t" in str(err)
    again = pickle.loads(pickle.dumps(err))  # crosses Spark's executor -> driver boundary
    assert type(again) is DataFileNotFoundError and again.path == path  # type: ignore[attr-defined]


def test_missing_data_file_in_a_primary_key_merge(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.pk", sample_rows(1).schema, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(sample_rows(10))
    t.write_arrow(sample_rows(5))  # two files of one bucket: read by merging
    _delete_one_data_file(t)
    with pytest.raises(DataFileNotFoundError, match="snapshot 2"):
        t.to_arrow()


def test_cli_reports_a_missing_data_file_in_one_line(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    t = catalog.create_table("db.t", sample_rows(1).schema)
    t.write_arrow(sample_rows(10))
    path = _delete_one_data_file(t)
    r = subprocess.run(
        [sys.executable, "-m", "paimon_core", "read", wh, "db.t", "--output", str(tmp_path / "o.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Data file ") and path in lines[0]
