"""Bench of the maintenance planner: collect + plan every table of a mixed warehouse, cold and unchanged.

Builds ``--tables`` (default 1000) small tables with :func:`bench.maintenance_warehouse.build`
(append unaware-bucket, primary-key fixed-bucket and dynamic-bucket, all partitioned; 10 % with
enough commits that compaction is due) in a temporary warehouse, then measures, wall and process
CPU, in one process:

* **cold**: per table ``catalog.get_table`` + :func:`collect_table_state` (a manifest scan) +
  :func:`plan_table`;
* **unchanged**: the same with the previous pass's states (JSON round trip in between, as a pass
  stores them): one metadata read per table; repeated ``--repeat`` times, the median reported;
* the states' JSON (size, dump + load time) and :func:`schedule_pass` over all plans.

The issue's goal: planning 1,000 unchanged tables under 20 s of CPU.

    python -m bench.planner --tables 1000 [--warehouse DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class Timing:
    """Wall and CPU seconds of one measured step, summed over tables."""

    wall: float = 0.0
    cpu: float = 0.0

    def add(self, fn: Callable[[], T]) -> T:
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        self.wall += time.perf_counter() - w
        self.cpu += time.process_time() - c
        return out


@dataclass
class PassTiming:
    load: Timing
    collect: Timing
    plan: Timing

    @property
    def total(self) -> Timing:
        return Timing(
            self.load.wall + self.collect.wall + self.plan.wall,
            self.load.cpu + self.collect.cpu + self.plan.cpu,
        )


def run_pass(
    catalog: Any, names: Sequence[str], now: int, previous: dict[str, Any] | None
) -> tuple[PassTiming, dict[str, Any], list[Any]]:
    from paimon_core.maintenance import MaintenanceSettings, collect_table_state, plan_table

    settings = MaintenanceSettings()
    timing = PassTiming(Timing(), Timing(), Timing())
    states: dict[str, Any] = {}
    plans = []
    for name in names:
        table = timing.load.add(lambda n=name: catalog.get_table(n))
        prev = None if previous is None else previous[name]
        state = timing.collect.add(lambda t=table, p=prev: collect_table_state(t, now_millis=now, previous=p))
        plans.append(
            timing.plan.add(lambda s=state: plan_table(s, settings, now_millis=now, last_success={}))
        )
        states[name] = state
    return timing, states, plans


def _build_elsewhere(warehouse: str, tables: int) -> dict[str, Any]:
    """Build the warehouse in a child process; its table names and summary."""
    import subprocess

    code = (
        "import json, sys; from bench.maintenance_warehouse import build; "
        f"m = build({warehouse!r}, {tables}); "
        "json.dump({'names': list(m.tables), 'summary': m.to_dict()}, sys.stdout)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def row(label: str, t: Timing, n: int) -> str:
    return f"| {label} | {t.wall:.2f} | {t.cpu:.2f} | {1000 * t.wall / n:.2f} | {1000 * t.cpu / n:.2f} |"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--warehouse", help="build the tables here (default: a temporary directory)")
    parser.add_argument("--repeat", type=int, default=3, help="unchanged passes (the median is reported)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    from paimon_core import FileSystemCatalog
    from paimon_core.maintenance import PassBudget, TableState, schedule_pass

    with tempfile.TemporaryDirectory(prefix="planner-bench-") as tmp:
        warehouse = args.warehouse or f"{tmp}/wh"
        print(f"building {args.tables} tables in {warehouse} ...", file=sys.stderr)
        built = _build_elsewhere(warehouse, args.tables)  # this process starts cold (no cached manifests)
        names = list(built["names"])
        n = len(names)
        print(f"built in {built['summary']['seconds']} s: {built['summary']}", file=sys.stderr)
        now = int(time.time() * 1000)

        cold, states, plans = run_pass(FileSystemCatalog(warehouse), names, now, None)
        with_work = sum(1 for p in plans if p.actions)
        compactions = sum(1 for p in plans if p.action("compact"))

        ser = Timing()
        text = ser.add(lambda: json.dumps({k: s.to_dict() for k, s in states.items()}))
        previous = ser.add(lambda: {k: TableState.from_dict(v) for k, v in json.loads(text).items()})

        unchanged_runs = []
        for _ in range(max(1, args.repeat)):
            timing, again, plans2 = run_pass(FileSystemCatalog(warehouse), names, now + 60_000, previous)
            assert all(s.source == "unchanged" for s in again.values())
            unchanged_runs.append(timing)
        unchanged = sorted(unchanged_runs, key=lambda t: t.total.cpu)[len(unchanged_runs) // 2]

        sched = Timing()
        schedule = sched.add(
            lambda: schedule_pass(plans2, PassBudget(), policy="balanced", now_millis=now, last_maintained={})
        )

    lines = [
        f"Planner bench: {n} tables ({built['summary']['kinds']}), {with_work} need work, {compactions} need compaction",
        "",
        "| step | wall s | CPU s | wall ms/table | CPU ms/table |",
        "|---|---|---|---|---|",
        row("cold: get_table", cold.load, n),
        row("cold: collect (manifest scan)", cold.collect, n),
        row("cold: plan", cold.plan, n),
        row("**cold: total**", cold.total, n),
        row("unchanged: get_table", unchanged.load, n),
        row("unchanged: collect (one read)", unchanged.collect, n),
        row("unchanged: plan", unchanged.plan, n),
        row("**unchanged: total**", unchanged.total, n),
        row("states JSON dump + load", ser, n),
        row("schedule_pass (all plans)", sched, n),
        "",
        f"states JSON: {len(text) / 1e6:.2f} MB ({len(text) / n / 1000:.1f} kB per table); "
        f"schedule: {len(schedule.selected)} actions in {len(schedule.light_batches)} batches and "
        f"{len(schedule.spark_groups)} Spark groups, {len(schedule.backlog)} in backlog; "
        f"unchanged totals over {len(unchanged_runs)} runs (CPU s): "
        + ", ".join(f"{t.total.cpu:.2f}" for t in unchanged_runs),
    ]
    print("\n".join(lines))
    figures = {
        "tables": n,
        "with_work": with_work,
        "compactions": compactions,
        "cold": {k: vars(getattr(cold, k)) for k in ("load", "collect", "plan")}
        | {"total": vars(cold.total)},
        "unchanged": {k: vars(getattr(unchanged, k)) for k in ("load", "collect", "plan")}
        | {"total": vars(unchanged.total)},
        "unchanged_cpu_runs": [t.total.cpu for t in unchanged_runs],
        "unchanged_cpu_median": statistics.median(t.total.cpu for t in unchanged_runs),
        "json_bytes": len(text),
        "json_seconds": vars(ser),
        "schedule_seconds": vars(sched),
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2)
    return figures


if __name__ == "__main__":
    main()
