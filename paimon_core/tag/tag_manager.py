"""Tags: named, retained snapshots in ``tag/tag-<name>`` (Java's ``TagManager`` and ``Tag``).

A tag file is the snapshot's JSON. A tag created with a retention (``time_retained``, or
``tag.default-time-retained``) also carries, exactly as Java's Jackson writes them:

* ``tagCreateTime``: a ``LocalDateTime`` (this machine's zone) as ``[y, mo, d, h, mi(, s(, ns))]``,
  trailing zero parts omitted;
* ``tagTimeRetained``: a ``Duration`` as a decimal number of seconds (``86400.000000000``).

Without a retention neither key is written (Java: so that readers <= 0.7 can read the tag).
Tag names follow Java: anything not blank; numeric names are valid (auto tags such as
``20240131``); a path separator is refused because the name becomes a file name.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation

from paimon_core.exceptions import (
    CorruptFileError,
    InvalidArgumentError,
    TagAlreadyExistsError,
    TagNotFoundError,
)
from paimon_core.io.file_io import FileIO
from paimon_core.paths import TAG_PREFIX, PathFactory
from paimon_core.snapshot.snapshot import Snapshot
from paimon_core.snapshot.snapshot_manager import SnapshotManager
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)


def local_date_time_array(millis: int) -> list[int]:
    """Epoch millis as Jackson writes a ``LocalDateTime`` (machine zone, trailing zeros omitted)."""
    t = dt.datetime.fromtimestamp(millis / 1000.0)
    out = [t.year, t.month, t.day, t.hour, t.minute]
    nanos = t.microsecond * 1000
    if t.second or nanos:
        out.append(t.second)
        if nanos:
            out.append(nanos)
    return out


def local_date_time_millis(parts: list[int]) -> int:
    """Inverse of :func:`local_date_time_array` (missing trailing parts are zero)."""
    p = [int(x) for x in parts] + [0] * (7 - len(parts))
    t = dt.datetime(p[0], p[1], p[2], p[3], p[4], p[5], p[6] // 1000)
    return int(t.timestamp() * 1000)


def duration_json(millis: int) -> str:
    """A duration as Jackson writes ``java.time.Duration``: seconds with 9 decimals ("0.0" for zero)."""
    if millis == 0:
        return "0.0"
    seconds, rest = divmod(millis, 1000)
    return f"{seconds}.{rest * 1_000_000:09d}"


def tag_json(snapshot: Snapshot, *, create_time_millis: int | None, time_retained_ms: int | None) -> str:
    """The tag file content Java writes for ``snapshot`` (plain snapshot JSON without a retention)."""
    text = trim_to_snapshot(snapshot).to_json()
    if time_retained_ms is None:
        return text
    created = "[ " + ", ".join(str(x) for x in local_date_time_array(create_time_millis or 0)) + " ]"
    extra = f',\n  "tagCreateTime" : {created},\n  "tagTimeRetained" : {duration_json(time_retained_ms)}\n}}'
    return text[: text.rindex("\n}")] + extra


def trim_to_snapshot(tag: Snapshot) -> Snapshot:
    """Java's ``Tag.trimToSnapshot``: the snapshot without the tag-only keys."""
    if tag.tag_create_time is None and tag.tag_time_retained is None:
        return tag
    return tag.copy(tag_create_time=None, tag_time_retained=None)


def tag_create_time_millis(tag: Snapshot) -> int | None:
    """When the tag was created (epoch millis), if its file records it."""
    if not tag.tag_create_time:
        return None
    try:
        return local_date_time_millis(list(tag.tag_create_time))
    except (TypeError, ValueError) as e:
        raise CorruptFileError(f"Tag of snapshot {tag.id} has an invalid tagCreateTime {tag.tag_create_time!r}: {e}") from e


def tag_time_retained_ms(tag: Snapshot) -> int | None:
    """The tag's retention in millis, if its file records one."""
    if tag.tag_time_retained is None:
        return None
    try:
        return int(Decimal(str(tag.tag_time_retained)) * 1000)
    except (InvalidOperation, ValueError) as e:
        raise CorruptFileError(f"Tag of snapshot {tag.id} has an invalid tagTimeRetained {tag.tag_time_retained!r}") from e


class TagManager:
    """Tag files of one table."""

    def __init__(self, file_io: FileIO, paths: PathFactory, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.file_io = file_io
        self.paths = paths
        self.clock = clock

    @staticmethod
    def validate_name(name: str) -> None:
        """Java: a tag name must not be blank. Ours also refuses path separators and control
        characters, which would make the file name escape ``tag/``."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidArgumentError(f"Invalid tag name {name!r}: it must not be blank", tag=name)
        if "/" in name or "\\" in name or any(ord(c) < 32 for c in name) or name in (".", ".."):
            raise InvalidArgumentError(
                f"Invalid tag name {name!r}: it must not contain '/', '\\' or control characters", tag=name
            )

    def tag_path(self, name: str) -> str:
        return self.paths.tag_path(name)

    def exists(self, name: str) -> bool:
        self.validate_name(name)
        return self.file_io.exists(self.tag_path(name))

    def get(self, name: str) -> Snapshot:
        """The tag (snapshot plus tag keys); TagNotFoundError if it does not exist."""
        self.validate_name(name)
        path = self.tag_path(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise TagNotFoundError(f"Tag '{name}' does not exist in {self.paths.table_path}", tag=name) from None
        return Snapshot.from_json(data, path=path)

    def try_get(self, name: str) -> Snapshot | None:
        try:
            return self.get(name)
        except TagNotFoundError:
            return None

    def list_names(self) -> list[str]:
        return sorted(name for name, _ in self.list_with_mtime())

    def list_with_mtime(self) -> list[tuple[str, int]]:
        """(tag name, file modification millis) of every tag file."""
        return [
            (st.name[len(TAG_PREFIX) :], st.mtime_millis)
            for st in self.file_io.list_files(self.paths.tag_dir)
            if st.name.startswith(TAG_PREFIX) and len(st.name) > len(TAG_PREFIX)
        ]

    def tags(self) -> dict[str, Snapshot]:
        """Every tag by name (tags deleted while listing are skipped, as in Java)."""
        return dict(self._iter_tags(self.list_names()))

    def _iter_tags(self, names: list[str]) -> Iterator[tuple[str, Snapshot]]:
        for n in names:
            snap = self.try_get(n)
            if snap is not None:
                yield n, snap

    def tags_by_snapshot(self) -> list[tuple[Snapshot, list[str]]]:
        """Java's ``TagManager.tags()``: tagged snapshots ascending by id, each with its tag names."""
        by_id: dict[int, tuple[Snapshot, list[str]]] = {}
        for name, tag in self.tags().items():
            by_id.setdefault(tag.id, (trim_to_snapshot(tag), []))[1].append(name)
        return [by_id[k] for k in sorted(by_id)]

    def create(self, name: str, snapshot: Snapshot, *, time_retained_ms: int | None = None) -> Snapshot:
        """Write ``tag-<name>`` for the snapshot; TagAlreadyExistsError if the name is taken.

        The publish never overwrites (exclusive create), so two racing creators cannot both win.
        """
        self.validate_name(name)
        now = self.clock.now_millis()
        tag = self._tag(snapshot, time_retained_ms, now)
        content = tag_json(tag, create_time_millis=now, time_retained_ms=time_retained_ms)
        if not self.file_io.try_write_atomic(self.tag_path(name), content.encode("utf-8")):
            raise TagAlreadyExistsError(f"Tag '{name}' already exists in {self.paths.table_path}", tag=name)
        logger.info("Created tag %s on snapshot %d of %s", name, snapshot.id, self.paths.table_path)
        return tag

    def replace(self, name: str, snapshot: Snapshot, *, time_retained_ms: int | None = None) -> Snapshot:
        """Point an existing tag at ``snapshot`` (Java's replaceTag); TagNotFoundError if it does not exist."""
        self.validate_name(name)
        if not self.file_io.exists(self.tag_path(name)):
            raise TagNotFoundError(f"Tag '{name}' does not exist in {self.paths.table_path}", tag=name)
        now = self.clock.now_millis()
        tag = self._tag(snapshot, time_retained_ms, now)
        content = tag_json(tag, create_time_millis=now, time_retained_ms=time_retained_ms)
        self.file_io.overwrite_text(self.tag_path(name), content)
        logger.info("Replaced tag %s with snapshot %d of %s", name, snapshot.id, self.paths.table_path)
        return tag

    def rename(self, name: str, target: str) -> Snapshot:
        """Rename a tag, keeping its file byte for byte (Java renames the file).

        The new name is published with an exclusive create before the old file is removed,
        so a crash in between leaves both names (never neither).
        """
        self.validate_name(name)
        self.validate_name(target)
        try:
            data = self.file_io.read_bytes(self.tag_path(name))
        except FileNotFoundError:
            raise TagNotFoundError(f"Tag '{name}' does not exist in {self.paths.table_path}", tag=name) from None
        if name == target or not self.file_io.try_write_atomic(self.tag_path(target), data):
            raise TagAlreadyExistsError(f"Tag '{target}' already exists in {self.paths.table_path}", tag=target)
        self.file_io.delete(self.tag_path(name))
        logger.info("Renamed tag %s to %s in %s", name, target, self.paths.table_path)
        return Snapshot.from_json(data, path=self.tag_path(target))

    @staticmethod
    def _tag(snapshot: Snapshot, time_retained_ms: int | None, now: int) -> Snapshot:
        snap = trim_to_snapshot(snapshot)
        if time_retained_ms is None:
            return snap
        if time_retained_ms < 0:
            raise InvalidArgumentError(f"A tag's time retained must not be negative, got {time_retained_ms} ms")
        return snap.copy(
            tag_create_time=local_date_time_array(now), tag_time_retained=duration_json(time_retained_ms)
        )

    def create_from_snapshot_id(
        self, name: str, snapshot_manager: SnapshotManager, snapshot_id: int | None = None
    ) -> Snapshot:
        snap = snapshot_manager.latest_snapshot() if snapshot_id is None else snapshot_manager.snapshot(snapshot_id)
        if snap is None:
            raise InvalidArgumentError(f"Cannot tag {self.paths.table_path}: it has no snapshot yet")
        return self.create(name, snap)

    def delete(self, name: str) -> bool:
        """Delete the tag file only (no data or manifest cleanup); False if it was already gone.

        The file-cleaning deletion (Java's ``TagManager.deleteTag``) is
        :func:`paimon_core.operation.tag_deletion.delete_tags`.
        """
        deleted = self.file_io.delete(self.tag_path(name))
        if deleted:
            logger.info("Deleted tag file of %s in %s", name, self.paths.table_path)
        return deleted
