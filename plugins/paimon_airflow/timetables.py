"""Cron timetables that never release a run whose time passed while the DAG was not on schedule.

Airflow's ``catchup=False`` still schedules the *latest* missed run: a DAG paused since 01:30
and unpaused at 09:00 (for example by the trigger form's "Unpause on trigger" box, ticked by
default) at once gets a scheduled run for 01:30, besides the run the person triggered. With
these timetables (``catchup=False``) the next run after such a gap is the next cron time
still ahead, so unpausing starts nothing by itself:

* the DAG ran on schedule (its last automated run is the cron time before the one now due):
  the due run is created as usual, however late the scheduler gets to it;
* otherwise (never ran, or at least one cron time passed without a run: paused, or the
  scheduler down): the next run is the next cron time after now (for data intervals: the
  interval in progress, run when it ends).

A run that is created late anyway (the DAG paused over exactly one cron time, or the scheduler
down) is skipped by the DAGs' own guard (``dags/_paimon_common.py``). With ``catchup=True`` they
behave exactly as their Airflow parents. Missed intervals are made up deliberately, with a
backfill. Registered by :class:`paimon_airflow.plugin.PaimonPlugin` (the scheduler deserializes
them by class path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from airflow.sdk import timezone
from airflow.timetables.base import DagRunInfo
from airflow.timetables.interval import CronDataIntervalTimetable
from airflow.timetables.trigger import CronTriggerTimetable

if TYPE_CHECKING:
    from airflow.timetables.base import DataInterval, TimeRestriction
    from pendulum import DateTime

__all__ = ["OnTimeCronDataIntervalTimetable", "OnTimeCronTriggerTimetable"]

#: The clock (tests replace it).
clock: Callable[[], DateTime] = lambda: timezone.coerce_datetime(timezone.utcnow())  # noqa: E731


class _PlainDescription:
    """The description the UI shows: the cron expression and what sets these timetables apart.
    (Airflow's own reads ``cron_descriptor``'s locale files to word the expression; a DAG file
    does no I/O at parse.)"""

    _building = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._building = True
        try:
            super().__init__(*args, **kwargs)
        finally:
            self._building = False
        zone = getattr(self._timezone, "name", self._timezone)  # type: ignore[attr-defined]
        self.description = f"cron {self._expression} ({zone}); a missed time is not run late"  # type: ignore[attr-defined]

    @property
    def expression(self) -> str:
        """The cron expression (as the SDK's cron timetables name it)."""
        return str(self._expression)  # type: ignore[attr-defined]

    def _describe_with_dom_dow_fix(self, expression: str) -> str:
        if self._building:
            return ""
        return str(super()._describe_with_dom_dow_fix(expression))  # type: ignore[misc]


class OnTimeCronTriggerTimetable(_PlainDescription, CronTriggerTimetable):
    """:class:`CronTriggerTimetable` (a run at each cron time) that, without catchup, never
    schedules a cron time that passed while the DAG was not running on schedule."""

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        if restriction.catchup:
            return super().next_dagrun_info(
                last_automated_data_interval=last_automated_data_interval, restriction=restriction
            )
        now = clock()
        start = self._align_to_next(now)  # the next cron time (now itself when on one)
        if last_automated_data_interval is not None:
            natural = self._get_next(last_automated_data_interval.end)
            if natural >= self._align_to_prev(now):  # on schedule: the one due now, or one ahead
                start = natural
        if restriction.earliest is not None:
            start = max(start, self._align_to_next(restriction.earliest))
        if restriction.latest is not None and restriction.latest < start:
            return None
        return DagRunInfo.interval(timezone.coerce_datetime(start - self._interval), start)


class OnTimeCronDataIntervalTimetable(_PlainDescription, CronDataIntervalTimetable):
    """:class:`CronDataIntervalTimetable` (a run at the end of each interval) that, without
    catchup, never schedules an interval whose end passed while the DAG was not on schedule."""

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        if restriction.catchup:
            return super().next_dagrun_info(
                last_automated_data_interval=last_automated_data_interval, restriction=restriction
            )
        now = clock()
        current: DateTime = self._align_to_prev(now)  # start of the interval in progress
        start = current
        if last_automated_data_interval is not None:
            natural = self._align_to_prev(last_automated_data_interval.end)
            if natural >= self._get_prev(current):  # on schedule: the latest complete one, or later
                start = natural
            if start <= last_automated_data_interval.start:  # a coarser schedule realigned it
                start = self._get_next(start)
        if restriction.earliest is not None:
            start = max(start, self._align_to_next(restriction.earliest))
        if restriction.latest is not None and start > restriction.latest:
            return None
        return DagRunInfo.interval(start=start, end=self._get_next(start))
