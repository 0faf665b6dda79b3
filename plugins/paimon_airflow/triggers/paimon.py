"""``PaimonTableSnapshotTrigger``: a Paimon table commit as an Airflow event (``AssetWatcher``).

Modelled on the Iceberg provider's ``IcebergTableSnapshotTrigger`` (a ``BaseEventTrigger`` whose
watermark lives in the asset state store), with what Paimon adds::

    from airflow.sdk import Asset, AssetWatcher, dag

    from paimon_airflow.triggers.paimon import PaimonTableSnapshotTrigger

    orders = Asset(
        "paimon://wh/db.orders",
        watchers=[
            AssetWatcher(
                name="orders_commits",
                trigger=PaimonTableSnapshotTrigger(table="db.orders", commit_kinds=["APPEND"]),
            )
        ],
    )

    @dag(schedule=[orders])
    def downstream(): ...

Events (``fire_on``):

* ``snapshot`` (default): a new snapshot, optionally only of given ``commit_kinds`` or of a
  given ``commit_user`` (and ``commit_identifier`` or later);
* ``partition``: a new snapshot that added the first files of a partition;
* ``health``: the table crossed a health budget (compaction debt, small-file ratio, health score;
  see :func:`paimon_core.table.health.table_health`); fires once per crossing;
* ``compaction``: the maintenance planner (the rules ``paimon_maintenance`` plans by, with the
  table's ``planner_settings``) plans a compaction now; fires once until none is due.

The payload carries ``table``, ``snapshot_id`` (the newest matching snapshot),
``previous_snapshot_id`` (the watermark before), ``latest_snapshot_id``, ``commit_kind``,
``commit_user``, ``commit_identifier``, ``time`` (ISO, UTC) and ``time_millis``, ``snapshot_ids``
(the matching ones, newest 100), ``changed_partitions`` (from the delta manifests of the newest
20 snapshots, ``None`` with ``with_partitions=False``), ``rolled_back``, and per mode
``new_partitions`` or ``health`` + ``violations``. A task that must not run twice for a commit
keys on ``snapshot_id``.

**Watermark.** The last snapshot id seen is kept in the asset state store (key ``snapshot_id``,
as the Iceberg trigger; ``over_budget`` too in health mode) and read back when the trigger starts,
so a triggerer restart does not re-fire old snapshots. ``last_seen_snapshot_id`` only seeds the
first start. It is written after the event is handed to the triggerer (a crash in between fires
that snapshot again rather than losing it). When one trigger serves several assets (triggers are
deduplicated by their arguments) the store refuses to pick one and no watermark is kept, as in the
Iceberg trigger. Used from a deferred sensor there is no store; the sensor passes its own.

**One poll for many tables.** Triggers with the same connection and ``poll_interval`` share one
polling loop in the triggerer (Airflow 3.3 ``shared_stream_key``): it reads only the latest
snapshot id of every table its subscribers watch (the ``LATEST`` hint, with a cached table
handle), and each trigger then examines its own table only when that id moved. Every blocking
``paimon_core`` call runs in a worker thread (``asyncio.to_thread``), never on the event loop.
``share_poll=False`` gives a trigger its own loop; :meth:`run` is that loop (``dag.test()`` and
deferred tasks use it too).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from paimon_airflow.hooks.paimon import PaimonHook
from paimon_airflow.triggers.watch import FireOn, WatchCriteria, WatchState, as_tuple, evaluate

if TYPE_CHECKING:
    from paimon_core import FileStoreTable

__all__ = ["OVER_BUDGET_KEY", "WATERMARK_KEY", "PaimonTableSnapshotTrigger"]

log = logging.getLogger(__name__)

CLASSPATH = "paimon_airflow.triggers.paimon.PaimonTableSnapshotTrigger"
#: Asset state store keys.
WATERMARK_KEY = "snapshot_id"
OVER_BUDGET_KEY = "over_budget"
# Raised by AssetStateStoreAccessors when the trigger is watched by more than one asset.
_MULTI_ASSET_ERROR = "concrete inlets and outlets"
_STREAM = "paimon-table-heads"

#: Tables each shared poll (by stream key) watches, with their subscriber counts. Filled by the
#: subscribers' ``filter_shared_stream``; read by ``open_shared_stream`` on every poll.
_WATCHED: dict[Hashable, Counter[str]] = {}


def _stream_key(paimon_conn_id: str, poll_interval: float) -> tuple[str, str, float]:
    return (_STREAM, paimon_conn_id, float(poll_interval))


class _Tables:
    """Cached table handles of one connection; blocking, so call it in a worker thread."""

    def __init__(self, paimon_conn_id: str) -> None:
        self.paimon_conn_id = paimon_conn_id
        self._hook: PaimonHook | None = None
        self._tables: dict[str, FileStoreTable] = {}

    def _catalog_hook(self) -> PaimonHook:
        if self._hook is None:
            self._hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
        return self._hook

    def table(self, name: str, *, fresh: bool = False) -> FileStoreTable | None:
        """The table, or ``None`` while it does not exist (a watcher may outlive or precede it)."""
        from paimon_core import DatabaseNotFoundError, TableNotFoundError

        if fresh or name not in self._tables:
            try:
                self._tables[name] = self._catalog_hook().get_table(name)
            except (TableNotFoundError, DatabaseNotFoundError):
                self._tables.pop(name, None)
                log.debug("%s does not exist yet; waiting", name)
                return None
        return self._tables[name]

    def head(self, name: str) -> int | None:
        """The latest snapshot id of ``name`` (``None``: no table or no snapshot yet)."""
        table = self.table(name)
        if table is None:
            return None
        try:
            return table.snapshot_manager.latest_snapshot_id()
        except FileNotFoundError:  # dropped since cached
            self._tables.pop(name, None)
            return None

    def heads(self, names: Sequence[str]) -> dict[str, int | None]:
        """Latest snapshot ids of many tables (8 at a time)."""
        if len(names) <= 1:
            return {n: self.head(n) for n in names}
        with ThreadPoolExecutor(max_workers=min(8, len(names)), thread_name_prefix="paimon-heads") as pool:
            return dict(zip(names, pool.map(self.head, names), strict=True))


class PaimonTableSnapshotTrigger(BaseEventTrigger):
    """Fire an event when a Paimon table gets a new snapshot, a new partition, or over a health budget.

    :param table: ``db.table``.
    :param paimon_conn_id: the ``paimon`` connection of the warehouse.
    :param poll_interval: seconds between polls of the latest snapshot id.
    :param last_seen_snapshot_id: snapshot already reported; seeds the watermark when the asset
        state store has none. Unset: the current head is the first event.
    :param fire_on: ``snapshot``, ``partition`` or ``health`` (see the module docs).
    :param commit_kinds: only snapshots of these kinds (``APPEND``, ``COMPACT``, ``OVERWRITE``,
        ``ANALYZE``; a list or a comma-separated string).
    :param commit_user: only snapshots of this commit user.
    :param commit_identifier: with ``commit_user``: only its commits with this identifier or later.
    :param max_compaction_debt: health budget: max sorted runs per bucket / stop trigger.
    :param max_small_file_ratio: health budget: share of small files.
    :param min_health_score: health budget: lowest acceptable score (0-100).
    :param with_partitions: list the changed partitions in the event (reads delta manifests).
    :param share_poll: share one polling loop with the triggers of the same connection and interval.
    :param planner_settings: ``compaction`` mode: the table's maintenance settings (the registry's
        ``TableSettings.to_dict()``; ``MaintenanceSettings`` fields), JSON values.
    """

    def __init__(
        self,
        *,
        table: str,
        paimon_conn_id: str = PaimonHook.default_conn_name,
        poll_interval: float = 60.0,
        last_seen_snapshot_id: int | None = None,
        fire_on: FireOn = "snapshot",
        commit_kinds: Sequence[str] | str | None = None,
        commit_user: str | None = None,
        commit_identifier: int | None = None,
        max_compaction_debt: float | None = None,
        max_small_file_ratio: float | None = None,
        min_health_score: int | None = None,
        with_partitions: bool = True,
        share_poll: bool = True,
        planner_settings: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if "." not in table:
            raise ValueError(f"Expected a table identifier db.table, got: {table!r}")
        if poll_interval <= 0:
            raise ValueError(f"poll_interval must be positive, got {poll_interval!r}")
        self.table = table
        self.paimon_conn_id = paimon_conn_id
        self.poll_interval = float(poll_interval)
        self.last_seen_snapshot_id = None if last_seen_snapshot_id is None else int(last_seen_snapshot_id)
        self.criteria = WatchCriteria(
            fire_on=fire_on,
            commit_kinds=as_tuple(commit_kinds),
            commit_user=commit_user,
            commit_identifier=None if commit_identifier is None else int(commit_identifier),
            max_compaction_debt=max_compaction_debt,
            max_small_file_ratio=max_small_file_ratio,
            min_health_score=min_health_score,
            with_partitions=with_partitions,
            planner_settings=tuple(sorted((planner_settings or {}).items())),
        )
        self.share_poll = share_poll
        self._tables: _Tables | None = None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Classpath and keyword arguments (JSON values only) to rebuild this trigger."""
        c = self.criteria
        return (
            CLASSPATH,
            {
                "table": self.table,
                "paimon_conn_id": self.paimon_conn_id,
                "poll_interval": self.poll_interval,
                "last_seen_snapshot_id": self.last_seen_snapshot_id,
                "fire_on": c.fire_on,
                "commit_kinds": list(c.commit_kinds) if c.commit_kinds is not None else None,
                "commit_user": c.commit_user,
                "commit_identifier": c.commit_identifier,
                "max_compaction_debt": c.max_compaction_debt,
                "max_small_file_ratio": c.max_small_file_ratio,
                "min_health_score": c.min_health_score,
                "with_partitions": c.with_partitions,
                "share_poll": self.share_poll,
                "planner_settings": dict(c.planner_settings),
            },
        )

    # --- shared polling (Airflow 3.3 shared streams) -------------------------------------
    def shared_stream_key(self) -> Hashable | None:
        """Triggers of one connection and poll interval share one loop (``None`` with ``share_poll=False``)."""
        if not self.share_poll:
            return None
        return _stream_key(self.paimon_conn_id, self.poll_interval)

    @classmethod
    async def open_shared_stream(cls, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
        """Poll the latest snapshot id of every watched table; yield ``{"heads": {table: id}}``.

        Uses only the key's fields (connection, interval) from ``kwargs``; the tables come from the
        subscribers' registrations. Storage errors skip a cycle (they may pass); a missing
        connection raises, failing the group's triggers visibly.
        """
        conn_id = str(kwargs.get("paimon_conn_id") or PaimonHook.default_conn_name)
        interval = float(kwargs.get("poll_interval") or 60.0)
        key = _stream_key(conn_id, interval)
        tables = _Tables(conn_id)
        while True:
            names = sorted(_WATCHED.get(key, ()))
            if not names:  # subscribers register on their first step; do not poll nothing
                await asyncio.sleep(min(interval, 0.05))
                continue
            try:
                heads = await asyncio.to_thread(tables.heads, names)
            except OSError:
                log.warning(
                    "Polling %d Paimon table(s) of %s failed; retrying in %ss",
                    len(names),
                    conn_id,
                    interval,
                    exc_info=True,
                )
            else:
                yield {"heads": heads}
            await asyncio.sleep(interval)

    async def filter_shared_stream(self, shared_stream: AsyncIterator[Any]) -> AsyncIterator[TriggerEvent]:
        """Register this trigger's table with the shared poll, then fire on its heads."""
        key = _stream_key(self.paimon_conn_id, self.poll_interval)
        watched = _WATCHED.setdefault(key, Counter())
        watched[self.table] += 1
        try:
            async for event in self._events(shared_stream):
                yield event
        finally:
            watched[self.table] -= 1
            if watched[self.table] <= 0:
                del watched[self.table]
            if not watched and _WATCHED.get(key) is watched:
                del _WATCHED[key]

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """This trigger's own polling loop (no sharing): ``dag.test()``, deferred tasks, ``share_poll=False``."""
        async for event in self._events(self._own_heads()):
            yield event

    async def _own_heads(self) -> AsyncIterator[dict[str, Any]]:
        tables = self._table_cache()
        while True:
            try:
                head = await asyncio.to_thread(tables.head, self.table)
            except OSError:
                self.log.warning(
                    "Polling %s failed; retrying in %ss", self.table, self.poll_interval, exc_info=True
                )
            else:
                yield {"heads": {self.table: head}}
            await asyncio.sleep(self.poll_interval)

    # --- per-trigger logic ---------------------------------------------------------------------
    def _table_cache(self) -> _Tables:
        if self._tables is None:
            self._tables = _Tables(self.paimon_conn_id)
        return self._tables

    async def _events(self, heads: AsyncIterator[dict[str, Any]]) -> AsyncIterator[TriggerEvent]:
        state, store = await self._load_state()
        async for raw in heads:
            head = raw.get("heads", {}).get(self.table)
            if head is None or head == state.last_seen_snapshot_id:
                continue
            try:
                payload, new_state = await asyncio.to_thread(self._evaluate, state, head)
            except Exception:  # noqa: BLE001 - a watcher must outlive a bad poll (expired snapshot, I/O)
                self.log.warning(
                    "Examining %s at snapshot %s failed; retrying next poll", self.table, head, exc_info=True
                )
                continue
            state = new_state
            self.last_seen_snapshot_id = state.last_seen_snapshot_id
            if payload is not None:
                self.log.info(
                    "%s: snapshot %s fires (%s)", self.table, payload["snapshot_id"], payload["reason"]
                )
                yield TriggerEvent(payload)
            # Persisted once the triggerer took the event (it resumes us right after queueing it):
            # a crash in between fires this snapshot again rather than losing it.
            if store is not None:
                await asyncio.to_thread(store.set, WATERMARK_KEY, state.last_seen_snapshot_id)
                if state.over_budget is not None:
                    await asyncio.to_thread(store.set, OVER_BUDGET_KEY, state.over_budget)

    def _evaluate(self, state: WatchState, head: int) -> tuple[dict[str, Any] | None, WatchState]:
        table = self._table_cache().table(self.table, fresh=True)  # re-read: the schema may change
        if table is None:
            return None, state
        return evaluate(table, self.table, state, head, self.criteria)

    async def _load_state(self) -> tuple[WatchState, Any]:
        """The watermark from the asset state store (else the constructor's), and the store to update.

        The store's calls are synchronous SDK calls; they run in a thread, which both the
        triggerer's comms and ``dag.test()``'s in-process comms accept.
        """
        state = WatchState(last_seen_snapshot_id=self.last_seen_snapshot_id)
        store = getattr(self, "asset_state_store", None)
        if store is None:
            return state, None
        try:
            stored = await asyncio.to_thread(store.get, WATERMARK_KEY)
            over = await asyncio.to_thread(store.get, OVER_BUDGET_KEY)
        except ValueError as err:
            if _MULTI_ASSET_ERROR not in str(err):
                raise
            self.log.warning(
                "%s is watched by more than one asset; not persisting a snapshot watermark, "
                "so a triggerer restart may re-emit the current head.",
                self.table,
            )
            return state, None
        if stored is not None:
            state = replace(state, last_seen_snapshot_id=int(stored))
            self.last_seen_snapshot_id = state.last_seen_snapshot_id
        if isinstance(over, bool):
            state = replace(state, over_budget=over)
        return state, store
