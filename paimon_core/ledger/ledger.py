"""The ledger table of one warehouse: ``paimon_maintenance.ledger`` (see :mod:`paimon_core.ledger.record`).

An ordinary Paimon append table written through this project's own commit path
(``table.new_batch_write_builder()``), so Spark ``format("paimon")``, pypaimon and pypaimon-rust
read it like any table. :meth:`Ledger.append` writes many records in one commit; commits of many
processes at once all land (an append never conflicts; a lost race for a snapshot id is retried
by the committer, a failed commit once more here with bounded backoff, never twice: a retry first
checks whether the earlier attempt landed after all).

The ledger's own writes never record ledger rows (they do not go through the table's maintenance
calls), and its writers' post-commit maintenance applies its retention options
(:data:`~paimon_core.ledger.record.LEDGER_OPTIONS`).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import CommitStateUnknownError, PaimonError
from paimon_core.ledger.record import (
    LEDGER_DATABASE,
    LEDGER_OPTIONS,
    LEDGER_SCHEMA,
    LEDGER_TABLE,
    LedgerRecord,
    records_to_arrow,
    utc_day,
)
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER as _IDENT

if TYPE_CHECKING:
    from paimon_core.catalog.filesystem_catalog import FileSystemCatalog
    from paimon_core.table.commit_message import CommitMessage
    from paimon_core.table.table import FileStoreTable

__all__ = [
    "EXISTS_CACHE_SECONDS",
    "Ledger",
    "LedgerWriteError",
    "cached_existence",
    "forget_cached_existence",
]

logger = logging.getLogger(__name__)

#: How long one process trusts an existence check of a warehouse's ledger (either answer).
EXISTS_CACHE_SECONDS = 60.0
#: Attempts of one :meth:`Ledger.append` (each a full write and commit; the committer retries
#: lost snapshot races inside one attempt) and the backoff between them.
APPEND_ATTEMPTS = 3
BACKOFF_SECONDS = (0.2, 1.0)

#: How often one process applies the ledger's partition retention after its writes (its writers
#: are short-lived: Paimon's own ``partition.expiration-check-interval`` would never come due).
PARTITION_CHECK_SECONDS = 3600.0

_exists_cache: dict[str, tuple[bool, float]] = {}
_partition_checks: dict[str, float] = {}
_cache_lock = threading.Lock()


class LedgerWriteError(PaimonError):
    """Records could not be written to the ledger (after the retries)."""


def cached_existence(warehouse: str) -> bool | None:
    """The cached answer of :meth:`Ledger.exists` for ``warehouse`` (None: not known or stale)."""
    with _cache_lock:
        hit = _exists_cache.get(warehouse)
    if hit is None or time.monotonic() - hit[1] >= EXISTS_CACHE_SECONDS:
        return None
    return hit[0]


def forget_cached_existence(warehouse: str | None = None) -> None:
    """Drop the cached existence answers and retention checks (of one warehouse, or all)."""
    with _cache_lock:
        if warehouse is None:
            _exists_cache.clear()
            _partition_checks.clear()
        else:
            _exists_cache.pop(warehouse, None)
            _partition_checks.pop(warehouse, None)


class Ledger:
    """The maintenance ledger of ``catalog``'s warehouse."""

    def __init__(
        self,
        catalog: FileSystemCatalog,
        *,
        attempts: int = APPEND_ATTEMPTS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.catalog = catalog
        self.attempts = max(1, attempts)
        self.sleep = sleep
        self._table: FileStoreTable | None = None

    @property
    def warehouse(self) -> str:
        return self.catalog.warehouse

    def __repr__(self) -> str:
        return f"Ledger({self.warehouse!r})"

    # --- existence -----------------------------------------------------------------------
    def exists(self, *, refresh: bool = False) -> bool:
        """Whether the warehouse has a ledger (answer cached :data:`EXISTS_CACHE_SECONDS` per process)."""
        if not refresh:
            known = cached_existence(self.warehouse)
            if known is not None:
                return known
        found = self.catalog.table_exists(LEDGER_TABLE)
        with _cache_lock:
            _exists_cache[self.warehouse] = (found, time.monotonic())
        return found

    def ensure(self) -> FileStoreTable:
        """The ledger table, created (database and table) if missing. Idempotent and safe when
        many processes call it at once: the table's first schema file is created exclusively, so
        one creation wins and the others load it."""
        self.catalog.create_database(LEDGER_DATABASE, ignore_if_exists=True)
        table = self.catalog.create_table(
            LEDGER_TABLE,
            LEDGER_SCHEMA,
            partition_keys=["dt"],
            options=LEDGER_OPTIONS,
            comment="Maintenance ledger: one row per maintenance action (paimon-py)",
            ignore_if_exists=True,
        )
        missing = [f.name for f in LEDGER_SCHEMA if f.name not in {c.name for c in table.schema.fields}]
        if missing:
            raise LedgerWriteError(
                f"{LEDGER_TABLE} in {self.warehouse} is not a ledger table: columns {missing} are missing",
                table=LEDGER_TABLE,
            )
        with _cache_lock:
            _exists_cache[self.warehouse] = (True, time.monotonic())
        self._table = table
        return table

    def table(self) -> FileStoreTable:
        """The ledger table (TableNotFoundError when the warehouse has none)."""
        if self._table is None:
            self._table = self.catalog.get_table(LEDGER_TABLE)
        return self._table

    # --- writing -------------------------------------------------------------------------
    def append(self, records: Sequence[LedgerRecord]) -> None:
        """Write ``records`` in ONE commit. A failed attempt is retried (at most ``attempts``,
        with backoff); an attempt whose commit landed after all is not repeated. Raises
        :class:`LedgerWriteError` when every attempt failed."""
        if not records:
            return
        try:
            table = self.table()
            data = records_to_arrow(records)
        except (PaimonError, OSError, pa.ArrowException) as e:
            raise LedgerWriteError(
                f"Cannot write {len(records)} record(s) to the ledger of {self.warehouse}: {type(e).__name__}: {e}"
            ) from e
        maybe_landed: list[str] = []  # commit users of attempts that may have published
        last: BaseException | None = None
        for attempt in range(1, self.attempts + 1):
            try:
                if any(table.new_file_store_commit(u).is_committed(_IDENT) for u in maybe_landed):
                    logger.info("Ledger write of %d record(s) landed on an earlier attempt", len(records))
                    return
                self._commit_once(table, data, maybe_landed)
                _expire_partitions_if_due(table, self.warehouse)
                return
            except Exception as e:  # noqa: BLE001 - retried, then reported as LedgerWriteError
                last = e
                logger.warning(
                    "Ledger write of %d record(s) to %s failed (attempt %d of %d): %s: %s",
                    len(records),
                    self.warehouse,
                    attempt,
                    self.attempts,
                    type(e).__name__,
                    e,
                )
                if attempt < self.attempts:
                    low, high = BACKOFF_SECONDS
                    self.sleep(random.uniform(low, high) * attempt)
                    self._table = None  # reload: the schema may have changed
                    try:
                        table = self.table()
                    except Exception as reload_error:  # noqa: BLE001 - the next attempt fails and reports
                        last = reload_error
        raise LedgerWriteError(
            f"Cannot write {len(records)} record(s) to the ledger of {self.warehouse} after "
            f"{self.attempts} attempt(s): {type(last).__name__}: {last}"
        ) from last

    @staticmethod
    def _commit_once(table: FileStoreTable, data: pa.Table, maybe_landed: list[str]) -> None:
        builder = table.new_batch_write_builder()  # a fresh commit user: no history walk
        write = builder.new_write()
        messages: list[CommitMessage]
        try:
            write.write_arrow(data)
            messages = list(write.prepare_commit())
        except BaseException:
            write.abort()
            raise
        commit = builder.new_commit()
        try:
            commit.commit(messages)
        except CommitStateUnknownError:
            maybe_landed.append(builder.commit_user)  # files kept; the next attempt checks
            raise
        except BaseException:
            if not commit.abort_unless_landed(messages):
                maybe_landed.append(builder.commit_user)
            raise

    # --- reading -------------------------------------------------------------------------
    def read(
        self,
        *,
        table: str | None = None,
        since_millis: int | None = None,
        actions: Sequence[str] | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """Ledger rows (of ``table``, started at or after ``since_millis``, of ``actions``),
        oldest first. ``since_millis`` prunes the ``dt`` partitions before its UTC day.
        ``columns``: only these (plus what the filters and the order need; e.g. leave out the
        wide ``details``)."""
        t = self.table()
        rb = t.new_read_builder()
        if columns is not None:
            needed = {"start_time", "record_id", "table_name", "action"}
            rb = rb.with_projection([c for c in t.arrow_schema.names if c in needed or c in set(columns)])
        pb = rb.new_predicate_builder()
        preds = []
        if since_millis is not None:
            preds.append(pb.greater_or_equal("dt", utc_day(since_millis)))
        if table is not None:
            preds.append(pb.equal("table_name", table))
        if actions is not None:
            preds.append(pb.is_in("action", list(actions)))
        if preds:
            rb = rb.with_filter(pb.and_(*preds) if len(preds) > 1 else preds[0])
        out = rb.new_read().to_arrow(rb.new_scan().plan().splits)
        # the readers' filters may keep whole files: apply the exact conditions
        if since_millis is not None:
            start = pc.cast(out.column("start_time"), pa.int64())
            out = out.filter(pc.greater_equal(start, since_millis))
        if table is not None:
            out = out.filter(pc.equal(out.column("table_name"), table))
        if actions is not None:
            out = out.filter(pc.is_in(out.column("action"), pa.array(list(actions), pa.string())))
        if out.num_rows:
            out = out.sort_by([("start_time", "ascending"), ("record_id", "ascending")])
        return out

    def record_ids(self, days: Sequence[str]) -> set[str]:
        """The record ids already in the given ``dt`` partitions."""
        if not days:
            return set()
        t = self.table()
        rb = t.new_read_builder()
        pb = rb.new_predicate_builder()
        rb = rb.with_filter(pb.is_in("dt", sorted(set(days)))).with_projection(["record_id", "dt"])
        out = rb.new_read().to_arrow(rb.new_scan().plan().splits)
        return set(out.column("record_id").to_pylist())


def _expire_partitions_if_due(table: FileStoreTable, warehouse: str) -> None:
    """Drop the ledger's partitions past ``partition.expiration-time`` (its own retention), at most
    once per :data:`PARTITION_CHECK_SECONDS` per process; a failure is logged (retried next time)."""
    now = time.monotonic()
    with _cache_lock:
        last = _partition_checks.get(warehouse)
        if last is not None and now - last < PARTITION_CHECK_SECONDS:
            return
        _partition_checks[warehouse] = now
    from paimon_core.operation.partition_expire import PartitionExpire

    try:
        expire = PartitionExpire.from_options(table.store)
        if expire is not None:
            dropped = expire.expire()
            if dropped.expired_partitions:
                logger.info(
                    "Ledger of %s: dropped %d old partition(s)", warehouse, len(dropped.expired_partitions)
                )
    except Exception as e:  # noqa: BLE001 - retention never fails a ledger write
        logger.warning("Ledger of %s: partition retention failed: %s: %s", warehouse, type(e).__name__, e)
