"""Consumer procedures (Java's ``ResetConsumerProcedure`` and ``ClearConsumersProcedure``).

* ``reset_consumer``: move a consumer to ``next_snapshot_id`` (which must lie within
  ``[earliest, latest + 1]``: a consumer that has read everything waits for ``latest + 1``);
  without an id, delete the consumer. Stop the reading job first, as Paimon advises.
* ``clear_consumers``: delete consumers whose id fully matches ``including`` (a Java regex,
  default ``.*``) and not ``excluding``; blank patterns mean the default, as in Java.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.results import _ToDict

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResetConsumerResult(_ToDict):
    """A consumer's progress before and after (``None``: no consumer file)."""

    table: str
    consumer_id: str
    previous_next_snapshot_id: int | None
    next_snapshot_id: int | None
    deleted: bool = False


@dataclass(frozen=True)
class ClearConsumersResult(_ToDict):
    """Consumers deleted (or, with ``dry_run``, that would be)."""

    table: str
    cleared_consumers: tuple[str, ...]
    including: str
    excluding: str | None
    dry_run: bool


def reset_consumer(store: FileStore, consumer_id: str, next_snapshot_id: int | None = None) -> ResetConsumerResult:
    """Set (or, with ``next_snapshot_id=None``, delete) the consumer ``consumer_id``."""
    cm = store.consumer_manager
    cm.validate_id(consumer_id)
    previous = cm.consumer(consumer_id)
    before = previous.next_snapshot if previous is not None else None
    if next_snapshot_id is None:
        deleted = cm.delete_consumer(consumer_id)
        logger.info("Deleted consumer %s of %s (was at %s)", consumer_id, store.name, before)
        return ResetConsumerResult(store.name, consumer_id, before, None, deleted=deleted)
    if isinstance(next_snapshot_id, bool) or not isinstance(next_snapshot_id, int):
        raise InvalidArgumentError(
            f"next_snapshot_id must be an integer, got {next_snapshot_id!r}", argument="next_snapshot_id"
        )
    sm = store.snapshot_manager
    earliest, latest = sm.earliest_snapshot_id(), sm.latest_snapshot_id()
    if earliest is None or latest is None:
        raise InvalidArgumentError(
            f"Cannot reset consumer {consumer_id!r} of {store.name} to snapshot {next_snapshot_id}: the table has no snapshot",
            consumer_id=consumer_id,
        )
    if not earliest <= next_snapshot_id <= latest + 1:
        raise InvalidArgumentError(
            f"Cannot reset consumer {consumer_id!r} of {store.name} to snapshot {next_snapshot_id}: "
            f"it must be within [{earliest}, {latest + 1}] (earliest .. latest + 1)",
            consumer_id=consumer_id,
            snapshot_id=next_snapshot_id,
        )
    cm.reset_consumer(consumer_id, Consumer(next_snapshot_id))
    logger.info("Reset consumer %s of %s from %s to %d", consumer_id, store.name, before, next_snapshot_id)
    return ResetConsumerResult(store.name, consumer_id, before, next_snapshot_id)


def clear_consumers(
    store: FileStore, including: str | None = ".*", excluding: str | None = None, *, dry_run: bool = False
) -> ClearConsumersResult:
    """Delete every consumer matching ``including`` and not ``excluding`` (full regex matches)."""
    inc = ".*" if including is None or not including.strip() else including
    exc = None if excluding is None or not excluding.strip() else excluding
    for pattern in (inc, exc):
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as e:
                raise InvalidArgumentError(f"Invalid consumer pattern {pattern!r}: {e}", argument="pattern") from e
    cleared = store.consumer_manager.clear_consumers(inc, exc, dry_run=dry_run)
    logger.info(
        "%s %d consumer(s) of %s: %s", "Would clear" if dry_run else "Cleared", len(cleared), store.name, cleared
    )
    return ClearConsumersResult(store.name, tuple(cleared), inc, exc, dry_run)
