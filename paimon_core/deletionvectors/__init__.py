"""Deletion vectors: which rows of a data file are deleted (Java ``org.apache.paimon.deletionvectors``).

A ``DELETION_VECTORS`` index file holds one serialized bitmap of deleted row positions per
data file; the snapshot's index manifest says where each one sits (:class:`DeletionFile`).
Reads drop those positions from each data file.
"""

from __future__ import annotations

from paimon_core.deletionvectors.deletion_file import (
    DELETION_VECTORS_INDEX,
    DeletionFile,
    deletion_files_by_bucket,
)
from paimon_core.deletionvectors.deletion_vector import (
    BITMAP32_MAGIC,
    BITMAP64_MAGIC,
    DeletionVector,
    deserialize_deletion_vector,
)
from paimon_core.deletionvectors.index_file import (
    DV_INDEX_VERSION,
    read_all_deletion_vectors,
    read_deletion_vector,
)

__all__ = [
    "BITMAP32_MAGIC",
    "BITMAP64_MAGIC",
    "DELETION_VECTORS_INDEX",
    "DV_INDEX_VERSION",
    "DeletionFile",
    "DeletionVector",
    "deletion_files_by_bucket",
    "deserialize_deletion_vector",
    "read_all_deletion_vectors",
    "read_deletion_vector",
]
