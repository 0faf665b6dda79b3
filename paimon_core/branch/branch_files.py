"""The files other branches of a table reference: what one branch's maintenance must not delete.

Branches share the table's ``manifest/``, ``index/``, ``statistics/`` and data directories: a
branch made from a tag starts with the tagged snapshot's manifest lists, manifests and data
files, and both sides then go on. Snapshot expiry, changelog expiry and tag deletion of one
branch decide what to delete from that branch's own snapshots and tags only (Java's do too),
so without a guard main's expiry would delete the manifests and data files a branch still
reads, and the branch's expiry those main still reads.

:func:`files_of_other_branches` is that guard: the file names (manifest lists, manifests, index
manifests and files, statistics, data and extra files) every snapshot, tag and long-lived
changelog of every *other* branch (``main`` included, when the handle is on a branch)
references, read with the orphan cleanup's reader (:mod:`paimon_core.operation.referenced_files`).
Paimon file names are unique (a uuid and a counter), so a name identifies a file. A table
without branches costs one directory listing. A read failure raises: not deleting is safe,
deleting on a partial view is not.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_core.operation.referenced_files import (
    MAIN_BRANCH,
    ReferenceReader,
    RootRefs,
    collect_roots,
    list_branches,
    parallel_map,
)

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["files_of_other_branches"]

logger = logging.getLogger(__name__)


def files_of_other_branches(store: FileStore, *, parallelism: int = 8) -> frozenset[str]:
    """Names of every file the table's other branches reference (empty without branches)."""
    others = [b for b in [MAIN_BRANCH, *list_branches(store.file_io, store.path)] if b != store.paths.branch]
    if not others:
        return frozenset()
    roots = collect_roots(store.file_io, store.path, others, parallelism=parallelism)
    reader = ReferenceReader(store.file_io, store.path)
    names: set[str] = set()
    manifests: dict[str, RootRefs] = {}
    for root, files in zip(roots, parallel_map(reader.root_files, roots, parallelism), strict=True):
        for name, is_manifest in files or ():
            names.add(name)
            if is_manifest and name not in manifests:
                manifests[name] = root
    items = list(manifests.items())

    def read(item: tuple[str, RootRefs]) -> list[str] | None:
        return reader.manifest_files(item[0], item[1])

    for data_files in parallel_map(read, items, parallelism):
        names.update(data_files or ())
    logger.debug("Branches %s of %s reference %d files", others, store.name, len(names))
    return frozenset(names)
