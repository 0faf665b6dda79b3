"""Run a ``spark_jobs`` job from Airflow and push its one JSON result line to XCom.

How a job runs, by job:

* **Spark jobs** (``ingest``, ``compact``, ``remove_orphan_files`` in distributed mode): through
  ``spark-submit`` with the Spark provider's :class:`SparkSubmitHook` (its public constructor,
  ``submit()`` and ``on_kill()`` only). The application file is ``spark_jobs/__main__.py``
  (spark-submit cannot run ``-m``); its first argument is the job name. The master and deploy
  mode come from the Spark connection (``spark_conn_id``, default ``spark_default``: ``local[2]``,
  ``spark://host:7077``, ``yarn`` with ``{"deploy-mode": "cluster"}`` ...). A connection that does
  not exist fails the task at once, naming it (never a silent local run).
* **Metadata procedures** (``expire_snapshots``, ``create_tag``, ``delete_tag``, ``rollback_to``,
  ``reset_consumer``, and ``remove_orphan_files --mode local``): never start a JVM, so they run as
  a plain subprocess ``sys.executable -m spark_jobs <job> ...`` (a JVM start costs seconds each).
  The in-process operators of :mod:`paimon_airflow.operators.maintenance` do the same work with
  no subprocess at all.

The warehouse and its storage options come from the ``paimon`` connection
(:class:`~paimon_airflow.hooks.paimon.PaimonHook`), never from DAG code; they are passed as
``--warehouse`` / ``--storage-option`` (credentials masked in the logged command line by
Airflow's secrets masker).

The job's result: every job writes its one JSON result line to ``--result-file``, a file the
operator names per try under the warehouse's ``_airflow/results/`` (through the warehouse's
FileIO, so also on ``s3://``), reads after the job ends and deletes. It never depends on the
driver's stdout, so spark-submit's cluster deploy mode (the driver on YARN or Kubernetes) works;
a plain subprocess's stdout line is the fallback for metadata jobs only.

Errors: the job's JSON error line carries ``retryable`` (see ``spark_jobs.common.output``);
``retryable: false`` (bad argument, missing table, safety refusal) fails the task without
retries, anything else (commit conflict, I/O, a lost executor, no JSON line at all) raises an
ordinary error that Airflow retries. ``on_kill`` kills the spark-submit (the hook's ``on_kill``)
or the subprocess.

Idempotent retries: jobs that commit data get a run id derived from (dag_id, run_id, task_id,
map_index) and the table (``ingest --run-id``: commit user ``ingest-<table>-<run id>``), the same
on every try, so a retry of a task whose commit landed commits nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowSkipException

from paimon_airflow.hooks.paimon import PaimonHook
from paimon_airflow.operators.in_process import DEFAULT_IN_PROCESS_MAX_BYTES
from paimon_airflow.utils.errors import PaimonTerminalFailure, paimon_errors, raise_for_job_error
from paimon_airflow.utils.identity import commit_user, run_key
from paimon_airflow.utils.lineage import LineageRole, PaimonLineageMixin

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
    from airflow.sdk import Context

    from paimon_airflow.utils.lease import IfBusy, LeaseBusy

__all__ = [
    "JVM_JOBS",
    "PaimonCompactOperator",
    "PaimonIngestOperator",
    "PaimonRemoveOrphanFilesSparkOperator",
    "PaimonSparkJobOperator",
    "RESULTS_DIR",
    "missing_spark_connection",
    "parse_result_line",
]

#: Jobs that start a Spark session (the rest are metadata procedures run as a plain subprocess).
JVM_JOBS = frozenset({"ingest", "compact", "remove_orphan_files"})

#: Under the warehouse root (beside the compaction leases): the jobs' result files, one per try,
#: deleted once read.
RESULTS_DIR = "_airflow/results"

#: Spark settings for every submit (overridable with ``conf``).
DEFAULT_SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}


def parse_result_line(lines: Sequence[str]) -> dict[str, Any] | None:
    """The job's result: the last output line that is a JSON object with ``status``."""
    for line in reversed(lines):
        text = line.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "status" in value:
            return value
    return None


def _application_file() -> str:
    import spark_jobs

    return str(Path(spark_jobs.__file__).with_name("__main__.py"))


#: The exit code in the message of the hook's error for a failed spark-submit.
_SUBMIT_EXIT_CODE = re.compile(r"Error code is: (-?\d+)")


def missing_spark_connection(conn_id: str) -> PaimonTerminalFailure:
    """The error for a Spark connection that does not exist: what to create (no retry)."""
    env = "AIRFLOW_CONN_" + re.sub(r"[^A-Za-z0-9]", "_", conn_id).upper()
    return PaimonTerminalFailure(
        f"Spark connection {conn_id!r} does not exist; the Spark jobs need it to know the master. "
        f"Create it, e.g. {env}='{{\"conn_type\": \"spark\", \"host\": \"local[*]\"}}' "
        f"(or host spark://host:7077, yarn ...; extra {{\"deploy-mode\": \"cluster\"}} for cluster mode), "
        f"or `airflow connections add {conn_id} --conn-type spark --conn-host 'local[*]'`"
    )


def _result_file_name(context: Context) -> str:
    """``<dag>.<run>.<task>.<map index>.<try>.<random>.json``: one per try (a random part too: a
    cleared and re-run task instance may repeat its try number)."""
    ti = context["ti"]
    parts = [ti.dag_id, ti.run_id, ti.task_id, str(ti.map_index), str(getattr(ti, "try_number", 0))]
    safe = [re.sub(r"[^A-Za-z0-9_-]+", "_", str(p)) for p in parts]
    return ".".join([*safe, uuid.uuid4().hex[:12], "json"])


class PaimonSparkJobOperator(PaimonLineageMixin, BaseOperator):
    """Run ``spark_jobs <job> --warehouse W --table T <job_args>``; return its JSON result.

    :param job: a job of ``spark_jobs.JOBS`` (``ingest``, ``compact``, ``expire_snapshots`` ...).
    :param table: ``db.table`` (templated).
    :param job_args: the job's own arguments (templated).
    :param paimon_conn_id: the ``paimon`` connection of the warehouse.
    :param spark_conn_id: the Spark connection (master, deploy mode, queue) for Spark jobs.
    :param conf: extra Spark conf; ``driver_memory``, ``executor_memory``, ``executor_cores``,
        ``total_executor_cores``, ``num_executors``: as spark-submit's flags.
    :param use_spark_submit: force spark-submit (True) or a plain subprocess (False); default by job.
    :param env_vars: extra environment of the job process.

    OpenLineage (with the provider installed): ``ingest`` reports the table as an output at the
    snapshot it committed, ``compact`` as an input and an output (the snapshot compacted, the
    ``COMPACT`` snapshot), the other jobs as an output with what they did in the ``paimon``
    facet; see :mod:`paimon_airflow.utils.lineage`.
    """

    template_fields: Sequence[str] = (
        "table",
        "job_args",
        "paimon_conn_id",
        "spark_conn_id",
        "conf",
        "env_vars",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"job_args": "py", "conf": "json"}
    ui_color = "#fde7c8"
    #: Flag that makes a retry of a landed commit a no-op (the job's idempotency key), or None.
    run_id_flag: ClassVar[str | None] = None
    #: The maintenance actions a subclass with ``dry_run`` runs; its ``dry_run`` default agrees
    #: with each one's (tests/unit/test_dry_run_defaults.py). Empty here: ``job`` decides.
    actions: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        job: str,
        table: str,
        job_args: Sequence[str] | None = None,
        paimon_conn_id: str = PaimonHook.default_conn_name,
        spark_conn_id: str = "spark_default",
        conf: Mapping[str, Any] | None = None,
        driver_memory: str | None = None,
        executor_memory: str | None = None,
        executor_cores: int | None = None,
        total_executor_cores: int | None = None,
        num_executors: int | None = None,
        use_spark_submit: bool | None = None,
        env_vars: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.job = job
        self.table = table
        self.job_args: list[str] = [str(a) for a in job_args or ()]
        self.paimon_conn_id = paimon_conn_id
        self.spark_conn_id = spark_conn_id
        self.conf: dict[str, Any] = {**DEFAULT_SPARK_CONF, **dict(conf or {})}
        self.driver_memory = driver_memory
        self.executor_memory = executor_memory
        self.executor_cores = executor_cores
        self.total_executor_cores = total_executor_cores
        self.num_executors = num_executors
        self.use_spark_submit = use_spark_submit
        self.env_vars: dict[str, str] = dict(env_vars or {})
        self._submit_hook: SparkSubmitHook | None = None
        self._secret_env: dict[str, str] = {}
        self._ledger_env: dict[str, str] = {}
        self._process: subprocess.Popen[str] | None = None

    # --- command line --------------------------------------------------------------------
    @property
    def runs_spark_submit(self) -> bool:
        """Whether this job goes through spark-submit (a JVM) or a plain subprocess."""
        if self.use_spark_submit is not None:
            return self.use_spark_submit
        if self.job == "remove_orphan_files" and _flag_value(self.job_args, "--mode") == "local":
            return False
        return self.job in JVM_JOBS

    def job_argv(self, context: Context) -> list[str]:
        """The job's arguments after the job name: warehouse, table, storage options, job args."""
        conn = self.connection_argv()
        argv = [*conn[:2], "--table", str(self.table).strip(), *conn[2:]]
        if self.run_id_flag and self.run_id_flag not in self.job_args:
            argv += [self.run_id_flag, run_key(context)]
        return argv + [str(a) for a in self.job_args]

    def connection_argv(self) -> list[str]:
        """``--warehouse`` and ``--storage-option`` of the connection (credentials go to the env)."""
        hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
        argv = ["--warehouse", hook.warehouse]
        scheme = hook.warehouse.split("://", 1)[0].lower() if "://" in hook.warehouse else ""
        for key, value in sorted(hook.storage_options.items()):
            env_name = _S3_CREDENTIAL_ENV.get(key) if scheme in ("s3", "s3a") else None
            if env_name:
                # credentials go through the environment, never the command line (ps, logs)
                self._secret_env[env_name] = _option_text(value)
                continue
            argv += ["--storage-option", f"{key}={_option_text(value)}"]
        if not _ledger_on(hook):
            argv.append("--no-ledger")  # the connection's ``ledger`` extra is off
        return argv

    def _env(self) -> dict[str, str]:
        bin_dir = os.path.dirname(sys.executable)
        env = {
            # spark-submit of this venv, and this interpreter for the driver and the workers
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
        }
        env.update(self._ledger_env)  # the task's ids for the job's ledger rows
        env.update(self.env_vars)
        env.update(self._secret_env)
        return env

    @property
    def lineage_role(self) -> LineageRole:
        """``ingest`` writes, ``compact`` rewrites, the other jobs maintain the table."""
        roles: dict[str, LineageRole] = {"ingest": "write", "compact": "rewrite"}
        return roles.get(self.job, "maintain")

    @property
    def lineage_tables_from_result(self) -> bool:
        """``compact_database`` names its tables in its result (``table`` is no table)."""
        return self.job == "compact_database"

    # --- run -----------------------------------------------------------------------------
    def execute(self, context: Context) -> dict[str, Any]:
        """Run the job, parse its JSON line, fail or retry on its error, return the result.

        Maintenance ledger: the job records its row(s) with this task's ids
        (``$PAIMON_LEDGER_CONTEXT``); what the task process settles itself (a landed retry, a
        small compaction) is recorded here, once (:mod:`paimon_airflow.operators.ledger`)."""
        from paimon_airflow.operators.ledger import job_env, task_ledger

        with task_ledger(context, PaimonHook(paimon_conn_id=self.paimon_conn_id)) as recording:
            self._ledger_env = job_env(context) if recording else {}
            return self._execute(context)

    def _execute(self, context: Context) -> dict[str, Any]:
        with paimon_errors(f"{self.job} on {self.table}"):  # no warehouse, bad options or cutoff
            argv = self.job_argv(context)
        if not self.lineage_tables_from_result:
            self._lineage_before = self._lineage_capture(None, hook=PaimonHook(paimon_conn_id=self.paimon_conn_id))
        with paimon_errors(f"{self.job} on {self.table}"):
            settled = self.result_in_task_process(argv)
        if settled is not None:  # a retry whose commit landed, a small compaction: no JVM
            return self._finish(context, settled, returncode=0)
        result_file = self._result_file(context)
        run_argv = [*argv, "--result-file", result_file]
        if self.runs_spark_submit:
            lines, returncode = self._run_spark_submit(run_argv)
        else:
            lines, returncode = self._run_subprocess(run_argv)
        result = self._read_result_file(result_file)
        if result is None and not self.runs_spark_submit:
            result = parse_result_line(lines)  # a plain subprocess: its stdout line
        if result is None:
            tail = "\n".join(line.rstrip() for line in lines[-20:])
            raise AirflowException(
                f"spark_jobs {self.job} wrote no result to {result_file} (exit {returncode})"
                + (f":\n{tail}" if tail else "; see the spark-submit output above")
            )
        return self._finish(context, result, returncode=returncode)

    def _result_file(self, context: Context) -> str:
        """Where the job writes its result: ``<warehouse>/_airflow/results/<task instance, try>.json``."""
        from paimon_core.io.file_io import join

        hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
        return join(hook.warehouse, RESULTS_DIR, _result_file_name(context))

    def _read_result_file(self, path: str) -> dict[str, Any] | None:
        """The job's result from ``path`` (None when the job wrote none); the file is deleted."""
        file_io = PaimonHook(paimon_conn_id=self.paimon_conn_id).get_catalog().file_io
        try:
            data = file_io.read_bytes(path)
        except FileNotFoundError:
            return None
        try:
            file_io.delete(path)
        except OSError:
            self.log.warning("Could not delete the result file %s", path, exc_info=True)
        return parse_result_line(data.decode("utf-8", errors="replace").splitlines())

    def _finish(self, context: Context, result: dict[str, Any], *, returncode: int) -> dict[str, Any]:
        """:meth:`check_result`, keeping the result and the table's version after for OpenLineage."""
        self._lineage_result = result
        checked = self.check_result(context, result, returncode=returncode)
        if not self.lineage_tables_from_result:
            self._lineage_after = self._lineage_capture(None, hook=PaimonHook(paimon_conn_id=self.paimon_conn_id))
        return checked

    def result_in_task_process(self, argv: list[str]) -> dict[str, Any] | None:
        """The job's result when the task process settles it without starting the job (see
        :mod:`paimon_airflow.operators.in_process`); None: run the job."""
        return None

    def check_result(self, context: Context, result: dict[str, Any], *, returncode: int) -> dict[str, Any]:
        """Fail or retry on the job's error line; else log and return the result."""
        if returncode != 0 or result.get("status") != "ok":
            raise_for_job_error(self.job, result, returncode=returncode)
        self.log.info("%s on %s: %s", self.job, self.table, result)
        return result

    def _run_spark_submit(self, argv: list[str]) -> tuple[list[str], int]:
        """spark-submit through the provider's hook (public API only); the driver's output goes
        to the task log (the result comes from the result file). Returns ``([], exit code)``."""
        from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
        from airflow.sdk import BaseHook
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:  # the provider falls back to ``yarn`` for a missing connection: refused here
            connection = BaseHook.get_connection(self.spark_conn_id)
        except AirflowNotFoundException:
            raise missing_spark_connection(self.spark_conn_id) from None
        env = self._env()
        if str(connection.host or "").startswith("local") and "SPARK_LOCAL_IP" not in os.environ:
            env["SPARK_LOCAL_IP"] = "127.0.0.1"  # a local driver listens on loopback only
        hook = SparkSubmitHook(
            conf=self.conf,
            conn_id=self.spark_conn_id,
            driver_memory=self.driver_memory,
            executor_memory=self.executor_memory,
            executor_cores=self.executor_cores,
            total_executor_cores=self.total_executor_cores,
            num_executors=self.num_executors,
            name=f"paimon-{self.job}-{self.table}",
            application_args=[self.job, *argv],
            env_vars=env,
        )
        self._submit_hook = hook
        returncode = 0
        try:
            hook.submit(_application_file())
        except AirflowException as e:  # a non-zero exit: the job's error is in its result file
            self.log.info("spark-submit failed: %s", str(e).split("\n", 1)[0])
            code = _SUBMIT_EXIT_CODE.search(str(e))  # the exit code, as the hook's message says it
            returncode = int(code.group(1)) if code and int(code.group(1)) else 1
        finally:
            self._submit_hook = None
            with warnings.catch_warnings():
                # the provider's hook leaves the spark-submit pipe to the garbage collector
                warnings.simplefilter("ignore", ResourceWarning)
                del hook
        return [], returncode

    def _run_subprocess(self, argv: list[str]) -> tuple[list[str], int]:
        cmd = [sys.executable, "-m", "spark_jobs", self.job, *argv]
        self.log.info("Running %s", " ".join(cmd))
        env = {**os.environ, **self._env()}
        self._process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        out, err = self._process.communicate()
        for line in err.splitlines():
            self.log.info("%s", line)
        lines = out.splitlines()
        for line in lines:
            self.log.info("%s", line)
        return lines, self._process.returncode

    def on_kill(self) -> None:
        """Kill the spark-submit (through the hook) or the subprocess (its whole process group)."""
        if self._submit_hook is not None:
            self._submit_hook.on_kill()
        process = self._process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def _ledger_on(hook: PaimonHook) -> bool:
    try:
        return hook.ledger_enabled
    except ValueError:  # a bad ``ledger`` extra: record nothing
        return False


#: s3fs storage options that botocore also reads from the environment.
_S3_CREDENTIAL_ENV = {
    "key": "AWS_ACCESS_KEY_ID",
    "secret": "AWS_SECRET_ACCESS_KEY",
    "token": "AWS_SESSION_TOKEN",
}


def _flag_value(args: Sequence[str], flag: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return str(args[i + 1])
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def _blank_none(value: Any) -> str:
    """A rendered optional template: ``None``, ``"None"`` and blanks are "not given"."""
    text = "" if value is None else str(value).strip()
    return "" if text == "None" else text


def _flag(value: bool | str | None, name: str) -> bool:
    """A flag, also as a rendered template (``"True"``/``"false"``)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", "", "none"):
        return False
    raise PaimonTerminalFailure(f"{name} must be true or false, got {value!r}")


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


class PaimonIngestOperator(PaimonSparkJobOperator):
    """``ingest`` through spark-submit, idempotent per task instance (``--run-id``).

    For a daily partition: ``job_args=["--source", "...", "--logical-date", "{{ ds }}", "--overwrite"]``
    replaces exactly that day's partition, so a re-run or backfill of the day leaves the same rows.
    """

    run_id_flag = "--run-id"

    def __init__(self, *, table: str, job_args: Sequence[str] | None = None, **kwargs: Any) -> None:
        super().__init__(job="ingest", table=table, job_args=job_args, **kwargs)

    def result_in_task_process(self, argv: list[str]) -> dict[str, Any] | None:
        """A retry or re-run whose commit landed: the job's no-op result, without a JVM."""
        from paimon_airflow.operators.in_process import committed_ingest_result

        return committed_ingest_result(PaimonHook(paimon_conn_id=self.paimon_conn_id), argv)


class PaimonCompactOperator(PaimonSparkJobOperator):
    """Dedicated compaction of one table (``compact`` job) through spark-submit.

    Paimon allows one compactor per table at a time: map one task per table in a DAG with
    ``max_active_runs=1`` (and a Spark pool), so two never run for the same table.
    ``compact_strategy``: ``full``, ``minor``, None (the job's default) or ``none`` (skip: the
    registry's "no compaction for this table"); templated. The commit user and identifier come
    from the task instance (``--commit_user``/``--commit_identifier``), so a retry of a
    compaction whose commit landed commits nothing. ``mode='local'``: the job compacts in
    threads in a plain subprocess (no JVM; small tables). ``partition_idle_time`` (e.g.
    ``'1 d'``) and ``dry_run`` are templated too. A retry whose commit landed, an empty plan, a
    dry run or a plan rewriting at most ``in_process_max_bytes`` (default 64 MiB) is settled in
    the task process: no JVM, no subprocess (:mod:`paimon_airflow.operators.in_process`).

    One compactor per table across DAGs: the task holds the table's compaction lease
    (:func:`paimon_airflow.utils.lease.compaction_lease`) while the job runs (a dry run takes
    none). Held by another task: ``if_busy`` ``skip`` (default), ``wait`` or ``fail`` (an error,
    retried). ``wait`` defers the task (it holds no worker or pool slot while it waits: a
    :class:`~paimon_airflow.triggers.lease_wait.LeaseWaitTrigger` in the triggerer) and tries
    the lease again every ``lease_poll_interval`` (default 30 s) until ``lease_wait`` (default
    1 h) has passed since its first try, then fails as ``fail`` does. A lease left by a dead task
    expires after ``lease_ttl`` (default the task's ``execution_timeout``, else 6 h); a retry of
    the same task instance takes it back at once.
    """

    template_fields: Sequence[str] = (
        *PaimonSparkJobOperator.template_fields,
        "partitions",
        "where",
        "compact_strategy",
        "partition_idle_time",
        "compact_dry_run",
        "mode",
    )
    actions = ("compact",)

    def __init__(
        self,
        *,
        table: str,
        partitions: str | None = None,
        compact_strategy: str | None = None,
        where: str | None = None,
        options: Mapping[str, str] | None = None,
        dry_run: bool | str = False,
        mode: str | None = None,
        partition_idle_time: str | None = None,
        if_busy: IfBusy = "skip",
        lease_ttl: dt.timedelta | None = None,
        lease_wait: dt.timedelta = dt.timedelta(hours=1),
        lease_poll_interval: dt.timedelta = dt.timedelta(seconds=30),
        in_process_max_bytes: int = DEFAULT_IN_PROCESS_MAX_BYTES,
        job_args: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(job="compact", table=table, job_args=job_args, **kwargs)
        self.in_process_max_bytes = in_process_max_bytes
        self.partition_idle_time = partition_idle_time
        self.if_busy: IfBusy = if_busy
        self.lease_ttl = lease_ttl
        self.lease_wait = lease_wait
        if lease_poll_interval.total_seconds() <= 0:
            raise ValueError(f"lease_poll_interval must be positive, got {lease_poll_interval}")
        self.lease_poll_interval = lease_poll_interval
        self.mode = mode
        self.partitions = partitions
        self.compact_strategy = compact_strategy
        self.where = where
        self.options = dict(options or {})
        self.compact_dry_run = dry_run

    def execute(self, context: Context) -> dict[str, Any]:
        """Skip for strategy ``none``; else run the ``compact`` job. A skip (strategy ``none``, the
        table's lease held by another task) is a ``skipped`` row of the maintenance ledger."""
        return self._compact(context, waiting_since_millis=None)

    def execute_after_lease_wait(
        self,
        context: Context,
        event: Mapping[str, Any] | None = None,
        waiting_since_millis: int | None = None,
    ) -> dict[str, Any]:
        """Resumed from the lease wait (``if_busy='wait'``): try the lease again."""
        since = (event or {}).get("waiting_since_millis", waiting_since_millis)
        return self._compact(context, waiting_since_millis=None if since is None else int(since))

    def _compact(self, context: Context, *, waiting_since_millis: int | None) -> dict[str, Any]:
        from paimon_airflow.operators.ledger import record_skipped, task_ledger

        hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
        if str(self.compact_strategy or "").strip().lower() == "none":
            with task_ledger(context, hook):
                record_skipped(hook, str(self.table).strip(), "compact", "compaction 'none'")
            raise AirflowSkipException(f"{self.table}: compaction 'none'")
        if _flag(self.compact_dry_run, "dry_run"):
            return super().execute(context)
        from paimon_airflow.utils.lease import LeaseBusy, compaction_lease

        held = False
        try:
            with compaction_lease(
                hook.get_catalog().file_io,
                hook.warehouse,
                str(self.table).strip(),
                holder=run_key(context),
                ttl=self.lease_ttl or self.execution_timeout,
                if_busy=self.if_busy,
            ):
                held = True
                return super().execute(context)
        except AirflowSkipException as e:
            if not held:  # another task is compacting the table
                with task_ledger(context, hook):
                    record_skipped(hook, str(self.table).strip(), "compact", str(e))
            raise
        except LeaseBusy as busy:
            if held:  # not the lease's: raised by the job's code (cannot happen today)
                raise
            self._wait_for_lease(busy, waiting_since_millis)
            raise AirflowException(str(busy)) from busy  # ``fail``: retried

    def _wait_for_lease(self, busy: LeaseBusy, waiting_since_millis: int | None) -> None:
        """``if_busy='wait'``: defer until the next try (no worker slot held while waiting), or
        raise once ``lease_wait`` has passed since the first try. Returns for ``fail``."""
        if self.if_busy != "wait":
            return
        from paimon_airflow.triggers.lease_wait import LeaseWaitTrigger

        now_millis = int(time.time() * 1000)
        since = now_millis if waiting_since_millis is None else waiting_since_millis
        left = self.lease_wait.total_seconds() - (now_millis - since) / 1000
        if left <= 0:
            raise AirflowException(
                f"{busy}; gave up after waiting {self.lease_wait} for its compaction lease (lease_wait)"
            ) from busy
        pause = min(self.lease_poll_interval.total_seconds(), left)
        self.log.info("%s; waiting (deferred) %.0f s before trying again, %.0f s of lease_wait left", busy, pause, left)
        moment = dt.datetime.fromtimestamp(now_millis / 1000, dt.UTC) + dt.timedelta(seconds=pause)
        self.defer(
            trigger=LeaseWaitTrigger(moment, waiting_since_millis=since),
            method_name="execute_after_lease_wait",
            kwargs={"waiting_since_millis": since},
        )

    def job_argv(self, context: Context) -> list[str]:
        argv = super().job_argv(context)
        if self.partitions:
            argv += ["--partitions", str(self.partitions)]
        strategy = str(self.compact_strategy or "").strip().lower()
        if strategy not in ("", "full", "minor"):
            raise PaimonTerminalFailure(
                f"compact_strategy must be 'full', 'minor' or 'none', got {strategy!r}"
            )
        if strategy:
            argv += ["--compact_strategy", strategy]
        if self.where:
            argv += ["--where", str(self.where)]
        idle = _blank_none(self.partition_idle_time)
        if idle:
            argv += ["--partition_idle_time", idle]
        if self.options:
            argv += ["--options", ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))]
        if _flag(self.compact_dry_run, "dry_run"):
            argv.append("--dry-run")
        elif "--commit_user" not in argv and "--commit-user" not in argv:
            # the same on every try: a retry of a compaction whose commit landed commits nothing
            argv += ["--commit_user", commit_user(context, str(self.table)), "--commit_identifier", "1"]
        mode = str(self.mode or "").strip()
        if mode:
            argv += ["--mode", mode]
        return argv

    def result_in_task_process(self, argv: list[str]) -> dict[str, Any] | None:
        """A retry whose commit landed, an empty plan, a dry run or a plan rewriting at most
        ``in_process_max_bytes`` (unless ``use_spark_submit=True``): compacted here, no JVM."""
        from paimon_airflow.operators.in_process import small_compaction_result

        max_bytes = 0 if self.use_spark_submit else self.in_process_max_bytes
        hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
        return small_compaction_result(hook, argv, max_bytes=max_bytes)

    @property
    def runs_spark_submit(self) -> bool:
        """``mode='local'`` compacts in threads in a plain subprocess (no JVM)."""
        if self.use_spark_submit is None and str(self.mode or "").strip() == "local":
            return False
        return super().runs_spark_submit


class PaimonRemoveOrphanFilesSparkOperator(PaimonSparkJobOperator):
    """Distributed orphan cleanup (``remove_orphan_files``) through spark-submit, for big tables.

    An ``older_than`` closer to now than ``min_age`` (default 1 day: longer than any write or
    compaction takes) is refused before anything starts; without one the job's default cutoff
    (now - 1 day) applies. ``dry_run`` defaults to True (lists the orphans): pass
    ``dry_run=False`` to delete; the job is always told which (``--dry-run true|false``).
    """

    template_fields: Sequence[str] = (*PaimonSparkJobOperator.template_fields, "older_than")
    actions = ("remove_orphan_files",)

    def __init__(
        self,
        *,
        table: str,
        older_than: str | None = None,
        dry_run: bool = True,
        parallelism: int | None = None,
        min_age: dt.timedelta = dt.timedelta(days=1),
        job_args: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(job="remove_orphan_files", table=table, job_args=job_args, **kwargs)
        self.older_than = older_than
        self.min_age = min_age
        self.orphan_dry_run = dry_run
        self.parallelism = parallelism

    def job_argv(self, context: Context) -> list[str]:
        argv = super().job_argv(context)
        if self.older_than:
            from paimon_core.utils.time_util import to_epoch_millis

            cutoff = to_epoch_millis(str(self.older_than), name="older_than")
            if time.time() * 1000 - cutoff < self.min_age.total_seconds() * 1000:
                raise PaimonTerminalFailure(
                    f"remove_orphan_files on {self.table}: older_than {self.older_than} is less than "
                    f"{self.min_age} ago; files that young may belong to a commit in flight"
                )
            argv += ["--older-than", str(cutoff)]
        argv += ["--dry-run", "true" if self.orphan_dry_run else "false"]
        if self.parallelism:
            argv += ["--parallelism", str(self.parallelism)]
        return argv
