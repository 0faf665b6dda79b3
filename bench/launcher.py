"""A tiny process that starts the measured processes, so their ``ru_maxrss`` is their own.

Why: on Linux, exec() records the RSS high-water mark of the address space it replaces into the
new program's ``ru_maxrss``. A child forked (or vforked/posix_spawned) straight from the harness
-- which holds the input data and expected checksums, hundreds of MB -- would report at least
the harness's size as its own peak. Children of this launcher (a bare ``python -I -S``, ~10 MB)
start from a small baseline instead.

Protocol (stdlib only): one JSON request per line on stdin ``{"cmd", "env", "cwd", "timeout",
"nice"}`` (``nice``: scheduling niceness of the child, e.g. -10 to favour it on a shared machine;
ignored where not permitted),
one JSON answer per line on stdout ``{"returncode", "stdout", "stderr", "wall_s", "timed_out"}``.
EOF ends the launcher.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def _set_nice(value: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, 0, value)
    except OSError:
        pass  # not permitted: run at the inherited priority


def handle(req: dict[str, object]) -> dict[str, object]:
    t0 = time.perf_counter()
    nice = int(req.get("nice") or 0)  # type: ignore[call-overload]
    try:
        proc = subprocess.run(req["cmd"], env=req.get("env"), cwd=req.get("cwd"),  # type: ignore[call-overload]
                              capture_output=True, timeout=req.get("timeout"), check=False,
                              preexec_fn=(lambda: _set_nice(nice)) if nice else None)
    except subprocess.TimeoutExpired as exc:
        return {"returncode": None, "timed_out": True, "wall_s": time.perf_counter() - t0,
                "stdout": (exc.stdout or b"").decode("utf-8", "replace"),
                "stderr": (exc.stderr or b"").decode("utf-8", "replace")}
    return {"returncode": proc.returncode, "timed_out": False, "wall_s": time.perf_counter() - t0,
            "stdout": proc.stdout.decode("utf-8", "replace"), "stderr": proc.stderr.decode("utf-8", "replace")}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = handle(json.loads(line))
        except Exception as exc:  # a bad request must not kill the launcher
            answer = {"returncode": None, "timed_out": False, "wall_s": 0.0, "stdout": "",
                      "stderr": f"launcher: {type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
