"""ConsumerManager: ``consumer/consumer-<id>`` files, as Java's ConsumerManager writes them.

A consumer file is ``{"nextSnapshot": N}``: the reader with that id will next read snapshot
N, so snapshot expiry must keep N and everything after it while the file is fresh.
``consumer.expiration-time`` ages a consumer by the file's modification time.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from paimon_core.exceptions import CorruptFileError, InvalidArgumentError
from paimon_core.io.file_io import FileIO
from paimon_core.paths import PathFactory
from paimon_core.utils.clock import SYSTEM_CLOCK, Clock

logger = logging.getLogger(__name__)

CONSUMER_PREFIX = "consumer-"
_VALID_ID = re.compile(r"^[^/\\\s]+$")


@dataclass(frozen=True)
class Consumer:
    """One reader's progress: the next snapshot it will read."""

    next_snapshot: int

    def to_json(self) -> str:
        return json.dumps({"nextSnapshot": self.next_snapshot}, indent=2)

    @staticmethod
    def from_json(text: str, *, path: str = "") -> Consumer:
        try:
            value = json.loads(text)["nextSnapshot"]
        except (ValueError, KeyError, TypeError) as e:
            raise CorruptFileError(f"Consumer file {path} is not valid consumer JSON: {e}", path=path) from e
        if not isinstance(value, int) or isinstance(value, bool):
            raise CorruptFileError(f"Consumer file {path} has a non-integer nextSnapshot {value!r}", path=path)
        return Consumer(value)


class ConsumerManager:
    """Reads and writes the consumer files of one table."""

    def __init__(self, file_io: FileIO, paths: PathFactory, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.file_io = file_io
        self.paths = paths
        self.clock = clock

    @staticmethod
    def validate_id(consumer_id: str) -> None:
        if not consumer_id or not _VALID_ID.match(consumer_id):
            raise InvalidArgumentError(
                f"Invalid consumer id {consumer_id!r}: it must be non-empty, without spaces or slashes",
                consumer_id=consumer_id,
            )

    def consumer_path(self, consumer_id: str) -> str:
        return self.paths.consumer_path(consumer_id)

    def consumer(self, consumer_id: str) -> Consumer | None:
        """The consumer's progress, or None if it has no file."""
        self.validate_id(consumer_id)
        path = self.consumer_path(consumer_id)
        try:
            text = self.file_io.read_text(path)
        except FileNotFoundError:
            return None
        return Consumer.from_json(text, path=path)

    def reset_consumer(self, consumer_id: str, consumer: Consumer) -> None:
        """Create or replace a consumer's progress (atomic replace of the small file)."""
        self.validate_id(consumer_id)
        if consumer.next_snapshot < 1:
            raise InvalidArgumentError(
                f"Consumer {consumer_id!r}: next snapshot must be >= 1, got {consumer.next_snapshot}",
                consumer_id=consumer_id,
            )
        self.file_io.overwrite_text(self.consumer_path(consumer_id), consumer.to_json())

    def delete_consumer(self, consumer_id: str) -> bool:
        self.validate_id(consumer_id)
        return self.file_io.delete(self.consumer_path(consumer_id))

    def _statuses(self) -> list[tuple[str, int, str]]:
        """(id, mtime millis, path) of every consumer file."""
        if not self.file_io.exists(self.paths.consumer_dir):
            return []
        return [
            (s.name[len(CONSUMER_PREFIX) :], s.mtime_millis, s.path)
            for s in self.file_io.list_files(self.paths.consumer_dir)
            if s.name.startswith(CONSUMER_PREFIX)
        ]

    def list_all_ids(self) -> list[str]:
        return sorted(cid for cid, _, _ in self._statuses())

    def consumers(self) -> dict[str, int]:
        """Every consumer id with its next snapshot (files deleted meanwhile are skipped)."""
        out: dict[str, int] = {}
        for cid, _, path in self._statuses():
            try:
                out[cid] = Consumer.from_json(self.file_io.read_text(path), path=path).next_snapshot
            except FileNotFoundError:
                continue
        return dict(sorted(out.items()))

    def consumers_with_mtime(self) -> dict[str, tuple[int, int]]:
        """id -> (next snapshot, modification time millis)."""
        out: dict[str, tuple[int, int]] = {}
        for cid, mtime, path in self._statuses():
            try:
                out[cid] = (Consumer.from_json(self.file_io.read_text(path), path=path).next_snapshot, mtime)
            except FileNotFoundError:
                continue
        return dict(sorted(out.items()))

    def min_next_snapshot(self) -> int | None:
        values = self.consumers().values()
        return min(values) if values else None

    def expire(self, expire_before_millis: int, *, dry_run: bool = False) -> list[str]:
        """Delete consumers whose file was last modified before the given time; returns their ids."""
        expired = []
        for cid, mtime, path in self._statuses():
            if mtime < expire_before_millis:
                expired.append(cid)
                if not dry_run:
                    self.file_io.delete(path)
                    logger.info("Expired consumer %s of %s (last progress at %d)", cid, self.paths.table_path, mtime)
        return sorted(expired)

    def clear_consumers(
        self, including: str = ".*", excluding: str | None = None, *, dry_run: bool = False
    ) -> list[str]:
        """Delete consumers whose id fully matches ``including`` and not ``excluding``."""
        try:
            inc = re.compile(including)
            exc = re.compile(excluding) if excluding else None
        except re.error as e:
            raise InvalidArgumentError(f"Invalid consumer pattern: {e}") from e
        cleared = []
        for cid, _, path in self._statuses():
            if inc.fullmatch(cid) and not (exc is not None and exc.fullmatch(cid)):
                cleared.append(cid)
                if not dry_run:
                    self.file_io.delete(path)
        return sorted(cleared)
