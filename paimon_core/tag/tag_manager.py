"""Tags: named, retained snapshots in ``tag/tag-<name>`` (Paimon's TagManager).

A tag file holds the snapshot JSON plus ``tagCreateTime`` (a LocalDateTime as
``[y, mo, d, h, mi, s, ns]``) and, optionally, ``tagTimeRetained`` (seconds).
Full tag maintenance (expiry, auto-creation, deleting unused files) builds on this.
"""

from __future__ import annotations

import datetime as dt
import logging
import re

from paimon_core.exceptions import InvalidArgumentError, TagAlreadyExistsError, TagNotFoundError
from paimon_core.io.file_io import FileIO
from paimon_core.paths import TAG_PREFIX, PathFactory
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)

_VALID_TAG = re.compile(r"^[^/\\\s]+$")


def _local_date_time(millis: int) -> list[int]:
    t = dt.datetime.fromtimestamp(millis / 1000.0)
    return [t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond * 1000]


class TagManager:
    """Tag files of one table."""

    def __init__(self, file_io: FileIO, paths: PathFactory, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.file_io = file_io
        self.paths = paths
        self.clock = clock

    @staticmethod
    def validate_name(name: str) -> None:
        if not name or not _VALID_TAG.match(name) or name.isdigit():
            raise InvalidArgumentError(
                f"Invalid tag name {name!r}: it must be non-empty, not purely numeric, "
                "and contain no whitespace or path separators"
            )

    def tag_path(self, name: str) -> str:
        return self.paths.tag_path(name)

    def exists(self, name: str) -> bool:
        return self.file_io.exists(self.tag_path(name))

    def get(self, name: str) -> Snapshot:
        path = self.tag_path(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise TagNotFoundError(f"Tag '{name}' does not exist in {self.paths.table_path}", tag=name) from None
        return Snapshot.from_json(data, path=path)

    def list_names(self) -> list[str]:
        return sorted(
            st.name[len(TAG_PREFIX) :] for st in self.file_io.list_files(self.paths.tag_dir) if st.name.startswith(TAG_PREFIX)
        )

    def tags(self) -> dict[str, Snapshot]:
        return {n: self.get(n) for n in self.list_names()}

    def create(self, name: str, snapshot: Snapshot, *, time_retained_seconds: float | None = None) -> Snapshot:
        """Write ``tag-<name>`` for the snapshot; TagAlreadyExistsError if the name is taken."""
        self.validate_name(name)
        tag = snapshot.copy(
            tag_create_time=_local_date_time(self.clock.now_millis()),
            tag_time_retained=None if time_retained_seconds is None else f"{time_retained_seconds:.9f}",
        )
        if not self.file_io.try_write_atomic(self.tag_path(name), tag.to_json().encode()):
            raise TagAlreadyExistsError(f"Tag '{name}' already exists in {self.paths.table_path}", tag=name)
        logger.info("Created tag %s on snapshot %d of %s", name, snapshot.id, self.paths.table_path)
        return tag

    def create_from_snapshot_id(
        self, name: str, snapshot_manager: SnapshotManager, snapshot_id: int | None = None
    ) -> Snapshot:
        snap = snapshot_manager.latest_snapshot() if snapshot_id is None else snapshot_manager.snapshot(snapshot_id)
        if snap is None:
            raise InvalidArgumentError(f"Cannot tag {self.paths.table_path}: it has no snapshot yet")
        return self.create(name, snap)
