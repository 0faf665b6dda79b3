"""PostponeBucketWriter: rows of a postpone-bucket table into ``bucket-postpone``, as they came.

Java's ``PostponeBucketFileStoreWrite`` / ``PostponeBucketWriter``: the files of a postpone bucket
are never merged or sorted: each holds the writer's rows in arrival order with their row kinds,
sequence numbers starting at 0 for every writer (it restores nothing: "sequence id across files
are useless"), at level 0, in Avro with ``metadata.stats-mode = none``, named
``<data-file.prefix>-u-<commit user>-s-<write id>-w-<uuid>-<n>`` so that a compaction can tell the
files of one writer apart (``PostponeBucketFileStoreWrite.getWriterPrefix`` / ``getWriteId``).
The compaction (:mod:`paimon_core.table.postpone_bucket_compact`) replays them into
real buckets; until then batch reads do not see them.
"""

from __future__ import annotations

import logging
import random
from typing import Any

import pyarrow as pa

from paimon_core.mergetree.writer import MergeTreeWriter

__all__ = ["POSTPONE_FILE_FORMAT", "PostponeBucketWriter", "postpone_file_prefix"]

logger = logging.getLogger(__name__)

#: Java writes postpone files in Avro (when the row type converts to Avro) without stats.
POSTPONE_FILE_FORMAT = "avro"


def postpone_file_prefix(data_file_prefix: str, commit_user: str, write_id: int | None = None) -> str:
    """Java's ``"%s-u-%s-s-%d-w-"`` of (``data-file.prefix``, commit user, write id): one prefix
    per writer (a random write id when none is given, as Java's)."""
    wid = random.randint(0, 2**31 - 2) if write_id is None else write_id
    return f"{data_file_prefix}-u-{commit_user}-s-{wid}-w-"


class PostponeBucketWriter(MergeTreeWriter):
    """The writer of one partition's ``bucket-postpone``: buffered rows are written as they came
    (no sort, no merge), sequence numbers from 0 (see the module docstring)."""

    def __init__(self, *, file_prefix: str, **kwargs: Any) -> None:
        kwargs["first_sequence_number"] = 0
        kwargs["changelog_prefix"] = None
        super().__init__(**kwargs)
        self.file_prefix = file_prefix

    def flush(self) -> None:
        """Write the buffer in arrival order as level-0 files of this writer."""
        if not self._buffer:
            return
        data = pa.concat_tables(self._buffer)
        self._buffer, self._buffered_bytes = [], 0
        self.files.extend(self._write_files(data, prefix=self.file_prefix))
