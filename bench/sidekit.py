"""What every side of a measurement shares: a timer, peak RSS, a checksum, the subprocess protocol.

This module imports only the standard library and pyarrow (>= 17): it is loaded by our side
(``bench.ours_ops``, ``bench.floor_ops``, pyarrow 26) and by ``bench/peer_ops.py`` inside the peer
virtualenv (pyarrow 19), so both compute the checksum with the same code.

Protocol of a side process: ``python <ops> '<json spec>'`` prints exactly one JSON line on stdout,
``{"ok": true, ...result}`` or ``{"ok": false, "error_type", "error", "traceback"}``. Anything the
libraries print goes to stderr.

Checksum of a table with columns ``id int64, dt string, v double, s string`` (any subset):
``rows``, ``id_sum``, ``id_mix`` (an order-independent multiset hash: the sum of splitmix64(id)
split into 32-bit halves, so it can be accumulated batch by batch, streaming), ``v_sum``
(compared with a relative tolerance: float sums depend on order), ``v_neg`` (rows with v < 0:
generated values are in [0, 1), upserts carry -1, so this counts the rows that show an upsert),
``s_len`` (total characters) and ``dt_counts`` (rows per dt value). Two reads agree only if all
of these agree.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "Checksum",
    "Stopwatch",
    "compare_checksums",
    "stream_read",
    "max_rss_mb",
    "serve",
    "table_checksum",
    "vm_hwm_mb",
]

_U64 = pa.uint64()
_GOLDEN = pa.scalar(0x9E3779B97F4A7C15, _U64)
_M1 = pa.scalar(0xBF58476D1CE4E5B9, _U64)
_M2 = pa.scalar(0x94D049BB133111EB, _U64)
_LOW32 = pa.scalar(0xFFFFFFFF, _U64)
_SHIFTS = {n: pa.scalar(n, _U64) for n in (27, 30, 31, 32)}


def max_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (``ru_maxrss`` is KiB on Linux)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # bytes there
        kib //= 1024
    return round(kib / 1024.0, 1)


def vm_hwm_mb() -> float | None:
    """The address space's RSS high-water mark (Linux ``VmHWM``), a cross-check of :func:`max_rss_mb`."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    return None


class Stopwatch:
    """Times named phases of one operation; records peak RSS before the first and after the last.

    Besides wall time it sums the process CPU time (all threads) of the phases, user and system
    apart: user CPU is the least sensitive to other processes competing for the CPUs and to the
    kernel's cost of faulting in fresh memory (which varies a lot on a VM).

    >>> sw = Stopwatch()
    >>> with sw.phase("plan"):
    ...     pass
    >>> sw.total >= 0.0
    True
    """

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self.user_seconds = 0.0
        self.sys_seconds = 0.0
        self.base_rss_mb: float | None = None
        self.peak_rss_mb: float | None = None
        self.vm_hwm_mb: float | None = None

    def phase(self, name: str) -> _Phase:
        return _Phase(self, name)

    def add(self, name: str, seconds: float) -> None:
        self.phases[name] = self.phases.get(name, 0.0) + seconds

    @property
    def total(self) -> float:
        return sum(self.phases.values())

    def result(self, **extra: Any) -> dict[str, Any]:
        """The standard result fields: seconds, phases, base/peak RSS, plus ``extra``."""
        out: dict[str, Any] = {
            "seconds": self.total,
            "user_cpu_seconds": round(self.user_seconds, 6),
            "sys_cpu_seconds": round(self.sys_seconds, 6),
            "phases": {k: round(v, 6) for k, v in self.phases.items()},
            "base_rss_mb": self.base_rss_mb,
            "peak_rss_mb": self.peak_rss_mb if self.peak_rss_mb is not None else max_rss_mb(),
            "vm_hwm_mb": self.vm_hwm_mb if self.vm_hwm_mb is not None else vm_hwm_mb(),
        }
        out.update(extra)
        return out


class _Phase:
    def __init__(self, sw: Stopwatch, name: str) -> None:
        self.sw = sw
        self.name = name
        self.t0 = 0.0
        self.r0: Any = None

    def __enter__(self) -> _Phase:
        if self.sw.base_rss_mb is None:
            self.sw.base_rss_mb = max_rss_mb()
        self.r0 = resource.getrusage(resource.RUSAGE_SELF)
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        self.sw.user_seconds += r1.ru_utime - self.r0.ru_utime
        self.sw.sys_seconds += r1.ru_stime - self.r0.ru_stime
        self.sw.add(self.name, t1 - self.t0)
        self.sw.peak_rss_mb = max_rss_mb()
        self.sw.vm_hwm_mb = vm_hwm_mb()


# ---------------------------------------------------------------------------------------------
# checksum
# ---------------------------------------------------------------------------------------------

def _splitmix64(ids: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    x = pc.add(pc.cast(ids, _U64, safe=False), _GOLDEN)  # unchecked: wraps like uint64 math
    x = pc.multiply(pc.bit_wise_xor(x, pc.shift_right(x, _SHIFTS[30])), _M1)
    x = pc.multiply(pc.bit_wise_xor(x, pc.shift_right(x, _SHIFTS[27])), _M2)
    return pc.bit_wise_xor(x, pc.shift_right(x, _SHIFTS[31]))


def _sum(values: pa.Array | pa.ChunkedArray) -> Any:
    out = pc.sum(values).as_py()
    return 0 if out is None else out


class Checksum:
    """Order-independent checksum, accumulated over tables or record batches."""

    def __init__(self) -> None:
        self.rows = 0
        self.columns: set[str] = set()
        self.id_sum = 0
        self.id_mix_hi = 0
        self.id_mix_lo = 0
        self.v_sum = 0.0
        self.v_neg = 0
        self.s_len = 0
        self.dt_counts: dict[str, int] = {}

    def add(self, data: pa.Table | pa.RecordBatch) -> None:
        self.rows += data.num_rows
        names = set(data.schema.names)
        self.columns |= names & {"id", "v", "s", "dt"}
        if data.num_rows == 0:
            return
        if "id" in names:
            ids = data.column("id")
            self.id_sum += int(_sum(ids))
            mixed = _splitmix64(ids)
            self.id_mix_hi += int(_sum(pc.shift_right(mixed, _SHIFTS[32])))
            self.id_mix_lo += int(_sum(pc.bit_wise_and(mixed, _LOW32)))
        if "v" in names:
            v = data.column("v")
            self.v_sum += float(_sum(v))
            self.v_neg += int(_sum(pc.less(v, 0.0)))
        if "s" in names:
            self.s_len += int(_sum(pc.utf8_length(data.column("s"))))
        if "dt" in names:
            dt = data.column("dt")
            if pa.types.is_dictionary(dt.type):
                dt = pc.cast(dt, pa.string())
            for item in pc.value_counts(dt).to_pylist():
                key = str(item["values"])
                self.dt_counts[key] = self.dt_counts.get(key, 0) + int(item["counts"])

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rows": self.rows}
        if "id" in self.columns:
            out["id_sum"] = self.id_sum
            out["id_mix"] = f"{self.id_mix_hi:x}:{self.id_mix_lo:x}"
        if "v" in self.columns:
            out["v_sum"] = self.v_sum
            out["v_neg"] = self.v_neg
        if "s" in self.columns:
            out["s_len"] = self.s_len
        if "dt" in self.columns:
            out["dt_counts"] = dict(sorted(self.dt_counts.items()))
        return out


def table_checksum(data: pa.Table | pa.RecordBatch) -> dict[str, Any]:
    """The checksum of one table (see the module docstring)."""
    acc = Checksum()
    acc.add(data)
    return acc.result()


def compare_checksums(want: Mapping[str, Any], got: Mapping[str, Any], *, rel_tol: float = 1e-9) -> list[str]:
    """Differences between two checksums (empty when they agree); floats compare with ``rel_tol``."""
    problems = []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            problems.append(f"{key}: missing (want {want[key]!r})")
        elif key not in want:
            problems.append(f"{key}: unexpected {got[key]!r}")
        else:
            a, b = want[key], got[key]
            if isinstance(a, float) or isinstance(b, float):
                ok = math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=1e-6)
            else:
                ok = a == b
            if not ok:
                problems.append(f"{key}: want {a!r}, got {b!r}")
    return problems


def stream_read(open_stream: Callable[[], Iterable[pa.RecordBatch]], sw: Stopwatch,
                phase: str = "read") -> dict[str, Any]:
    """Time one streaming pass that only counts rows, then verify with a second, untimed pass.

    The timed pass keeps nothing, so peak RSS is what the reader itself needs. The second pass
    (a fresh stream from ``open_stream``) computes the checksum; if the two passes disagree on
    the row count the checksum carries ``rows_counted_in_timed_pass`` and can never match.
    Returns the result fields ``rows``, ``batches`` and ``checksum``.
    """
    rows = batches = 0
    with sw.phase(phase):
        for batch in open_stream():
            rows += batch.num_rows
            batches += 1
    acc = Checksum()
    for batch in open_stream():
        acc.add(batch)
    checksum = acc.result()
    if acc.rows != rows:
        checksum["rows_counted_in_timed_pass"] = rows
    return {"rows": rows, "batches": batches, "checksum": checksum}


# ---------------------------------------------------------------------------------------------
# subprocess protocol
# ---------------------------------------------------------------------------------------------

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def serve(handlers: Mapping[str, Handler], argv: list[str] | None = None) -> int:
    """Run ``handlers[spec["op"]](spec)`` for the JSON spec in argv[1]; print one JSON answer line."""
    argv = sys.argv if argv is None else argv
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # libraries that print must not corrupt the protocol line
    sys.stdout = sys.stderr
    try:
        spec = json.loads(argv[1] if len(argv) > 1 else sys.stdin.read())
        op = spec.get("op")
        if op not in handlers:
            raise ValueError(f"unknown op {op!r} (known: {', '.join(sorted(handlers))})")
        answer: dict[str, Any] = {"ok": True}
        answer.update(handlers[op](spec))
    except Exception as exc:  # report everything; the harness decides
        answer = {"ok": False, "error_type": type(exc).__name__, "error": str(exc),
                  "traceback": traceback.format_exc()}
    answer["pid"] = os.getpid()
    out.write(json.dumps(answer, default=str) + "\n")
    out.flush()
    return 0 if answer["ok"] else 1
