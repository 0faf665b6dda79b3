"""OpenLineage datasets and facets of a Paimon task (imports the OpenLineage provider and client).

Imported only when the OpenLineage provider asks an operator for its lineage
(:class:`paimon_airflow.utils.lineage.PaimonLineageMixin`). Each dataset carries the standard
``version`` (the snapshot id), ``storage`` (``paimon``, file format) and ``schema`` facets; the
written table also carries the custom ``paimon`` facet (:class:`PaimonDatasetFacet`) and, for an
ingest, ``outputStatistics`` (rows of the committed snapshot).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attr
from airflow.providers.openlineage.extractors import OperatorLineage
from openlineage.client.event_v2 import Dataset, InputDataset, OutputDataset
from openlineage.client.facet_v2 import (
    DatasetFacet,
    RunFacet,
    dataset_version_dataset,
    lifecycle_state_change_dataset,
    output_statistics_output_dataset,
    schema_dataset,
    storage_dataset,
)

from paimon_airflow.utils.lineage import LineageRole, TableVersion

__all__ = ["PAIMON_FACET_SCHEMA_URL", "PaimonDatasetFacet", "build_operator_lineage", "build_tables_lineage"]

#: The facet's ``_schemaURL``: a name, not a published JSON schema (the fields are documented here).
PAIMON_FACET_SCHEMA_URL = "urn:paimon-py:openlineage:PaimonDatasetFacet:1"

#: Result keys not copied into the facet: the event says them already, or they are bulky.
_SKIPPED_RESULT_KEYS = frozenset({"job", "status", "table", "seconds", "elapsed_ms", "source"})
#: Longest list of scalars copied from the result into the facet.
_MAX_LIST = 50


@attr.define
class PaimonDatasetFacet(DatasetFacet):
    """What a Paimon task did to a table, with the snapshot ids before and after.

    ``snapshot_id`` is the table's version after the task (the snapshot it committed, for a
    write), ``previous_snapshot_id`` the latest before it; ``committed_snapshot_ids`` the
    snapshots the task itself committed (none for expire, tags, orphan cleanup, rollback).
    """

    action: str
    snapshot_id: int | None = attr.field(default=None)
    previous_snapshot_id: int | None = attr.field(default=None)
    committed_snapshot_ids: list[int] = attr.field(factory=list)
    commit_kind: str | None = attr.field(default=None)
    dry_run: bool = attr.field(default=False)
    #: scalar fields of the operator's result (expired snapshot ids, tag name, deleted files ...)
    result: dict[str, Any] = attr.field(factory=dict)

    _additional_skip_redact: ClassVar[list[str]] = [
        "action",
        "snapshot_id",
        "previous_snapshot_id",
        "committed_snapshot_ids",
        "commit_kind",
        "dry_run",
    ]

    @staticmethod
    def _get_schema() -> str:
        return PAIMON_FACET_SCHEMA_URL


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _scalar_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result's scalars and short lists of scalars (no paths, plans or per-bucket detail)."""
    out: dict[str, Any] = {}
    for key, value in sorted(result.items()):
        if key in _SKIPPED_RESULT_KEYS or key.endswith("paths"):
            continue
        if value is None or isinstance(value, bool | int | float | str):
            out[key] = value
        elif (
            isinstance(value, list | tuple)
            and len(value) <= _MAX_LIST
            and all(isinstance(v, bool | int | float | str) for v in value)
        ):
            out[key] = list(value)
    return out


def _committed(role: LineageRole, result: Mapping[str, Any] | None) -> list[int]:
    """The snapshots the task committed (from its result)."""
    if not result or role == "maintain":
        return []
    ids = [i for i in (_int(v) for v in result.get("snapshot_ids") or ()) if i is not None]
    single = _int(result.get("snapshot_id"))
    if single is not None and single not in ids:
        ids.append(single)
    return sorted(ids)


def _dataset_facets(version: int | None, table: TableVersion | None) -> dict[str, DatasetFacet]:
    facets: dict[str, DatasetFacet] = {}
    if version is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(version))
    if table is not None and table.exists:
        facets["storage"] = storage_dataset.StorageDatasetFacet(
            storageLayer="paimon", fileFormat=table.file_format
        )
        if table.fields:
            facets["schema"] = schema_dataset.SchemaDatasetFacet(
                fields=[
                    schema_dataset.SchemaDatasetFacetFields(
                        name=name, type=type_, description=description, ordinal_position=i + 1
                    )
                    for i, (name, type_, description) in enumerate(table.fields)
                ]
            )
    return facets


def build_operator_lineage(
    *,
    namespace: str,
    name: str,
    action: str,
    role: LineageRole,
    before: TableVersion | None,
    after: TableVersion | None,
    result: Mapping[str, Any] | None,
    dry_run: bool,
) -> OperatorLineage[Dataset, RunFacet]:
    """Inputs and outputs of one task over table ``name`` (see :mod:`paimon_airflow.utils.lineage`).

    ``result`` is None on start and on failure; then only the versions seen are reported.
    """
    res: Mapping[str, Any] = result or {}
    committed = _committed(role, result)
    previous = before.snapshot_id if before is not None else None
    if action.startswith("rollback"):
        previous = _int(res.get("previous_snapshot_id")) if "previous_snapshot_id" in res else previous
    read_version = _int(res.get("planned_snapshot_id")) if role == "rewrite" else None
    if read_version is None:
        read_version = previous
    if committed:
        version: int | None = committed[-1]
    elif action.startswith("rollback") and "current_snapshot_id" in res:
        version = _int(res.get("current_snapshot_id"))
    else:
        version = after.snapshot_id if after is not None else None
    commit_kind = res.get("commit_kind") if committed else None
    if committed and commit_kind is None and after is not None and after.snapshot_id == committed[-1]:
        commit_kind = after.commit_kind
    schema_source = after if after is not None and after.exists else before

    inputs: list[Dataset] = []
    outputs: list[Dataset] = []
    paimon = PaimonDatasetFacet(
        action=action,
        snapshot_id=version if not dry_run else read_version,
        previous_snapshot_id=previous,
        committed_snapshot_ids=committed,
        commit_kind=None if commit_kind is None else str(commit_kind),
        dry_run=dry_run,
        result=_scalar_result(res),
    )
    if dry_run:
        facets = _dataset_facets(read_version, schema_source)
        facets["paimon"] = paimon
        return OperatorLineage(inputs=[InputDataset(namespace=namespace, name=name, facets=facets)])
    if role == "rewrite":
        inputs.append(
            InputDataset(namespace=namespace, name=name, facets=_dataset_facets(read_version, before))
        )
    facets = _dataset_facets(version, schema_source)
    facets["paimon"] = paimon
    lifecycle = _lifecycle(role, action, before, res)
    if lifecycle is not None:
        facets["lifecycleStateChange"] = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
            lifecycleStateChange=lifecycle
        )
    output_facets: dict[str, Any] = {}
    rows = _int(res.get("delta_record_count"))
    if role == "write" and rows is not None and not res.get("already_committed"):
        output_facets["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
            rowCount=rows
        )
    outputs.append(OutputDataset(namespace=namespace, name=name, facets=facets, outputFacets=output_facets))
    return OperatorLineage(inputs=inputs, outputs=outputs)


def _lifecycle(
    role: LineageRole, action: str, before: TableVersion | None, result: Mapping[str, Any]
) -> lifecycle_state_change_dataset.LifecycleStateChange | None:
    """CREATE for an ingest that created its table, OVERWRITE for an overwrite or a rollback."""
    change = lifecycle_state_change_dataset.LifecycleStateChange
    if action.startswith("rollback") and result:
        return change.OVERWRITE
    if role == "write":
        if before is not None and not before.exists:
            return change.CREATE
        if result.get("overwrite"):
            return change.OVERWRITE
    return None


def build_tables_lineage(
    *, namespace: str, action: str, result: Mapping[str, Any] | None, dry_run: bool
) -> OperatorLineage[Dataset, RunFacet]:
    """A multi-table job's lineage from its per-table results (``tables``: ``table``, ``status``,
    ``snapshot_id``): each table it compacted as an input and an output at the ``COMPACT``
    snapshot; for a dry run, each table planned as an input. None before the job ran (on start)."""
    inputs: list[Dataset] = []
    outputs: list[Dataset] = []
    for entry in (result or {}).get("tables") or ():
        name = str(entry.get("table") or "").strip() if isinstance(entry, Mapping) else ""
        if not name or entry.get("status") != "ok":
            continue
        snapshot_id = _int(entry.get("snapshot_id"))
        paimon = PaimonDatasetFacet(
            action=action,
            snapshot_id=snapshot_id,
            committed_snapshot_ids=[] if snapshot_id is None or dry_run else [snapshot_id],
            commit_kind=None if snapshot_id is None or dry_run else "COMPACT",
            dry_run=dry_run,
            result=_scalar_result(entry),
        )
        if dry_run:
            inputs.append(InputDataset(namespace=namespace, name=name, facets={"paimon": paimon}))
        elif snapshot_id is not None:  # a table with nothing to compact is left unchanged
            inputs.append(InputDataset(namespace=namespace, name=name))
            facets = _dataset_facets(snapshot_id, None)
            facets["paimon"] = paimon
            outputs.append(OutputDataset(namespace=namespace, name=name, facets=facets))
    return OperatorLineage(inputs=inputs, outputs=outputs)
