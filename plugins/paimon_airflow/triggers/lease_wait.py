"""``LeaseWaitTrigger``: wake a compaction task that waits for a table's compaction lease.

Airflow's :class:`~airflow.providers.standard.triggers.temporal.DateTimeTrigger` (it fires at
``moment``, sleeping in the triggerer, not in a worker slot), which also carries when the task
first found the lease busy (``waiting_since_millis``) in its kwargs and in its event: the task
gives up once its ``lease_wait`` has passed since then. The event carries it because ``dag.test()``
resumes a deferred task with the event alone (the triggerer keeps the deferral's ``kwargs`` too).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

from airflow.providers.standard.triggers.temporal import DateTimeTrigger
from airflow.triggers.base import TriggerEvent

__all__ = ["LeaseWaitTrigger"]


class LeaseWaitTrigger(DateTimeTrigger):
    """Fire at ``moment`` with ``{"moment": iso, "waiting_since_millis": ...}``.

    :param moment: when to try the lease again (tz-aware).
    :param waiting_since_millis: when the task first found the lease busy (epoch millis).
    """

    def __init__(self, moment: dt.datetime, *, waiting_since_millis: int) -> None:
        super().__init__(moment=moment)
        self.waiting_since_millis = int(waiting_since_millis)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {"moment": self.moment, "waiting_since_millis": self.waiting_since_millis},
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        async for _event in super().run():
            yield TriggerEvent(
                {"moment": self.moment.isoformat(), "waiting_since_millis": self.waiting_since_millis}
            )
            return
