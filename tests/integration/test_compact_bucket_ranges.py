"""``compact --buckets`` with ranges (``'0-999'``, ``'0,3,5-7'``) as Java master's
``CompactProcedure`` parses them (``ParameterUtils.parseIntegerRanges``), and ``compact_strategy``
``full``/``minor``.

Bad values (a reversed range, a negative bucket, letters, an empty list or item, a range beyond the
table) are refused with exit 2, one JSON error line naming ``--buckets`` and the item, and the
warehouse unchanged. A range compacts only its buckets: the others keep their files. No Spark
session starts (``--mode local``).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.table.table import FileStoreTable
from spark_jobs import JOBS
from spark_jobs.common.args import EXIT_USAGE, UsageError, parse_bucket_list

BUCKETS = 8


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    module = importlib.import_module(JOBS["compact"])
    capsys.readouterr()
    rc = module.main(argv)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, (argv, lines)
    return rc, json.loads(lines[0])


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def _files_by_bucket(t: FileStoreTable) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for e in t.new_file_store_scan().live_entries(t.latest_snapshot()):
        out.setdefault(e.bucket, set()).add(e.file.file_name)
    return out


@pytest.fixture
def table(tmp_path: Path) -> tuple[str, FileStoreTable]:
    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    t = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": str(BUCKETS)})
    for round_ in range(3):  # three sorted runs in every bucket
        t.write_arrow(pa.table({"id": pa.array(range(200), pa.int64()), "v": pa.array([round_] * 200, pa.int64())}))
    t = catalog.get_table("db.t")
    assert sorted(_files_by_bucket(t)) == list(range(BUCKETS))
    assert all(len(f) == 3 for f in _files_by_bucket(t).values())
    return wh, t


def test_parse_ranges_as_java() -> None:
    assert parse_bucket_list("0-999") == frozenset(range(1000))
    assert parse_bucket_list("0,3,5-7") == frozenset({0, 3, 5, 6, 7})
    assert parse_bucket_list(" 2 - 4 , 4,1") == frozenset({1, 2, 3, 4})  # overlaps and spaces, as Java
    assert parse_bucket_list("7") == frozenset({7})
    for bad, says in [
        ("5-3", "starts above its end"),
        ("-1", "numbered from 0"),
        ("a-b", "'a-b' is not a bucket or a range"),
        ("1-", "not a bucket or a range"),
        ("", "names no bucket"),
        ("  ", "names no bucket"),
        (",", "empty item"),
        ("0,,3", "empty item"),
        ("0-99999999", "names more than"),
    ]:
        with pytest.raises(UsageError, match="--buckets") as info:
            parse_bucket_list(bad)
        assert says in str(info.value), (bad, str(info.value))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("5-3", "starts above its end"),
        ("-1", "numbered from 0"),
        ("a-b", "not a bucket or a range"),
        ("", "names no bucket"),
        ("0,,3", "empty item"),
        ("0-999", "--buckets 8-999: table db.t has buckets 0 to 7"),
        ("6-9", "--buckets 8-9: table db.t has buckets 0 to 7"),
    ],
)
def test_bad_bucket_range_is_refused_and_changes_nothing(
    value: str, says: str, table: tuple[str, FileStoreTable], capsys: pytest.CaptureFixture[str]
) -> None:
    wh, _ = table
    before = _tree(Path(wh))
    rc, line = _run(["--warehouse", wh, "--table", "db.t", "--mode", "local", "--no-ledger", "--buckets", value], capsys)
    assert rc == EXIT_USAGE, line
    assert line["status"] == "error" and line["retryable"] is False and line["error_type"] == "UsageError", line
    assert says in line["error"] and "--buckets" in line["error"], line
    assert _tree(Path(wh)) == before


def test_bad_compact_strategy_is_refused(table: tuple[str, FileStoreTable], capsys: pytest.CaptureFixture[str]) -> None:
    wh, _ = table
    before = _tree(Path(wh))
    rc, line = _run(["--warehouse", wh, "--table", "db.t", "--mode", "local", "--no-ledger", "--compact_strategy", "major"], capsys)
    assert rc == EXIT_USAGE and "compact_strategy" in line["error"] and "'major'" in line["error"], line
    assert _tree(Path(wh)) == before


@pytest.mark.parametrize("strategy", ["full", "minor"])
def test_range_compacts_only_its_buckets(
    strategy: str, table: tuple[str, FileStoreTable], capsys: pytest.CaptureFixture[str]
) -> None:
    wh, t = table
    before = _files_by_bucket(t)
    rows_before = t.to_arrow().sort_by("id")
    rc, line = _run(
        ["--warehouse", wh, "--table", "db.t", "--mode", "local", "--no-ledger",
         "--buckets", "0,3,5-6", "--compact_strategy", strategy,
         "--options", "num-sorted-run.compaction-trigger=2"],
        capsys,
    )  # fmt: skip
    assert rc == 0, line
    t = FileSystemCatalog(wh).get_table("db.t")
    after = _files_by_bucket(t)
    picked = {0, 3, 5, 6}
    for b in range(BUCKETS):
        if b in picked:
            assert after[b] != before[b] and len(after[b]) < len(before[b]), (strategy, b)
        else:
            assert after[b] == before[b], (strategy, b)  # untouched
    assert {bk["bucket"] for bk in line["buckets"]} == picked, line
    assert t.to_arrow().sort_by("id").equals(rows_before)
