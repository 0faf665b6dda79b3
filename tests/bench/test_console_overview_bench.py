"""``bench/console_overview.py`` runs end to end at a small size and reports what it measured."""

from __future__ import annotations

from pathlib import Path

from bench.console_overview import run


def test_console_overview_bench_small(tmp_path: Path) -> None:
    r = run(60, days=2, sample=4, warehouse=str(tmp_path / "wh"))
    assert r["tables"] == 60 and r["ledger_rows"] == 60 * 2 * 2
    assert r["state_document_bytes"] > 60 * 500
    for key in ("overview_cold", "overview_cached", "json", "state_save"):
        assert r[key]["wall_s"] >= 0 and r[key]["cpu_s"] >= 0, key
    assert r["json"]["bytes"] > 0
