"""``compact_database`` from Airflow: compact every matching table of the warehouse.

Paimon's ``compact_database`` procedure as an operator over :mod:`spark_jobs.compact_database`
(spark-submit to apply in ``distributed`` execution; a plain subprocess, no JVM, for the plan and
for ``local`` execution). Every table's outcome is reported (XCom ``tables`` and the log), also
when one fails; the task then fails naming the tables that failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, ClassVar

from paimon_airflow.hooks.paimon import PaimonHook
from paimon_airflow.operators.spark_job import PaimonSparkJobOperator, _blank_none, _flag
from paimon_airflow.utils.errors import PaimonTerminalFailure, paimon_errors, raise_for_job_error
from paimon_airflow.utils.identity import commit_user, run_key

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["PaimonCompactDatabaseOperator"]


class PaimonCompactDatabaseOperator(PaimonSparkJobOperator):
    """Compact every matching table of the warehouse (``compact_database`` job), Paimon's arguments.

    ``including_databases``, ``including_tables``, ``excluding_tables``: regexes (full match;
    the tables' over ``db.table``); ``mode``: ``divided`` or ``combined``; ``table_options``:
    ``{"k": "v"}`` or ``'k=v,k2=v2'``; ``partition_idle_time``; ``compact_strategy``; ``dry_run``
    (the plan: per table, the compaction units it would run); ``execution``: ``distributed``
    (spark-submit) or ``local`` (threads, no JVM). All templated.

    Every table's outcome is pushed to XCom (key ``tables``) and logged, also when some fail;
    a failed table then fails the task with the failed tables named (retried: each table commits
    as ``<task commit user>:<db.table>``, so a retry skips the tables already compacted).

    One compactor per table: before the job starts, the operator takes the compaction lease
    (:mod:`paimon_airflow.utils.lease`) of every table it matches; a table whose lease another
    task holds is left out of this run (added to ``excluding_tables``) and reported as
    ``skipped`` with its holder. The leases are released when the job ends.
    """

    template_fields: Sequence[str] = (
        *PaimonSparkJobOperator.template_fields,
        "including_databases",
        "mode",
        "including_tables",
        "excluding_tables",
        "table_options",
        "partition_idle_time",
        "compact_strategy",
        "compact_dry_run",
        "execution",
    )
    actions = ("compact_database",)
    template_fields_renderers: ClassVar[dict[str, str]] = {
        **PaimonSparkJobOperator.template_fields_renderers,
        "table_options": "json",
    }

    def __init__(
        self,
        *,
        including_databases: str | None = None,
        mode: str | None = None,
        including_tables: str | None = None,
        excluding_tables: str | None = None,
        table_options: Mapping[str, Any] | str | None = None,
        partition_idle_time: str | None = None,
        compact_strategy: str | None = None,
        dry_run: bool | str = False,
        execution: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("table", "*")  # the Spark application's name; tables come from the job
        super().__init__(job="compact_database", **kwargs)
        self.including_databases = including_databases
        self.mode = mode
        self.including_tables = including_tables
        self.excluding_tables = excluding_tables
        self.table_options = table_options
        self.partition_idle_time = partition_idle_time
        self.compact_strategy = compact_strategy
        self.compact_dry_run = dry_run
        self.execution = execution
        self._busy: dict[str, str] = {}  # table -> the holder of its lease (left out of this run)

    @property
    def is_dry_run(self) -> bool:
        return _flag(self.compact_dry_run, "dry_run")

    def job_argv(self, context: Context) -> list[str]:
        argv = self.connection_argv()
        for flag, value in (
            ("--including_databases", self.including_databases),
            ("--mode", self.mode),
            ("--including_tables", self.including_tables),
            ("--excluding_tables", self._excluding_tables()),
            ("--table_options", self._table_options()),
            ("--partition_idle_time", self.partition_idle_time),
            ("--compact_strategy", self.compact_strategy),
            ("--execution", self.execution),
        ):
            text = _blank_none(value)
            if text:
                argv += [flag, text]
        if self.is_dry_run:
            argv.append("--dry-run")
        else:  # per table "<user>:<db.table>": a retry skips the tables it already compacted
            argv += ["--commit_user", commit_user(context, "compact_database"), "--commit_identifier", "1"]
        return argv + [str(a) for a in self.job_args]

    def _excluding_tables(self) -> str:
        """The given ``excluding_tables``, plus the tables whose lease another task holds."""
        given = _blank_none(self.excluding_tables)
        if not self._busy:
            return given
        parts = [f"(?:{given})"] if given else []
        return "|".join(parts + [re.escape(t) for t in sorted(self._busy)])

    def execute(self, context: Context) -> dict[str, Any]:
        """Take the matching tables' compaction leases (not for a plan), run the job, release them."""
        if self.is_dry_run:
            return super().execute(context)
        with ExitStack() as held:
            self._busy = self._take_leases(context, held)
            return super().execute(context)

    def _take_leases(self, context: Context, held: ExitStack) -> dict[str, str]:
        from paimon_airflow.utils.lease import take_leases
        from spark_jobs.common.args import UsageError
        from spark_jobs.compact_database import matching_tables, parse_args

        hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
        with paimon_errors("compact_database"):
            try:
                args = parse_args(self.job_argv(context))
            except UsageError as e:
                raise PaimonTerminalFailure(f"compact_database: {e}") from e
            names = matching_tables(hook.get_catalog(), args)
        return take_leases(
            hook.get_catalog().file_io,
            hook.warehouse,
            names,
            holder=run_key(context),
            ttl=self.execution_timeout,
            held=held,
        )

    def _table_options(self) -> str:
        value = self.table_options
        if isinstance(value, Mapping):
            return ",".join(f"{k}={v}" for k, v in sorted(value.items()))
        return _blank_none(value)

    @property
    def runs_spark_submit(self) -> bool:
        """Spark only to apply in ``distributed`` execution; plans and ``local`` start no JVM."""
        if self.use_spark_submit is not None:
            return self.use_spark_submit
        return not (self.is_dry_run or _blank_none(self.execution) == "local")

    def check_result(self, context: Context, result: dict[str, Any], *, returncode: int) -> dict[str, Any]:
        """Report every table (XCom ``tables`` and the log), then fail naming the tables that failed."""
        tables = result.get("tables")
        if self._busy:  # left out of the job: a skipped ledger row each (the job records the rest)
            from paimon_airflow.operators.ledger import record_skipped

            hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
            for t, holder in sorted(self._busy.items()):
                record_skipped(hook, t, "compact_database", f"being compacted by {holder}")
        if isinstance(tables, list) and self._busy:
            skipped = [
                {"table": t, "status": "skipped", "reason": f"being compacted by {holder}"}
                for t, holder in sorted(self._busy.items())
            ]
            tables = result["tables"] = sorted([*tables, *skipped], key=lambda t: str(t.get("table")))
        if isinstance(tables, list):
            context["ti"].xcom_push(key="tables", value=tables)
            for t in tables:
                if t.get("status") == "skipped":
                    self.log.warning("%s: skipped, %s", t.get("table"), t.get("reason"))
                elif t.get("status") == "ok":
                    self.log.info(
                        "%s: ok, %s task(s), snapshot %s",
                        t.get("table"),
                        t.get("tasks"),
                        t.get("snapshot_id"),
                    )
                else:
                    self.log.error("%s: %s: %s", t.get("table"), t.get("error_type"), t.get("error"))
        if returncode != 0 or result.get("status") != "ok":
            raise_for_job_error(self.job, result, returncode=returncode)
        self.log.info("compact_database: %s", {k: v for k, v in result.items() if k != "tables"})
        return result
