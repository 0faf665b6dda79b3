"""``paimon_maintenance`` on a real Airflow over a mixed warehouse: exactly the tables that needed
compaction are compacted, every row reads the same, here and through pypaimon, and the next pass
does nothing (``bench.maintenance_pass`` at a size CI affords; the 1,000-table figures are in
``bench/results/maintenance-pass-1000.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog

pytestmark = pytest.mark.integration


def _sorted(table: Any) -> list[dict[str, Any]]:
    return table.select(["id", "dt", "v"]).sort_by([("dt", "ascending"), ("id", "ascending")]).to_pylist()


def test_live_pass_changes_exactly_what_was_due(tmp_path: Path, pypaimon: Any) -> None:
    from bench.maintenance_pass import run

    report = run(tmp_path, tables=24, need_compaction=0.25, batch_size=10)
    runs, checks = report["runs"], report["checks"]
    assert {k: r["state"] for k, r in runs.items()} == {"work": "success", "idle": "success"}, runs
    assert checks["tables_with_other_rows"] == [] and checks["compacted_exactly_the_due_tables"], checks
    assert checks["compacted"] == 6
    work, idle = runs["work"], runs["idle"]
    # 24 tables in 3 batches of 10: the task instances grow with the batches, not the tables
    assert work["task_states"]["maintain success"] == 3, work["task_states"]
    assert work["task_instances"] <= 20 and idle["task_instances"] <= 20
    assert work["actions"]["compact success"] == 6
    assert work["plan"]["scanned"] == 24
    # the work pass's lag_alerts measured the 6 compacted tables again: the idle pass rescans none
    assert idle["plan"]["actions"] == 0 and idle["plan"]["unchanged"] == 24, idle["plan"]
    assert "maintain success" not in idle["task_states"]
    catalog = FileSystemCatalog(report["warehouse_path"])
    for name in report["tables"]:
        ours = _sorted(catalog.get_table(name).to_arrow())
        theirs = _sorted(pypaimon.read(report["warehouse_path"], name))
        assert theirs == ours, name
