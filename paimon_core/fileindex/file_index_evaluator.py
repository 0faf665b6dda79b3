"""Whether a data file can hold rows matching a read's predicate, by its index (Java's
``io.FileIndexEvaluator`` and the index test of ``AppendOnlyFileStoreScan``).

The predicate is over the table's current columns; a file's index is keyed by the names its own
schema gave them. Columns are matched by field id, as the rest of the read does: a column the
file's schema lacks, or whose type changed since, decides nothing. The embedded index (manifest
entry) costs no I/O and is tested while planning (:meth:`FileIndexEvaluator.test_embedded`); an
index file (``<data file>.index`` in ``_EXTRA_FILES``) is read when the file is about to be read
(:meth:`FileIndexEvaluator.remain`). An index that cannot be read never skips a file (a warning
is logged): at worst the file is read and the predicate filters its rows.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from paimon_core.exceptions import PaimonError
from paimon_core.fileindex.data_file_index_writer import INDEX_PATH_SUFFIX
from paimon_core.fileindex.file_index_format import FileIndexFormatReader
from paimon_core.fileindex.file_index_options import READ_ENABLED
from paimon_core.fileindex.file_index_predicate import FileIndexPredicate
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta, ManifestEntry
from paimon_core.paths import PathFactory
from paimon_core.predicate import Predicate
from paimon_core.schema.data_types import DataField, DataType
from paimon_core.schema.table_schema import TableSchema

__all__ = ["FileIndexEvaluator", "file_index_read_enabled", "index_file_names"]

logger = logging.getLogger(__name__)


def file_index_read_enabled(options: Mapping[str, str]) -> bool:
    """``file-index.read.enabled`` (default true)."""
    return options.get(READ_ENABLED, "true").strip().lower() != "false"


def index_file_names(meta: DataFileMeta) -> list[str]:
    """The index files among a data file's extra files."""
    return [x for x in meta.extra_files if x.endswith(INDEX_PATH_SUFFIX)]


class FileIndexEvaluator:
    """Tests data files of one table against one predicate."""

    def __init__(
        self,
        predicate: Predicate,
        fields: Sequence[DataField],
        schema_of: Callable[[int], TableSchema],
        *,
        file_io: FileIO | None = None,
        paths: PathFactory | None = None,
    ) -> None:
        self.predicate = predicate
        self.fields = {f.name: f for f in fields}
        self.schema_of = schema_of
        self.file_io = file_io
        self.paths = paths
        self._resolver = lru_cache(maxsize=256)(self._resolver_uncached)
        #: files whose index skipped them (by this evaluator), for logs and tests
        self.skipped = 0

    def _resolver_uncached(self, schema_id: int) -> Callable[[str], tuple[str, DataType] | None]:
        try:
            file_fields = {f.id: f for f in self.schema_of(schema_id).fields}
        except Exception:  # noqa: BLE001 - an unknown schema decides nothing
            return lambda _name: None

        def resolve(name: str) -> tuple[str, DataType] | None:
            current = self.fields.get(name)
            if current is None:
                return None
            old = file_fields.get(current.id)
            if old is None or old.type.copy(nullable=True) != current.type.copy(nullable=True):
                return None
            return old.name, old.type

        return resolve

    def _test(self, data: bytes, meta: DataFileMeta, where: str | None) -> bool:
        try:
            reader = FileIndexFormatReader(data, path=where)
            result = FileIndexPredicate(reader, self._resolver(meta.schema_id)).evaluate(self.predicate)
        except (PaimonError, ValueError) as e:
            logger.warning("Cannot use the file index of %s (%s): reading the file", meta.file_name, e)
            return True
        if not result.remain():
            self.skipped += 1
            logger.debug("File %s skipped by its index (%s)", meta.file_name, where or "embedded")
            return False
        return True

    def test_embedded(self, meta: DataFileMeta) -> bool:
        """False only when the file's embedded index proves no row matches."""
        if meta.embedded_index is None:
            return True
        return self._test(meta.embedded_index, meta, None)

    def entry_filter(self, inner: Callable[[ManifestEntry], bool] | None) -> Callable[[ManifestEntry], bool]:
        """A scan's entry filter: ``inner`` (value stats), then the embedded index."""

        def keep(entry: ManifestEntry) -> bool:
            return (inner is None or inner(entry)) and self.test_embedded(entry.file)

        return keep

    def remain(self, bucket_path: str, meta: DataFileMeta) -> bool:
        """False only when the file's index (embedded, or its index file next to it in
        ``bucket_path``) proves no row matches."""
        if meta.embedded_index is not None:
            return self._test(meta.embedded_index, meta, None)
        names = index_file_names(meta)
        if not names or self.file_io is None or self.paths is None:
            return True
        if len(names) > 1:
            logger.warning(
                "Data file %s names more than one index file (%s): reading it", meta.file_name, names
            )
            return True
        try:
            data_path = self.paths.file_in_dir(bucket_path, meta.file_name, meta.external_path)
            path = self.paths.file_in_dir(posixpath.dirname(data_path), names[0], kind="extra file")
            data = self.file_io.read_bytes(path)
        except (OSError, PaimonError) as e:
            logger.warning(
                "Cannot read the index file %s of %s (%s): reading the file", names[0], meta.file_name, e
            )
            return True
        return self._test(data, meta, path)
