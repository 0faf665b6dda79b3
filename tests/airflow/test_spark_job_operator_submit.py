"""PaimonSparkJobOperator's Spark glue (issue 26): the provider's public API only, a missing Spark
connection is a clear terminal error, the job's result comes from its result file (never the
driver's stdout, so cluster deploy mode works), and a compaction waiting for a table's lease
defers instead of sleeping in its worker slot.

spark-submit here is a stand-in on ``PATH`` (no JVM): the provider's real ``SparkSubmitHook``
runs it, it checks the command line the hook built and runs the driver (``spark_jobs/__main__.py``)
with its stdout thrown away, as on a cluster, after printing a decoy result line of its own. The
real spark-submit (local master) runs in test_spark_job_operator.py.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_core import FileSystemCatalog
from tests.airflow.context import render_and_execute, task_context
from tests.airflow.tables import table_with_snapshots
from tests.airflow.test_openlineage import _serialize  # a DAG built here, written to the metadata DB

RESULTS = "_airflow/results"
LEASE = "_airflow/compaction-leases/db.t.json"

#: spark-submit stand-in: checks the hook's command line, runs the driver with its stdout dropped.
_FAKE_SPARK_SUBMIT = """#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
with open(os.environ["FAKE_SUBMIT_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
app = next(i for i, a in enumerate(args) if a.endswith("__main__.py"))
print('{{"job": "decoy", "status": "ok", "from": "stdout"}}', flush=True)  # never the result
rc = subprocess.call([sys.executable, args[app], *args[app + 1:]], stdout=subprocess.DEVNULL)
sys.exit(rc)
"""


@pytest.fixture
def fake_spark_submit(tmp_path: Path) -> dict[str, Any]:
    """``env_vars`` that put the stand-in first on the job's PATH, and its log of command lines."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    script = bin_dir / "spark-submit"
    script.write_text(_FAKE_SPARK_SUBMIT.format(python=sys.executable))
    script.chmod(0o755)
    log = tmp_path / "submits.jsonl"
    log.touch()
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    return {"env_vars": {**env, "FAKE_SUBMIT_LOG": str(log)}, "log": log}


def _submits(fake: dict[str, Any]) -> list[list[str]]:
    return [json.loads(line) for line in fake["log"].read_text().splitlines()]


def _result_files(wh: str) -> list[Path]:
    return sorted((Path(wh) / RESULTS).glob("*")) if (Path(wh) / RESULTS).exists() else []


def test_the_result_comes_from_the_result_file_not_stdout(
    paimon_warehouse: str, fake_spark_submit: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    table_with_snapshots(paimon_warehouse, n=4)
    # cluster deploy mode on YARN: the driver runs on the cluster, its stdout never comes back
    monkeypatch.setenv(
        "AIRFLOW_CONN_SPARK_YARN",
        json.dumps({"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}),
    )
    op = PaimonSparkJobOperator(
        task_id="expire",
        job="expire_snapshots",
        table="db.t",
        job_args=["--retain-max", "2", "--retain-min", "1"],
        use_spark_submit=True,
        spark_conn_id="spark_yarn",
        **{k: v for k, v in fake_spark_submit.items() if k == "env_vars"},
    )
    out = render_and_execute(op, task_context(dag_id="d", run_id="r1", task_id="expire"))
    assert out["status"] == "ok" and out["job"] == "expire_snapshots", out  # not the decoy line
    assert out["expired_snapshot_ids"] == [1, 2]
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.earliest_snapshot_id() == 3
    [cmd] = _submits(fake_spark_submit)
    assert cmd[cmd.index("--master") + 1] == "yarn" and cmd[cmd.index("--deploy-mode") + 1] == "cluster"
    result_file = cmd[cmd.index("--result-file") + 1]
    assert result_file.startswith(os.path.join(paimon_warehouse, RESULTS) + "/")
    assert "d.r1.expire.-1.1." in os.path.basename(result_file)
    assert _result_files(paimon_warehouse) == []  # read, then deleted


def test_a_job_error_comes_from_the_result_file(paimon_warehouse: str, fake_spark_submit: dict[str, Any]) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    op = PaimonSparkJobOperator(
        task_id="x",
        job="expire_snapshots",
        table="db.missing",
        use_spark_submit=True,
        env_vars=fake_spark_submit["env_vars"],
    )
    with pytest.raises(AirflowFailException, match=r"exit 3\): TableNotFoundError"):  # terminal: no retry
        render_and_execute(op, task_context())
    assert len(_submits(fake_spark_submit)) == 1 and _result_files(paimon_warehouse) == []


def test_no_result_file_is_a_retried_error_even_with_a_stdout_line(
    paimon_warehouse: str, fake_spark_submit: dict[str, Any]
) -> None:
    """A driver that wrote no result (killed, lost) fails the try (retried); the decoy line that
    spark-submit printed is not taken for the result."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    from paimon_airflow.operators.spark_job import PaimonSparkJobOperator

    script = Path(fake_spark_submit["env_vars"]["PATH"].split(os.pathsep)[0]) / "spark-submit"
    script.write_text(
        f"#!{sys.executable}\nprint('{{\"job\": \"expire_snapshots\", \"status\": \"ok\"}}')\n"
    )
    op = PaimonSparkJobOperator(
        task_id="x", job="expire_snapshots", table="db.t", use_spark_submit=True,
        env_vars=fake_spark_submit["env_vars"],
    )  # fmt: skip
    with pytest.raises(AirflowException, match="wrote no result to .*_airflow/results/") as e:
        render_and_execute(op, task_context())
    assert not isinstance(e.value, AirflowFailException)


@pytest.mark.parametrize("conn_id", ["spark_default", "spark_prod"])
def test_a_missing_spark_connection_is_a_terminal_error(
    conn_id: str, paimon_warehouse: str, fake_spark_submit: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT", raising=False)
    table_with_snapshots(paimon_warehouse, n=6)
    op = PaimonCompactOperator(
        task_id="compact", table="db.t", compact_strategy="full", use_spark_submit=True,
        spark_conn_id=conn_id, env_vars=fake_spark_submit["env_vars"], retries=3,
    )  # fmt: skip
    env_name = "AIRFLOW_CONN_" + conn_id.upper()
    with pytest.raises(AirflowFailException, match=f"Spark connection '{conn_id}' does not exist") as e:
        render_and_execute(op, task_context())
    message = str(e.value)
    assert f"{env_name}='{{\"conn_type\": \"spark\", \"host\": \"local[*]\"}}'" in message, message
    assert f"airflow connections add {conn_id} --conn-type spark" in message
    assert _submits(fake_spark_submit) == []  # nothing started: no local run, no yarn
    table = FileSystemCatalog(paimon_warehouse).get_table("db.t")
    assert table.snapshot_manager.latest_snapshot_id() == 6
    assert not (Path(paimon_warehouse) / LEASE).exists()  # the lease was released


def test_only_the_hooks_public_api() -> None:
    """The operator module reaches no private member of the provider's hook (``hook._...``) and
    subclasses nothing of it."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from paimon_airflow.operators import spark_job

    source = inspect.getsource(spark_job)
    private = sorted({name for name in dir(SparkSubmitHook) if name.startswith("_") and not name.startswith("__")})
    used = [name for name in private if f".{name}" in source]
    assert used == [], used
    assert "(SparkSubmitHook)" not in source


# --- the lease wait defers --------------------------------------------------------------------


def _hold_lease(wh: str, *, seconds: int = 3600) -> None:
    path = Path(wh) / LEASE
    path.parent.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    path.write_text(
        json.dumps({"table": "db.t", "holder": "other_dag/r/compact/-1", "acquired_millis": now, "expires_millis": now + seconds * 1000})
    )


@pytest.fixture
def no_sleep_in_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """``time.sleep`` called from the plugins (the old lease wait) fails the test."""
    real_sleep = time.sleep

    def guarded(seconds: float) -> None:
        caller = inspect.stack()[1].filename
        assert "paimon_airflow" not in caller, f"time.sleep({seconds}) in {caller}"
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", guarded)


def _wait_dag(dag_id: str, **kwargs: Any) -> Any:
    from airflow.sdk import DAG

    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    with DAG(dag_id, schedule=None, start_date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC), catchup=False) as dag:
        PaimonCompactOperator(
            task_id="compact", table="db.t", compact_strategy="full", mode="local", if_busy="wait",
            lease_poll_interval=dt.timedelta(seconds=1), retries=0, **kwargs,
        )  # fmt: skip
    _serialize(dag)
    return dag


def _count_deferrals(monkeypatch: pytest.MonkeyPatch, on_first: Any = None) -> list[dict[str, Any]]:
    """Every ``defer`` of the compaction operator; ``on_first()`` runs at the first."""
    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    deferrals: list[dict[str, Any]] = []
    real_defer = PaimonCompactOperator.defer

    def defer(self: Any, **kwargs: Any) -> Any:
        deferrals.append(kwargs)
        if len(deferrals) == 1 and on_first is not None:
            on_first()
        return real_defer(self, **kwargs)

    monkeypatch.setattr(PaimonCompactOperator, "defer", defer)
    return deferrals


def test_a_busy_lease_defers_then_compacts_when_released(
    paimon_warehouse: str, airflow_db: None, no_sleep_in_plugins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_with_snapshots(paimon_warehouse, n=6)
    _hold_lease(paimon_warehouse)
    released: list[float] = []

    def other_task_ends() -> None:
        (Path(paimon_warehouse) / LEASE).unlink()
        released.append(time.monotonic())

    # the other task ends 2.5 s after this one first found its lease busy
    release = threading.Timer(2.5, other_task_ends)
    deferrals = _count_deferrals(monkeypatch, on_first=release.start)
    try:
        run = _wait_dag("lease_wait_defers", lease_wait=dt.timedelta(minutes=5)).test()
    finally:
        release.cancel()
    [ti] = run.get_task_instances()
    assert (str(run.state), str(ti.state)) == ("success", "success")
    assert len(deferrals) >= 1, deferrals  # deferred (no slot held), tried again every second
    trigger = deferrals[0]["trigger"]
    assert type(trigger).__name__ == "LeaseWaitTrigger" and deferrals[0]["method_name"] == "execute_after_lease_wait"
    since = {d["trigger"].waiting_since_millis for d in deferrals}
    assert len(since) == 1 and since == {d["kwargs"]["waiting_since_millis"] for d in deferrals}  # the first try's
    assert len(released) == 1  # it compacted after the other task's lease was gone
    table = FileSystemCatalog(paimon_warehouse).get_table("db.t")
    latest = table.latest_snapshot()
    assert latest is not None and latest.id == 7 and str(latest.commit_kind).endswith("COMPACT")
    assert not (Path(paimon_warehouse) / LEASE).exists()  # ours, released after the compaction


def test_a_lease_wait_that_runs_out_fails_clearly(
    paimon_warehouse: str, airflow_db: None, no_sleep_in_plugins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    from paimon_airflow.operators.spark_job import PaimonCompactOperator

    table_with_snapshots(paimon_warehouse, n=6)
    _hold_lease(paimon_warehouse)
    deferrals = _count_deferrals(monkeypatch)
    started = time.monotonic()
    # gives up only if each resumed try keeps the first try's time (else it would wait forever)
    run = _wait_dag("lease_wait_runs_out", lease_wait=dt.timedelta(seconds=3)).test()
    elapsed = time.monotonic() - started
    [ti] = run.get_task_instances()
    assert (str(run.state), str(ti.state)) == ("failed", "failed")
    assert len(deferrals) >= 1 and 3 <= elapsed < 60, (deferrals, elapsed)
    assert len({d["kwargs"]["waiting_since_millis"] for d in deferrals}) == 1
    assert FileSystemCatalog(paimon_warehouse).get_table("db.t").snapshot_manager.latest_snapshot_id() == 6
    assert json.loads((Path(paimon_warehouse) / LEASE).read_text())["holder"] == "other_dag/r/compact/-1"
    # the error the resumed task raises once lease_wait has passed since its first try (retried)
    op = PaimonCompactOperator(
        task_id="compact", table="db.t", mode="local", if_busy="wait", lease_wait=dt.timedelta(seconds=2)
    )
    first_try = int(time.time() * 1000) - 3000
    gave_up = r"being compacted by other_dag/r/compact/-1 .*gave up after waiting 0:00:02"
    with pytest.raises(AirflowException, match=gave_up) as e:
        op.execute_after_lease_wait(task_context(), event={"waiting_since_millis": first_try})
    assert not isinstance(e.value, AirflowFailException)
