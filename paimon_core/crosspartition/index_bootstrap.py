"""The bootstrap of the key -> (partition, bucket) index of a cross-partition table (Java's
``IndexBootstrap``): its options, its result per split, and the TTL rule.

The keys are read through the table's scan and read (:mod:`paimon_core.table.index_bootstrap`,
table-level): the write passes that reader in as a :class:`BootstrapKeys`
(:func:`paimon_core.crosspartition.setup.new_global_index_assigner`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa

from paimon_core.manifest.entries import DataFileMeta
from paimon_core.snapshot.snapshot import Snapshot

__all__ = [
    "BOOTSTRAP_PARALLELISM",
    "BOOTSTRAP_PARALLELISM_DEFAULT",
    "INDEX_TTL",
    "BootstrapKeys",
    "BootstrapSplit",
    "creation_epoch_millis",
    "within_ttl",
]

INDEX_TTL = "cross-partition-upsert.index-ttl"
BOOTSTRAP_PARALLELISM = "cross-partition-upsert.bootstrap-parallelism"
BOOTSTRAP_PARALLELISM_DEFAULT = 10


@dataclass(frozen=True)
class BootstrapSplit:
    """The live keys of one (partition, bucket)."""

    partition: bytes
    bucket: int
    keys: pa.Table


def creation_epoch_millis(stored: int) -> int:
    """Java's ``creationTimeEpochMillis``: the stored local wall-clock millis as epoch millis."""
    local = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=stored)
    return int(local.timestamp() * 1000)


def within_ttl(files: Sequence[DataFileMeta], ttl_ms: int, now_ms: int) -> bool:
    """Java's ``IndexBootstrap.filterSplit``: some file of the split is younger than the TTL."""
    return any(f.creation_time is None or now_ms <= creation_epoch_millis(f.creation_time) + ttl_ms for f in files)


class BootstrapKeys(Protocol):
    """Reads the primary keys of every live row of ``snapshot`` by (partition, bucket), all levels,
    skipping partitions ``skip_partition`` names and (``index_ttl_ms``) splits older than the TTL."""

    def __call__(
        self,
        snapshot: Snapshot | None,
        *,
        key_names: Sequence[str],
        skip_partition: Callable[[bytes], bool] | None = None,
        index_ttl_ms: int | None = None,
        parallelism: int = BOOTSTRAP_PARALLELISM_DEFAULT,
    ) -> list[BootstrapSplit]: ...
