"""Where an index file lives (Java's ``IndexPathFactory`` from ``FileStorePathFactory.indexFileFactory``).

An index file (a deletion-vector index file) is written under the table's ``index/`` directory,
or, with ``index-file-in-data-file-dir = true``, in the directory of its bucket's data files;
an ``external_path`` recorded in its meta wins over both. Every reader, writer and cleaner of
index files resolves paths here, so a file written in the bucket directory is also found and
deleted there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from paimon_core.manifest.entries import IndexFileMeta

if TYPE_CHECKING:
    from paimon_core.store.file_store import FileStore

__all__ = ["INDEX_FILE_IN_DATA_FILE_DIR", "index_file_in_data_dir", "index_file_path"]

INDEX_FILE_IN_DATA_FILE_DIR = "index-file-in-data-file-dir"


def index_file_in_data_dir(options: Mapping[str, str]) -> bool:
    return (options.get(INDEX_FILE_IN_DATA_FILE_DIR) or "false").strip().lower() == "true"


def index_file_path(table: FileStore, partition: bytes, bucket: int, file: IndexFileMeta | str) -> str:
    """The path of index file ``file`` (a meta, or the name of a file about to be written) of
    ``(partition, bucket)``."""
    if isinstance(file, IndexFileMeta):
        if file.external_path:
            return table.paths.confine(file.external_path, kind="index file")
        name = file.file_name
    else:
        name = file
    if index_file_in_data_dir(table.options.options):
        return table.paths.file_in_dir(table.bucket_path(partition, bucket), name, kind="index file")
    return table.paths.index_file_path(name)
