"""In-process partition operators: expire partitions, mark partitions done (no JVM).

Same shape as :mod:`paimon_airflow.operators.maintenance`: the table comes from the ``paimon``
connection, one ``paimon_core`` call runs in the task process, its ``to_dict()`` is the XCom
result. The same procedures run as ``python -m spark_jobs expire_partitions`` /
``mark_partition_done`` through :class:`~paimon_airflow.operators.spark_job.PaimonSparkJobOperator`.

Retries are safe: a retried expiry finds the dropped partitions gone (nothing to drop, no
snapshot); marking a partition done again only moves its ``_SUCCESS`` modification time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk.exceptions import AirflowSkipException

from paimon_airflow.operators.maintenance import PaimonTableOperator, _bool, _int_or_none
from paimon_airflow.utils.errors import PaimonTerminalFailure

if TYPE_CHECKING:
    from airflow.sdk import Context

    from paimon_core import FileStoreTable

__all__ = ["PaimonExpirePartitionsOperator", "PaimonMarkPartitionDoneOperator"]


def _str_or_none(value: str | None) -> str | None:
    """A rendered template's empty string means "not given"."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


class PaimonExpirePartitionsOperator(PaimonTableOperator):
    """Drop partitions older than ``expiration_time`` in one OVERWRITE commit (Paimon
    ``sys.expire_partitions``); unset arguments come from the table's ``partition.*`` options.

    Old snapshots and tags keep the dropped rows until snapshot expiry removes them. ``dry_run``
    lists the partitions only. With ``skip_when_off`` (the maintenance DAG's per-table step) a
    table with neither ``expiration_time`` nor ``partition.expiration-time`` is skipped instead of
    failing.

    :param expiration_time: a Paimon duration (``'30 d'``), templated.
    :param timestamp_formatter: Java ``DateTimeFormatter`` of the partition time (``yyyyMMdd``).
    :param timestamp_pattern: ``$col`` pattern (``'$dt $hh:00:00'``).
    :param expire_strategy: ``values-time`` or ``update-time``.
    :param max_expires: at most this many partitions per run.
    """

    template_fields: Sequence[str] = (
        *PaimonTableOperator.template_fields,
        "expiration_time",
        "timestamp_formatter",
        "timestamp_pattern",
        "expire_strategy",
        "max_expires",
        "is_dry_run",
    )
    action = "expire_partitions"

    def __init__(
        self,
        *,
        expiration_time: str | None = None,
        timestamp_formatter: str | None = None,
        timestamp_pattern: str | None = None,
        expire_strategy: str | None = None,
        max_expires: int | str | None = None,
        dry_run: bool | str = False,
        skip_when_off: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.expiration_time = expiration_time
        self.timestamp_formatter = timestamp_formatter
        self.timestamp_pattern = timestamp_pattern
        self.expire_strategy = expire_strategy
        self.max_expires = max_expires
        self.is_dry_run = dry_run
        self.skip_when_off = skip_when_off

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        expiration = _str_or_none(self.expiration_time)
        if expiration is None and table.options.partition_expiration_time_ms is None:
            if self.skip_when_off:
                raise AirflowSkipException(f"{table.name}: partition expiry is off (no expiration time)")
            raise PaimonTerminalFailure(
                f"expire_partitions on {table.name} needs expiration_time (or the table option "
                "partition.expiration-time)"
            )
        if not table.partition_keys:
            if self.skip_when_off:
                raise AirflowSkipException(f"{table.name} is not partitioned")
            raise PaimonTerminalFailure(f"expire_partitions: {table.name} is not partitioned")
        return table.maintenance.expire_partitions(
            expiration,
            timestamp_formatter=_str_or_none(self.timestamp_formatter),
            timestamp_pattern=_str_or_none(self.timestamp_pattern),
            expire_strategy=_str_or_none(self.expire_strategy),
            max_expires=_int_or_none(self.max_expires, "max_expires"),
            dry_run=_bool(self.is_dry_run, "dry_run"),
        ).to_dict()


class PaimonMarkPartitionDoneOperator(PaimonTableOperator):
    """Mark partitions done (Paimon ``sys.mark_partition_done``) by the table's
    ``partition.mark-done-action`` (``success-file``: Java's ``_SUCCESS`` file in each partition
    directory; ``done-partition`` needs a metastore and fails without retries).

    :param partitions: ``'dt=20240101,hh=0;dt=20240102'`` (templated, e.g. ``'dt={{ ds_nodash }}'``).
    """

    template_fields: Sequence[str] = (*PaimonTableOperator.template_fields, "partitions")
    action = "mark_partition_done"

    def __init__(self, *, partitions: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.partitions = partitions

    def run(self, table: FileStoreTable, context: Context) -> Mapping[str, Any]:
        return table.maintenance.mark_partition_done(str(self.partitions)).to_dict()
