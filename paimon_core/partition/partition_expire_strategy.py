"""Which partitions are old enough to drop (Java's ``PartitionExpireStrategy`` and its two kinds).

* ``values-time`` (:class:`PartitionValuesTimeExpireStrategy`): the time the partition values stand
  for (see :mod:`~paimon_core.partition.partition_time_extractor`). A partition whose time cannot be
  extracted (a null value, a value the formatter does not match) never expires this way.
* ``update-time`` (:class:`PartitionUpdateTimeExpireStrategy`): the partition's last update, the
  newest creation time of its live data files (Java's ``PartitionEntry.lastFileCreationTime``).

Times are local wall-clock (Java's ``LocalDateTime``): a partition expires when
``now - partition.expiration-time`` is strictly after its time. Partition values are rendered as a
CAST to STRING (DATE ``2024-01-05``), so DATE and TIMESTAMP partition columns work with the default
formats (Java's ``toString`` of a DATE is a day number that never parses).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.manifest.entries import ManifestEntry
from paimon_core.partition.partition_time_extractor import PartitionTimeExtractor

if TYPE_CHECKING:
    from paimon_core.options import CoreOptions
    from paimon_core.store.file_store import FileStore

__all__ = [
    "STRATEGIES",
    "PartitionEntry",
    "PartitionExpireStrategy",
    "PartitionUpdateTimeExpireStrategy",
    "PartitionValuesTimeExpireStrategy",
    "create_strategy",
    "partition_entries",
    "stored_millis_to_local",
]

STRATEGIES = ("values-time", "update-time")
_EPOCH = dt.datetime(1970, 1, 1)


def stored_millis_to_local(millis: int) -> dt.datetime:
    """A file's stored ``_CREATION_TIME`` (local wall-clock millis) as a naive local datetime."""
    return _EPOCH + dt.timedelta(milliseconds=millis)


@dataclass(frozen=True)
class PartitionEntry:
    """One partition's live files, summed (Java's ``PartitionEntry``).

    ``values`` are the partition values as strings (None for null), ``last_file_creation_time`` the
    newest file's stored creation time (local wall-clock millis, None if no file has one).
    """

    partition: bytes
    values: tuple[str | None, ...]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int | None


def partition_entries(store: FileStore, entries: Sequence[ManifestEntry]) -> list[PartitionEntry]:
    """Live file entries grouped per partition (in first-seen order)."""
    from paimon_core.data.internal import partition_value_to_string

    acc: dict[bytes, list[int]] = {}
    created: dict[bytes, int | None] = {}
    for e in entries:
        a = acc.get(e.partition)
        if a is None:
            a = acc[e.partition] = [0, 0, 0]
            created[e.partition] = None
        a[0] += e.file.row_count
        a[1] += e.file.file_size
        a[2] += 1
        c = e.file.creation_time
        if c is not None:
            prev = created[e.partition]
            created[e.partition] = c if prev is None else max(prev, c)
    fields = store.schema.partition_fields
    out = []
    for part, (rows, size, count) in acc.items():
        values = tuple(
            None if v is None else partition_value_to_string(v, f.type, legacy_name=False)
            for f, v in zip(fields, store.partition_codec.decode(part), strict=True)
        )
        out.append(PartitionEntry(part, values, rows, size, count, created[part]))
    return out


class PartitionExpireStrategy(Protocol):
    """The time a partition is judged by; None: it never expires by this strategy."""

    name: str

    def partition_time(self, entry: PartitionEntry) -> dt.datetime | None: ...


class PartitionValuesTimeExpireStrategy:
    """Judges a partition by the time its values stand for."""

    name = "values-time"

    def __init__(self, keys: Sequence[str], *, pattern: str | None, formatter: str | None) -> None:
        self.keys = list(keys)
        self.extractor = PartitionTimeExtractor(pattern, formatter)

    def partition_time(self, entry: PartitionEntry) -> dt.datetime | None:
        return self.extractor.extract(self.keys, entry.values)


class PartitionUpdateTimeExpireStrategy:
    """Judges a partition by its newest data file's creation time."""

    name = "update-time"

    def partition_time(self, entry: PartitionEntry) -> dt.datetime | None:
        c = entry.last_file_creation_time
        return None if c is None else stored_millis_to_local(c)


def create_strategy(
    store: FileStore,
    options: CoreOptions,
    *,
    strategy: str | None = None,
    timestamp_formatter: str | None = None,
    timestamp_pattern: str | None = None,
) -> PartitionExpireStrategy:
    """The strategy ``options`` ask for; the keyword arguments (a procedure's) override them.
    InvalidArgumentError for an unknown strategy or a formatter that cannot be parsed."""
    name = (strategy or options.partition_expiration_strategy).strip().lower()
    if name == "update-time":
        return PartitionUpdateTimeExpireStrategy()
    if name == "values-time":
        return PartitionValuesTimeExpireStrategy(
            store.schema.partition_keys,
            pattern=timestamp_pattern or options.partition_timestamp_pattern,
            formatter=timestamp_formatter or options.partition_timestamp_formatter,
        )
    raise InvalidArgumentError(
        f"Unknown partition expiration strategy {name!r}; use one of {', '.join(STRATEGIES)}",
        argument="expire_strategy",
    )
