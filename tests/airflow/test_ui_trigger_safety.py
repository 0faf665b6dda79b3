"""What a person gets from a DAG's trigger form as it opens, checked on every DAG of the DagBag (a
DAG added later is covered), and the scheduling pieces behind it, with the clock injected:

* every Param's default is valid for its own schema, and no optional text Param defaults to ""
  (the Airflow 3.3 form takes an empty text field of a plain ``string`` Param as missing and keeps
  its Trigger button disabled);
* the manual DAGs are created unpaused (their form shows no "Unpause on trigger" box); the
  scheduled ones run on :mod:`paimon_airflow.timetables` timetables without catchup, and every
  task of every DAG carries the guard that skips a scheduled run that started late;
* a destructive step's ``dry_run`` renders true in a manual run and in a backfill with the
  defaults, false in a scheduled run;
* the timetables: a DAG that ran on schedule gets its due run however late the scheduler is; one
  that never ran, or missed a cron time (paused), gets none until the next cron time.
"""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any

import pendulum
import pytest

from tests.airflow.conftest import DAGS_FOLDER

if str(DAGS_FOLDER) not in sys.path:
    sys.path.insert(0, str(DAGS_FOLDER))  # _paimon_common, as the DAG files import it


@pytest.fixture(scope="module")
def dagbag() -> Any:
    from airflow.dag_processing.dagbag import BundleDagBag

    bag = BundleDagBag(dag_folder=str(DAGS_FOLDER), bundle_path=DAGS_FOLDER)
    assert bag.import_errors == {}, bag.import_errors
    assert len(bag.dags) >= 14
    return bag


def test_every_param_default_is_valid_and_no_text_param_defaults_to_empty(dagbag: Any) -> None:
    from airflow.sdk.definitions.param import ParamsDict

    for dag in dagbag.dags.values():
        params: ParamsDict = dag.params
        for name in params:
            param = params.get_param(name)
            if type(param.value).__name__ == "ArgNotSet":
                continue  # required: the form asks for it
            param.resolve()  # raises if the default does not fit the schema
            types = param.schema.get("type")
            if param.value == "":
                assert isinstance(types, list) and "null" in types, f"{dag.dag_id}.{name}: '' default"


def test_manual_dags_unpaused_scheduled_ones_on_time_without_catchup(dagbag: Any) -> None:
    from _paimon_common import skip_overdue_scheduled_run
    from paimon_airflow.timetables import OnTimeCronDataIntervalTimetable, OnTimeCronTriggerTimetable

    manual = scheduled = 0
    for dag in dagbag.dags.values():
        if type(dag.timetable).__name__ == "NullTimetable":
            manual += 1
            assert dag.is_paused_upon_creation is False, dag.dag_id
        elif type(dag.timetable).__name__ != "AssetTriggeredTimetable":
            scheduled += 1
            assert isinstance(dag.timetable, OnTimeCronTriggerTimetable | OnTimeCronDataIntervalTimetable), (
                dag.dag_id,
                type(dag.timetable),
            )
            assert dag.catchup is False, dag.dag_id
        for t in dag.tasks:
            hook = (
                t.partial_kwargs.get("pre_execute") if hasattr(t, "partial_kwargs") else t._pre_execute_hook
            )
            assert hook is skip_overdue_scheduled_run, (dag.dag_id, t.task_id)
    assert manual >= 7 and scheduled >= 5


def _render(template: str, *, run_type: str, dry_run: bool) -> str:
    import jinja2
    from airflow.utils.types import DagRunType

    return jinja2.Template(template).render(
        params={"dry_run": dry_run}, dag_run=type("Run", (), {"run_type": DagRunType(run_type)})()
    )


def test_dry_run_template_is_on_for_people_off_for_the_schedule() -> None:
    from _paimon_common import DRY_RUN, dry_run_param

    assert dry_run_param().value is True
    assert _render(DRY_RUN, run_type="manual", dry_run=True) == "True"
    assert _render(DRY_RUN, run_type="backfill", dry_run=True) == "True"
    assert _render(DRY_RUN, run_type="manual", dry_run=False) == "False"
    assert _render(DRY_RUN, run_type="scheduled", dry_run=True) == "False"


def test_destructive_steps_take_the_dry_run_template(dagbag: Any) -> None:
    from _paimon_common import DRY_RUN

    expected = {
        ("paimon_expire_snapshots", "table.expire_snapshots"),
        ("paimon_remove_orphan_files", "table.remove_orphan_files"),
        ("paimon_tags", "table.expire_tags"),
        ("paimon_compaction", "table.compact"),
    }
    for dag_id, task_id in expected:
        dag = dagbag.dags[dag_id]
        assert dag.params.get_param("dry_run").value is True, dag_id
        task = dag.get_task(task_id)
        value = getattr(task, "is_dry_run", None) or getattr(task, "compact_dry_run", None)
        if value is None:  # a mapped operator keeps its arguments unexpanded
            kwargs = task.partial_kwargs
            value = kwargs.get("dry_run") or kwargs.get("is_dry_run") or kwargs.get("compact_dry_run")
        assert value == DRY_RUN, (dag_id, task_id, value)


def _run(run_type: str, *, run_after: dt.datetime, started: dt.datetime, clear_number: int = 0) -> Any:
    return type(
        "Run",
        (),
        {
            "run_type": run_type,
            "run_id": f"{run_type}__x",
            "run_after": run_after,
            "start_date": started,
            "clear_number": clear_number,
        },
    )()


def test_a_scheduled_run_that_started_late_skips_its_tasks() -> None:
    from airflow.sdk.exceptions import AirflowSkipException

    from _paimon_common import ON_TIME_GRACE, overdue_by, skip_overdue_scheduled_run

    due = dt.datetime(2026, 11, 28, 1, 30, tzinfo=dt.UTC)
    on_time = due + dt.timedelta(seconds=20)
    late = due + ON_TIME_GRACE + dt.timedelta(seconds=1)
    assert overdue_by(run_type="scheduled", clear_number=0, run_after=due, started=on_time) is None
    assert overdue_by(run_type="scheduled", clear_number=0, run_after=due, started=late) == late - due
    assert overdue_by(run_type="scheduled", clear_number=1, run_after=due, started=late) is None  # cleared
    for other in ("manual", "backfill", "asset_triggered"):
        assert overdue_by(run_type=other, clear_number=0, run_after=due, started=late) is None
    skip_overdue_scheduled_run({"dag_run": _run("scheduled", run_after=due, started=on_time)})
    skip_overdue_scheduled_run({"dag_run": _run("manual", run_after=due, started=late)})
    with pytest.raises(AirflowSkipException, match="released by an unpause"):
        skip_overdue_scheduled_run({"dag_run": _run("scheduled", run_after=due, started=late)})


# --- the timetables, with the clock injected --------------------------------------------------
def _when(text: str) -> pendulum.DateTime:
    value = pendulum.parse(text)
    assert isinstance(value, pendulum.DateTime)
    return value


def _start(info: Any) -> str:
    assert info is not None and info.data_interval is not None
    return str(info.data_interval.start.isoformat())


def _at(monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    """Every clock the test reads is ``when``: our timetables' and the built-in timetables' that
    they are compared with (read at the real time, these tests failed once the day changed)."""
    import airflow.timetables.interval
    import airflow.timetables.trigger

    import paimon_airflow.timetables as tt

    monkeypatch.setattr(tt, "clock", lambda: _when(when))
    for module in (airflow.timetables.interval, airflow.timetables.trigger):
        monkeypatch.setattr(module, "utcnow", lambda: _when(when))


def _restriction(*, catchup: bool = False, earliest: str | None = "2026-01-01T00:00:00+00:00") -> Any:
    from airflow.timetables.base import TimeRestriction

    return TimeRestriction(earliest=_when(earliest) if earliest else None, latest=None, catchup=catchup)


def _interval(start: str, end: str | None = None) -> Any:
    from airflow.timetables.base import DataInterval

    return DataInterval(_when(start), _when(end or start))


def test_trigger_timetable_releases_no_missed_cron_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.timetables.trigger import CronTriggerTimetable

    from paimon_airflow.timetables import OnTimeCronTriggerTimetable

    daily = OnTimeCronTriggerTimetable("30 1 * * *", timezone="UTC")
    _at(monkeypatch, "2026-11-28T09:00:00+00:00")
    # never ran (paused since it was deployed): Airflow's own would run 01:30 today at once
    builtin = CronTriggerTimetable("30 1 * * *", timezone="UTC").next_dagrun_info(
        last_automated_data_interval=None, restriction=_restriction()
    )
    assert builtin is not None and builtin.run_after.isoformat() == "2026-11-28T01:30:00+00:00"
    info = daily.next_dagrun_info(last_automated_data_interval=None, restriction=_restriction())
    assert info is not None and info.run_after.isoformat() == "2026-11-29T01:30:00+00:00"
    # ran on schedule until yesterday: today's 01:30 is due, however late the scheduler is
    on_schedule = _interval("2026-11-27T01:30:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=on_schedule, restriction=_restriction())
    assert info is not None and info.run_after.isoformat() == "2026-11-28T01:30:00+00:00"
    # last ran 3 days ago (paused since): the next cron time ahead, nothing released
    paused = _interval("2026-11-25T01:30:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=paused, restriction=_restriction())
    assert info is not None and info.run_after.isoformat() == "2026-11-29T01:30:00+00:00"
    # the run of today exists: tomorrow's
    done = _interval("2026-11-28T01:30:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=done, restriction=_restriction())
    assert info is not None and info.run_after.isoformat() == "2026-11-29T01:30:00+00:00"
    # exactly on a cron time: that one
    _at(monkeypatch, "2026-11-29T01:30:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=paused, restriction=_restriction())
    assert info is not None and info.run_after.isoformat() == "2026-11-29T01:30:00+00:00"
    # catchup: Airflow's own behaviour (every missed day from the last run)
    info = daily.next_dagrun_info(last_automated_data_interval=paused, restriction=_restriction(catchup=True))
    assert info is not None and info.run_after.isoformat() == "2026-11-26T01:30:00+00:00"
    # a start date ahead wins
    _at(monkeypatch, "2026-11-28T09:00:00+00:00")
    future = _restriction(earliest="2026-12-05T00:00:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=None, restriction=future)
    assert info is not None and info.run_after.isoformat() == "2026-12-05T01:30:00+00:00"


def test_data_interval_timetable_releases_no_missed_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.timetables.interval import CronDataIntervalTimetable

    from paimon_airflow.timetables import OnTimeCronDataIntervalTimetable

    daily = OnTimeCronDataIntervalTimetable("0 0 * * *", timezone="UTC")
    _at(monkeypatch, "2026-11-28T09:00:00+00:00")
    builtin = CronDataIntervalTimetable("0 0 * * *", timezone="UTC").next_dagrun_info(
        last_automated_data_interval=None, restriction=_restriction()
    )
    assert _start(builtin) == "2026-11-27T00:00:00+00:00"
    # never ran: the interval in progress, run when it ends
    info = daily.next_dagrun_info(last_automated_data_interval=None, restriction=_restriction())
    assert info is not None
    assert (_start(info), info.run_after.isoformat()) == (
        "2026-11-28T00:00:00+00:00",
        "2026-11-29T00:00:00+00:00",
    )
    # ran on schedule (last [26, 27)): the complete [27, 28) is due, however late the scheduler is
    on_schedule = _interval("2026-11-26T00:00:00+00:00", "2026-11-27T00:00:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=on_schedule, restriction=_restriction())
    assert _start(info) == "2026-11-27T00:00:00+00:00"
    # a backfill of days up to [27, 28): the next is [28, 29), run at its end
    backfilled = _interval("2026-11-27T00:00:00+00:00", "2026-11-28T00:00:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=backfilled, restriction=_restriction())
    assert _start(info) == "2026-11-28T00:00:00+00:00"
    # paused for days: no missed interval, the one in progress
    paused = _interval("2026-11-20T00:00:00+00:00", "2026-11-21T00:00:00+00:00")
    info = daily.next_dagrun_info(last_automated_data_interval=paused, restriction=_restriction())
    assert _start(info) == "2026-11-28T00:00:00+00:00"
    info = daily.next_dagrun_info(last_automated_data_interval=paused, restriction=_restriction(catchup=True))
    assert _start(info) == "2026-11-21T00:00:00+00:00"


def test_timetables_serialize_through_the_plugin() -> None:
    from airflow.serialization.decoders import decode_timetable
    from airflow.serialization.encoders import encode_timetable

    from paimon_airflow.timetables import OnTimeCronDataIntervalTimetable, OnTimeCronTriggerTimetable

    for tt in (
        OnTimeCronTriggerTimetable("0 * * * *", timezone="UTC"),
        OnTimeCronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    ):
        back = decode_timetable(encode_timetable(tt))
        assert type(back) is type(tt) and back.summary == tt.summary
