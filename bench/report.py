"""Machine info, the results table (Markdown, also printed) and the JSON document."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.cases import DELTA, FLOOR, OURS, PYPAIMON, RUST
from bench.runner import REPO_ROOT, CaseResult, run_side

SIDE_LABELS = {OURS: "ours", PYPAIMON: "pypaimon", RUST: "pypaimon-rust", FLOOR: "pyarrow floor", DELTA: "delta-rs"}


# ---------------------------------------------------------------------------------------------
# machine
# ---------------------------------------------------------------------------------------------

def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1)
    except (ValueError, OSError, AttributeError):
        return None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def machine_info(peer_py: str | None) -> dict[str, Any]:
    """CPU, RAM, OS, interpreters and library versions of both venvs, git state, date."""
    import paimon_core

    peers: dict[str, Any] = {}
    if peer_py is not None:
        answer = run_side(PYPAIMON, {"op": "info"}, peer_py, timeout=120)
        if answer.get("ok"):
            peers = {"python": answer.get("python"), **(answer.get("versions") or {})}
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    from bench.fixtures import source_hash

    dirty = _git("status", "--porcelain", "--", "paimon_core")
    return {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "cpu_model": _cpu_model(),
        "ram_gb": _ram_gb(),
        "platform": platform.platform(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "ours": {"python": sys.version.split()[0], "paimon_core": paimon_core.__version__,
                 "pyarrow": _version("pyarrow"), "numpy": _version("numpy"), "fastavro": _version("fastavro")},
        "peers": peers,
        "git_commit": _git("rev-parse", "HEAD"),
        "paimon_core_dirty": bool(dirty) if dirty is not None else None,
        "paimon_core_source_sha256": source_hash(),
    }


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------

def case_dict(cr: CaseResult) -> dict[str, Any]:
    c = cr.case
    sides = {s: r.to_dict(c) for s, r in cr.sides.items()}
    out: dict[str, Any] = {
        "status": cr.status,
        "description": c.description,
        "params": c.params,
        "rows": c.rows,
        "expected_checksum": c.expected,
        "setup_s": round(cr.setup_s, 3),
        "machine_load": {"before": cr.load_before, "after": cr.load_after},
        "ours_median_s": sides.get(OURS, {}).get("median_s"),
        "peers_median_s": {p: sides[p]["median_s"] for p in (PYPAIMON, RUST) if p in sides},
        "floor_median_s": sides.get(FLOOR, {}).get("median_s"),
        "ratios": cr.ratios(),
        "cpu_ratios": cr.ratios(cpu=True),
        "peak_rss_mb": {s: d["peak_rss_mb"] for s, d in sides.items()},
        "sides": sides,
    }
    if c.notes:
        out["notes"] = list(c.notes)
    out["throughput"] = c.throughput
    if cr.skipped is not None:
        out["skipped_reason"] = cr.skipped
    na = {s: why for s, why in c.not_applicable.items() if s not in sides}
    if na:
        out["not_applicable"] = na
    return out


def document(results: Sequence[CaseResult], *, size: str, repeat: int, warmup: int, machine: dict[str, Any],
             command: str) -> dict[str, Any]:
    cases = {cr.case.name: case_dict(cr) for cr in results}
    from bench.fixtures import source_hash

    machine = dict(machine, loadavg_end=[round(x, 2) for x in os.getloadavg()], git_commit_end=_git("rev-parse", "HEAD"),
                   paimon_core_source_sha256_end=source_hash())
    if machine.get("paimon_core_source_sha256") not in (None, machine["paimon_core_source_sha256_end"]):
        machine["warning"] = "paimon_core's source changed during the run: cases may have measured different code"
    failed = [n for n, c in cases.items() if c["status"] == "FAILED"]
    skipped = {n: c["skipped_reason"] for n, c in cases.items() if c["status"] == "SKIPPED"}
    return {
        "suite": "paimon_core bench",
        "schema_version": 1,
        "command": command,
        "size": size,
        "repeat": repeat,
        "warmup": warmup,
        "timing": "median of `repeat` runs after `warmup` excluded runs; each run a fresh process; "
                  "only the operation is timed (imports, table handles, input load excluded)",
        "ratio": "ours median time / other median time (> 1: ours is slower); cpu_ratios: the same for "
                 "the user CPU time of the operation (all threads)",
        "machine": machine,
        "cases": cases,
        "summary": {"cases": len(cases), "ok": len(cases) - len(failed) - len(skipped), "failed": failed,
                    "skipped": skipped},
    }


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------

def fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    return f"{s:.2f} s"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


#: A side whose slowest timed run is this many times its fastest is marked noisy (``*``).
NOISY_SPREAD = 1.5


def _side_time(c: dict[str, Any], side: str) -> str:
    d = c["sides"].get(side)
    if d is None:
        return "n/a"
    t = fmt_time(d["median_s"])
    if (d.get("spread") or 1.0) > NOISY_SPREAD:
        t += "*"
    return t if d["status"] == "OK" else f"{t} {d['status']}"


def _growth(d: dict[str, Any] | None) -> str:
    """Peak RSS minus the RSS before the timer (imports, handles and the input already loaded)."""
    if d is None or d.get("peak_rss_mb") is None or d.get("base_rss_mb") is None:
        return "-"
    return f"{d['peak_rss_mb'] - d['base_rss_mb']:.0f}"


def markdown_table(doc: dict[str, Any]) -> str:
    head = ["case", "status", "ours", "pypaimon", "pypaimon-rust", "pyarrow floor", "ours/pypaimon",
            "ours/rust", "ours/floor", "peak RSS MB ours / pp / rs / floor", "op RSS growth MB ours / pp / rs / floor",
            "ours rows/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, c in doc["cases"].items():
        r = c["ratios"]
        mem = " / ".join("-" if c["sides"].get(s) is None or c["sides"][s]["peak_rss_mb"] is None
                         else f"{c['sides'][s]['peak_rss_mb']:.0f}" for s in (OURS, PYPAIMON, RUST, FLOOR))
        growth = " / ".join(_growth(c["sides"].get(s)) for s in (OURS, PYPAIMON, RUST, FLOOR))
        ours = c["sides"].get(OURS, {})
        rate = fmt_rate(ours.get("rows_per_s"))
        if name.startswith("plan") and ours.get("median_s"):
            rate = f"{fmt_rate(c['params'].get('data_files', 0) / ours['median_s'])} files/s"
        elif c.get("throughput", "rows") != "rows" and ours.get("rows_per_s"):
            rate = f"{rate} {c['throughput']}/s"
        row = [name, c["status"], _side_time(c, OURS), _side_time(c, PYPAIMON), _side_time(c, RUST),
               _side_time(c, FLOOR), fmt_ratio(r.get("ours/pypaimon")), fmt_ratio(r.get("ours/rust")),
               fmt_ratio(r.get("ours/floor")), mem, growth, rate]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def notes(doc: dict[str, Any]) -> str:
    """Why a case was SKIPPED, why a side shows n/a."""
    out = [f"- `{n}` SKIPPED: {c['skipped_reason']}" for n, c in doc["cases"].items() if c.get("skipped_reason")]
    reasons: dict[str, list[str]] = {}
    for n, c in doc["cases"].items():
        for s, why in (c.get("not_applicable") or {}).items():
            reasons.setdefault(f"{SIDE_LABELS.get(s, s)}: {why}", []).append(f"`{n}`")
    out += [f"- n/a for {', '.join(names)}: {why}" for why, names in reasons.items()]
    return "\n".join(out)


def cpu_table(doc: dict[str, Any]) -> str:
    """Median user CPU time of the operation (all threads), less sensitive to a busy machine."""
    lines = ["| case | ours | pypaimon | pypaimon-rust | pyarrow floor | ours/pypaimon | ours/rust | ours/floor |",
             "|---|---|---|---|---|---|---|---|"]
    for name, c in doc["cases"].items():
        r = c.get("cpu_ratios") or {}
        cells = [fmt_time((c["sides"].get(s) or {}).get("user_cpu_median_s")) if s in c["sides"] else "n/a"
                 for s in (OURS, PYPAIMON, RUST, FLOOR)]
        lines.append(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(
            fmt_ratio(r.get(k)) for k in ("ours/pypaimon", "ours/rust", "ours/floor")) + " |")
    return "\n".join(lines)


def details(doc: dict[str, Any]) -> str:
    """Secondary tables: CPU time, pruning, commit phases and growth, write sizes, failures."""
    out: list[str] = []
    if notes(doc):
        out += ["", notes(doc)]
    out += ["", "User CPU time of the operation (all threads; medians; system CPU time is in the JSON: on "
                "a VM it varies with the cost of faulting in fresh memory):", "", cpu_table(doc)]
    cases = doc["cases"]
    sel = cases.get("partitioned_read_selective")
    if sel:
        out += ["", f"Pruning ({sel['params'].get('filter')}; {sel['params'].get('matching_rows')} matching rows):", "",
                "| side | files planned / unfiltered | rows in planned files / unfiltered | rows returned | time |",
                "|---|---|---|---|---|"]
        for s, d in sel["sides"].items():
            p, u = d.get("plan") or {}, d.get("plan_unfiltered") or {}
            files = f"{p.get('files', '-')} / {u.get('files', '-')}" if p else "(not reported)"
            rows = f"{p.get('rows', '-')} / {u.get('rows', '-')}" if p else "-"
            out.append(f"| {SIDE_LABELS[s]} | {files} | {rows} | {d.get('rows')} | {fmt_time(d['median_s'])} |")
    commit_cases = [n for n in cases if n.startswith(("commit_latency", "pk_write", "pk_upsert"))]
    if commit_cases:
        out += ["", "Write and commit phases (write of the rows | commit), medians:", "",
                "| case | side | write | commit | total |", "|---|---|---|---|---|"]
        for n in commit_cases:
            for s, d in cases[n]["sides"].items():
                ph = d.get("phases_median_s") or {}
                if "commit" not in ph:  # the floor: no commit
                    continue
                out.append(f"| {n} | {SIDE_LABELS[s]} | {fmt_time(ph.get('write'))} | {fmt_time(ph.get('commit'))} "
                           f"| {fmt_time(d['median_s'])} |")
        few, many = cases.get("commit_latency_10_snapshots"), cases.get("commit_latency_1000_snapshots")
        if few and many:
            for s in many["sides"]:
                a = (few["sides"].get(s) or {}).get("median_s")
                b = many["sides"][s].get("median_s")
                if a and b:
                    out.append(f"\n{SIDE_LABELS[s]}: commit at {many['params']['snapshots']} snapshots / at "
                               f"{few['params']['snapshots']} snapshots = {b / a:.2f}x")
    out += compaction_details(cases)
    from bench.cases_delta import delta_details

    out += delta_details(cases, fmt_time)
    maint = [(n, c) for n, c in cases.items() if c.get("throughput") in ("snapshots", "files")
             and not n.startswith(("plan", "compact", "delta_")) and c["sides"].get(OURS)]
    if maint:
        out += ["", "Maintenance (ours only), what the call reported:", ""]
        for n, c in maint:
            d = c["sides"][OURS]
            out.append(f"- `{n}`: {fmt_time(d['median_s'])}, {fmt_rate(d.get('rows_per_s'))} {c['throughput']}/s, "
                       f"peak RSS {d.get('peak_rss_mb')} MB; result {d.get('result')}")
    writes = [n for n in cases if n.startswith(("append_write", "pk_write", "pk_upsert", "spark_ingest"))]
    for n in writes:
        sizes = ", ".join(f"{SIDE_LABELS[s]} {d.get('bytes_written', 0) / 1e6:.1f} MB in {d.get('files_written')} file(s)"
                          for s, d in cases[n]["sides"].items() if d.get("bytes_written"))
        if sizes:
            out.append(f"\n{n} output: {sizes}")
    busy = sorted(b for c in cases.values() for d in c["sides"].values()
                  for b in d.get("busy_cores_before_runs") or [] if b is not None)
    if busy:
        out.append(f"\nCPU cores used by other processes just before the timed runs: median {busy[len(busy) // 2]:.2f}, "
                   f"max {busy[-1]:.2f} (of {doc['machine'].get('cpu_count')}).")
    bad = [(n, s, d) for n, c in cases.items() for s, d in c["sides"].items() if d["status"] != "OK"]
    if bad:
        out += ["", "Failures:"]
        for n, s, d in bad:
            out.append(f"- {n} / {SIDE_LABELS[s]}: {d['status']}: " + "; ".join((d["errors"] or d["problems"])[:3]))
    return "\n".join(out)


#: Phases of our compaction (bench/ours_ops.py::op_compact), in table order.
COMPACT_PHASES = ("plan", "rewrite", "commit", "maintain", "summary", "other")


def compaction_details(cases: dict[str, Any]) -> list[str]:
    """Compaction cases: phases, files before/after, input bytes and memory growth; the read target."""
    names = [n for n in cases if n.startswith("compact_")]
    if not names:
        return []
    out = ["", "Compaction (ours: phases of `table.maintenance.compact()`, medians; growth = peak RSS - RSS before the timer):", "",
           "| case | side | total | " + " | ".join(COMPACT_PHASES) + " | input MB | files before -> after | "
           "op RSS growth MB | peak RSS MB |", "|" + "---|" * (len(COMPACT_PHASES) + 7)]
    for n in names:
        c = cases[n]
        mb = (c["params"].get("data_bytes") or 0) / 1e6
        for s, d in c["sides"].items():
            ph = d.get("phases_median_s") or {}
            cells = [fmt_time(ph.get(k)) if k in ph else "-" for k in COMPACT_PHASES] if s == OURS else \
                ["-"] * len(COMPACT_PHASES)
            files = f"{d.get('files_before', c['params'].get('data_files', '-'))} -> {d.get('files_after', '-')}" \
                if s == OURS and d.get("files_after") is not None else (f"-> {d.get('files_written')}" if s == FLOOR
                                                                         else "-")
            out.append(f"| {n} | {SIDE_LABELS[s]} | {fmt_time(d['median_s'])} | " + " | ".join(cells) +
                       f" | {mb:.1f} | {files} | {_growth(d)} | {d.get('peak_rss_mb')} |")
    after, base = cases.get("pk_merged_read_after_compaction_1m"), cases.get("append_read_compacted_rows_1m")
    if after and base:
        a, b = (after["sides"].get(OURS) or {}).get("median_s"), (base["sides"].get(OURS) or {}).get("median_s")
        ac = (after["sides"].get(OURS) or {}).get("user_cpu_median_s")
        bc = (base["sides"].get(OURS) or {}).get("user_cpu_median_s")
        if a and b:
            cpu = f" (user CPU {ac / bc:.2f}x)" if ac and bc else ""
            out.append(f"\nours: read after full compaction / append read of the same rows = {fmt_time(a)} / "
                       f"{fmt_time(b)} = {a / b:.2f}x{cpu} (target <= 1.1x)")
    return out


def machine_line(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    ours, peers = m.get("ours", {}), m.get("peers", {})
    return (f"{m.get('date')} | {m.get('cpu_count')} CPU ({m.get('cpu_model')}), {m.get('ram_gb')} GB RAM, "
            f"{m.get('platform')} | ours: Python {ours.get('python')}, paimon_core {ours.get('paimon_core')}, "
            f"pyarrow {ours.get('pyarrow')} | peers: Python {peers.get('python')}, pypaimon {peers.get('pypaimon')}, "
            f"pypaimon-rust {peers.get('pypaimon-rust')}, deltalake {peers.get('deltalake')}, pyarrow {peers.get('pyarrow')} | git {str(m.get('git_commit'))[:10]}"
            f"{' (paimon_core modified)' if m.get('paimon_core_dirty') else ''} | load avg {m.get('loadavg_start')} -> "
            f"{m.get('loadavg_end')}" + (f" | WARNING: {m['warning']}" if m.get("warning") else ""))


def markdown(doc: dict[str, Any]) -> str:
    return "\n".join([
        f"# Benchmark results ({doc['size']}, median of {doc['repeat']} after {doc['warmup']} warm-up)",
        "",
        f"`{doc['command']}` (measured processes at niceness {doc.get('priority_nice', 0)}, "
        f"quiet-wait {doc.get('quiet_wait_s', 0)} s per timed run)",
        "",
        machine_line(doc),
        "",
        "Times are medians of the operation only; ratio = ours / other (> 1: ours slower). "
        "Peak RSS is each side's own process (`ru_maxrss`), including the interpreter, imports and, "
        "for writes, the input table; op RSS growth = peak minus the high-water mark just before the timer. "
        f"`*`: the slowest timed run was > {NOISY_SPREAD}x the fastest (machine busy; see `samples_s` and "
        "`machine_load` in the JSON).",
        "",
        markdown_table(doc),
        details(doc),
        "",
    ])
