"""Issue 27 item 5: ``migrate_table`` moves files, so a source inside any Paimon table (a directory
with ``schema/schema-N`` at it or an ancestor), inside the warehouse's own metadata, or holding a
symbolic link is refused with a clear error, and nothing changes (the job exits 1)."""

from __future__ import annotations

import json
import pathlib

import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.migrate import migrate_directory
from spark_jobs.common.output import EXIT_TERMINAL

from .hostile import commit, diff, make_table, rows, tree_state


def _job(wh: str, source: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    from spark_jobs.__main__ import main

    code = main(["migrate_table", "--warehouse", wh, "--table", "db.new", "--source_path", source])
    return code, json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.parametrize("where", ["bucket-0", "", "dt=p1", "dt=p1/bucket-0", "branch/branch-b/x=1"])
def test_a_source_inside_another_table_is_refused(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    wh = str(tmp_path / "wh")
    partitioned = where.startswith("dt=")
    other = make_table(wh, name="other", partitioned=partitioned)
    commit(other, rows([1, 2]))
    source = pathlib.Path(other.path) / where if where else pathlib.Path(other.path)
    if where.startswith("branch/"):
        other.maintenance.create_branch("b")
        source.mkdir(parents=True)
        pq.write_table(rows([9]), source / "f.parquet")
    ledger = [f"{wh}/paimon_maintenance.db"]  # the job records its failure there
    pathlib.Path(ledger[0]).mkdir(exist_ok=True)
    before = tree_state([str(tmp_path)], exclude=ledger)
    code, out = _job(wh, str(source), capsys)
    assert code == EXIT_TERMINAL and out["status"] != "ok"
    assert "Paimon table" in str(out["error"]), out
    assert diff(before, tree_state([str(tmp_path)], exclude=ledger)) == []
    if not where.startswith("branch/"):
        assert sorted(FileSystemCatalog(wh).get_table("db.other").to_arrow().column("id").to_pylist()) == [
            1,
            2,
        ]
    assert not FileSystemCatalog(wh).table_exists("db.new")


def test_a_source_holding_a_table_is_refused(tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "wh"
    src = tmp_path / "landing"
    other = make_table(str(src / "k=v"), name="other")  # a warehouse under a partition-like name
    commit(other, rows([1]))
    catalog = FileSystemCatalog(str(wh))
    catalog.create_database("db")
    before = tree_state([str(tmp_path)])
    with pytest.raises(InvalidArgumentError, match="Paimon table"):
        migrate_directory(catalog, str(src / "k=v" / "db.db"), "db.new")
    assert diff(before, tree_state([str(tmp_path)])) == []


@pytest.mark.parametrize("meta", ["_maintenance", "paimon_maintenance.db"])
def test_a_source_in_the_warehouse_metadata_is_refused(tmp_path: pathlib.Path, meta: str) -> None:
    wh = tmp_path / "wh"
    src = wh / meta / "x"
    src.mkdir(parents=True)
    pq.write_table(rows([1]), src / "f.parquet")
    catalog = FileSystemCatalog(str(wh))
    catalog.create_database("db")
    before = tree_state([str(tmp_path)])
    with pytest.raises(InvalidArgumentError, match="metadata"):
        migrate_directory(catalog, str(src), "db.new")
    assert diff(before, tree_state([str(tmp_path)])) == []


def test_a_link_under_the_source_is_refused(tmp_path: pathlib.Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    pq.write_table(rows([1]), elsewhere / "f.parquet")
    src = tmp_path / "landing"
    src.mkdir()
    pq.write_table(rows([2]), src / "g.parquet")
    (src / "linked.parquet").symlink_to(elsewhere / "f.parquet")
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    before = tree_state([str(tmp_path)])
    with pytest.raises(InvalidArgumentError, match="symbolic link"):
        migrate_directory(catalog, str(src), "db.new")
    assert diff(before, tree_state([str(tmp_path)])) == []
