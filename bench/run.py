"""Run the benchmark suite: ours vs pypaimon vs pypaimon-rust vs the pyarrow floor, as ratios.

    python -m bench.run [--size small|full] [--cases a,b|default|all] [--repeat N] [--warmup N]
                        [--out bench/results/latest.json] [--workdir DIR] [--sides ours,rust]
                        [--quiet-wait SECONDS] [--priority NICE] [--profile-ours DIR]

Prints the results table on stdout (progress on stderr), writes the JSON document to ``--out``
and the same table as Markdown next to it (``.md``). Exit status 1 when a case FAILED (a side
crashed or returned a wrong answer), 2 when the peer venv is missing (run scripts/setup_peers.sh;
``PAIMON_ALLOW_MISSING_PEERS=1`` runs without the peers instead).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from bench.cases import ALL_SIDES, DELTA, PEERS, Context, all_cases
from bench.report import document, machine_info, markdown, markdown_table
from bench.runner import REPO_ROOT, measure, peer_python, set_priority

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "latest.json"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    names = [c.name for c in all_cases()]
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=("small", "full"), default="full")
    ap.add_argument("--cases", default="default",
                    help=f"comma-separated case names, 'default' or 'all' (cases: {', '.join(names)}; "
                         "'default' leaves the *_10m ones (and Spark) out at --size small)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per side (default 3 full, 1 small)")
    ap.add_argument("--warmup", type=int, default=1, help="excluded runs before the timed ones (default 1)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON output (Markdown goes next to it)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="fixtures and run directories (default: $TMPDIR/paimon-bench-<size>; fixtures are reused "
                         "while their parameters and paimon_core's sources are unchanged)")
    ap.add_argument("--sides", default=",".join((*ALL_SIDES, DELTA)), help="subset of sides to run (debugging)")
    ap.add_argument("--quiet-wait", type=float, default=None,
                    help="seconds each timed run may wait for other processes to leave the CPUs idle "
                         "(default 5 full, 0 small); what was seen is recorded in the JSON")
    ap.add_argument("--priority", type=int, default=0, metavar="NICE",
                    help="niceness of the measured processes, e.g. -10 to favour them over other jobs on a "
                         "shared machine (negative values need root; ignored otherwise). Default 0")
    ap.add_argument("--keep-runs", action="store_true", help="keep each run's directory")
    ap.add_argument("--profile-ours", type=Path, default=None, metavar="DIR",
                    help="run our side under cProfile, stats to DIR/<case>-run<i>.pstats (slows ours down: "
                         "for diagnosis, not for the numbers)")
    return ap.parse_args(argv)


def select_cases(spec: str, size: str) -> list[str]:
    cases = all_cases()
    if spec == "default":
        return [c.name for c in cases if c.default and not (c.full_only and size == "small")]
    if spec == "all":
        return [c.name for c in cases]
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    known = {c.name for c in cases}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return wanted


def _compile_sources() -> None:
    """Byte-compile the project as an install does: a side's timed process then loads ``.pyc``
    files, not sources it compiles on every start (``PYTHONDONTWRITEBYTECODE`` shells)."""
    import compileall

    root = Path(__file__).resolve().parents[1]
    for pkg in ("paimon_core", "spark_jobs"):
        compileall.compile_dir(str(root / pkg), quiet=1, force=False)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (3 if args.size == "full" else 1)
    quiet_wait = args.quiet_wait if args.quiet_wait is not None else (5.0 if args.size == "full" else 0.0)
    names = select_cases(args.cases, args.size)
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    peer_py, problem = peer_python()
    if problem and any(s in (*PEERS, DELTA) for s in sides):
        msg = f"{problem}: run scripts/setup_peers.sh (or set PAIMON_PEERS_PYTHON)"
        if os.environ.get("PAIMON_ALLOW_MISSING_PEERS") != "1":
            _log(f"error: {msg}; PAIMON_ALLOW_MISSING_PEERS=1 runs without the peers")
            return 2
        _log(f"warning: {msg}; running without the peers (PAIMON_ALLOW_MISSING_PEERS=1)")
        sides = [s for s in sides if s not in (*PEERS, DELTA)]
    set_priority(args.priority)
    _compile_sources()
    workdir = args.workdir or Path(tempfile.gettempdir()) / f"paimon-bench-{args.size}"
    workdir.mkdir(parents=True, exist_ok=True)
    command = "python -m bench.run " + shlex.join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(peer_py)
    ctx = Context(workdir=workdir, size=args.size, log=_log, peer_py=peer_py if not problem else None,
                  peer_versions=dict(machine.get("peers") or {}))
    _log(f"bench: size={args.size} repeat={repeat} warmup={args.warmup} cases={','.join(names)} "
         f"sides={','.join(sides)} workdir={workdir}")
    t0 = time.perf_counter()
    results = []
    by_name = {c.name: c for c in all_cases()}
    for name in names:
        case = by_name[name]
        case_sides = [s for s in case.sides if s in sides]
        _log(f"[{name}]")
        results.append(measure(case, ctx, sides=case_sides, repeat=repeat, warmup=args.warmup, peer_py=peer_py,
                               log=_log, keep_runs=args.keep_runs, quiet_wait_s=quiet_wait,
                               profile_dir=args.profile_ours))
    doc = document(results, size=args.size, repeat=repeat, warmup=args.warmup, machine=machine, command=command)
    doc["quiet_wait_s"] = quiet_wait
    doc["priority_nice"] = args.priority
    doc["total_s"] = round(time.perf_counter() - t0, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    md = markdown(doc)
    args.out.with_suffix(".md").write_text(md)
    print(markdown_table(doc))
    print(md.split(markdown_table(doc), 1)[1].rstrip())
    _log(f"wrote {args.out} and {args.out.with_suffix('.md')} in {doc['total_s']} s")
    return 0 if not doc["summary"]["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
