"""Where a data file's deletion vector is stored (Java ``table.source.DeletionFile``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from paimon_core.manifest.entries import FileKind, IndexManifestEntry

#: ``DeletionVectorsIndexFile.DELETION_VECTORS_INDEX``: the index type in index manifests.
DELETION_VECTORS_INDEX = "DELETION_VECTORS"


@dataclass(frozen=True, slots=True)
class DeletionFile:
    """One deletion vector inside a DV index file. Picklable.

    ``offset`` points at the vector's 4-byte length field; ``length`` is the index manifest's
    range length (see :mod:`paimon_core.deletionvectors.deletion_vector`); ``cardinality`` is the
    number of deleted rows, None when the writer did not record it.
    """

    path: str
    offset: int
    length: int
    cardinality: int | None = None


def deletion_files_by_bucket(
    entries: Iterable[IndexManifestEntry], index_path: Callable[[IndexManifestEntry], str]
) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
    """{(partition, bucket): {data file name: DeletionFile}} of the live DV index files.

    ``entries`` is an index manifest (a full listing of ADD entries; a DELETE entry, should one
    be there, cancels the ADD of the same file). ``index_path`` resolves an entry's file path.
    Other index types are ignored.
    """
    live: dict[tuple[bytes, int, str], IndexManifestEntry] = {}
    for e in entries:
        if e.index_file.index_type != DELETION_VECTORS_INDEX:
            continue
        key = (e.partition, e.bucket, e.index_file.file_name)
        if e.kind == FileKind.ADD:
            live[key] = e
        else:
            live.pop(key, None)
    result: dict[tuple[bytes, int], dict[str, DeletionFile]] = {}
    for e in live.values():
        ranges = e.index_file.dv_ranges
        if not ranges:
            continue
        path = index_path(e)
        files = result.setdefault((e.partition, e.bucket), {})
        for r in ranges:
            files[r.data_file_name] = DeletionFile(path, r.offset, r.length, r.cardinality)
    return result
