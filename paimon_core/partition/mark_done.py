"""Mark partitions done (Java's ``MarkPartitionDoneProcedure`` and ``PartitionMarkDoneAction``s).

``partition.mark-done-action`` (default ``success-file``, comma-separated) says what "done" means:

* ``success-file`` (Java's ``SuccessFileMarkDoneAction``): a ``_SUCCESS`` file in the partition
  directory, JSON ``{"creationTime": ms, "modificationTime": ms}`` as Java's ``SuccessFile``
  writes it; marking again keeps ``creationTime`` and moves ``modificationTime``.
* ``done-partition`` (Java's ``AddDonePartitionAction``) adds a ``dt=2024-01-01.done`` partition
  to the catalog's metastore; Java refuses it for a table without one ("Cannot mark done
  partition for table without metastore"), and so does this file-system catalog.
* ``mark-event``, ``http-report``, ``custom`` need a metastore, an HTTP endpoint or a Java class.

Every partition spec and action is checked before anything is written, so a bad call changes
nothing. The partition path is Java's ``generatePartitionPath``: the given keys in partition-key
order, ``key=value`` escaped as in data directories.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.data.internal import escape_path_name
from paimon_core.exceptions import CorruptFileError, InvalidArgumentError, InvalidOptionError
from paimon_core.results import _ToDict
from paimon_core.utils.json_util import dumps_java, loads_checked

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = [
    "SUCCESS_FILE_NAME",
    "MarkPartitionDoneResult",
    "SuccessFile",
    "mark_partition_done",
    "partition_path_of_spec",
]

logger = logging.getLogger(__name__)

SUCCESS_FILE_NAME = "_SUCCESS"
ACTIONS = ("success-file", "done-partition", "mark-event", "http-report", "custom")


@dataclass(frozen=True)
class SuccessFile:
    """The ``_SUCCESS`` file's content (Java's ``SuccessFile``)."""

    creation_time: int
    modification_time: int

    def to_json(self) -> str:
        return dumps_java({"creationTime": self.creation_time, "modificationTime": self.modification_time})

    @staticmethod
    def from_json(text: str, *, path: str) -> SuccessFile:
        obj = loads_checked(text, path=path, what="success")
        try:
            return SuccessFile(int(obj["creationTime"]), int(obj["modificationTime"]))
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptFileError(f"Corrupt success file {path}: {e}", path=path) from e


@dataclass(frozen=True)
class MarkPartitionDoneResult(_ToDict):
    """What ``mark_partition_done`` wrote."""

    table: str
    actions: tuple[str, ...]
    partitions: tuple[str, ...]  # partition paths, ``dt=2024-01-01/hh=1``
    success_files: tuple[str, ...] = ()


def partition_path_of_spec(store: FileStore, spec: Mapping[str, str]) -> str:
    """``dt=2024-01-01/hh=1`` for ``{"hh": "1", "dt": "2024-01-01"}`` (partition-key order).
    InvalidArgumentError unless ``spec`` names a leading run of the partition keys with values."""
    keys = list(store.schema.partition_keys)
    if not keys:
        raise InvalidArgumentError(f"Table {store.name} is not partitioned: no partition can be marked done")
    unknown = sorted(set(spec) - set(keys))
    if unknown or not spec:
        raise InvalidArgumentError(
            f"Partition spec {dict(spec)} names non-partition column(s) {unknown}; partition keys of "
            f"{store.name} are {keys}",
            argument="partitions",
        )
    given = [k for k in keys if k in spec]
    if given != keys[: len(given)]:
        raise InvalidArgumentError(
            f"Partition spec {dict(spec)} of {store.name} must give the leading partition keys {keys} "
            "(a partition directory)",
            argument="partitions",
        )
    empty = [k for k in given if not str(spec[k]).strip()]
    if empty:
        raise InvalidArgumentError(f"Partition spec {dict(spec)} has empty value(s) for {empty}", argument="partitions")
    return "/".join(f"{escape_path_name(k)}={escape_path_name(str(spec[k]))}" for k in given)


def _check_actions(store: FileStore) -> tuple[str, ...]:
    actions = tuple(dict.fromkeys(store.options.partition_mark_done_actions))
    key = "partition.mark-done-action"
    unknown = [a for a in actions if a not in ACTIONS]
    if unknown or not actions:
        raise InvalidOptionError(
            f"Option '{key}' of {store.name} has unknown action(s) {unknown or actions}; "
            f"valid: {', '.join(ACTIONS)}",
            key=key,
        )
    if "done-partition" in actions or "mark-event" in actions:
        raise InvalidOptionError(
            f"Cannot mark done partition for table {store.name} without metastore: '{key}' "
            f"{','.join(actions)} needs a Hive/REST catalog with metastore.partitioned-table=true "
            "(Java's AddDonePartitionAction); use success-file with a file-system catalog",
            key=key,
        )
    other = [a for a in actions if a != "success-file"]
    if other:
        raise InvalidOptionError(
            f"'{key}' action(s) {other} of {store.name} are not supported by paimon_core (they call an HTTP "
            "endpoint or a Java class); use success-file",
            key=key,
        )
    return actions


def mark_partition_done(
    store: FileStore, partitions: str | Sequence[Mapping[str, str]]
) -> MarkPartitionDoneResult:
    """Mark ``partitions`` (``'dt=a,hh=1;dt=b'`` or a list of specs) done by the table's actions."""
    from paimon_core.operation.compact.compact_planner import parse_partitions

    specs = parse_partitions(partitions) if isinstance(partitions, str) else tuple(partitions)
    if not specs:
        raise InvalidArgumentError("mark_partition_done must specify partitions", argument="partitions")
    paths = tuple(dict.fromkeys(partition_path_of_spec(store, s) for s in specs))
    actions = _check_actions(store)
    written = []
    for rel in paths:
        path = f"{store.path}/{rel}/{SUCCESS_FILE_NAME}"
        now = store.clock.now_millis()
        success = SuccessFile(now, now)
        if store.file_io.exists(path):
            old = SuccessFile.from_json(store.file_io.read_text(path), path=path)
            success = SuccessFile(old.creation_time, now)
        store.file_io.mkdirs(f"{store.path}/{rel}")
        store.file_io.overwrite_text(path, success.to_json())
        written.append(path)
    logger.info("Marked %d partition(s) of %s done: %s", len(paths), store.name, list(paths))
    return MarkPartitionDoneResult(store.name, actions, paths, tuple(written))
