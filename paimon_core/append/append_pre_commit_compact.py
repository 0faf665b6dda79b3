"""Pre-commit small-file merging of append tables (``precommit-compact = true``).

Java adds ``AppendPreCommitCompactCoordinatorOperator`` and ``AppendPreCommitCompactWorkerOperator``
after the writer of an unaware-bucket append table: the coordinator
(``AppendPreCommitCompactCoordinator``) buffers each partition's new files smaller than the
compaction file size (Java's ``compactionFileSize(false)``: ``target-file-size`` x
``compaction.small-file-ratio``) until they add up to ``target-file-size``, then hands the group
to a worker that rewrites it into one rolling file set; what is left at the checkpoint is
emitted as well. A group of one file is committed as it is. The rewritten files replace the
group in the commit's new files (an APPEND snapshot, never a COMPACT one), and the group's files,
which no snapshot ever referenced, are deleted.

Here the batch commit does the same (:class:`~paimon_core.table.builders.BatchTableCommit`, which
the Spark write's driver commit and ``table.write_arrow`` use): it sees the messages of every writer
of the commit, as Java's coordinator sees every writer subtask's (one ``TableWrite`` leaves at
most one small file per partition: merging inside it would find nothing). Groups are per
(partition, bucket); for unaware-bucket tables the bucket is always 0. Files of fixed-bucket and
primary-key tables are left alone (Java compacts those in the writer or, for changelog files,
with another operator). The merged new files are deleted only once the commit succeeded; if it
fails, the merge's output is deleted and the writers' files stay for the caller's abort; after
``CommitStateUnknownError`` every file is kept. A caller-given (user, identifier) already
committed merges nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitStateUnknownError
from paimon_core.manifest.entries import DataFileMeta
from paimon_core.operation.commit.commit_message import CommitMessage

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = [
    "PRECOMMIT_COMPACT",
    "AppendPreCommitCompactCoordinator",
    "PreCommitCompaction",
    "merge_new_files",
    "merged_for_commit",
    "precommit_compacts",
]

logger = logging.getLogger(__name__)

#: Java FlinkConnectorOptions.PRECOMMIT_COMPACT (fallback key ``changelog.precommit-compact``).
PRECOMMIT_COMPACT = "precommit-compact"
PRECOMMIT_COMPACT_FALLBACK = "changelog.precommit-compact"

GroupKey = tuple[bytes, int]


def precommit_compacts(store: FileStore) -> bool:
    """Whether writers of ``table`` merge their small new files before the commit."""
    opts = store.options.options
    raw = opts.get(PRECOMMIT_COMPACT, opts.get(PRECOMMIT_COMPACT_FALLBACK, "false"))
    if raw.strip().lower() != "true":
        return False
    if store.schema.primary_keys or store.options.bucket != -1:
        return False
    # Row-tracking tables number their rows at commit; Java refuses data evolution here too.
    return opts.get("row-tracking.enabled", "false").lower() != "true"


class AppendPreCommitCompactCoordinator:
    """Buffers files per (partition, bucket) until their total size reaches ``target_file_size``
    (Java ``AppendPreCommitCompactCoordinator``)."""

    def __init__(self, target_file_size: int) -> None:
        self.target_file_size = target_file_size
        self._groups: dict[GroupKey, list[DataFileMeta]] = {}
        self._sizes: dict[GroupKey, int] = {}

    def add_file(self, key: GroupKey, file: DataFileMeta) -> list[DataFileMeta] | None:
        """Buffer ``file``; the group when it reached the target size (then no longer buffered)."""
        self._groups.setdefault(key, []).append(file)
        self._sizes[key] = self._sizes.get(key, 0) + file.file_size
        if self._sizes[key] >= self.target_file_size:
            del self._sizes[key]
            return self._groups.pop(key)
        return None

    def emit_all(self) -> list[tuple[GroupKey, list[DataFileMeta]]]:
        out = list(self._groups.items())
        self._groups.clear()
        self._sizes.clear()
        return out


@dataclasses.dataclass(frozen=True)
class PreCommitCompaction:
    """The messages with merged new files, plus what was merged (``inputs``, still on storage)
    and what it was merged into (``outputs``)."""

    messages: list[CommitMessage]
    inputs: list[tuple[GroupKey, list[DataFileMeta]]]
    outputs: list[tuple[GroupKey, list[DataFileMeta]]]

    def delete_inputs(self, store: FileStore) -> None:
        for (partition, bucket), files in self.inputs:
            _delete(store, partition, bucket, files)

    def delete_outputs(self, store: FileStore) -> None:
        for (partition, bucket), files in self.outputs:
            _delete(store, partition, bucket, files)


def merge_new_files(store: FileStore, messages: Sequence[CommitMessage]) -> PreCommitCompaction:
    """Merge each (partition, bucket)'s small new files (module docstring); deletes nothing."""
    from paimon_core.append.append_compact_coordinator import AppendCompactConfig

    config = AppendCompactConfig.from_options(store.options.options)
    coordinator = AppendPreCommitCompactCoordinator(config.target_file_size)
    kept: dict[GroupKey, list[DataFileMeta]] = {}
    groups: list[tuple[GroupKey, list[DataFileMeta]]] = []
    for m in messages:
        key = (m.partition, m.bucket)
        for f in m.new_files:
            if f.file_size >= config.compaction_file_size:
                kept.setdefault(key, []).append(f)
                continue
            group = coordinator.add_file(key, f)
            if group is not None:
                groups.append((key, group))
    groups += coordinator.emit_all()
    to_rewrite = [(k, g) for k, g in groups if len(g) > 1]
    if not to_rewrite:
        return PreCommitCompaction(list(messages), [], [])
    for k, g in groups:
        if len(g) == 1:
            kept.setdefault(k, []).append(g[0])
    rewritten = _rewrite(store, to_rewrite)
    outputs = [(key, after) for (key, _), after in zip(to_rewrite, rewritten, strict=True)]
    for key, after in outputs:
        kept.setdefault(key, []).extend(after)
    logger.info(
        "Pre-commit compaction of %s: %d new file(s) merged into %d",
        store.name,
        sum(len(g) for _, g in to_rewrite),
        sum(len(a) for a in rewritten),
    )
    out = []
    for m in messages:
        files = kept.pop((m.partition, m.bucket), [])
        replaced = dataclasses.replace(m, new_files=tuple(files))
        if not replaced.is_empty():
            out.append(replaced)
    return PreCommitCompaction(out, to_rewrite, outputs)


@contextmanager
def merged_for_commit(
    store: FileStore, messages: Sequence[CommitMessage], *, skip: bool = False
) -> Iterator[Sequence[CommitMessage]]:
    """The committer's side (Java's coordinator sees every writer's files): yields the messages to
    commit, merged when the table has ``precommit-compact``. When the body returns, the merged new
    files are deleted; when it raises, the merge's output is deleted and the original messages stay
    intact for the caller's abort, except after :class:`CommitStateUnknownError`, when the commit
    may have landed and every file is kept."""
    if skip or not precommit_compacts(store):
        yield messages
        return
    done = merge_new_files(store, messages)
    try:
        yield done.messages
    except CommitStateUnknownError:
        raise
    except BaseException:
        done.delete_outputs(store)
        raise
    done.delete_inputs(store)


def _rewrite(store: FileStore, groups: Sequence[tuple[GroupKey, list[DataFileMeta]]]) -> list[list[DataFileMeta]]:
    """Rewrite each group (smallest sequence first); on failure delete every output and re-raise."""
    from paimon_core.append.append_compact_rewriter import rewrite_append_files
    from paimon_core.append.append_deletion_index import DeletionIndex

    outputs: list[list[DataFileMeta]] = []
    try:
        for (partition, bucket), files in groups:
            ordered = sorted(files, key=lambda f: f.min_sequence_number)
            # new files have no deletion vectors: an empty index, never the table's
            result = rewrite_append_files(
                store, partition, bucket, ordered, deletion_index=DeletionIndex(partition, bucket)
            )
            outputs.append(list(result.compact_after))
    except BaseException:
        for ((partition, bucket), _), after in zip(groups, outputs, strict=False):
            _delete(store, partition, bucket, after)
        raise
    return outputs


def _delete(store: FileStore, partition: bytes, bucket: int, files: Sequence[DataFileMeta]) -> None:
    bucket_path = store.bucket_path(partition, bucket)
    for f in files:
        try:
            store.file_io.delete(f.external_path or f"{bucket_path}/{f.file_name}")
        except OSError as e:  # never referenced by a snapshot: orphan cleanup removes it
            logger.warning("Could not delete merged new file %s: %s", f.file_name, e)
