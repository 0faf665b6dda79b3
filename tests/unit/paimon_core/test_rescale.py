"""rescale: a fixed-bucket table's partitions rewritten into another bucket count, safely.

Covers Paimon's two ways (``bucket_num`` alone; ``ALTER ... SET bucket`` then rescale), the
write-time refusal of a partition still at the old count, key lookups over partitions of different
counts, strict mode against a concurrent writer, a dry run, bad input, and pypaimon reading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, InvalidArgumentError, SchemaError
from paimon_core.predicate import PredicateBuilder
from paimon_core.schema.schema_change import SetOption
from paimon_core.table.rescale import rescale
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_write import TableWrite


def _rows(dt: str, start: int, n: int, v: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "dt": pa.array([dt] * n),
            "v": pa.array([v] * n, pa.int64()),
        }
    )


def _table(tmp_path: Path) -> tuple[FileSystemCatalog, FileStoreTable]:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())])
    table = catalog.create_table(
        "db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2", "write-only": "true"}
    )
    table.write_arrow(pa.concat_tables([_rows("a", 0, 100), _rows("b", 0, 100)]))
    table.write_arrow(_rows("a", 50, 100, v=1))  # updates 50..99, adds 100..149
    return catalog, table


def _content(table: FileStoreTable) -> list[tuple[Any, ...]]:
    t = table.to_arrow()
    return sorted(zip(t.column("id").to_pylist(), t.column("dt").to_pylist(), t.column("v").to_pylist(), strict=True))


def _totals(table: FileStoreTable, dt: str) -> set[int]:
    entries = table.new_file_store_scan().live_entries(table.latest_snapshot())
    return {e.total_buckets for e in entries if table.partition_path(e.partition) == f"dt={dt}"}


def test_rescale_one_partition_keeps_rows_and_lookups(tmp_path: Path, pypaimon: Any) -> None:
    catalog, table = _table(tmp_path)
    before = _content(table)
    dry = rescale(table, bucket_num=4, partition={"dt": "a"}, dry_run=True)
    assert (dry.dry_run, dry.partitions, dry.from_buckets, dry.to_buckets, dry.snapshot_id) == (
        True, ["dt=a"], [2], 4, None
    )
    assert table.latest_snapshot().id == 2  # nothing committed

    result = rescale(table, bucket_num=4, partition={"dt": "a"})
    assert result.rows == 150 and result.snapshot_id == 3
    table = catalog.get_table("db.t")
    assert table.latest_snapshot().commit_kind.value == "OVERWRITE"
    assert _totals(table, "a") == {4} and _totals(table, "b") == {2}
    assert _content(table) == before
    # key lookups prune buckets by each partition's own count
    pb = PredicateBuilder(table.schema.fields)
    for key in (7, 60, 120):
        got = table.to_arrow(predicate=pb.equal("id", key))
        assert sorted(got.column("dt").to_pylist()) == (["a", "b"] if key < 100 else ["a"]), key
    # older snapshots still read the old layout
    assert _content(table.copy({"scan.snapshot-id": "2"})) == before
    peer = pypaimon.read(str(tmp_path / "wh"), "db.t")
    assert sorted(zip(peer.column("id").to_pylist(), peer.column("dt").to_pylist(), peer.column("v").to_pylist(), strict=True)) == before


def test_alter_bucket_then_rescale(tmp_path: Path) -> None:
    catalog, table = _table(tmp_path)
    before = _content(table)
    with pytest.raises(SchemaError, match="bucket"):
        catalog.alter_table("db.t", [SetOption("bucket", "-1")])
    table = catalog.alter_table("db.t", [SetOption("bucket", "3")])
    with pytest.raises(InvalidArgumentError, match="dt=b.*rescale"):
        table.write_arrow(_rows("b", 0, 5, v=9))  # still 2 buckets: refused, nothing written
    assert _content(catalog.get_table("db.t")) == before
    rescale(table, partition={"dt": "b"})
    rescale(table, partition={"dt": "a"})
    table = catalog.get_table("db.t")
    assert _totals(table, "a") == {3} and _totals(table, "b") == {3}
    table.write_arrow(_rows("b", 0, 5, v=9))
    expected = sorted([r for r in before if not (r[1] == "b" and r[0] < 5)] + [(i, "b", 9) for i in range(5)])
    assert _content(table) == expected


def test_concurrent_write_to_the_partition_fails_the_rescale_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, table = _table(tmp_path)
    other = catalog.get_table("db.t")
    original = TableWrite.prepare_commit
    fired: list[bool] = []

    def racing_prepare(self: TableWrite) -> Any:
        if not fired:  # another writer lands on partition a while the rescale writes
            fired.append(True)
            other.write_arrow(_rows("a", 1000, 3, v=5))
        return original(self)

    monkeypatch.setattr(TableWrite, "prepare_commit", racing_prepare)
    files_before = {p.name for p in Path(table.path).rglob("data-*")}
    with pytest.raises(CommitConflictError, match="last-safe-snapshot"):
        rescale(table, bucket_num=4, partition={"dt": "a"})
    monkeypatch.undo()
    table = catalog.get_table("db.t")
    assert table.latest_snapshot().id == 3  # the concurrent append only
    ids = {r[0] for r in _content(table) if r[1] == "a"}
    assert {1000, 1001, 1002} <= ids and len(ids) == 153  # nothing lost
    new_files = {p.name for p in Path(table.path).rglob("data-*")} - files_before
    live = {e.file.file_name for e in table.new_file_store_scan().live_entries(table.latest_snapshot())}
    assert new_files <= live  # the rescale's own files were deleted again


def test_bad_input(tmp_path: Path) -> None:
    catalog, table = _table(tmp_path)
    with pytest.raises(InvalidArgumentError, match="bucket_num"):
        rescale(table, bucket_num=0)
    with pytest.raises(InvalidArgumentError, match="not partition keys"):
        rescale(table, partition={"nope": "x"})
    with pytest.raises(InvalidArgumentError, match="no data file"):
        rescale(table, partition={"dt": "zzz"})
    append = catalog.create_table("db.ap", pa.schema([("id", pa.int64())]))
    append.write_arrow(pa.table({"id": [1]}))
    with pytest.raises(InvalidArgumentError, match="fixed-bucket"):
        rescale(append, bucket_num=2)
    empty = catalog.create_table("db.e", pa.schema([pa.field("id", pa.int64(), nullable=False)]), primary_keys=["id"], options={"bucket": "2"})
    with pytest.raises(InvalidArgumentError, match="no snapshot"):
        rescale(empty)
    assert table.latest_snapshot().id == 2


def test_rescale_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from spark_jobs.__main__ import main

    catalog, table = _table(tmp_path)
    before = _content(table)
    common = ["rescale", "--warehouse", str(tmp_path / "wh"), "--table", "db.t"]
    assert main([*common, "3", "dt=a", "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (dry["status"], dry["dry_run"], dry["to_buckets"], dry["partitions"]) == ("ok", True, 3, ["dt=a"])
    assert main([*common, "--bucket-num", "3", "--partition", "dt"]) == 2  # not k=v
    capsys.readouterr()
    assert main([*common, "--bucket_num", "3", "--partition", "dt=a", "--sink.parallelism", "4"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (out["snapshot_id"], out["rows"]) == (3, 150)
    assert _content(catalog.get_table("db.t")) == before
    assert _totals(catalog.get_table("db.t"), "a") == {3}


def test_concurrent_write_to_another_partition_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Strict mode looks at partitions: a commit elsewhere after the planned snapshot is no conflict."""
    catalog, table = _table(tmp_path)
    other = catalog.get_table("db.t")
    original = TableWrite.prepare_commit
    fired: list[bool] = []

    def racing_prepare(self: TableWrite) -> Any:
        if not fired:
            fired.append(True)
            other.write_arrow(_rows("b", 1000, 3, v=5))
        return original(self)

    monkeypatch.setattr(TableWrite, "prepare_commit", racing_prepare)
    result = rescale(table, bucket_num=4, partition={"dt": "a"})
    monkeypatch.undo()
    assert result.snapshot_id == 4
    table = catalog.get_table("db.t")
    assert {1000, 1001, 1002} <= {r[0] for r in _content(table) if r[1] == "b"}
    assert _totals(table, "a") == {4} and _totals(table, "b") == {2}


def test_writer_planned_on_the_old_count_cannot_commit_after_a_rescale(tmp_path: Path) -> None:
    """The review's race: files written with 2 buckets, then the partition rescaled to 4, then the
    commit. Landing would put one key in two buckets (duplicate rows on read)."""
    catalog, table = _table(tmp_path)
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(_rows("a", 0, 20, v=7))
    messages = write.prepare_commit()
    rescale(table, bucket_num=4, partition={"dt": "a"})
    assert catalog.get_table("db.t").options.bucket == 4  # the ALTER came first
    with pytest.raises(CommitConflictError, match="Total buckets"):
        builder.new_commit().commit(messages)
    table = catalog.get_table("db.t")
    ids = [r[0] for r in _content(table) if r[1] == "a"]
    assert len(ids) == len(set(ids)) == 150
    assert _totals(table, "a") == {4}
