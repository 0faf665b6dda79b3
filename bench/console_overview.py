"""Bench of the operator console's overview (``GET /paimon/api/overview``) at warehouse scale.

The overview reads the planner state document and the last 30 days of the maintenance ledger,
never the tables (:func:`paimon_core.maintenance.overview.warehouse_overview`). This bench builds
``--sample`` real tables (:func:`bench.maintenance_warehouse.build`), measures them, and writes a
state document of ``--tables`` tables (the sample's states under new names: a pass's document of
that size) and a ledger of ``--days`` days with, per table and day, one ``assess`` row and one
action row (compact, expire_snapshots or remove_orphan_files), plus some failures and a deferred
backlog. It then times, wall and process CPU, in one process:

* ``overview`` cold (no cache): read the document and the ledger, build every row;
* ``overview`` again within the minute (the cache);
* the JSON the console receives (``to_dict`` + ``json.dumps``): its size and time.

    python -m bench.console_overview --tables 10000 [--days 30] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from typing import Any

DAY = 86_400_000


def _timed(fn: Any) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def run(tables: int, *, days: int, sample: int, warehouse: str) -> dict[str, Any]:
    from bench.maintenance_warehouse import build
    from paimon_core import FileSystemCatalog
    from paimon_core.ledger import Ledger, LedgerRecord
    from paimon_core.ledger.record import new_record_id
    from paimon_core.maintenance import overview as overview_mod
    from paimon_core.maintenance.state_store import PlannerStateStore
    from paimon_core.maintenance.table_state import collect_table_state

    w = build(warehouse, sample, need_compaction=0.3)
    catalog = FileSystemCatalog(warehouse)
    now = int(time.time() * 1000)
    measured = [collect_table_state(catalog.get_table(t), now_millis=now) for t in w.tables]
    names = [f"big.t{i:06d}" for i in range(tables)]
    states = {n: dataclasses.replace(measured[i % len(measured)], table=n) for i, n in enumerate(names)}
    deferred = [{"table": n, "action": "compact", "why": "the rewrite budget is spent"} for n in names[::50]]
    _, w_save, c_save = _timed(
        lambda: PlannerStateStore(catalog.file_io, warehouse).save(
            states, now_millis=now, extra={"last_pass": {"now_millis": now, "actions": tables}, "deferred": deferred}
        )
    )
    ledger = Ledger(catalog)
    ledger.ensure()
    actions = ("compact", "expire_snapshots", "remove_orphan_files")
    rows = 0
    setup = time.perf_counter()
    for d in range(days, 0, -1):
        at = now - d * DAY + 3_600_000
        batch = []
        for i, n in enumerate(names):
            batch.append(LedgerRecord(new_record_id(), n, "assess", "success", at, at, health_score=80.0,
                                      table_files=10, table_bytes=1 << 20))
            action = actions[(i + d) % 3]
            status = "failed" if (i + d) % 997 == 0 else "success"
            batch.append(LedgerRecord(new_record_id(), n, action, status, at + 1000, at + 5000, bytes_read=1 << 20,
                                      files_deleted=3, error="OSError: boom" if status == "failed" else None))
        ledger.append(batch)
        rows += len(batch)
    setup_s = time.perf_counter() - setup

    overview_mod._cache.clear()
    cold, w_cold, c_cold = _timed(lambda: overview_mod.warehouse_overview(catalog, now_millis=now))
    _, w_warm, c_warm = _timed(lambda: overview_mod.warehouse_overview(catalog, now_millis=now))
    payload, w_json, c_json = _timed(lambda: json.dumps(cold.to_dict()))
    assert len(cold.tables) == tables
    assert sum(1 for t in cold.tables if t.deferred) == len(deferred)
    return {
        "tables": tables,
        "ledger_days": days,
        "ledger_rows": rows,
        "sample_tables": sample,
        "state_document_bytes": len(catalog.file_io.read_bytes(PlannerStateStore(catalog.file_io, warehouse).path)),
        "state_save": {"wall_s": round(w_save, 3), "cpu_s": round(c_save, 3)},
        "ledger_setup_s": round(setup_s, 1),
        "overview_cold": {"wall_s": round(w_cold, 3), "cpu_s": round(c_cold, 3), "read_s": cold.read_seconds},
        "overview_cached": {"wall_s": round(w_warm, 4), "cpu_s": round(c_warm, 4)},
        "json": {"bytes": len(payload), "wall_s": round(w_json, 3), "cpu_s": round(c_json, 3)},
        "failures_7d": len(cold.failures),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--json", default=None)
    ns = parser.parse_args(argv)
    results = []
    for n in ns.tables:
        with tempfile.TemporaryDirectory(prefix="console-bench-") as tmp:
            r = run(n, days=ns.days, sample=ns.sample, warehouse=f"{tmp}/wh")
        print(json.dumps(r), flush=True)
        results.append(r)
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump({"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
