"""Expire tags by age (Java's ``TagTimeExpire`` and the ``expire_tags`` procedure).

A tag expires when

* it records ``tagCreateTime`` and ``tagTimeRetained`` and ``now > create time + retained``; or
* ``older_than`` is given and the tag was created before it. Tags without a recorded create
  time (created without a retention) are then aged by their file's modification time, as Java does.

Expired tags are deleted with :func:`paimon_core.operation.tag_deletion.delete_tags`, which
also removes the data and manifest files only those tags used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from paimon_core.results import _ToDict
from paimon_core.tag.tag_manager import tag_create_time_millis, tag_time_retained_ms
from paimon_core.utils.time_util import TimePoint, to_epoch_millis

if TYPE_CHECKING:
    from collections.abc import Sequence

    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)


class TagDeletionOutcome(Protocol):
    """What :func:`paimon_core.operation.tag_deletion.delete_tags` returns (the part used here)."""

    @property
    def deleted_tags(self) -> Sequence[str]: ...

    def to_dict(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class ExpireTagsResult(_ToDict):
    """Tags deleted (or, with ``dry_run``, that would be) and the file cleanup that came with them."""

    table: str
    expired_tags: tuple[str, ...]
    dry_run: bool
    now_millis: int
    older_than_millis: int | None = None
    deletion: TagDeletionOutcome | None = None


def expire_tags(store: FileStore, *, older_than: TimePoint | None = None, dry_run: bool = False) -> ExpireTagsResult:
    """Delete tags past their retention, or created before ``older_than`` (Java's expire_tags)."""
    older = None if older_than is None else to_epoch_millis(older_than, name="older_than")
    return expire_tags_at(store, now_millis=store.clock.now_millis(), older_than_millis=older, dry_run=dry_run)


def expire_tags_at(
    store: FileStore, *, now_millis: int, older_than_millis: int | None = None, dry_run: bool = False
) -> ExpireTagsResult:
    """:func:`expire_tags` as of ``now_millis`` (auto-creation passes the time it runs for)."""
    names = select_expired_tags(store, now_millis=now_millis, older_than_millis=older_than_millis)
    deletion: TagDeletionOutcome | None = None
    expired: tuple[str, ...] = ()
    if names:
        from paimon_core.operation.tag_deletion import delete_tags

        deletion = delete_tags(store, names, dry_run=dry_run)
        expired = tuple(deletion.deleted_tags)
        logger.info(
            "%s %d expired tag(s) of %s: %s", "Would delete" if dry_run else "Deleted", len(expired), store.name, expired
        )
    return ExpireTagsResult(
        table=store.name,
        expired_tags=expired,
        dry_run=dry_run,
        now_millis=now_millis,
        older_than_millis=older_than_millis,
        deletion=deletion,
    )


def select_expired_tags(store: FileStore, *, now_millis: int, older_than_millis: int | None = None) -> list[str]:
    """Names of the tags that have expired as of ``now_millis`` (nothing is deleted)."""
    tm = store.tag_manager
    expired = []
    for name, mtime in sorted(tm.list_with_mtime()):
        tag = tm.try_get(name)
        if tag is None:  # deleted meanwhile
            continue
        created = tag_create_time_millis(tag)
        retained = tag_time_retained_ms(tag)
        if created is None or retained is None:
            if older_than_millis is None:
                continue
            created = mtime
        reached_retention = retained is not None and now_millis > created + retained
        older = older_than_millis is not None and older_than_millis > created
        if reached_retention or older:
            logger.debug("Tag %s of %s expired (created %d, retained %s ms)", name, store.name, created, retained)
            expired.append(name)
    return expired
