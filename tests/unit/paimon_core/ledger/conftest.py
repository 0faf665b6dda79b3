"""Every ledger test: its own spool directory and a fresh existence cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from paimon_core.ledger.ledger import forget_cached_existence


@pytest.fixture(autouse=True)
def _ledger_isolation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    spool = tmp_path / "spool"
    monkeypatch.setenv("PAIMON_LEDGER_SPOOL", str(spool))
    monkeypatch.delenv("PAIMON_LEDGER_CONTEXT", raising=False)
    monkeypatch.delenv("PAIMON_LEDGER", raising=False)
    forget_cached_existence()
    yield spool
    forget_cached_existence()
