"""Fixtures for interop tests against the official peers (pypaimon, pypaimon-rust).

The peers run in their own venv (scripts/setup_peers.sh). A missing or stale venv is a hard
error, so CI can never silently skip interop; set PAIMON_ALLOW_MISSING_PEERS=1 to skip instead
(local runs without the peers).

Fixtures:
  pypaimon_peer, rust_peer  session-scoped :class:`peers.Peer` (one long-lived process each)
  peer                      parametrized over both engines (tests run once per engine)
  warehouse                 a fresh absolute warehouse path under tmp_path
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from peers import ENGINES, Peer, peer_venv_problem, peer_venv_python

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope="session")
def peer_python() -> str:
    problem = peer_venv_problem()
    if problem is not None:
        msg = f"{problem}. Run scripts/setup_peers.sh (or set PAIMON_PEERS_PYTHON)."
        if os.environ.get("PAIMON_ALLOW_MISSING_PEERS") == "1":
            pytest.skip(f"interop peers unavailable, skipped because PAIMON_ALLOW_MISSING_PEERS=1: {msg}")
        pytest.fail(f"interop peers unavailable: {msg} "
                    "(set PAIMON_ALLOW_MISSING_PEERS=1 to skip these tests locally)", pytrace=False)
    python = peer_venv_python()
    assert python is not None
    return python


def _session_peer(engine: str, python: str) -> Iterator[Peer]:
    peer = Peer(engine, python=python)
    try:
        peer.ping()  # start the process and import the engine once, up front
        yield peer
    finally:
        peer.close()


@pytest.fixture(scope="session")
def pypaimon_peer(peer_python: str) -> Iterator[Peer]:
    yield from _session_peer("pypaimon", peer_python)


@pytest.fixture(scope="session")
def rust_peer(peer_python: str) -> Iterator[Peer]:
    yield from _session_peer("rust", peer_python)


@pytest.fixture(params=ENGINES)
def peer(request: pytest.FixtureRequest) -> Peer:
    return request.getfixturevalue(f"{request.param}_peer")


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    path = tmp_path / "warehouse"
    path.mkdir()
    return str(path)
