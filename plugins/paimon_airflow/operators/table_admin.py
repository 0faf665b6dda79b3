"""In-process operator of the table administration procedures that delete or rewrite (no JVM):
``purge_files``, ``drop_partition``, ``merge_branch``, ``remove_unexisting_manifests`` and
``rollback_to_watermark``, ``reassign_row_id`` and ``rewrite_file_index`` (issue 25), one of them per task by its ``procedure`` argument.

Same shape as :mod:`paimon_airflow.operators.table_procedures`: the table comes from the
``paimon`` connection, one ``paimon_core`` table call runs in the task process, its result is the
XCom value and one row of the maintenance ledger (action: the procedure). The same procedures run
as ``python -m spark_jobs <procedure>``.

``dry_run`` (the manual DAG's ``plan`` task) makes the same checks and changes nothing. A missing
argument of the chosen procedure, or an unknown procedure, fails the task without retries, naming
it. Retries: a retried ``drop_partition`` whose commit landed finds the partitions gone and fails
naming them (nothing dropped twice); ``merge_branch`` finds nothing left to merge;
``remove_unexisting_manifests`` finds nothing missing; ``rollback_to_watermark`` rolls back to
the same snapshot again (nothing after it left to delete); ``purge_files`` purges what is left;
``rewrite_file_index`` finds every index already matching (no second commit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_airflow.operators.maintenance import PaimonTableOperator, _int_or_none, resolve_dry_run
from paimon_airflow.utils.errors import PaimonTerminalFailure

if TYPE_CHECKING:
    from airflow.sdk import Context

    from paimon_core import FileStoreTable

__all__ = ["ADMIN_PROCEDURES", "PaimonTableAdminOperator"]

#: The procedures :class:`PaimonTableAdminOperator` runs (all take ``dry_run``).
ADMIN_PROCEDURES = (
    "remove_unexisting_manifests",
    "drop_partition",
    "rollback_to_watermark",
    "merge_branch",
    "purge_files",
    "reassign_row_id",
    "rewrite_file_index",
)


def _text(value: object) -> str | None:
    text = "" if value is None else str(value).strip()
    return text if text and text != "None" else None


class PaimonTableAdminOperator(PaimonTableOperator):
    """Run one table administration procedure (see the module docstring).

    :param procedure: one of :data:`ADMIN_PROCEDURES` (templated).
    :param partitions: ``drop_partition``: ``'k=v[,k2=v2][;k=v3...]'``; ``reassign_row_id`` and
        ``rewrite_file_index``: the partitions to process (empty: every partition) (templated).
    :param watermark: ``rollback_to_watermark``: a Java long, epoch millis (templated).
    :param source_branch: ``merge_branch``: the branch merged (templated).
    :param target_branch: ``merge_branch``: the branch merged into, default ``main`` (templated).
    :param dry_run: check and report, change nothing (templated; default: the procedure's own
        default, True for all but ``merge_branch``, see :mod:`paimon_core.table.maintenance`).
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "procedure",
        "partitions",
        "watermark",
        "source_branch",
        "target_branch",
        "is_dry_run",
    )
    action = "table_admin"
    actions = ADMIN_PROCEDURES

    def __init__(
        self,
        *,
        procedure: str,
        partitions: str | None = None,
        watermark: int | str | None = None,
        source_branch: str | None = None,
        target_branch: str | None = None,
        dry_run: bool | str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.procedure = procedure
        self.partitions = partitions
        self.watermark = watermark
        self.source_branch = source_branch
        self.target_branch = target_branch
        self.is_dry_run = dry_run

    @property
    def ledger_action(self) -> str:
        name = str(self.procedure).strip()
        return name if name in ADMIN_PROCEDURES else self.action

    def _required(self, value: object, name: str) -> str:
        text = _text(value)
        if text is None:
            raise PaimonTerminalFailure(f"{self.procedure} needs {name}; give it in the run's form")
        return text

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        procedure = str(self.procedure).strip()
        dry_run = resolve_dry_run(self.is_dry_run, procedure)
        if procedure == "remove_unexisting_manifests":
            return table.maintenance.remove_unexisting_manifests(dry_run=dry_run).to_dict()
        if procedure == "drop_partition":
            return table.maintenance.drop_partition(self._required(self.partitions, "partitions"), dry_run=dry_run).to_dict()
        if procedure == "rollback_to_watermark":
            watermark = _int_or_none(self._required(self.watermark, "watermark"), "watermark")
            assert watermark is not None
            return table.maintenance.rollback_to_watermark(watermark, dry_run=dry_run).to_dict()
        if procedure == "merge_branch":
            return table.maintenance.merge_branch(
                self._required(self.source_branch, "source_branch"), _text(self.target_branch), dry_run=dry_run
            ).to_dict()
        if procedure == "purge_files":
            return table.maintenance.purge_files(dry_run=dry_run).to_dict()
        if procedure == "reassign_row_id":
            return table.maintenance.reassign_row_id(_text(self.partitions), dry_run=dry_run).to_dict()
        if procedure == "rewrite_file_index":
            return table.maintenance.rewrite_file_index(_text(self.partitions), dry_run=dry_run).to_dict()
        raise PaimonTerminalFailure(f"procedure must be one of {', '.join(ADMIN_PROCEDURES)}, got {procedure!r}")
