"""Partition expiry (Java's ``PartitionExpire``): drop partitions older than ``partition.expiration-time``.

:func:`select_expired` is the plan, a pure function of the partitions, the strategy and the cutoff
(``now - expiration_time``, local wall-clock as Java's ``LocalDateTime.now()``): the expired
partitions sorted by their values joined with ``,`` (oldest first for date-like values), at most
``max_expires`` (``partition.expiration-max-num``) of them.

The drop is one OVERWRITE commit deleting every live file of those partitions (Java's
``FileStoreCommit.dropPartitions``), recomputed on the latest snapshot if it has to retry. Nothing
is deleted from storage: older snapshots and tags still read the dropped rows (time travel), and the
files go when snapshot expiry removes the last snapshot holding them.

Writers run it after their commits (:func:`paimon_core.operation.commit_maintenance.maintain_after_commit`)
as Java's ``TableCommitImpl`` does: a commit object checks when ``partition.expiration-check-interval``
has passed since it was created or last checked (``0``: after every commit), and a batch commit
also checks when ``end-input.check-partition-expire`` is set.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.partition.partition_expire_strategy import (
    PartitionEntry,
    PartitionExpireStrategy,
    create_strategy,
    partition_entries,
)
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.utils.clock import Clock

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore
    from paimon_core.utils.time_util import Duration

__all__ = ["ExpiredPartition", "PartitionExpire", "PartitionExpireResult", "local_now", "select_expired"]

logger = logging.getLogger(__name__)


def local_now(clock: Clock) -> dt.datetime:
    """The clock's time as local wall-clock (Java's ``LocalDateTime.now()``)."""
    return dt.datetime.fromtimestamp(clock.now_millis() / 1000)


def select_expired(
    partitions: Sequence[PartitionEntry],
    strategy: PartitionExpireStrategy,
    expire_before: dt.datetime,
    *,
    max_expires: int,
    default_name: str = "__DEFAULT_PARTITION__",
) -> list[PartitionEntry]:
    """The partitions whose time is strictly before ``expire_before``, oldest values first, at most
    ``max_expires`` (Java sorts the ``,``-joined value strings, nulls as ``default_name``)."""
    expired = []
    for p in partitions:
        t = strategy.partition_time(p)
        if t is not None and expire_before > t:
            expired.append(p)
    expired.sort(key=lambda p: ",".join(default_name if v is None else v for v in p.values))
    return expired[: max(max_expires, 0)]


@dataclass(frozen=True)
class ExpiredPartition(_ToDict):
    """One expired partition: its spec (``{"dt": "2024-01-01"}``, null as ``partition.default-name``)
    and what it held."""

    partition: str  # Java's procedure output: "dt=2024-01-01, hh=3"
    spec: tuple[tuple[str, str], ...]
    record_count: int
    file_count: int
    file_size_in_bytes: int

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["spec"] = dict(self.spec)
        return out


@dataclass(frozen=True)
class PartitionExpireResult(_ToDict):
    """What one expiry did (``dry_run``: would do)."""

    table: str
    strategy: str
    expiration_time_ms: int
    expire_before: str  # local wall-clock, ISO
    dry_run: bool
    expired_partitions: tuple[ExpiredPartition, ...] = ()
    snapshot_id: int | None = None  # the OVERWRITE snapshot that dropped them
    commit_kind: str | None = None
    deleted_files: int = 0
    deleted_rows: int = 0

    @property
    def partitions(self) -> list[str]:
        return [p.partition for p in self.expired_partitions]


class PartitionExpire:
    """Drops the expired partitions of one table (see the module docstring)."""

    def __init__(
        self,
        store: FileStore,
        *,
        expiration_time: Duration,
        strategy: str | None = None,
        timestamp_formatter: str | None = None,
        timestamp_pattern: str | None = None,
        max_expires: int | None = None,
        check_interval: Duration = 0,
        end_input_check: bool = False,
        clock: Clock | None = None,
    ) -> None:
        from paimon_core.utils.time_util import to_duration_millis

        if not store.schema.partition_keys:
            raise InvalidArgumentError(f"Table {store.name} has no partition keys: no partition can expire")
        self.store = store
        self.clock = clock or store.clock
        self.expiration_ms = to_duration_millis(expiration_time, name="expiration_time")
        self.check_interval_ms = to_duration_millis(check_interval, name="partition.expiration-check-interval")
        self.strategy = create_strategy(
            store,
            store.options,
            strategy=strategy,
            timestamp_formatter=timestamp_formatter,
            timestamp_pattern=timestamp_pattern,
        )
        self.max_expires = store.options.partition_expiration_max_num if max_expires is None else max_expires
        if self.max_expires < 0:
            raise InvalidArgumentError(f"max_expires must be >= 0, got {self.max_expires}", argument="max_expires")
        self.end_input_check = end_input_check
        self.last_check = self.clock.now_millis()  # Java: the commit's creation time

    @classmethod
    def from_options(cls, store: FileStore, *, clock: Clock | None = None) -> PartitionExpire | None:
        """What a writer runs: None when ``partition.expiration-time`` is unset or the table is
        unpartitioned (Java's ``newPartitionExpire``)."""
        opts = store.options
        expiration = opts.partition_expiration_time_ms
        if expiration is None or not store.schema.partition_keys:
            return None
        return cls(
            store,
            expiration_time=expiration,
            check_interval=opts.partition_expiration_check_interval_ms,
            end_input_check=opts.end_input_check_partition_expire,
            clock=clock,
        )

    # --- plan -----------------------------------------------------------------------
    def expire_before(self) -> dt.datetime:
        return local_now(self.clock) - dt.timedelta(milliseconds=self.expiration_ms)

    def plan(self) -> list[PartitionEntry]:
        """The partitions of the latest snapshot that would be dropped now."""
        snapshot = self.store.snapshot_manager.latest_snapshot()
        entries = self.store.new_scan().live_entries(snapshot)
        parts = partition_entries(self.store, entries)
        return select_expired(
            parts,
            self.strategy,
            self.expire_before(),
            max_expires=self.max_expires,
            default_name=self.store.options.partition_default_name,
        )

    def expire_time(self, entry: PartitionEntry) -> dt.datetime | None:
        """When ``entry`` becomes old enough to drop (local wall-clock), None if never."""
        t = self.strategy.partition_time(entry)
        return None if t is None else t + dt.timedelta(milliseconds=self.expiration_ms)

    # --- run ------------------------------------------------------------------------
    def is_due(self, commit_identifier: int) -> bool:
        """Java's check: interval 0, interval passed, or end of input of a batch commit."""
        now = self.clock.now_millis()
        return (
            self.check_interval_ms == 0
            or now > self.last_check + self.check_interval_ms
            or (self.end_input_check and commit_identifier == BATCH_COMMIT_IDENTIFIER)
        )

    def expire_if_due(self, commit_user: str, commit_identifier: int) -> PartitionExpireResult | None:
        """After a writer's commit: expire when due (as the writer's commit user and identifier)."""
        if not self.is_due(commit_identifier):
            return None
        result = self.expire(commit_user=commit_user, commit_identifier=commit_identifier)
        self.last_check = self.clock.now_millis()
        return result

    def expire(
        self,
        *,
        dry_run: bool = False,
        commit_user: str | None = None,
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
    ) -> PartitionExpireResult:
        """Drop the expired partitions in one OVERWRITE commit (``dry_run``: only list them)."""
        from paimon_core.operation.commit.committer import new_commit_user

        before = self.expire_before()
        expired = self.plan()
        default = self.store.options.partition_default_name
        keys = self.store.schema.partition_keys
        listed = tuple(
            ExpiredPartition(
                partition=", ".join(f"{k}={default if v is None else v}" for k, v in zip(keys, p.values, strict=True)),
                spec=tuple((k, default if v is None else v) for k, v in zip(keys, p.values, strict=True)),
                record_count=p.record_count,
                file_count=p.file_count,
                file_size_in_bytes=p.file_size_in_bytes,
            )
            for p in expired
        )
        result = PartitionExpireResult(
            table=self.store.name,
            strategy=self.strategy.name,
            expiration_time_ms=self.expiration_ms,
            expire_before=before.isoformat(),
            dry_run=dry_run,
            expired_partitions=listed,
        )
        if dry_run or not expired:
            return result
        user = commit_user or new_commit_user(self.store.options.get("commit.user-prefix"))
        committer = self.store.new_commit(user)
        commit = committer.drop_partitions([p.partition for p in expired], commit_identifier, check_committed=False)
        logger.info(
            "Expired %d partition(s) of %s (%s before %s) in snapshot %s: %s",
            len(listed),
            self.store.name,
            self.strategy.name,
            before.isoformat(),
            commit.snapshot_id,
            [p.partition for p in listed],
        )
        return dataclasses.replace(
            result,
            snapshot_id=commit.snapshot_id,
            commit_kind=commit.commit_kind,
            deleted_files=commit.deleted_files,
            deleted_rows=commit.deleted_rows,
        )
