"""A per-table compaction lease: at most one dedicated compactor per table, across DAGs.

Paimon wants one compactor per table at a time. Inside one DAG, ``max_active_runs=1`` and one
mapped task per table give that; but ``paimon_maintenance``, ``paimon_compaction`` and
``paimon_on_new_snapshot`` each compact, and an Airflow pool cannot hold a slot per table that
is only known at run time. So the compaction operator takes a lease on the table first: a small
JSON file in the warehouse, ``<warehouse>/_airflow/compaction-leases/<db.table>.json``, published
with the warehouse FileIO's no-overwrite write (the same primitive that publishes a snapshot, so
it is exactly as safe as a Paimon commit on that storage). It names its holder (the task
instance: dag, run, task, map index) and an expiry.

* Taken: the file did not exist (this call created it), or it is this task instance's own
  (a retry after a crash takes its lease back at once), or it expired (deleted, then taken
  with the same no-overwrite write).
* Busy: another live holder; the caller skips, waits or fails (the operator's ``if_busy``). A
  wait never sleeps in a worker slot: :class:`~paimon_airflow.operators.spark_job.PaimonCompactOperator`
  defers to the triggerer (:class:`~paimon_airflow.triggers.lease_wait.LeaseWaitTrigger`) and
  tries again when it wakes, until its ``lease_wait`` has passed since the first try.
* Released when the compaction ends (also on kill), only if the file is still this holder's.

The lease lives outside every ``<db>.db`` directory, so the catalog never lists it and a table's
orphan cleanup never sees it. It is a courtesy lock, not the last line of defence: if a holder
runs past its expiry, or two processes break the same expired lease at the same instant, two
compactions can run, and then the COMPACT commit's conflict check (the files it read must still
be live) makes the later one re-plan or fail; no data is lost either way.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO

__all__ = [
    "DEFAULT_LEASE_TTL",
    "IF_BUSY",
    "LEASE_DIR",
    "CompactionLease",
    "IfBusy",
    "Lease",
    "LeaseBusy",
    "compaction_lease",
    "take_leases",
]

log = logging.getLogger(__name__)

#: Under the warehouse root; not a ``<db>.db`` directory, so invisible to the catalog.
LEASE_DIR = "_airflow/compaction-leases"


@dataclass(frozen=True)
class Lease:
    """The content of a lease file."""

    table: str
    holder: str
    acquired_millis: int
    expires_millis: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def expired(self, now_millis: int) -> bool:
        return now_millis >= self.expires_millis

    @staticmethod
    def parse(data: bytes) -> Lease | None:
        """The lease in ``data``; ``None`` for a file that is not one (treated as expired)."""
        try:
            raw = json.loads(data)
            return Lease(
                table=str(raw["table"]),
                holder=str(raw["holder"]),
                acquired_millis=int(raw["acquired_millis"]),
                expires_millis=int(raw["expires_millis"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


class CompactionLease:
    """The compaction lease of one table for one holder (see the module docs).

    :param file_io: the warehouse's FileIO.
    :param warehouse: the warehouse root path or URL.
    :param table: ``db.table``.
    :param holder: who takes it (the task instance's run key).
    :param ttl_millis: how long a taken lease holds without a release.
    :param now_millis: the clock (injected in tests).
    """

    def __init__(
        self,
        file_io: FileIO,
        warehouse: str,
        table: str,
        *,
        holder: str,
        ttl_millis: int,
        now_millis: Callable[[], int] | None = None,
    ) -> None:
        from paimon_core.io.file_io import join

        if ttl_millis <= 0:
            raise ValueError(f"ttl_millis must be positive, got {ttl_millis}")
        self.file_io = file_io
        self.table = table
        self.holder = holder
        self.ttl_millis = ttl_millis
        self.now_millis = now_millis or (lambda: int(time.time() * 1000))
        self.path = join(warehouse, LEASE_DIR, f"{table}.json")

    def current(self) -> Lease | None:
        """The lease file's content (``None``: no lease; an unreadable file reads as expired)."""
        try:
            data = self.file_io.read_bytes(self.path)
        except FileNotFoundError:
            return None
        return Lease.parse(data) or Lease(self.table, "<unreadable>", 0, 0)

    def acquire(self) -> Lease | None:
        """Take the lease; ``None`` when taken, else the live lease of its other holder."""
        for _ in range(3):  # a holder releasing between our write and our read: try again
            now = self.now_millis()
            mine = Lease(self.table, self.holder, now, now + self.ttl_millis)
            data = json.dumps(mine.to_dict()).encode()
            if self.file_io.try_write_atomic(self.path, data):
                log.info(
                    "Compaction lease of %s taken by %s until %d",
                    self.table,
                    self.holder,
                    mine.expires_millis,
                )
                return None
            held = self.current()
            if held is None:
                continue
            if held.holder == self.holder:  # our own, left by a try that crashed: renew it
                self.file_io.write_bytes(self.path, data, overwrite=True)
                log.info("Compaction lease of %s renewed by its holder %s", self.table, self.holder)
                return None
            if not held.expired(now):
                return held
            if self.current() == held:  # still the same expired lease: break it
                log.warning("Compaction lease of %s held by %s expired; breaking it", self.table, held.holder)
                self.file_io.delete(self.path)
        return self.current()

    def release(self) -> bool:
        """Delete the lease if it is still this holder's; whether it was."""
        held = self.current()
        if held is None or held.holder != self.holder:
            return False
        self.file_io.delete(self.path)
        log.info("Compaction lease of %s released by %s", self.table, self.holder)
        return True


IfBusy = Literal["skip", "wait", "fail"]
IF_BUSY: tuple[IfBusy, ...] = ("skip", "wait", "fail")
#: How long a lease holds when the task sets no ``execution_timeout``.
DEFAULT_LEASE_TTL = dt.timedelta(hours=6)


class LeaseBusy(Exception):
    """The table's compaction lease is held by another holder (its live ``lease``). An Airflow
    task that raises it is retried (:func:`compaction_lease` raises it for ``if_busy`` ``fail``
    and ``wait``; the operator defers on ``wait``)."""

    def __init__(self, table: str, lease: Lease) -> None:
        self.table = table
        self.lease = lease
        super().__init__(
            f"{table} is being compacted by {lease.holder} (its lease runs until {_iso(lease.expires_millis)})"
        )


@contextmanager
def compaction_lease(
    file_io: FileIO,
    warehouse: str,
    table: str,
    *,
    holder: str,
    ttl: dt.timedelta | None = None,
    if_busy: IfBusy = "skip",
) -> Iterator[CompactionLease]:
    """Hold ``table``'s compaction lease for the block; released after it, however it ends.

    Held by another holder: ``skip`` raises :class:`AirflowSkipException` (that holder is
    compacting the table now); ``fail`` and ``wait`` raise :class:`LeaseBusy` at once (this
    never sleeps: a waiting caller defers and calls again later, see the module docs).
    """
    from airflow.sdk.exceptions import AirflowSkipException

    if if_busy not in IF_BUSY:
        raise ValueError(f"if_busy must be one of {IF_BUSY}, got {if_busy!r}")
    lease = CompactionLease(
        file_io,
        warehouse,
        table,
        holder=holder,
        ttl_millis=int((ttl or DEFAULT_LEASE_TTL).total_seconds() * 1000),
    )
    held = lease.acquire()
    if held is not None:
        busy = LeaseBusy(table, held)
        if if_busy == "skip":
            raise AirflowSkipException(str(busy))
        raise busy
    try:
        yield lease
    finally:
        try:
            lease.release()
        except OSError:
            log.warning(
                "Releasing the compaction lease of %s failed; it expires by itself", table, exc_info=True
            )


def take_leases(
    file_io: FileIO,
    warehouse: str,
    tables: Iterable[str],
    *,
    holder: str,
    ttl: dt.timedelta | None,
    held: ExitStack,
) -> dict[str, str]:
    """Take the compaction lease of each of ``tables`` for ``holder`` (released when ``held``
    closes); ``{table: other holder}`` of the tables another holder is compacting now."""
    ttl_millis = int((ttl or DEFAULT_LEASE_TTL).total_seconds() * 1000)
    busy: dict[str, str] = {}
    for name in sorted(set(tables)):
        lease = CompactionLease(file_io, warehouse, name, holder=holder, ttl_millis=ttl_millis)
        other = lease.acquire()
        if other is None:
            held.callback(lease.release)
        else:
            log.warning("%s is being compacted by %s: left out", name, other.holder)
            busy[name] = other.holder
    return busy


def _iso(millis: int) -> str:
    try:
        return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).isoformat()
    except (OverflowError, ValueError, OSError):
        return f"{millis} ms"
