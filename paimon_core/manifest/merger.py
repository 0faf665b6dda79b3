"""Manifest compaction (Paimon's ManifestFileMerger), so metadata does not grow per commit.

* Minor compaction: consecutive small manifests (< target size) are merged once
  their total reaches the target size, and a trailing run of small manifests is
  merged when there are at least ``manifest.merge-min-count`` of them.
* Full compaction: when manifests holding DELETE entries add up to
  ``manifest.full-compaction-threshold-size``, every ADD/DELETE pair is cancelled
  and the live entries are rewritten; large manifests untouched by deletes stay.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from paimon_core.exceptions import CommitConflictError
from paimon_core.manifest.entries import FileKind, ManifestEntry, ManifestFileMeta

logger = logging.getLogger(__name__)

ReadManifest = Callable[[ManifestFileMeta], list[ManifestEntry]]
WriteManifests = Callable[[list[ManifestEntry]], list[ManifestFileMeta]]


def merge_entries(entries: Iterable[ManifestEntry]) -> list[ManifestEntry]:
    """Cancel ADD/DELETE pairs; keep first-seen order. DELETEs of files added elsewhere stay."""
    out: dict[tuple[object, ...], ManifestEntry] = {}
    for e in entries:
        ident = e.identifier()
        if e.kind == FileKind.ADD:
            if ident in out:
                raise CommitConflictError(
                    f"Trying to add file {e.file.file_name} which is already added (bucket {e.bucket})",
                    file_name=e.file.file_name,
                )
            out[ident] = e
        else:
            prev = out.get(ident)
            if prev is not None and prev.kind == FileKind.ADD:
                del out[ident]
            else:
                out[ident] = e
    return list(out.values())


def merge_manifests(
    metas: Sequence[ManifestFileMeta],
    *,
    read: ReadManifest,
    write: WriteManifests,
    target_size: int,
    min_count: int,
    full_compaction_threshold: int,
) -> tuple[list[ManifestFileMeta], list[ManifestFileMeta]]:
    """Returns (merged list, newly written manifests). Inputs are never deleted here."""
    delete_size = sum(m.file_size for m in metas if m.num_deleted_files > 0)
    if delete_size >= full_compaction_threshold:
        return _full(metas, read=read, write=write, target_size=target_size)
    return _minor(metas, read=read, write=write, target_size=target_size, min_count=min_count)


def _minor(
    metas: Sequence[ManifestFileMeta], *, read: ReadManifest, write: WriteManifests, target_size: int, min_count: int
) -> tuple[list[ManifestFileMeta], list[ManifestFileMeta]]:
    result: list[ManifestFileMeta] = []
    new: list[ManifestFileMeta] = []
    candidates: list[ManifestFileMeta] = []
    total = 0

    def flush() -> None:
        nonlocal total
        entries = merge_entries(e for m in candidates for e in read(m))
        written = write(entries) if entries else []
        result.extend(written)
        new.extend(written)
        candidates.clear()
        total = 0

    for m in metas:
        if m.file_size >= target_size:
            # A big manifest ends the run: keep order, emit pending small ones untouched.
            result.extend(candidates)
            candidates.clear()
            total = 0
            result.append(m)
            continue
        candidates.append(m)
        total += m.file_size
        if total >= target_size:
            flush()
    if len(candidates) >= min_count:
        flush()
    else:
        result.extend(candidates)
    return result, new


def _full(
    metas: Sequence[ManifestFileMeta], *, read: ReadManifest, write: WriteManifests, target_size: int
) -> tuple[list[ManifestFileMeta], list[ManifestFileMeta]]:
    contents = {m.file_name: read(m) for m in metas}
    deleted = {e.identifier() for es in contents.values() for e in es if e.kind == FileKind.DELETE}
    keep: list[ManifestFileMeta] = []
    rewrite: list[ManifestEntry] = []
    for m in metas:
        es = contents[m.file_name]
        untouched = m.num_deleted_files == 0 and not any(e.identifier() in deleted for e in es)
        if untouched and m.file_size >= target_size:
            keep.append(m)
        else:
            rewrite.extend(es)
    live = [e for e in merge_entries(rewrite) if e.kind == FileKind.ADD]
    # DELETEs whose ADD sits in a kept manifest cannot exist: kept ones are untouched.
    written = write(live) if live else []
    logger.debug("Full manifest compaction: kept %d, rewrote into %d", len(keep), len(written))
    return keep + written, written
