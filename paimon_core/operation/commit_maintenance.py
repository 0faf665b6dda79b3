"""Maintenance a writer runs after each commit, as Java's ``TableCommitImpl.maintain``.

In order: automatic tag creation (``tag.automatic-creation``), tag expiry by
``tagTimeRetained`` (``tag.time-expire-enabled``), consumer expiry
(``consumer.expiration-time``), snapshot expiry (``snapshot.num-retained.*``,
``snapshot.time-retained``, ``snapshot.expire.limit``), partition expiry
(``partition.expiration-time``, see :mod:`paimon_core.operation.partition_expire`), plus
changelog expiry when its lifecycle is decoupled. ``write-only=true`` turns all of it off (a dedicated job, e.g. the
Airflow maintenance DAG or ``python -m spark_jobs expire_snapshots``, does it instead).

Store-level: the table's commit (:class:`~paimon_core.table.table_commit.TableCommit`) and the
dedicated compactions run it with the store of the handle that committed.

The commit has already landed when this runs, so a maintenance failure never turns into a
commit failure (a caller retrying a "failed" commit could write its rows twice): it is
logged and reported in :attr:`CommitResult.maintenance_error`.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from paimon_core.exceptions import PaimonError
from paimon_core.results import CommitResult

if TYPE_CHECKING:
    from paimon_core.operation.partition_expire import PartitionExpire
    from paimon_core.store.file_store import FileStore

logger = logging.getLogger(__name__)


def maintain_after_commit(
    store: FileStore, result: CommitResult, *, partition_expire: PartitionExpire | None = None
) -> CommitResult:
    """Run the post-commit maintenance of ``store`` for a commit that made a snapshot; returns the
    result with ``expired_snapshots`` / ``created_tags`` / ``expired_partitions`` /
    ``maintenance_error`` filled.

    ``partition_expire``: the long-lived commit's :class:`PartitionExpire` (its check interval runs
    from its creation, as Java's ``TableCommitImpl``); without one a fresh one is made, which only
    expires when the interval is 0 or ``end-input.check-partition-expire`` is set on a batch commit.
    """
    opts = store.options
    if result.snapshot_id is None or opts.write_only:
        return result
    from paimon_core.operation.expire_changelogs import ExpireChangelogs
    from paimon_core.operation.expire_snapshots import ExpireSnapshots
    from paimon_core.operation.partition_expire import PartitionExpire
    from paimon_core.tag.tag_auto_creation import TagAutoCreation
    from paimon_core.tag.tag_time_expire import expire_tags

    created: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    expired = 0
    try:
        if opts.tag_automatic_creation != "none":
            created = TagAutoCreation(store).run().created_tags
        if opts.tag_time_expire_enabled:
            expire_tags(store)
        expired = len(ExpireSnapshots(store).expire().expired_snapshot_ids)  # consumers first inside
        pe = partition_expire if partition_expire is not None else PartitionExpire.from_options(store)
        if pe is not None:
            dropped = pe.expire_if_due(result.commit_user, result.commit_identifier)
            if dropped is not None:
                partitions = tuple(dropped.partitions)
        if opts.changelog_lifecycle_decoupled:
            ExpireChangelogs(store).expire()
    except (PaimonError, OSError) as e:
        logger.error(
            "Commit of snapshot %s to %s landed, but post-commit maintenance failed (run expire_snapshots "
            "or set write-only=true and schedule it): %s",
            result.snapshot_id,
            store.name,
            e,
        )
        return dataclasses.replace(
            result, created_tags=created, expired_partitions=partitions, maintenance_error=f"{type(e).__name__}: {e}"
        )
    return dataclasses.replace(result, created_tags=created, expired_snapshots=expired, expired_partitions=partitions)
