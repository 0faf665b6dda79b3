"""``python -m spark_jobs compact_manifest`` with Java's ``CompactManifestProcedure`` arguments
``manifest_sort_enabled``, ``manifest_sort_partition_field``, ``manifest_sort_max_rewrite_size``:
``--dry-run`` reports the sort (levels, manifests it would sort) and changes nothing; the run sorts
the manifests; a partition field that is not one, a bad size, or a table without partitions is
refused naming the option, the warehouse unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from spark_jobs import compact_manifest

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.int32())])


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = compact_manifest.main(argv)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return rc, json.loads(lines[0])


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@pytest.fixture
def wh(tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, partition_keys=["p"], options={"manifest.target-file-size": "1kb",
                                                                         "manifest.merge-min-count": "100"})  # fmt: skip
    for c in range(8):  # every commit spans most partitions: overlapping manifests
        t.write_arrow(pa.table({"id": [c] * 6, "p": pa.array([(c + k * 3) % 10 for k in range(6)], pa.int32())},
                               schema=SCHEMA))  # fmt: skip
    cat.create_table("db.np", pa.schema([("v", pa.int64())])).write_arrow(pa.table({"v": [1]}))
    return wh


def test_dry_run_then_sort(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--warehouse", wh, "--table", "db.t", "--no-ledger", "--manifest_sort_enabled", "true",
            "--manifest_sort_partition_field", "p", "--manifest_sort_max_rewrite_size", "1 gb"]  # fmt: skip
    before = _tree(Path(wh))
    rc, dry = _run([*base, "--dry-run"], capsys)
    assert rc == 0 and dry["dry_run"] and dry["snapshot_id"] is None, dry
    assert dry["manifest_sort"] and dry["sort_field"] == "p" and len(dry["sort_levels"]) == 5
    assert dry["manifests_sorted"] == dry["manifests_before"] > 1 and dry["max_manifests_per_partition_before"] > 1
    assert _tree(Path(wh)) == before
    rows = FileSystemCatalog(wh).get_table("db.t").to_arrow().sort_by([("p", "ascending"), ("id", "ascending")])
    rc, done = _run(base, capsys)
    assert rc == 0 and done["snapshot_id"] is not None and done["manifests_sorted"] == dry["manifests_sorted"], done
    assert done["max_manifests_per_partition_after"] < done["max_manifests_per_partition_before"]
    t = FileSystemCatalog(wh).get_table("db.t")
    assert t.to_arrow().sort_by([("p", "ascending"), ("id", "ascending")]).equals(rows)
    assert t.options.get("manifest-sort.enabled") is None  # the arguments are for this run only


@pytest.mark.parametrize(
    ("table", "args", "says"),
    [
        ("db.t", ["--manifest_sort_partition_field", "id"], "'manifest-sort.partition-field' = 'id' is not a partition field"),
        ("db.t", ["--manifest_sort_max_rewrite_size", "big"], "manifest-sort.max-rewrite-size"),
        ("db.np", [], "Cannot enable 'manifest-sort.enabled' for non-partition table"),
    ],
)
def test_bad_sort_arguments_are_refused(
    wh: str, table: str, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(Path(wh))
    for dry in ([], ["--dry-run"]):
        rc, line = _run(
            ["--warehouse", wh, "--table", table, "--no-ledger", "--manifest_sort_enabled", "true", *args, *dry], capsys
        )
        assert rc != 0 and line["status"] == "error" and line["retryable"] is False, line
        assert says in line["error"] and line["error_type"] == "InvalidOptionError", line
    assert _tree(Path(wh)) == before
