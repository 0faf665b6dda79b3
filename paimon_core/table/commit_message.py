"""Re-export: :class:`CommitMessage` is a store-level type, defined in
:mod:`paimon_core.operation.commit.commit_message` (the table layer's importers keep this path)."""

from __future__ import annotations

from paimon_core.operation.commit.commit_message import CommitMessage

__all__ = ["CommitMessage"]
