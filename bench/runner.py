"""Run the measurements: one fresh subprocess per side and run, warm-up excluded, medians.

Each side runs in its own interpreter (ours and the floor in this venv, the peers in the peer
venv), so ``ru_maxrss`` inside it is that side's own peak and imports are outside the timer.
Runs are interleaved round-robin across sides (run 0 of every side, then run 1 ...), so slow
drifts of the machine spread over all sides instead of biasing one.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.cases import DELTA, FLOOR, OURS, PEERS, Case, Context

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
PEER_OPS = BENCH_DIR / "peer_ops.py"
DELTA_OPS = BENCH_DIR / "delta_ops.py"
DEFAULT_TIMEOUT = float(os.environ.get("PAIMON_BENCH_TIMEOUT", "1800"))


def _peers_module() -> ModuleType:
    """tests/interop/peers.py (stdlib + pyarrow), loaded by path: it is not in a package."""
    path = REPO_ROOT / "tests" / "interop" / "peers.py"
    spec = importlib.util.spec_from_file_location("_bench_interop_peers", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def peer_python() -> tuple[str | None, str | None]:
    """(interpreter of the peer venv, why it cannot be used); see tests/interop/peers.py."""
    peers = _peers_module()
    problem = peers.peer_venv_problem()
    return (None, problem) if problem else (peers.peer_venv_python(), None)


def _peer_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"):
        env.pop(var, None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _our_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def side_command(side: str, spec: dict[str, Any], peer_py: str | None) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run ``spec`` on ``side``."""
    if side in (OURS, FLOOR):  # a case may name its own ops module for this venv (e.g. bench.spark_ops)
        module = str(spec.get("module") or ("bench.ours_ops" if side == OURS else "bench.floor_ops"))
        return [sys.executable, "-m", module, json.dumps(spec)], _our_env()
    if side in PEERS:
        if peer_py is None:
            raise RuntimeError("peer venv missing: run scripts/setup_peers.sh")
        return [peer_py, str(PEER_OPS), json.dumps(dict(spec, engine=side))], _peer_env()
    if side == DELTA:  # delta-rs lives in the peer venv too
        if peer_py is None:
            raise RuntimeError("peer venv missing: run scripts/setup_peers.sh")
        return [peer_py, str(DELTA_OPS), json.dumps(spec)], _peer_env()
    raise ValueError(f"unknown side {side!r}")


class Launcher:
    """One ``bench/launcher.py`` process that spawns every measured process (see its docstring)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        #: Niceness of the measured processes (negative: favoured on a shared machine; needs root).
        self.nice = 0
        atexit.register(self.close)

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, "-I", "-S", str(BENCH_DIR / "launcher.py")],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                          encoding="utf-8", cwd=str(REPO_ROOT))
        return self._proc

    def run(self, cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        req = {"cmd": cmd, "env": env, "cwd": str(REPO_ROOT), "timeout": timeout, "nice": self.nice}
        proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"bench launcher died (exit {proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


_LAUNCHER = Launcher()


def set_priority(nice: int) -> None:
    """Run the measured processes at this niceness (e.g. -10 on a machine shared with other jobs)."""
    _LAUNCHER.nice = nice


def run_side(side: str, spec: dict[str, Any], peer_py: str | None, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """Run one op in a fresh process; the answer dict (``ok`` false with an error on failure)."""
    cmd, env = side_command(side, spec, peer_py)
    res = _LAUNCHER.run(cmd, env, timeout)
    stderr = str(res.get("stderr") or "")
    if res.get("timed_out"):
        return {"ok": False, "error_type": "Timeout", "error": f"no answer within {timeout:.0f}s",
                "stderr": stderr[-4000:]}
    lines = [ln for ln in str(res.get("stdout") or "").splitlines() if ln.strip()]
    try:
        answer: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"ok": False, "error_type": "Protocol", "error": f"exit {res.get('returncode')}, no JSON answer",
                "stderr": stderr[-4000:]}
    answer["process_wall_s"] = round(float(res.get("wall_s") or 0.0), 3)
    if not answer.get("ok"):
        answer["stderr"] = stderr[-4000:]
    return answer


@dataclass
class SideResult:
    """All runs of one side of one case."""

    side: str
    samples: list[float] = field(default_factory=list)
    cpu_samples: list[float] = field(default_factory=list)
    sys_samples: list[float] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)
    peak_rss: list[float] = field(default_factory=list)
    base_rss: list[float] = field(default_factory=list)
    vm_hwm: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    busy_before: list[float | None] = field(default_factory=list)
    rows: int | None = None
    checksum: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.errors:
            return "ERROR"
        return "MISMATCH" if self.problems else "OK"

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def to_dict(self, case: Case) -> dict[str, Any]:
        med = self.median
        out: dict[str, Any] = {"status": self.status, "median_s": _r(med), "samples_s": [_r(s) for s in self.samples],
                               "min_s": _r(min(self.samples)) if self.samples else None,
                               "max_s": _r(max(self.samples)) if self.samples else None}
        out["user_cpu_median_s"] = _r(statistics.median(self.cpu_samples)) if self.cpu_samples else None
        out["user_cpu_samples_s"] = [_r(s) for s in self.cpu_samples]
        out["sys_cpu_median_s"] = _r(statistics.median(self.sys_samples)) if self.sys_samples else None
        if self.phases:
            keys = sorted({k for p in self.phases for k in p})
            out["phases_median_s"] = {k: _r(statistics.median(p.get(k, 0.0) for p in self.phases)) for k in keys}
        out["peak_rss_mb"] = max(self.peak_rss) if self.peak_rss else None
        out["base_rss_mb"] = min(self.base_rss) if self.base_rss else None
        out["vm_hwm_mb"] = max(self.vm_hwm) if self.vm_hwm else None
        out["process_wall_median_s"] = _r(statistics.median(self.walls)) if self.walls else None
        out["spread"] = round(max(self.samples) / min(self.samples), 3) if self.samples and min(self.samples) > 0 else None
        out["busy_cores_before_runs"] = self.busy_before
        out["rows"] = self.rows
        out["rows_per_s"] = round(self.rows / med) if med and self.rows is not None else None
        nbytes = self.extra.get("bytes_written", case.data_bytes)
        out["mb_per_s"] = round(nbytes / 1e6 / med, 1) if med and nbytes else None
        out["checksum"] = self.checksum
        out["problems"] = self.problems
        out["errors"] = self.errors
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _cpu_times() -> tuple[float, float] | None:
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    return sum(fields), idle


def busy_cores(sample_s: float = 0.2) -> float | None:
    """CPU cores kept busy by other processes over ``sample_s`` (the harness itself is idle then)."""
    a = _cpu_times()
    time.sleep(sample_s)
    b = _cpu_times()
    if a is None or b is None or b[0] <= a[0]:
        return None
    cores = os.cpu_count() or 1
    return round(cores * (1.0 - (b[1] - a[1]) / (b[0] - a[0])), 2)


def wait_until_quiet(max_wait_s: float, threshold: float = 0.3) -> float | None:
    """Wait (at most ``max_wait_s``) until other processes use < ``threshold`` cores; the last reading."""
    deadline = time.monotonic() + max_wait_s
    while True:
        busy = busy_cores()
        if busy is None or busy < threshold or time.monotonic() >= deadline:
            return busy
        time.sleep(0.5)


def machine_load() -> dict[str, float | None]:
    """1-minute load average and Linux CPU pressure (share of time some task waited for a CPU)."""
    out: dict[str, float | None] = {"load1": round(os.getloadavg()[0], 2), "cpu_pressure_avg10": None}
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as f:
            for line in f:
                if line.startswith("some"):
                    fields = dict(kv.split("=") for kv in line.split()[1:])
                    out["cpu_pressure_avg10"] = float(fields["avg10"])
    except (OSError, ValueError, KeyError):
        pass
    return out


@dataclass
class CaseResult:
    case: Case
    sides: dict[str, SideResult]
    setup_s: float
    load_before: dict[str, float | None] = field(default_factory=dict)
    load_after: dict[str, float | None] = field(default_factory=dict)
    #: Why the case did not run (a missing dependency); None when it ran.
    skipped: str | None = None

    @property
    def status(self) -> str:
        if self.skipped is not None:
            return "SKIPPED"
        return "OK" if self.sides and all(s.status == "OK" for s in self.sides.values()) else "FAILED"

    def ratios(self, cpu: bool = False) -> dict[str, float | None]:
        """ours / other of the median wall times (``cpu``: of the median user CPU times)."""
        def med(r: SideResult | None) -> float | None:
            if r is None:
                return None
            if cpu:
                return statistics.median(r.cpu_samples) if r.cpu_samples else None
            return r.median

        ours = self.sides.get(OURS)
        out: dict[str, float | None] = {}
        for other in (*PEERS, DELTA, FLOOR):
            if other in self.sides:
                a, b = med(ours), med(self.sides[other])
                out[f"ours/{other}"] = round(a / b, 3) if a and b else None
        return out


def measure(case: Case, ctx: Context, *, sides: Sequence[str], repeat: int, warmup: int, peer_py: str | None,
            log: Callable[[str], None], keep_runs: bool = False, quiet_wait_s: float = 0.0,
            profile_dir: Path | None = None) -> CaseResult:
    """Set the case up, then run every side ``warmup + repeat`` times (round-robin).

    With ``quiet_wait_s`` each timed run first waits (up to that long) until other processes
    leave the CPUs idle; the busy cores seen just before each timed run are recorded.
    """
    reason = case.unavailable(ctx)
    if reason is not None:
        log(f"  {case.name}: SKIPPED ({reason})")
        return CaseResult(case, {}, 0.0, skipped=reason)
    results = {side: SideResult(side) for side in sides}
    t0 = time.perf_counter()
    try:
        case.setup(ctx)
    except Exception as exc:  # a fixture could not be built or failed its check: every side fails
        msg = f"setup: {type(exc).__name__}: {exc}"
        log(f"  {case.name}: ERROR {msg}")
        for res in results.values():
            res.errors.append(msg)
        return CaseResult(case, results, time.perf_counter() - t0)
    setup_s = time.perf_counter() - t0
    load_before = machine_load()
    runs_root = ctx.workdir / "runs" / case.name
    shutil.rmtree(runs_root, ignore_errors=True)
    for i in range(warmup + repeat):
        timed = i >= warmup
        for side in sides:
            res = results[side]
            if res.errors:
                continue  # a side that crashed once is not retried
            run_dir = runs_root / f"{side}-{i}"
            try:
                spec = case.prepare(side, run_dir)
                if profile_dir is not None and side == OURS:
                    profile_dir.mkdir(parents=True, exist_ok=True)
                    spec["profile"] = str(profile_dir / f"{case.name}-run{i}.pstats")
                busy = wait_until_quiet(quiet_wait_s) if timed and quiet_wait_s > 0 else None
                answer = run_side(side, spec, peer_py)
            except Exception as exc:  # preparing the run failed: report, go on with the others
                answer = {"ok": False, "error_type": type(exc).__name__, "error": str(exc)}
            if not answer.get("ok"):
                msg = f"{answer.get('error_type')}: {answer.get('error')}"
                res.errors.append(msg)
                log(f"  {case.name} {side} run {i}: ERROR {msg}\n{answer.get('traceback') or answer.get('stderr') or ''}")
            else:
                verdict = case.verify(side, run_dir, answer)
                if verdict.problems and not res.problems:
                    res.problems = [f"run {i}: {p}" for p in verdict.problems]
                res.checksum = verdict.checksum
                res.rows = int(answer.get("rows", case.rows))
                res.extra.update(verdict.extra)
                if timed:
                    res.samples.append(float(answer["seconds"]))
                    if answer.get("user_cpu_seconds") is not None:
                        res.cpu_samples.append(float(answer["user_cpu_seconds"]))
                        res.sys_samples.append(float(answer.get("sys_cpu_seconds") or 0.0))
                    res.phases.append(dict(answer.get("phases") or {}))
                    res.peak_rss.append(float(answer["peak_rss_mb"]))
                    if answer.get("base_rss_mb") is not None:
                        res.base_rss.append(float(answer["base_rss_mb"]))
                    if answer.get("vm_hwm_mb") is not None:
                        res.vm_hwm.append(float(answer["vm_hwm_mb"]))
                    res.walls.append(float(answer.get("process_wall_s", 0.0)))
                    res.busy_before.append(busy)
                tag = "warm-up" if not timed else f"run {i - warmup + 1}/{repeat}"
                flag = "" if not verdict.problems else "  MISMATCH " + "; ".join(verdict.problems[:3])
                busy_note = f"  (others busy: {busy} cores)" if busy is not None and busy >= 0.3 else ""
                log(f"  {case.name:32s} {side:9s} {tag:9s} {answer['seconds']:9.4f} s  "
                    f"peak {answer['peak_rss_mb']:7.1f} MB{flag}{busy_note}")
            if not keep_runs:
                shutil.rmtree(run_dir, ignore_errors=True)
    return CaseResult(case, results, setup_s, load_before, machine_load())
