"""migrate_table: a Hive-style directory of plain Parquet files becomes a Paimon append table in place.

Files move (no row copied) into ``<partition>/bucket-0/`` under their own names; partition values
live only in the paths (pyarrow's ``write_to_dataset`` leaves them out of the files, as Hive and
Spark do) and are read from the partition by our reader and by pypaimon alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CorruptFileError, InvalidArgumentError, PaimonError, SchemaMismatchError
from paimon_core.migrate import migrate_directory
from spark_jobs.common.output import EXIT_TERMINAL

N = 300


def _rows(n: int = N) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pa.array([f"n{i % 7}" for i in range(n)]),
            "score": pa.array([i / 4 for i in range(n)], pa.float64()),
            "dt": pa.array([f"2024-01-0{1 + i % 3}" for i in range(n)]),
            "hour": pa.array([i % 2 for i in range(n)], pa.int32()),
        }
    )


def _hive_dir(root: Path) -> Path:
    src = root / "landing"
    pq.write_to_dataset(_rows(), str(src), partition_cols=["dt", "hour"])
    (src / "_SUCCESS").write_text("")
    (src / "dt=2024-01-01" / ".part.crc").write_text("x")
    return src


def _catalog(root: Path) -> FileSystemCatalog:
    catalog = FileSystemCatalog(str(root / "wh"))
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


def _sorted(t: pa.Table) -> list[tuple[Any, ...]]:
    cols = ["id", "name", "score", "dt", "hour"]
    return sorted(zip(*(t.column(c).to_pylist() for c in cols), strict=True))


def _data_files(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*.parquet"))


def test_migrate_in_place_read_by_us_and_pypaimon(tmp_path: Path, pypaimon: Any) -> None:
    src = _hive_dir(tmp_path)
    before = _data_files(src)
    sizes = sorted(p.stat().st_size for p in before)
    catalog = _catalog(tmp_path)

    dry = migrate_directory(catalog, str(src), "db.t", dry_run=True)
    assert (dry.files, dry.rows, dry.snapshot_id, dry.dry_run) == (len(before), N, None, True)
    assert len(dry.partitions) == 6
    assert not catalog.table_exists("db.t") and _data_files(src) == before  # nothing moved

    result = migrate_directory(catalog, str(src), "db.t")
    assert result.to_dict()["files"] == len(before) and result.snapshot_id == 1 and result.created_table
    assert _data_files(src) == []  # moved, not copied
    table = catalog.get_table("db.t")
    moved = _data_files(Path(table.path))
    assert sorted(p.stat().st_size for p in moved) == sizes  # the very same bytes
    assert all(p.parent.name == "bucket-0" for p in moved)
    assert table.partition_keys == ["dt", "hour"]
    assert table.arrow_schema.field("hour").type == pa.int32()  # inferred from the paths
    assert _sorted(table.to_arrow()) == _sorted(_rows())
    # partition and stats pruning work on the migrated files
    from paimon_core.predicate import PredicateBuilder

    pb = PredicateBuilder(table.schema.fields)
    got = table.to_arrow(predicate=pb.and_(pb.equal("dt", "2024-01-02"), pb.greater_than("id", 250)))
    assert sorted(got.column("id").to_pylist()) == [i for i in range(251, N) if i % 3 == 1]

    peer_rows = pypaimon.read(str(tmp_path / "wh"), "db.t")
    assert sorted(peer_rows.column("id").to_pylist()) == list(range(N))
    assert sorted(zip(peer_rows.column("id").to_pylist(), peer_rows.column("dt").to_pylist(), strict=True)) == sorted(
        zip(range(N), _rows().column("dt").to_pylist(), strict=True)
    )

    # compaction rewrites the migrated files into ordinary Paimon files; every row stays
    table.write_arrow(_rows(30))
    table.maintenance.compact(compact_strategy="full")
    assert _sorted(catalog.get_table("db.t").to_arrow()) == _sorted(pa.concat_tables([_rows(), _rows(30)]))


def test_bad_inputs_change_nothing(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    src = _hive_dir(tmp_path)
    before = _data_files(src)

    bad = src / "dt=2024-01-02" / "hour=0" / "broken.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(CorruptFileError, match="broken.parquet"):
        migrate_directory(catalog, str(src), "db.t")
    bad.unlink()

    odd = src / "dt=2024-01-02" / "hour=1" / "other.parquet"
    pq.write_table(pa.table({"id": pa.array(["x"])}), str(odd))  # id as text
    with pytest.raises(SchemaMismatchError):
        migrate_directory(catalog, str(src), "db.t")
    odd.unlink()

    with pytest.raises(InvalidArgumentError, match="primary-key"):
        migrate_directory(catalog, str(src), "db.t", options={"primary-key": "id"})
    with pytest.raises(InvalidArgumentError, match="No data file"):
        migrate_directory(catalog, str(tmp_path / "empty-dir-that-is-missing"), "db.t")

    assert not catalog.table_exists("db.t")
    assert _data_files(src) == before


def test_failed_commit_moves_every_file_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = _catalog(tmp_path)
    src = _hive_dir(tmp_path)
    before = _data_files(src)
    from paimon_core.table.builders import BatchTableCommit

    def fail(self: BatchTableCommit, *args: object, **kwargs: object) -> None:
        raise OSError("store went away")

    monkeypatch.setattr(BatchTableCommit, "commit", fail)
    with pytest.raises(OSError, match="went away"):
        migrate_directory(catalog, str(src), "db.t")
    assert _data_files(src) == before
    assert not catalog.table_exists("db.t")  # the table it created is gone again


def test_two_files_with_one_destination_are_refused(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    src = tmp_path / "src" / "dt=1"
    src.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), str(src / "part-0"))
    pq.write_table(pa.table({"id": pa.array([2], pa.int64())}), str(src / "part-0.parquet"))
    with pytest.raises(InvalidArgumentError, match="would both become"):
        migrate_directory(catalog, str(tmp_path / "src"), "db.m")
    assert not catalog.table_exists("db.m")
    assert sorted(p.name for p in src.iterdir()) == ["part-0", "part-0.parquet"]


def test_into_an_existing_table_with_data_is_refused(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    src = _hive_dir(tmp_path)
    migrate_directory(catalog, str(src), "db.t")
    again = _hive_dir(tmp_path / "second")
    with pytest.raises(PaimonError, match="already holds data"):
        migrate_directory(catalog, str(again), "db.t")
    assert len(_data_files(again)) == 6  # left where they were


def test_migrate_table_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from spark_jobs.__main__ import main

    src = _hive_dir(tmp_path)
    wh = str(tmp_path / "wh")
    FileSystemCatalog(wh).create_database("db")
    common = ["migrate_table", "--warehouse", wh, "--table", "db.t"]
    assert main([*common, "--source_type", "hive", "--source_path", str(src)]) == 2
    assert "metastore" in capsys.readouterr().out
    assert main([*common, "parquet", str(src), "bucket=4"]) == EXIT_TERMINAL  # positional, Paimon's order
    assert "bucket" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]
    assert main([*common, "--source-path", str(src), "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (dry["status"], dry["dry_run"], dry["rows"]) == ("ok", True, N)
    assert main([*common, "--source-path", str(src), "--options", "file.compression=zstd"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (out["snapshot_id"], out["rows"], out["created_table"]) == (1, N, True)
    table = FileSystemCatalog(wh).get_table("db.t")
    assert table.options.options["file.compression"] == "zstd"
    assert table.to_arrow().num_rows == N
