"""Commit options out of range are refused where options are validated (create, alter, copy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidOptionError
from paimon_core.schema.schema_change import SetOption
from tests.fixtures.tables import sample_rows

BAD = [
    ("commit.max-retries", "-1", "must be 0 or more"),
    ("commit.max-retries", "-10", "must be 0 or more"),
    ("commit.min-retry-wait", "-5 ms", "Invalid duration"),
    ("commit.max-retry-wait", "-1 s", "Invalid duration"),
    ("commit.timeout", "-1", "Invalid duration"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD)
def test_negative_commit_options_are_refused(catalog: FileSystemCatalog, key: str, value: str, message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message) as info:
        catalog.create_table("db.t", sample_rows(1).schema, options={key: value})
    assert key in str(info.value) and info.value.key == key  # type: ignore[attr-defined]
    assert not catalog.table_exists("db.t")
    t = catalog.create_table("db.t", sample_rows(1).schema)
    with pytest.raises(InvalidOptionError, match=message):
        t.copy({key: value})
    with pytest.raises(InvalidOptionError, match=message):
        catalog.alter_table("db.t", [SetOption(key, value)])
    assert key not in catalog.get_table("db.t").schema.options  # the table is unchanged


def test_zero_retries_is_allowed(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.t", sample_rows(1).schema, options={"commit.max-retries": "0"})
    assert t.options.commit_max_retries == 0
    assert t.write_arrow(sample_rows(3)).snapshot_id == 1


def test_cli_refuses_a_negative_retry_count_in_one_line(tmp_path: Path) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(sample_rows(3), src)
    wh = str(tmp_path / "wh")
    r = subprocess.run(
        [sys.executable, "-m", "paimon_core", "create-table", wh, "db.t", "--schema-from", str(src),
         "--option", "commit.max-retries=-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.strip() == "error: Option 'commit.max-retries' must be 0 or more, got '-1'"
