"""``PaimonMergeIntoOperator``: Paimon's ``merge_into`` (``spark_jobs merge_into``) from Airflow.

The arguments are Paimon's (``target_alias``, ``source_sqls``, ``source_table``,
``merge_condition``, ``matched_upsert_condition``, ``matched_upsert_setting``,
``not_matched_insert_condition``, ``not_matched_insert_values``, ``matched_delete_condition``),
all templated; ``None`` or ``''`` means "not given", as in Paimon. The job runs through
spark-submit (it evaluates the merge with Spark SQL). ``dry_run=True``: the job only counts the
rows that would be updated, deleted and inserted (the plan of a manual DAG). A real run commits
under a commit user derived from the task instance (``--run-id``), so a retry of a run whose
commit landed commits nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_airflow.operators.spark_job import PaimonSparkJobOperator
from paimon_airflow.utils.errors import PaimonTerminalFailure

if TYPE_CHECKING:
    from airflow.sdk import Context

__all__ = ["MERGE_ARGUMENTS", "PaimonMergeIntoOperator"]

#: Paimon's merge_into arguments after the target table, in order. Spelled out rather than taken
#: from ``spark_jobs.common.merge_spec.ARG_NAMES``: that import pulls in paimon_core, and the
#: merge_into DAG reads this at parse time (tests/airflow/test_merge_into_dag.py checks they agree).
MERGE_ARGUMENTS = (
    "target_alias",
    "source_sqls",
    "source_table",
    "merge_condition",
    "matched_upsert_condition",
    "matched_upsert_setting",
    "not_matched_insert_condition",
    "not_matched_insert_values",
    "matched_delete_condition",
)


def _truthy(value: bool | str | None) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", "", "none"):
        return False
    raise PaimonTerminalFailure(f"dry_run must be true or false, got {value!r}")


class PaimonMergeIntoOperator(PaimonSparkJobOperator):
    """MERGE INTO ``table`` from ``source_table`` (see the module doc); returns the job's result
    (``updated_rows``, ``deleted_rows``, ``inserted_rows``, ``snapshot_id`` ...)."""

    template_fields: Sequence[str] = (*PaimonSparkJobOperator.template_fields, *MERGE_ARGUMENTS, "merge_dry_run")
    actions = ("merge_into",)
    run_id_flag = "--run-id"

    def __init__(
        self,
        *,
        table: str,
        source_table: str,
        merge_condition: str,
        target_alias: str | None = None,
        source_sqls: str | Sequence[str] | None = None,
        matched_upsert_condition: str | None = None,
        matched_upsert_setting: str | None = None,
        not_matched_insert_condition: str | None = None,
        not_matched_insert_values: str | None = None,
        matched_delete_condition: str | None = None,
        dry_run: bool | str = False,
        job_args: Sequence[str] | None = None,
        use_spark_submit: bool | None = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            job="merge_into", table=table, job_args=job_args, use_spark_submit=use_spark_submit, **kwargs
        )
        self.target_alias = target_alias
        self.source_sqls = source_sqls if source_sqls is None or isinstance(source_sqls, str) else ";".join(source_sqls)
        self.source_table = source_table
        self.merge_condition = merge_condition
        self.matched_upsert_condition = matched_upsert_condition
        self.matched_upsert_setting = matched_upsert_setting
        self.not_matched_insert_condition = not_matched_insert_condition
        self.not_matched_insert_values = not_matched_insert_values
        self.matched_delete_condition = matched_delete_condition
        self.merge_dry_run = dry_run

    def merge_args(self) -> list[str]:
        """The merge arguments as flags (the ones given), plus ``--dry-run``."""
        argv: list[str] = []
        for name in MERGE_ARGUMENTS:
            value = getattr(self, name)
            if value is not None and str(value).strip():
                argv += [f"--{name}", str(value)]
        if _truthy(self.merge_dry_run):
            argv.append("--dry-run")
        return argv

    def job_argv(self, context: Context) -> list[str]:
        """The common arguments (warehouse, table, ``--run-id``), then the merge's."""
        return super().job_argv(context) + self.merge_args()

    def result_in_task_process(self, argv: list[str]) -> dict[str, Any] | None:
        """A retry or re-run whose merge already committed: the job's no-op result, without a JVM."""
        from paimon_airflow.hooks.paimon import PaimonHook
        from spark_jobs.common.args import UsageError
        from spark_jobs.merge_into import committed_result, parse_args

        try:
            args = parse_args(list(argv))
        except UsageError:
            return None  # the job reports it
        catalog = PaimonHook(paimon_conn_id=self.paimon_conn_id).get_catalog()
        done = committed_result(catalog, args)
        if done is not None:  # the job does not run: its (no-op) ledger row is recorded here
            from paimon_core.ledger import record_action

            with record_action(
                catalog.get_table(args.spec.target_table), "merge_into", entry_point="airflow", catalog=catalog
            ) as recording:
                recording.set_result(done)
        return done
