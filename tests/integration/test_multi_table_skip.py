"""Multi-table jobs skip a table of a kind paimon_core refuses and maintain the others (issue 25).

A database holds a primary-key table we wrote and two tables pypaimon 2.1.0 wrote in kinds we
refuse (a chain table, a BLOB column: :mod:`tests.tools.table_kinds`). ``compact_database`` and
``remove_orphan_files --table DB.*`` run through ``python -m spark_jobs``'s dispatcher with the
ledger on:

* the normal table is maintained (compacted; its orphan deleted);
* each refused table is byte for byte unchanged (a stray old file planted in it stays), listed in
  the result's ``tables`` as ``skipped`` with the reason naming its feature and in
  ``skipped_tables``, and has a ``skipped`` ledger row carrying the reason;
* the job succeeds (exit 0): nothing failed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.snapshot.snapshot import CommitKind
from spark_jobs.__main__ import main
from tests.tools.table_kinds import DATABASE, UNSUPPORTED, TableKindSpec, build, identifier, tree_digest
from tests.unit.paimon_core.ledger.helpers import ledger_rows, old_file

pytestmark = pytest.mark.integration

REFUSED: tuple[TableKindSpec, ...] = tuple(k for k in UNSUPPORTED if k.refused_as in ("chain table", "blob columns"))
NORMAL = f"{DATABASE}.normal"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The refused tables (pypaimon writes them once) and the normal one, in one database."""
    wh = tmp_path_factory.mktemp("skip-template") / "wh"
    catalog = build(str(wh), REFUSED)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    table = catalog.create_table(NORMAL, schema, primary_keys=["id"], options={"bucket": "1"})
    for i in range(3):
        table.write_arrow(pa.table({"id": pa.array([1, 2, i + 3], pa.int64()), "v": pa.array([i] * 3, pa.int64())}))
    return wh


@pytest.fixture
def wh(template: Path, tmp_path: Path) -> str:
    shutil.copytree(template, tmp_path / "wh", symlinks=True)
    return str(tmp_path / "wh")


def _root(wh: str, name: str) -> Path:
    return Path(wh) / f"{DATABASE}.db" / name.split(".", 1)[1]


def _digests(wh: str) -> dict[str, dict[str, str]]:
    return {identifier(k): tree_digest(_root(wh, identifier(k))) for k in REFUSED}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = main(argv)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return rc, json.loads(lines[0])


def _assert_skipped(wh: str, line: dict[str, Any], action: str, before: dict[str, dict[str, str]]) -> None:
    assert line["skipped_tables"] == sorted(identifier(k) for k in REFUSED), line
    entries = {t["table"]: t for t in line["tables"]}
    rows = {r["table_name"]: r for r in ledger_rows(FileSystemCatalog(wh)) if r["action"] == action}
    for spec in REFUSED:
        entry, row = entries[identifier(spec)], rows[identifier(spec)]
        assert entry["status"] == "skipped" and entry["error_type"] == "UnsupportedTableKindError", entry
        assert entry["feature"] == spec.refused_as and f"'{spec.refused_as}'" in entry["reason"], entry
        assert row["status"] == "skipped" and f"'{spec.refused_as}'" in str(row["details"]), row
    assert _digests(wh) == before  # byte for byte
    assert rows[NORMAL]["status"] == "success", rows[NORMAL]


def test_compact_database_compacts_the_normal_table_and_skips_the_refused(
    wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digests(wh)
    rc, line = _run(["compact_database", "--warehouse", wh, "--execution", "local"], capsys)
    assert rc == 0 and line["status"] == "ok" and line["failed_tables"] == [], line
    assert line["compacted_tables"] == 1 and next(t for t in line["tables"] if t["table"] == NORMAL)["status"] == "ok"
    latest = FileSystemCatalog(wh).get_table(NORMAL).latest_snapshot()
    assert latest is not None and latest.commit_kind == CommitKind.COMPACT
    _assert_skipped(wh, line, "compact_database", before)


def test_orphan_clean_of_the_database_cleans_the_normal_table_and_skips_the_refused(
    wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    normal = FileSystemCatalog(wh).get_table(NORMAL)
    orphan = os.path.join(normal.path, "bucket-0", "data-orphan.parquet")
    old_file(orphan)
    for spec in REFUSED:  # an old stray file each: a clean that reached the table would delete it
        bucket = next(p for p in sorted(_root(wh, identifier(spec)).rglob("bucket-*")) if p.is_dir())
        old_file(str(bucket / "data-stray.parquet"))
    before = _digests(wh)
    rc, line = _run(["remove_orphan_files", "--warehouse", wh, "--table", f"{DATABASE}.*", "--mode", "local", "--dry-run", "false"], capsys)
    assert rc == 0 and line["status"] == "ok", line
    assert line["deleted_file_count"] == 1 and line["deleted_paths"] == [orphan] and not os.path.exists(orphan), line
    assert next(t for t in line["tables"] if t["table"] == NORMAL)["deleted_file_count"] == 1
    _assert_skipped(wh, line, "remove_orphan_files", before)
