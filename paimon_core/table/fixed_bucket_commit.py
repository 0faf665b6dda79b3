"""Batch writes of postpone-bucket tables into real buckets (``postpone.batch-write-fixed-bucket``).

Java's batch writers of a ``bucket = -2`` table write straight into real buckets by default
(``postpone.batch-write-fixed-bucket = true``; Spark's ``SparkPostponeStagedCommitter``, core's
``PostponeUtils.decideFixedBucketNum``). As there, the batch is first staged: the writer puts its
rows into ``bucket-postpone`` files that are never committed
(:class:`~paimon_core.postpone.postpone_bucket_writer.PostponeBucketWriter`). At commit, on the
latest snapshot ``S``:

* per touched partition the staged rows and bytes decide the bucket count
  (:func:`decide_fixed_bucket_num`): a partition with real buckets keeps its count unless the
  batch needs more than ``postpone.batch-write-fixed-bucket.rescale-load-factor`` times as many
  (and ``...max-parallelism`` allows more); a new partition gets ``postpone.default-bucket-num``,
  else ``ceil(rows / postpone.target-row-num-per-bucket)`` or ``ceil(bytes /
  postpone.target-size-per-bucket)`` rounded up to a power of two, at most ``max-parallelism``;
  an overwrite ignores the old layout;
* a partition that must grow is rescaled first: its rows at ``S`` rewritten into the new count and
  committed as an OVERWRITE of exactly those partitions in strict mode from ``S``
  (``commit.strict-mode.last-safe-snapshot``: a compaction or another rescale of them since
  ``S`` fails it instead of losing rows);
* the staged rows are replayed in order into the real buckets by the table's writer (bucket hash,
  sequence numbers after the bucket's, the writer's compaction) and committed in strict mode;
* the staged files are deleted, whatever happened (they were never visible).

With ``postpone.batch-write-fixed-bucket = false`` (and for streaming writes) the staged files are
committed as they are: rows wait in ``bucket-postpone`` for the postpone compaction.

Table-level (issue 26): the replay and the rescale write through the table's writer and read the
base snapshot through ``table.copy(...)``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitStateUnknownError, InvalidArgumentError
from paimon_core.operation.commit.commit_message import CommitMessage
from paimon_core.operation.commit.committer import OverwriteSpec
from paimon_core.options import parse_memory_size
from paimon_core.paths import POSTPONE_BUCKET
from paimon_core.results import CommitResult
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

if TYPE_CHECKING:
    from paimon_core.manifest.entries import DataFileMeta
    from paimon_core.table.table import FileStoreTable

__all__ = ["BATCH_WRITE_FIXED_BUCKET", "FixedBucketDecision", "PostponeFixedBucketCommit", "decide_fixed_bucket_num"]

logger = logging.getLogger(__name__)

BATCH_WRITE_FIXED_BUCKET = "postpone.batch-write-fixed-bucket"
MAX_PARALLELISM = "postpone.batch-write-fixed-bucket.max-parallelism"
RESCALE_LOAD_FACTOR = "postpone.batch-write-fixed-bucket.rescale-load-factor"


@dataclass(frozen=True)
class FixedBucketDecision:
    """Java's ``PostponeUtils.FixedBucketDecision``."""

    target_bucket_num: int
    requires_rescale: bool


def _int_option(options: Mapping[str, str], key: str, default: int) -> int:
    text = options.get(key)
    try:
        value = default if text is None or not str(text).strip() else int(str(text).strip())
    except ValueError:
        raise InvalidArgumentError(f"Option '{key}' must be an integer, got {text!r}") from None
    if value <= 0:
        raise InvalidArgumentError(f"Option '{key}' must be greater than 0.")
    return value


def _ceil_div(value: int, divisor: int) -> int:
    return 0 if value <= 0 else (value - 1) // divisor + 1


def _round_up_to_power_of_two(value: int, upper: int) -> int:
    capped = min(value, upper)
    if capped <= 1:
        return 1
    return min(1 << (capped - 1).bit_length(), upper)


def decide_fixed_bucket_num(
    staged_rows: int, staged_bytes: int, existing: int | None, options: Mapping[str, str]
) -> FixedBucketDecision:
    """Java's ``PostponeUtils.decideFixedBucketNum`` (see the module docstring)."""
    from paimon_core.postpone.postpone_utils import (
        DEFAULT_BUCKET_NUM,
        TARGET_ROW_NUM_PER_BUCKET,
        TARGET_SIZE_PER_BUCKET,
        _positive_int,
    )

    if staged_rows < 0 or staged_bytes < 0:
        raise InvalidArgumentError("Staged row count and file size cannot be negative.")
    if existing is not None and existing <= 0:
        raise InvalidArgumentError("Existing bucket number must be positive.")
    default = _positive_int(options, DEFAULT_BUCKET_NUM)
    if existing is None and default is not None:
        return FixedBucketDecision(default, False)
    max_num = _int_option(options, MAX_PARALLELISM, 2048)
    factor = _int_option(options, RESCALE_LOAD_FACTOR, 32)
    rows_target = _positive_int(options, TARGET_ROW_NUM_PER_BUCKET)
    if rows_target is not None:
        required = _ceil_div(staged_rows, rows_target)
    else:
        size_target = parse_memory_size(options.get(TARGET_SIZE_PER_BUCKET, "1 gb"), key=TARGET_SIZE_PER_BUCKET)
        if size_target <= 0:
            raise InvalidArgumentError(f"Option '{TARGET_SIZE_PER_BUCKET}' must be greater than 0.")
        required = _ceil_div(staged_bytes, size_target)
    required = max(required, 1)
    suggested = _round_up_to_power_of_two(required, max_num)
    rescale = existing is not None and required > existing * factor and suggested > existing
    if existing is None or rescale:
        return FixedBucketDecision(suggested, rescale)
    return FixedBucketDecision(existing, False)


class PostponeFixedBucketCommit:
    """The commit of a staged batch write into real buckets (see the module docstring)."""

    def __init__(
        self, table: FileStoreTable, commit_user: str, overwrite: OverwriteSpec | None, *, user_given: bool = False
    ) -> None:
        self.table = table
        self.commit_user = commit_user
        self.overwrite = overwrite
        self.user_given = user_given

    @staticmethod
    def applies(table: FileStoreTable, messages: Sequence[CommitMessage]) -> bool:
        """A batch commit of a primary-key postpone-bucket table with staged files and
        ``postpone.batch-write-fixed-bucket`` on (the default)."""
        if table.options.bucket != POSTPONE_BUCKET or not table.schema.primary_keys:
            return False
        if (table.options.get(BATCH_WRITE_FIXED_BUCKET) or "true").strip().lower() != "true":
            return False
        return any(m.bucket == POSTPONE_BUCKET and m.new_files for m in messages)

    def commit(self, messages: Sequence[CommitMessage], commit_identifier: int) -> CommitResult:
        staged = [m for m in messages if m.bucket == POSTPONE_BUCKET and m.new_files]
        rest = [m for m in messages if not (m.bucket == POSTPONE_BUCKET and m.new_files)]
        try:
            committer = self.table.new_file_store_commit(self.commit_user)
            if self.user_given and committer.is_committed(commit_identifier):
                return committer.commit([], commit_identifier, check_committed=True)  # already: a no-op
            return self._commit(staged, rest, commit_identifier)
        finally:
            self._delete(staged)  # staged files were never visible

    def _commit(
        self, staged: Sequence[CommitMessage], rest: Sequence[CommitMessage], commit_identifier: int
    ) -> CommitResult:
        from paimon_core.table.postpone_bucket_compact import (
            PostponePartitionTask,
            run_postpone_partition,
        )

        latest = self.table.latest_snapshot()
        base = latest.id if latest is not None else 0
        files: dict[bytes, list[DataFileMeta]] = {}
        for m in staged:
            files.setdefault(m.partition, []).extend(m.new_files)
        existing = {} if self.overwrite is not None else self._existing(latest, frozenset(files))
        opts = self.table.options.options
        decisions = {
            p: decide_fixed_bucket_num(
                sum(f.row_count for f in fs), sum(f.file_size for f in fs), existing.get(p), opts
            )
            for p, fs in files.items()
        }
        rescaled = {p: d.target_bucket_num for p, d in decisions.items() if d.requires_rescale}
        if rescaled:
            base = self._rescale(rescaled, base)
        written: list[CommitMessage] = []
        try:
            for partition, fs in files.items():
                task = PostponePartitionTask(
                    partition=partition,
                    partition_name=self.table.partition_path(partition),
                    num_buckets=decisions[partition].target_bucket_num,
                    snapshot_id=base,
                    files=tuple(fs),
                )
                written += run_postpone_partition(self.table, task, as_compaction=False, overwrite=self.overwrite)
        except BaseException:
            _abort(self.table, written)
            raise
        from paimon_core.postpone.postpone_utils import STRICT_MODE_LAST_SAFE_SNAPSHOT

        # the postpone table itself (Java's fixedWriteTable): an INSERT OVERWRITE also removes the
        # partitions' pending bucket-postpone rows
        committer = self.table.copy({STRICT_MODE_LAST_SAFE_SNAPSHOT: str(base)}).new_file_store_commit(self.commit_user)
        from paimon_core.table.table_commit import commit_keeping_landed_append

        out = [*written, *rest]
        try:
            return commit_keeping_landed_append(
                self.table,
                out,
                lambda: committer.commit(out, commit_identifier, overwrite=self.overwrite, check_committed=self.user_given),
            )
        except CommitStateUnknownError:
            raise  # the snapshot may reference the files: keep them
        except BaseException:
            _abort(self.table, written)  # nothing landed (a landed APPEND returns above)
            raise

    def _existing(self, latest: object, partitions: frozenset[bytes]) -> dict[bytes, int]:
        from paimon_core.operation.scan import ScanFilter
        from paimon_core.postpone.postpone_utils import resolve_bucket_nums
        from paimon_core.snapshot.snapshot import Snapshot

        if not isinstance(latest, Snapshot) or not partitions:
            return {}
        flt = ScanFilter(partitions=partitions, only_real_buckets=True)
        real = self.table.new_file_store_scan().live_entries(latest, flt)
        return resolve_bucket_nums({}, real, describe=self.table.partition_path)

    def _rescale(self, targets: Mapping[bytes, int], base: int) -> int:
        """Rewrite the partitions' rows at ``base`` into their new bucket counts: one OVERWRITE of
        exactly them, in strict mode from ``base``; returns the new snapshot id."""
        from paimon_core.table.postpone_bucket_compact import table_for_postpone_rewrite
        from paimon_core.table.table_write import TableWrite

        source = self.table.copy({"scan.snapshot-id": str(base)})
        splits = [s for s in source.new_read_builder().new_scan().plan().splits if s.partition in targets]
        read = source.new_read_builder().new_read()
        spec = OverwriteSpec(None, dynamic=False, partitions=frozenset(targets))
        messages: list[CommitMessage] = []
        by_count: dict[int, list[bytes]] = {}
        for p, n in targets.items():
            by_count.setdefault(n, []).append(p)
        try:
            for n, parts in by_count.items():
                rewrite = table_for_postpone_rewrite(self.table, n, base, compact=False).copy(
                    {"changelog-producer": "none", "write-only": "true"}
                )
                write = TableWrite(rewrite, overwrite=spec)
                try:
                    for batch in read.to_batches([s for s in splits if s.partition in parts]):
                        write.write_arrow(batch)
                    messages += write.prepare_commit()
                except BaseException:
                    write.abort()
                    raise
        except BaseException:
            _abort(self.table, messages)
            raise
        logger.info(
            "Rescaling %d partition(s) of %s for a fixed-bucket batch write: %s",
            len(targets),
            self.table.name,
            {self.table.partition_path(p): n for p, n in targets.items()},
        )
        committer = table_for_postpone_rewrite(self.table, next(iter(targets.values())), base, compact=False)
        try:
            result = committer.new_file_store_commit(self.commit_user + "-rescale").commit(
                messages, BATCH_COMMIT_IDENTIFIER, overwrite=spec, check_committed=False
            )
        except CommitStateUnknownError:
            raise
        except BaseException:
            _abort(self.table, messages)
            raise
        assert result.snapshot_id is not None
        return result.snapshot_id

    def _delete(self, staged: Sequence[CommitMessage]) -> None:
        for m in staged:
            path = self.table.bucket_path(m.partition, POSTPONE_BUCKET)
            for f in m.new_files:
                try:
                    self.table.file_io.delete(f.external_path or f"{path}/{f.file_name}")
                except Exception:  # noqa: BLE001 - an unreferenced file: orphan cleanup takes it
                    logger.warning("Could not delete staged file %s/%s", path, f.file_name, exc_info=True)


def _abort(table: FileStoreTable, messages: Sequence[CommitMessage]) -> None:
    """Delete what uncommitted messages wrote (new files and a writer compaction's output)."""
    from paimon_core.operation.compact.table_compact import delete_written

    for m in messages:
        path = table.bucket_path(m.partition, m.bucket)
        for f in (*m.new_files, *m.changelog_files):
            table.file_io.delete(f.external_path or f"{path}/{f.file_name}")
    delete_written(table.store, messages)

