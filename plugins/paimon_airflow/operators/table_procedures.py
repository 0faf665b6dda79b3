"""In-process operators for the remaining table procedures: tag management, clear consumers and
remove unexisting files (no JVM).

Same shape as :mod:`paimon_airflow.operators.maintenance`: the table comes from the ``paimon``
connection, one ``paimon_core`` call runs in the task process, its result is the XCom value. The
same procedures run as ``python -m spark_jobs create_tag_from_timestamp`` / ``replace_tag`` /
``rename_tag`` / ``expire_tags`` / ``trigger_tag_automatic_creation`` / ``clear_consumers`` /
``remove_unexisting_files`` through :class:`~paimon_airflow.operators.spark_job.PaimonSparkJobOperator`.

Every operator takes ``dry_run`` (a manual DAG's ``plan`` task): the same checks, nothing written.
Retries are safe: a tag created or renamed by the attempt that failed afterwards is recognised
(``done_before`` in the result), consumers already cleared are not there to clear, and a retried
``remove_unexisting_files`` finds nothing left to remove.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_airflow.operators.maintenance import (
    PaimonTableOperator,
    _bool,
    _int_or_none,
    _snapshot_dict,
    _tag_dict,
    _time_or_none,
)
from paimon_airflow.utils.errors import PaimonTerminalFailure

if TYPE_CHECKING:
    from airflow.sdk import Context

    from paimon_core import FileStoreTable
    from paimon_core.utils.time_util import Duration, TimePoint

__all__ = [
    "TAG_ACTIONS",
    "PaimonClearConsumersOperator",
    "PaimonManageTagsOperator",
    "PaimonRemoveUnexistingFilesOperator",
    "rollback_as_latest",
]

#: What :class:`PaimonManageTagsOperator` does: one of Paimon's tag procedures.
TAG_ACTIONS = ("create_from_timestamp", "replace", "rename", "expire", "trigger_automatic_creation")


#: ``tag_action`` -> Paimon's procedure (the ledger's action).
_TAG_PROCEDURES = {
    "create_from_timestamp": "create_tag_from_timestamp",
    "replace": "replace_tag",
    "rename": "rename_tag",
    "expire": "expire_tags",
    "trigger_automatic_creation": "trigger_tag_automatic_creation",
}


def _text(value: str | None) -> str | None:
    """A rendered template's empty string or ``None`` means "not given"."""
    text = "" if value is None else str(value).strip()
    return text or None


class PaimonManageTagsOperator(PaimonTableOperator):
    """One tag procedure, chosen by ``tag_action`` (templated, so a manual DAG's Param picks it):

    * ``create_from_timestamp``: tag ``tag`` on the first snapshot committed at or after
      ``timestamp`` (Paimon ``sys.create_tag_from_timestamp``), retained ``time_retained``;
    * ``replace``: point the existing ``tag`` at ``snapshot_id`` (default latest; ``replace_tag``);
    * ``rename``: rename ``tag`` to ``target_tag`` (``rename_tag``);
    * ``expire``: delete tags past their retention, or created before ``older_than`` (``expire_tags``);
    * ``trigger_automatic_creation``: create the due ``tag.automatic-creation`` tags
      (``trigger_tag_automatic_creation``) as of ``timestamp`` (default now); its dry run only
      reports the table's auto-tag settings and tags.

    A missing argument, an unknown tag or a taken name fails the task without retries.
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "tag_action",
        "tag",
        "target_tag",
        "snapshot_id",
        "timestamp",
        "time_retained",
        "older_than",
        "is_dry_run",
    )
    action = "manage_tags"
    actions = tuple(_TAG_PROCEDURES.values())

    @property
    def ledger_action(self) -> str:
        """The tag procedure ``tag_action`` names (``create_tag_from_timestamp``, ``replace_tag``...)."""
        return _TAG_PROCEDURES.get(str(self.tag_action).strip(), "manage_tags")

    def __init__(
        self,
        *,
        tag_action: str,
        tag: str | None = None,
        target_tag: str | None = None,
        snapshot_id: int | str | None = None,
        timestamp: TimePoint | None = None,
        time_retained: Duration | None = None,
        older_than: TimePoint | None = None,
        dry_run: bool | str = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tag_action = tag_action
        self.tag = tag
        self.target_tag = target_tag
        self.snapshot_id = snapshot_id
        self.timestamp = timestamp
        self.time_retained = time_retained
        self.older_than = older_than
        self.is_dry_run = dry_run

    def _required(self, value: Any, name: str) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise PaimonTerminalFailure(f"tag action {self.tag_action!r} needs {name}")
        return value.strip() if isinstance(value, str) else value

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        act = str(self.tag_action).strip()
        if act not in TAG_ACTIONS:
            raise PaimonTerminalFailure(f"tag_action must be one of {TAG_ACTIONS}, got {act!r}")
        dry_run = _bool(self.is_dry_run, "dry_run")
        out: dict[str, Any] = {"tag_action": act, "dry_run": dry_run}
        if act == "expire":
            return {
                **out,
                **table.maintenance.expire_tags(older_than=_time_or_none(self.older_than), dry_run=dry_run).to_dict(),
            }
        if act == "trigger_automatic_creation":
            return {**out, **self._trigger(table, dry_run)}
        name = self._required(self.tag, "tag")
        retained = _text(self.time_retained) if isinstance(self.time_retained, str) else self.time_retained
        if act == "create_from_timestamp":
            ts = self._required(_time_or_none(self.timestamp), "timestamp")
            existing = table.tag_manager.try_get(name)
            if existing is not None:  # a retry after a landed attempt, or a name taken (fails below)
                from paimon_core.tag.tag_operations import later_or_equal_time_millis
                from paimon_core.utils.time_util import to_epoch_millis

                first = later_or_equal_time_millis(table.store, to_epoch_millis(ts, name="timestamp"))
                if first is not None and first.id == existing.id:
                    return {**out, "tag": name, "done_before": True, **_snapshot_dict(existing)}
            tag = table.maintenance.create_tag_from_timestamp(name, ts, time_retained=retained, dry_run=dry_run)
            return {**out, "tag": name, **_tag_dict(tag)}
        if act == "replace":
            previous = table.tag_manager.get(name).id
            snapshot_id = _int_or_none(self.snapshot_id, "snapshot_id")
            tag = table.maintenance.replace_tag(name, snapshot_id, time_retained=retained, dry_run=dry_run)
            return {**out, "tag": name, "previous_snapshot_id": previous, **_tag_dict(tag)}
        target = self._required(self.target_tag, "target_tag")
        if not table.tag_manager.exists(name) and table.tag_manager.exists(target):  # renamed by a failed try
            return {
                **out,
                "tag": name,
                "target_tag": target,
                "done_before": True,
                **_snapshot_dict(table.tag_manager.get(target)),
            }
        tag = table.maintenance.rename_tag(name, target, dry_run=dry_run)
        return {**out, "tag": name, "target_tag": target, **_tag_dict(tag)}

    def _trigger(self, table: FileStoreTable, dry_run: bool) -> dict[str, Any]:
        now = _time_or_none(self.timestamp)
        if dry_run:
            opts = table.options
            return {
                "mode": opts.tag_automatic_creation,
                "tags": table.tag_manager.list_names(),
                "latest_snapshot_id": table.snapshot_manager.latest_snapshot_id(),
                "now": now,
            }
        return table.maintenance.trigger_tag_automatic_creation(now=now).to_dict()


class PaimonClearConsumersOperator(PaimonTableOperator):
    """Delete the consumers whose ids fully match ``including_consumers`` (default all) and not
    ``excluding_consumers`` (Paimon ``sys.clear_consumers``); bad regexes fail without retries.
    A cleared consumer no longer holds snapshots back from expiry: stop its reader first.
    ``dry_run`` defaults to True (lists the consumers; pass ``dry_run=False`` to delete them)."""

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "including_consumers",
        "excluding_consumers",
        "is_dry_run",
    )
    action = "clear_consumers"

    def __init__(
        self,
        *,
        including_consumers: str | None = None,
        excluding_consumers: str | None = None,
        dry_run: bool | str = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.including_consumers = including_consumers
        self.excluding_consumers = excluding_consumers
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        return table.maintenance.clear_consumers(
            _text(self.including_consumers) or ".*",
            _text(self.excluding_consumers),
            dry_run=_bool(self.is_dry_run, "dry_run"),
        ).to_dict()


class PaimonRemoveUnexistingFilesOperator(PaimonTableOperator):
    """Remove the table's entries of data files that are gone, in one OVERWRITE commit (Paimon
    ``sys.remove_unexisting_files``), for a table damaged outside Paimon: the rows of those files
    are lost; the rest reads again. Nothing on storage is deleted. ``dry_run`` defaults to True
    (lists the missing files per partition); a concurrent commit that removed one of them makes
    the commit fail and the task retry with a fresh check.

    :param parallelism: existence checks at once (templated).
    """

    template_fields: Sequence[str] = (*PaimonTableOperator.template_fields, "parallelism", "is_dry_run")
    action = "remove_unexisting_files"

    def __init__(
        self, *, parallelism: int | str | None = None, dry_run: bool | str = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.parallelism = parallelism
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        return table.maintenance.remove_unexisting_files(
            dry_run=_bool(self.is_dry_run, "dry_run"),
            parallelism=_int_or_none(self.parallelism, "parallelism"),
        ).to_dict()


def rollback_as_latest(
    table: FileStoreTable,
    snapshot_id: int | None,
    tag: str | None,
    timestamp: TimePoint | None,
    *,
    dry_run: bool,
) -> dict[str, Any]:
    """:class:`~paimon_airflow.operators.maintenance.PaimonRollbackOperator` with ``as_latest``:
    Paimon's ``rollback_to_as_latest`` to a snapshot id, a tag, or the newest snapshot at or before
    ``timestamp``. When the latest snapshot already holds exactly the target's files (a retry after
    a landed attempt) nothing is committed and ``done_before`` is true."""
    from paimon_core.exceptions import SnapshotNotFoundError
    from paimon_core.table.rollback_helper import RollbackHelper
    from paimon_core.utils.time_util import to_epoch_millis

    target: int | str
    if timestamp is not None:
        ts = to_epoch_millis(timestamp, name="timestamp")
        at = table.snapshot_manager.earlier_or_equal_time_millis(ts)
        if at is None:
            raise SnapshotNotFoundError(
                f"Cannot roll back {table.name}: no snapshot was committed at or before {ts}"
            )
        target = at.id
    else:
        target = snapshot_id if snapshot_id is not None else str(tag)
    snapshot, target_tag = RollbackHelper(table).resolve(target)
    latest = table.snapshot_manager.latest_snapshot()
    if latest is not None:
        scan = table.new_file_store_scan()
        live = {e.identifier() for e in scan.live_entries(latest)}
        if live == {e.identifier() for e in scan.live_entries(snapshot)}:
            return {
                "as_latest": True,
                "done_before": True,
                "previous_snapshot_id": latest.id,
                "current_snapshot_id": latest.id,
                "target_snapshot_id": snapshot.id,
                "target_tag": target_tag,
                "dry_run": dry_run,
            }
    return {
        "as_latest": True,
        "done_before": False,
        **table.maintenance.rollback_to_as_latest(target, dry_run=dry_run).to_dict(),
    }
