"""Where the peer interpreter (pypaimon, pypaimon-rust) lives, for tests outside tests/interop.

A missing peer venv fails the test (CI must never silently skip interop); set
PAIMON_ALLOW_MISSING_PEERS=1 to skip instead when running locally without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "interop"))
from peers import peer_venv_problem, peer_venv_python  # noqa: E402


def require_peer_python() -> Path:
    """The peer venv's python, or fail (skip only with PAIMON_ALLOW_MISSING_PEERS=1)."""
    problem = peer_venv_problem()
    if problem is not None:
        msg = f"interop peers unavailable: {problem}; run scripts/setup_peers.sh"
        if os.environ.get("PAIMON_ALLOW_MISSING_PEERS") == "1":
            pytest.skip(msg)
        pytest.fail(msg, pytrace=False)
    python = peer_venv_python()
    assert python is not None
    return Path(python)


def run_peer_script(script: str, *args: str) -> str:
    """Run a Python snippet in the peer venv; its stdout, or AssertionError with its output."""
    proc = subprocess.run(
        [str(require_peer_python()), "-c", script, *args], capture_output=True, text=True, timeout=600, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"peer script failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout
