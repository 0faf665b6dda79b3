"""OpenLineage for the Paimon operators: which tables a task read and wrote, at which snapshots.

Every operator reports its table as an OpenLineage dataset named ``db.table`` in the namespace of
its warehouse (:func:`warehouse_namespace`: ``file:///data/wh``, ``s3://bucket/wh``), with the
snapshot ids before and after the task (:class:`TableVersion`, captured in ``execute``):

* ``write`` (ingest): the table is an output, at the snapshot the task committed;
* ``rewrite`` (compact): the table is an input at the snapshot compacted and an output at the
  ``COMPACT`` snapshot;
* ``maintain`` (expire, tags, rollback, orphan cleanup, consumers): the table is an output whose
  ``paimon`` facet says what was done (rollback also carries ``lifecycleStateChange: OVERWRITE``);
* a dry run writes nothing: the table is an input only;
* ``compact_database``: every table the job compacted, as an input and an output (the ``COMPACT``
  snapshot), from the job's per-table results.

This module never imports OpenLineage: :class:`PaimonLineageMixin`'s ``get_openlineage_facets_*``
import :mod:`paimon_airflow.utils.lineage_facets` when the OpenLineage provider calls them, so the
operators import and run without the provider. Capturing a :class:`TableVersion` never fails a
task (an unreadable table is logged and reported without version).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from typing import TypeAlias

    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import Dataset
    from openlineage.client.facet_v2 import RunFacet

    from paimon_core import FileStoreTable

    #: What ``get_openlineage_facets_*`` return.
    PaimonLineage: TypeAlias = OperatorLineage[Dataset, RunFacet]

__all__ = [
    "LineageRole",
    "PaimonLineageMixin",
    "TableVersion",
    "capture_table_version",
    "convert_asset_to_openlineage",
    "table_asset_uri",
    "warehouse_namespace",
]

logger = logging.getLogger(__name__)

#: How a task uses its table (see the module docstring).
LineageRole = Literal["write", "rewrite", "maintain"]

#: URL schemes of the same store under another name (Hadoop's S3 connectors, Paimon's ``local``).
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "local": "file", "gcs": "gs"}


def warehouse_namespace(warehouse: str) -> str:
    """The OpenLineage namespace of a warehouse: its URL with the scheme normalised.

    A local path becomes ``file:///abs/path``; ``s3a://``/``s3n://`` become ``s3://``; user
    info (credentials), query and a trailing slash are dropped, so every spelling of one
    warehouse gives one namespace (``/data/wh/``, ``file:/data/wh`` and ``file:///data/wh``).
    """
    text = str(warehouse).strip()
    if not text:
        raise ValueError("warehouse is empty")
    if "://" not in text and not text.startswith("file:"):
        return "file://" + os.path.abspath(text).rstrip("/") if text != "/" else "file:///"
    parts = urlsplit(text)
    scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme == "file":
        path = os.path.normpath(parts.path or "/")
        return "file://" + (path if path != "/" else "/")
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    path = parts.path.rstrip("/")
    return f"{scheme}://{host}{path}"


def table_asset_uri(paimon_conn_id: str, identifier: str) -> str:
    """The Airflow asset URI of a table: ``paimon://<conn id>/<db.table>``."""
    return f"paimon://{paimon_conn_id}/{identifier}"


def convert_asset_to_openlineage(asset: Any, lineage_context: Any = None) -> Dataset:
    """An asset ``paimon://<conn id>/<db.table>`` as the OpenLineage dataset the operators report:
    ``db.table`` in the namespace of the connection's warehouse (the provider's
    ``to_openlineage_converter`` of scheme ``paimon``)."""
    from openlineage.client.event_v2 import Dataset

    from paimon_airflow.hooks.paimon import PaimonHook

    parts = urlsplit(str(asset.uri))
    name = parts.path.strip("/")
    if parts.scheme != "paimon" or not parts.netloc or not name or "/" in name:
        raise ValueError(f"not a Paimon table asset (paimon://<conn id>/<db.table>): {asset.uri}")
    namespace = warehouse_namespace(PaimonHook(paimon_conn_id=parts.netloc).warehouse)
    return Dataset(namespace=namespace, name=name)


@dataclass(frozen=True)
class TableVersion:
    """A table's latest snapshot (and the schema facts OpenLineage shows) at one moment."""

    exists: bool
    snapshot_id: int | None = None
    commit_kind: str | None = None
    file_format: str | None = None
    #: (name, Paimon type, description) per column
    fields: tuple[tuple[str, str, str | None], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "exists": self.exists,
            "snapshot_id": self.snapshot_id,
            "commit_kind": self.commit_kind,
            "file_format": self.file_format,
            "fields": [list(f) for f in self.fields],
        }


def capture_table_version(table: FileStoreTable) -> TableVersion:
    """The table's latest snapshot id and kind, file format and columns (metadata reads only)."""
    snapshot = table.snapshot_manager.latest_snapshot()
    kind = None if snapshot is None else getattr(snapshot.commit_kind, "value", snapshot.commit_kind)
    return TableVersion(
        exists=True,
        snapshot_id=None if snapshot is None else snapshot.id,
        commit_kind=None if kind is None else str(kind),
        file_format=table.options.file_format,
        fields=tuple((f.name, str(f.type), f.description) for f in table.schema.fields),
    )


class PaimonLineageMixin:
    """``get_openlineage_facets_on_start/complete/failure`` for an operator over one Paimon table.

    The operator overrides :attr:`lineage_role` if it writes data and, in ``execute``, calls
    :meth:`_lineage_capture` before and after its work and stores its result in ``_lineage_result``.
    """

    table: str
    paimon_conn_id: str
    _lineage_warehouse: str | None = None
    _lineage_before: TableVersion | None = None
    _lineage_after: TableVersion | None = None
    _lineage_result: Mapping[str, Any] | None = None

    @property
    def lineage_role(self) -> LineageRole:
        """How the task uses its table (``maintain`` unless an operator says otherwise)."""
        return "maintain"

    @property
    def lineage_tables_from_result(self) -> bool:
        """Whether the tables are the result's ``tables`` (``compact_database``), not ``table``."""
        return False

    @property
    def lineage_action(self) -> str:
        """The Paimon action the task performs (``compact``, ``expire_snapshots`` ...)."""
        return str(getattr(self, "action", None) or getattr(self, "job", None) or type(self).__name__)

    def _lineage_dry_run(self) -> bool:
        """Whether the operator is configured not to write (before its result says so)."""
        resolved = getattr(self, "ledger_dry_run", None)  # in-process operators: None -> the action's default
        if isinstance(resolved, bool):
            return resolved
        for name in ("is_dry_run", "compact_dry_run", "orphan_dry_run"):
            value = getattr(self, name, None)
            if value is not None:
                return str(value).strip().lower() in ("true", "1", "yes")
        return "--dry-run" in [str(a) for a in getattr(self, "job_args", ())]

    def _lineage_capture(self, table: FileStoreTable | None, *, hook: Any = None) -> TableVersion | None:
        """The table's version now; with ``table=None``, loaded through ``hook``. Never raises."""
        try:
            if hook is not None and self._lineage_warehouse is None:
                self._lineage_warehouse = str(hook.warehouse)
            if table is not None:
                return capture_table_version(table)
            from paimon_core.exceptions import TableNotFoundError

            try:
                loaded = hook.get_catalog().get_table(str(self.table).strip())
            except TableNotFoundError:
                return TableVersion(exists=False)
            return capture_table_version(loaded)
        except Exception:  # noqa: BLE001 - lineage is best effort; it never fails the task
            logger.warning("Could not read the version of %s for lineage", self.table, exc_info=True)
            return None

    def _lineage_namespace(self) -> str:
        warehouse = self._lineage_warehouse
        if warehouse is None:
            from paimon_airflow.hooks.paimon import PaimonHook

            warehouse = PaimonHook(paimon_conn_id=self.paimon_conn_id).warehouse
        return warehouse_namespace(warehouse)

    def _lineage(self, *, state: Literal["start", "complete", "failure"]) -> PaimonLineage:
        from paimon_airflow.utils.lineage_facets import build_operator_lineage

        # a failed multi-table job still names the tables it compacted before the failure
        with_result = state == "complete" or (state == "failure" and self.lineage_tables_from_result)
        result = self._lineage_result if with_result else None
        dry_run = bool(result.get("dry_run")) if result and "dry_run" in result else self._lineage_dry_run()
        if self.lineage_tables_from_result:
            from paimon_airflow.utils.lineage_facets import build_tables_lineage

            return build_tables_lineage(
                namespace=self._lineage_namespace(), action=self.lineage_action, result=result, dry_run=dry_run
            )
        return build_operator_lineage(
            namespace=self._lineage_namespace(),
            name=str(self.table).strip(),
            action=self.lineage_action,
            role=self.lineage_role,
            before=self._lineage_before,
            after=self._lineage_after if state != "start" else None,
            result=result,
            dry_run=dry_run,
        )

    def get_openlineage_facets_on_start(self) -> PaimonLineage:
        """The table the task will read or write (no snapshot ids yet)."""
        return self._lineage(state="start")

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> PaimonLineage:
        """The table at the snapshots before and after the task, with what it did."""
        return self._lineage(state="complete")

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> PaimonLineage:
        """The table the task failed on, at the snapshots seen (a failed commit wrote none)."""
        return self._lineage(state="failure")
