"""Drop partitions (Flink's ``drop_partition`` procedure: ``BatchTableCommit.truncatePartitions``).

``CALL sys.drop_partition('db.t', 'dt=2024-01-01', 'dt=2024-01-02,hh=3')`` (Flink's variadic
form: one spec per string) or ``partitions => 'dt=2024-01-01;dt=2024-01-02,hh=3'`` (Paimon's
``;``-separated form; both may be mixed): one OVERWRITE snapshot for all the specs, deleting every
live file of the named partitions, through the same commit as partition
expiry (:meth:`FileStoreCommit.drop_partitions`, Java's ``dropPartitions``). A spec may name
some of the partition keys (``dt=a`` of a ``(dt, hh)`` table drops every ``hh`` of ``dt=a``), as
Java's predicate does; a null value is written as ``partition.default-name``.

The specs are resolved against the latest snapshot into the partitions they match, and those are
dropped (with ``dry_run``: listed). Ours refuses, changing nothing: an unpartitioned table, a key
that is not a partition key, an empty spec (Java's filter of an empty spec matches every
partition), and a spec that matches no partition (a typo would otherwise commit an empty
OVERWRITE): all specs or none. Nothing is deleted from storage: older snapshots and tags still read the
dropped rows, and the files go with snapshot expiry.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.partition_expire import ExpiredPartition
from paimon_core.partition.partition_expire_strategy import PartitionEntry, partition_entries
from paimon_core.results import _ToDict
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["DropPartitionResult", "PartitionSpecs", "drop_partitions", "parse_partition_specs"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DropPartitionResult(_ToDict):
    """What ``drop_partition`` dropped (``dry_run``: would drop)."""

    table: str
    dry_run: bool
    partitions: tuple[ExpiredPartition, ...] = ()
    snapshot_id: int | None = None  # the OVERWRITE snapshot
    commit_kind: str | None = None
    deleted_files: int = 0
    deleted_rows: int = 0
    result: str = "Success"  # Java's procedure output


PartitionSpecs = str | Mapping[str, str] | Sequence[str | Mapping[str, str]]


def parse_partition_specs(partitions: PartitionSpecs) -> list[dict[str, str]]:
    """The specs to drop, from Flink's variadic form (``['dt=a,hh=1', 'dt=b']``, one spec per
    string), Paimon's ``partitions`` form (``'dt=a,hh=1;dt=b'``), both mixed (each string may hold
    ``;``-separated specs), or dicts.

    :class:`InvalidArgumentError` naming the spec, changing nothing: no spec at all, an empty spec
    (a blank string or ``;;`` segment, or ``{}``: Java would turn it into a filter that matches
    every partition), a segment that is not ``key=value[,key=value...]``, a key named twice."""
    from paimon_core.operation.compact.compact_planner import parse_partitions

    items: list[str | Mapping[str, str]] = (
        [partitions] if isinstance(partitions, (str, Mapping)) else list(partitions)
    )
    if not items:
        raise InvalidArgumentError(
            f"drop-partition procedure must specify partitions (got {partitions!r})", argument="partitions"
        )
    specs: list[dict[str, str]] = []
    for item in items:
        if isinstance(item, Mapping):
            if not item:
                raise InvalidArgumentError(
                    "A partition spec is empty ({}): every spec names at least one partition key "
                    "(an empty spec would drop every partition); nothing was dropped",
                    argument="partitions",
                )
            specs.append({str(k): str(v) for k, v in item.items()})
            continue
        if not isinstance(item, str):
            raise InvalidArgumentError(
                f"A partition must be 'k=v[,k2=v2]' or a dict, got {item!r}", argument="partitions"
            )
        for n, segment in enumerate(item.split(";"), start=1):
            if not segment.strip():
                raise InvalidArgumentError(
                    f"Partition spec {n} of {item!r} is empty: every spec names at least one partition key "
                    "(an empty spec would drop every partition); nothing was dropped",
                    argument="partitions",
                )
            keys = [kv.partition("=")[0].strip() for kv in segment.split(",")]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            if twice:
                raise InvalidArgumentError(
                    f"Partition spec {segment.strip()!r} names {twice} more than once; nothing was dropped",
                    argument="partitions",
                )
            specs.extend(dict(s) for s in parse_partitions(segment))
    return specs


def _spec_text(spec: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in spec.items())


def drop_partitions(
    store: FileStore,
    partitions: PartitionSpecs,
    *,
    dry_run: bool = False,
) -> DropPartitionResult:
    """Drop the partitions the specs match in one OVERWRITE commit (see the module docstring)."""
    from paimon_core.operation.commit.committer import new_commit_user

    keys = list(store.schema.partition_keys)
    if not keys:
        raise InvalidArgumentError(f"Table {store.name} is not partitioned: it has no partition to drop")
    specs = parse_partition_specs(partitions)
    for spec in specs:
        unknown = [k for k in spec if k not in keys]
        if unknown:
            raise InvalidArgumentError(
                f"Partition spec '{_spec_text(spec)}' names {unknown}, which are not partition keys of {store.name} "
                f"(partition keys: {keys}); nothing was dropped",
                argument="partitions",
            )
    default = store.options.partition_default_name
    latest = store.snapshot_manager.latest_snapshot()
    entries = store.new_scan().live_entries(latest) if latest is not None else []
    parts = partition_entries(store, entries)

    def spec_of(p: PartitionEntry) -> dict[str, str]:
        return {k: default if v is None else v for k, v in zip(keys, p.values, strict=True)}

    matched: dict[bytes, PartitionEntry] = {}
    for spec in specs:
        hits = [p for p in parts if all(spec_of(p)[k] == v for k, v in spec.items())]
        if not hits:
            raise InvalidArgumentError(
                f"Partition '{_spec_text(spec)}' does not exist in {store.name} (no live file); nothing was dropped",
                argument="partitions",
                partition=_spec_text(spec),
            )
        for p in hits:
            matched.setdefault(p.partition, p)
    listed = tuple(
        ExpiredPartition(
            partition=", ".join(f"{k}={v}" for k, v in spec_of(p).items()),
            spec=tuple(spec_of(p).items()),
            record_count=p.record_count,
            file_count=p.file_count,
            file_size_in_bytes=p.file_size_in_bytes,
        )
        for p in sorted(matched.values(), key=lambda p: tuple(spec_of(p).values()))
    )
    result = DropPartitionResult(table=store.name, dry_run=dry_run, partitions=listed)
    if dry_run:
        return result
    committer = store.new_commit(new_commit_user(store.options.get("commit.user-prefix")))
    commit = committer.drop_partitions(list(matched), BATCH_COMMIT_IDENTIFIER, check_committed=False)
    logger.info(
        "Dropped %d partition(s) of %s in snapshot %s: %s",
        len(listed), store.name, commit.snapshot_id, [p.partition for p in listed],
    )  # fmt: skip
    return dataclasses.replace(
        result,
        snapshot_id=commit.snapshot_id,
        commit_kind=commit.commit_kind,
        deleted_files=commit.deleted_files,
        deleted_rows=commit.deleted_rows,
    )
