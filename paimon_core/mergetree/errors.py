"""Errors raised while merging rows of one key (Java throws these at merge time)."""

from __future__ import annotations

from paimon_core.exceptions import TerminalError

__all__ = ["MergeError"]


class MergeError(TerminalError):
    """The rows of a key cannot be merged under the table's merge engine.

    Raised where Java's merge functions throw while adding a record: a retraction
    reaching an aggregate function that cannot retract, a delete reaching
    ``first-row`` or ``partial-update`` without the option that allows it, an
    integer overflow in ``sum``/``product``, a null in a NOT NULL column.
    """
