"""In-process Paimon maintenance operators: metadata work in the task process, no JVM.

Each operator loads its table through :class:`~paimon_airflow.hooks.paimon.PaimonHook`, makes one
``paimon_core`` maintenance call and returns the result's ``to_dict()`` (pushed to XCom as
``return_value``) with ``table`` added. Terminal errors (missing table or tag, bad argument, a
safety refusal) fail the task without retries; transient ones (commit conflicts, I/O) retry
(see :mod:`paimon_airflow.utils.errors`).

Retries are safe: expiry, tag creation/deletion, rollback, consumer reset and orphan cleanup
leave the same table when run twice (a tag that already exists on the chosen snapshot, a tag
already deleted, a rollback already done are no-ops), so a retried task never changes the table
twice. None of these calls writes a data snapshot.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowSkipException

from paimon_airflow.hooks.paimon import PaimonHook
from paimon_airflow.utils.errors import PaimonTerminalFailure, paimon_errors
from paimon_airflow.utils.lineage import PaimonLineageMixin

if TYPE_CHECKING:
    from airflow.sdk import Context

    from paimon_core import FileStoreTable
    from paimon_core.tag.tag_result import TagResult
    from paimon_core.utils.time_util import Duration, TimePoint

__all__ = [
    "DEFAULT_ORPHAN_MIN_AGE",
    "PaimonCreateTagOperator",
    "PaimonDeleteTagOperator",
    "PaimonExpireChangelogsOperator",
    "PaimonExpireSnapshotsOperator",
    "PaimonExpireTagsOperator",
    "PaimonRemoveOrphanFilesOperator",
    "PaimonResetConsumerOperator",
    "PaimonRollbackOperator",
    "PaimonTableOperator",
    "resolve_dry_run",
]

#: Orphan cleanup refuses a cutoff closer to now than this (a file younger than the longest
#: running writer may belong to a commit in flight).
DEFAULT_ORPHAN_MIN_AGE = dt.timedelta(days=1)


def _time_or_none(value: TimePoint | None) -> TimePoint | None:
    """A rendered template's empty string or ``None`` means "not given"."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


def _int_or_none(value: int | str | None, name: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise PaimonTerminalFailure(f"{name} must be an integer, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise PaimonTerminalFailure(f"{name} must be an integer, got {value!r}") from None


def _bool(value: bool | str, name: str) -> bool:
    """A flag, also as a rendered template (``"True"``/``"false"``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", ""):
        return False
    raise PaimonTerminalFailure(f"{name} must be true or false, got {value!r}")


def resolve_dry_run(value: bool | str | None, action: str) -> bool:
    """A task's ``dry_run``: the given flag (also a rendered template), or with ``None`` the
    action's own default (:func:`paimon_core.table.maintenance.dry_run_defaults`: True for the
    calls that drop something on request, False for retention and the rest)."""
    if value is None or (isinstance(value, str) and value.strip() == "None"):
        from paimon_core.table.maintenance import dry_run_defaults

        return dry_run_defaults().get(action, False)
    return _bool(value, "dry_run")


def _bool_or_false(value: bool | str) -> bool:
    try:
        return _bool(value, "flag")
    except PaimonTerminalFailure:
        return False


def _snapshot_dict(snapshot: Any) -> dict[str, Any]:
    return {
        "snapshot_id": snapshot.id,
        "commit_time_millis": snapshot.time_millis,
        "commit_kind": str(getattr(snapshot, "commit_kind", "")) or None,
        "record_count": snapshot.total_record_count,
    }


def _tag_dict(tag: TagResult) -> dict[str, Any]:
    """The keys :func:`_snapshot_dict` gives, from a tag call's result."""
    return {
        "snapshot_id": tag.snapshot_id,
        "commit_time_millis": tag.commit_time_millis,
        "commit_kind": tag.commit_kind,
        "record_count": tag.record_count,
    }


class PaimonTableOperator(PaimonLineageMixin, BaseOperator):
    """Base of the in-process operators: one table, one maintenance call.

    OpenLineage (with the provider installed): the table is the task's output, with the snapshot
    ids before and after and the result in its ``paimon`` facet (a dry run: an input only; see
    :mod:`paimon_airflow.utils.lineage`).

    :param table: ``db.table`` (templated).
    :param paimon_conn_id: the ``paimon`` connection of the warehouse (templated).
    """

    template_fields: Sequence[str] = ("table", "paimon_conn_id")
    ui_color = "#c9e4f6"
    action: ClassVar[str] = "maintenance"
    #: The maintenance actions this operator can run (default: ``action`` alone); its ``dry_run``
    #: default agrees with each one's (tests/unit/test_dry_run_defaults.py).
    actions: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, *, table: str, paimon_conn_id: str = PaimonHook.default_conn_name, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.paimon_conn_id = paimon_conn_id

    @property
    def ledger_action(self) -> str:
        """The procedure this task runs, as the maintenance ledger names it (default ``action``)."""
        return self.action

    @property
    def ledger_dry_run(self) -> bool:
        """Whether this task is a dry run (its ledger row's status is ``dry_run``)."""
        try:
            return resolve_dry_run(getattr(self, "is_dry_run", False), self.ledger_action)
        except PaimonTerminalFailure:
            return False

    def execute(self, context: Context) -> dict[str, Any]:
        """Load the table, run :meth:`run`, log and return its JSON-safe result. The call is one
        row of the warehouse's maintenance ledger (:mod:`paimon_airflow.operators.ledger`)."""
        from paimon_airflow.operators.ledger import task_ledger
        from paimon_core.ledger import record_action

        with paimon_errors(f"{self.action} on {self.table}"):
            hook = PaimonHook(paimon_conn_id=self.paimon_conn_id)
            with (
                task_ledger(context, hook),
                record_action(
                    str(self.table).strip(),
                    self.ledger_action,
                    entry_point="airflow",
                    catalog=hook.get_catalog(),
                    dry_run=self.ledger_dry_run,
                ) as recording,
            ):
                table = hook.get_table(self.table)
                recording.set_table(table)
                self._lineage_before = self._lineage_capture(table, hook=hook)
                result = dict(self.run(table, context))
                recording.set_result(result)
        result.setdefault("table", self.table)
        self._lineage_after = self._lineage_capture(table)
        self._lineage_result = result
        self.log.info("%s on %s: %s", self.action, self.table, result)
        return result

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        """The maintenance call; returns the result as a JSON-safe mapping."""
        raise NotImplementedError


class PaimonExpireSnapshotsOperator(PaimonTableOperator):
    """Expire snapshots (Paimon ``sys.expire_snapshots``); unset arguments come from the table options."""

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "retain_max",
        "retain_min",
        "older_than",
        "is_dry_run",
    )
    action = "expire_snapshots"

    def __init__(
        self,
        *,
        retain_max: int | str | None = None,
        retain_min: int | str | None = None,
        older_than: TimePoint | None = None,
        max_deletes: int | None = None,
        dry_run: bool | str = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.retain_max = retain_max
        self.retain_min = retain_min
        self.older_than = older_than
        self.max_deletes = max_deletes
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        return table.maintenance.expire_snapshots(
            retain_max=_int_or_none(self.retain_max, "retain_max"),
            retain_min=_int_or_none(self.retain_min, "retain_min"),
            older_than=_time_or_none(self.older_than),
            max_deletes=self.max_deletes,
            dry_run=_bool(self.is_dry_run, "dry_run"),
        ).to_dict()


class PaimonExpireChangelogsOperator(PaimonExpireSnapshotsOperator):
    """Expire long-lived changelogs (``changelog.num-retained.*`` / ``changelog.time-retained``)."""

    action = "expire_changelogs"

    def __init__(self, *, delete_all: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delete_all = delete_all

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        return table.maintenance.expire_changelogs(
            retain_max=_int_or_none(self.retain_max, "retain_max"),
            retain_min=_int_or_none(self.retain_min, "retain_min"),
            older_than=_time_or_none(self.older_than),
            max_deletes=self.max_deletes,
            delete_all=self.delete_all,
            dry_run=_bool(self.is_dry_run, "dry_run"),
        ).to_dict()


class PaimonCreateTagOperator(PaimonTableOperator):
    """Tag the table as it was at a point in time: one tag per logical date, backfill-safe.

    The tagged snapshot is the latest one committed at or before ``snapshot_time`` (default: the
    run's ``data_interval_end``), so a backfill of an old day tags that day's state, not today's.
    A tag that already exists is left alone (a retry or a re-run is a no-op; ``created`` false),
    also when another writer creates it concurrently; with ``ignore_if_exists=False`` (Paimon's
    ``create_tag`` default) an existing tag fails the task instead, without retries.
    No snapshot that old: nothing is tagged (``created`` false, ``reason`` says why).

    :param tag_name: templated, default the data interval's first day (``{{ data_interval_start | ds }}``,
        Paimon's daily tag name ``2024-01-31``): the run of interval [D, D+1) tags D.
    :param snapshot_time: templated time (ISO string, datetime or epoch millis).
    :param snapshot_id: tag this snapshot instead of choosing by time.
    :param time_retained: the tag's retention (``'7 d'``, a timedelta or millis), for ``expire_tags``.
    :param period: ``daily`` (default) or ``none``: no tags for this table (the task is skipped), as
        a table registry says per table.
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "tag_name",
        "snapshot_time",
        "snapshot_id",
        "time_retained",
        "period",
    )
    action = "create_tag"

    def __init__(
        self,
        *,
        tag_name: str = "{{ data_interval_start | ds }}",
        snapshot_time: TimePoint | None = "{{ data_interval_end }}",
        snapshot_id: int | str | None = None,
        time_retained: Duration | None = None,
        period: str = "daily",
        ignore_if_exists: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.period = period
        self.ignore_if_exists = ignore_if_exists
        self.tag_name = tag_name
        self.snapshot_time = snapshot_time
        self.snapshot_id = snapshot_id
        self.time_retained = time_retained

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        from paimon_core.utils.time_util import to_epoch_millis

        if str(self.period).strip().lower() == "none":
            raise AirflowSkipException(f"{table.name}: tag period 'none'")
        name = str(self.tag_name).strip()
        existing = table.tag_manager.try_get(name)
        if existing is not None:
            return self._exists(table, name, existing)
        snapshot_id = _int_or_none(self.snapshot_id, "snapshot_id")
        time_retained = None if self.time_retained in (None, "") else self.time_retained
        if snapshot_id is None:
            at = _time_or_none(self.snapshot_time)
            if at is None:
                snapshot = table.snapshot_manager.latest_snapshot()
                at_millis = None
            else:
                at_millis = to_epoch_millis(at, name="snapshot_time")
                snapshot = table.snapshot_manager.earlier_or_equal_time_millis(at_millis)
            if snapshot is None:
                self.log.warning("%s has no snapshot at or before %s: no tag %s", table.name, at, name)
                return {
                    "tag_name": name,
                    "created": False,
                    "reason": "no_snapshot",
                    "snapshot_time_millis": at_millis,
                }
            snapshot_id = snapshot.id
        from paimon_core.exceptions import TagAlreadyExistsError

        try:
            tag = table.maintenance.create_tag(name, snapshot_id, time_retained=time_retained)
        except TagAlreadyExistsError:  # created by someone else since try_get
            raced = table.tag_manager.try_get(name)
            if raced is None or not self.ignore_if_exists:
                raise
            return self._exists(table, name, raced)
        return {"tag_name": name, "created": True, **_tag_dict(tag)}

    def _exists(self, table: FileStoreTable, name: str, existing: Any) -> dict[str, Any]:
        if not self.ignore_if_exists:
            raise PaimonTerminalFailure(
                f"Tag {name} of {table.name} already exists (snapshot {existing.id}); ignore_if_exists is off"
            )
        self.log.info("Tag %s of %s exists (snapshot %d): nothing to do", name, table.name, existing.id)
        return {"tag_name": name, "created": False, "reason": "exists", **_snapshot_dict(existing)}


class PaimonDeleteTagOperator(PaimonTableOperator):
    """Delete tags (and the files only they held); tags already gone are skipped unless ``ignore_missing=False``."""

    template_fields: Sequence[str] = (*PaimonTableOperator.template_fields, "tag_names", "is_dry_run")
    action = "delete_tag"

    def __init__(
        self,
        *,
        tag_names: str | Sequence[str],
        ignore_missing: bool = True,
        dry_run: bool | str = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tag_names = tag_names
        self.ignore_missing = ignore_missing
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        raw = self.tag_names.split(",") if isinstance(self.tag_names, str) else list(self.tag_names)
        names = [n.strip() for n in raw if n.strip()]
        if not names:
            raise PaimonTerminalFailure("tag_names is empty")
        missing: list[str] = []
        if self.ignore_missing:
            present = set(table.tag_manager.list_names())
            missing = [n for n in names if n not in present]
            names = [n for n in names if n in present]
            if not names:
                return {
                    "deleted_tags": [],
                    "missing_tags": missing,
                    "dry_run": _bool(self.is_dry_run, "dry_run"),
                }
        out = table.maintenance.delete_tag(names, dry_run=_bool(self.is_dry_run, "dry_run")).to_dict()
        out["missing_tags"] = missing
        return out


class PaimonExpireTagsOperator(PaimonTableOperator):
    """Delete tags past their ``time_retained`` (or created before ``older_than``)."""

    template_fields: Sequence[str] = (*PaimonTableOperator.template_fields, "older_than", "is_dry_run")
    action = "expire_tags"

    def __init__(
        self, *, older_than: TimePoint | None = None, dry_run: bool | str = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.older_than = older_than
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        return table.maintenance.expire_tags(
            older_than=_time_or_none(self.older_than), dry_run=_bool(self.is_dry_run, "dry_run")
        ).to_dict()


class PaimonRollbackOperator(PaimonTableOperator):
    """Roll the table back to a snapshot id, a tag or a time (metadata only; later snapshots go).

    Exactly one of ``snapshot_id``, ``tag`` or ``timestamp`` (Paimon ``rollback_to`` /
    ``rollback_to_timestamp``). ``dry_run`` defaults to the call's own default: True for these
    two (they delete the later snapshots; pass ``dry_run=False`` to roll back), False for
    ``as_latest``. A retry after a landed rollback finds the target already latest.

    ``as_latest`` (templated): Paimon ``rollback_to_as_latest`` instead: a new OVERWRITE snapshot
    with the target's content, nothing deleted (a ``timestamp`` picks the newest snapshot at or
    before it). A retry after a landed attempt finds the latest snapshot already has the target's
    files and commits nothing (``done_before``).
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "snapshot_id",
        "tag",
        "timestamp",
        "as_latest",
        "is_dry_run",
    )
    action = "rollback"
    actions = ("rollback_to", "rollback_to_timestamp", "rollback_to_as_latest")

    @property
    def ledger_action(self) -> str:
        """``rollback_to_as_latest``, ``rollback_to_timestamp`` or ``rollback_to``."""
        if _bool_or_false(self.as_latest):
            return "rollback_to_as_latest"
        return "rollback_to_timestamp" if _time_or_none(self.timestamp) is not None else "rollback_to"

    def __init__(
        self,
        *,
        snapshot_id: int | str | None = None,
        tag: str | None = None,
        timestamp: TimePoint | None = None,
        as_latest: bool | str = False,
        dry_run: bool | str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.snapshot_id = snapshot_id
        self.tag = tag
        self.timestamp = timestamp
        self.as_latest = as_latest
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        snapshot_id = _int_or_none(self.snapshot_id, "snapshot_id")
        tag = (self.tag or "").strip() or None
        timestamp = _time_or_none(self.timestamp)
        given = [x for x in (snapshot_id, tag, timestamp) if x is not None]
        if len(given) != 1:
            raise PaimonTerminalFailure("rollback needs exactly one of snapshot_id, tag, timestamp")
        if _bool(self.as_latest, "as_latest"):
            from paimon_airflow.operators.table_procedures import rollback_as_latest

            dry_run = resolve_dry_run(self.is_dry_run, "rollback_to_as_latest")
            return rollback_as_latest(table, snapshot_id, tag, timestamp, dry_run=dry_run)
        if timestamp is not None:
            dry_run = resolve_dry_run(self.is_dry_run, "rollback_to_timestamp")
            return table.maintenance.rollback_to_timestamp(timestamp, dry_run=dry_run).to_dict()
        target: int | str = snapshot_id if snapshot_id is not None else str(tag)
        return table.maintenance.rollback_to(target, dry_run=resolve_dry_run(self.is_dry_run, "rollback_to")).to_dict()


class PaimonResetConsumerOperator(PaimonTableOperator):
    """Move a consumer to ``next_snapshot_id``, or delete it when that is ``None``.

    ``dry_run`` reports the consumer's current position and the change, writing nothing.
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "consumer_id",
        "next_snapshot_id",
        "is_dry_run",
    )
    action = "reset_consumer"

    def __init__(
        self,
        *,
        consumer_id: str,
        next_snapshot_id: int | str | None = None,
        dry_run: bool | str = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.consumer_id = consumer_id
        self.next_snapshot_id = next_snapshot_id
        self.is_dry_run = dry_run

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        next_id = _int_or_none(self.next_snapshot_id, "next_snapshot_id")
        cm = table.consumer_manager
        cm.validate_id(self.consumer_id)
        if _bool(self.is_dry_run, "dry_run"):
            current = cm.consumer(self.consumer_id)
            sm = table.snapshot_manager
            return {
                "consumer_id": self.consumer_id,
                "previous_next_snapshot_id": current.next_snapshot if current is not None else None,
                "next_snapshot_id": next_id,
                "deleted": next_id is None and current is not None,
                "earliest_snapshot_id": sm.earliest_snapshot_id(),
                "latest_snapshot_id": sm.latest_snapshot_id(),
                "dry_run": True,
            }
        out = table.maintenance.reset_consumer(self.consumer_id, next_id).to_dict()
        out["dry_run"] = False
        return out


class PaimonRemoveOrphanFilesOperator(PaimonTableOperator):
    """Delete files nothing references, in the task process (small tables; the Spark job for big ones).

    The cutoff is ``older_than`` if given, else the run's ``data_interval_end`` (or now, for a
    manual run without one) minus ``older_than_days`` (templated; default 1). A cutoff closer to now than ``min_age``
    (default 1 day: longer than any write or compaction job takes) is refused: a younger file
    may belong to a commit still in flight. ``dry_run`` defaults to True (reports, deletes nothing).
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "older_than",
        "older_than_days",
        "is_dry_run",
    )
    action = "remove_orphan_files"

    def __init__(
        self,
        *,
        older_than: TimePoint | None = None,
        older_than_days: int | str = 1,
        min_age: dt.timedelta = DEFAULT_ORPHAN_MIN_AGE,
        dry_run: bool | str = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.older_than = older_than
        self.older_than_days = older_than_days
        self.min_age = min_age
        self.is_dry_run = dry_run

    def cutoff_millis(self, context: Context, now_millis: int) -> int:
        """The cutoff in epoch millis; :class:`PaimonTerminalFailure` if it is too recent."""
        from paimon_core.utils.time_util import to_epoch_millis

        explicit = _time_or_none(self.older_than)
        if explicit is not None:
            cutoff = to_epoch_millis(explicit, name="older_than")
        else:
            anchor = context.get("data_interval_end")
            base = to_epoch_millis(anchor, name="data_interval_end") if anchor is not None else now_millis
            days = _int_or_none(self.older_than_days, "older_than_days")
            cutoff = min(base, now_millis) - (1 if days is None else days) * 86_400_000
        min_age_ms = int(self.min_age.total_seconds() * 1000)
        if now_millis - cutoff < min_age_ms:
            raise PaimonTerminalFailure(
                f"remove_orphan_files on {self.table}: cutoff {dt.datetime.fromtimestamp(cutoff / 1000, dt.UTC)} "
                f"is less than {self.min_age} ago; files that young may belong to a commit in flight"
            )
        return cutoff

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        cutoff = self.cutoff_millis(context, table.clock.now_millis())
        out = table.maintenance.remove_orphan_files(
            older_than=cutoff, dry_run=_bool(self.is_dry_run, "dry_run")
        ).to_dict()
        out.setdefault("older_than_millis", cutoff)
        return out
