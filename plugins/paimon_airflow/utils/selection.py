"""Which tables a run works on: full-match ``include``/``exclude`` regexes over ``db.table``, as
Paimon's ``compact_database`` takes them (``exclude`` wins). Shared by the DAGs' table registry,
their ``list_tables`` task and the UI page."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["select_tables"]


def select_tables(tables: Iterable[str], include: str | None, exclude: str | None) -> list[str]:
    """The ``db.table`` names that fully match ``include`` (empty: all) and not ``exclude``, sorted."""
    inc = re.compile(include or ".*")
    exc = re.compile(exclude) if exclude else None
    return sorted(t for t in tables if inc.fullmatch(t) and not (exc and exc.fullmatch(t)))
