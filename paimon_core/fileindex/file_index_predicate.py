"""A predicate tested on one data file's indexes (Java's ``FileIndexPredicate``).

Leaves on a column test each of its indexes and AND the answers; ``and`` / ``or`` combine their
children as Java's ``FileIndexPredicateTest`` does. A column without an index, a function no
index decides (ranges, LIKE ...) and a column the caller cannot map to the file (``resolve``
returns None: added after the file was written, or its type changed) all answer REMAIN, so a
file is only skipped when an index proves that no row can match.
"""

from __future__ import annotations

from collections.abc import Callable

from paimon_core.fileindex.file_index_format import FileIndexFormatReader
from paimon_core.fileindex.file_index_result import REMAIN, FileIndexResult
from paimon_core.fileindex.file_indexer import FileIndexReader
from paimon_core.predicate import CompoundPredicate, LeafPredicate, Predicate
from paimon_core.schema.data_types import DataType

__all__ = ["ColumnResolver", "FileIndexPredicate"]

#: current column name -> (the file's column name, its type in the file), or None: not decidable
ColumnResolver = Callable[[str], tuple[str, DataType] | None]


class FileIndexPredicate:
    """Evaluates predicates on the index container ``reader``."""

    def __init__(self, reader: FileIndexFormatReader, resolve: ColumnResolver) -> None:
        self.reader = reader
        self.resolve = resolve
        self._readers: dict[str, list[FileIndexReader]] = {}

    def _column_readers(self, name: str) -> list[FileIndexReader]:
        cached = self._readers.get(name)
        if cached is None:
            resolved = self.resolve(name)
            cached = [] if resolved is None else self.reader.column_readers(*resolved)
            self._readers[name] = cached
        return cached

    def evaluate(self, predicate: Predicate | None) -> FileIndexResult:
        if predicate is None:
            return REMAIN
        if isinstance(predicate, LeafPredicate):
            result = REMAIN
            for reader in self._column_readers(predicate.field_name):
                result = result.and_(reader.visit(predicate.function, predicate.literals))
                if not result.remain():
                    return result
            return result
        assert isinstance(predicate, CompoundPredicate)
        combined: FileIndexResult | None = None
        for child in predicate.children:
            r = self.evaluate(child)
            if predicate.function == "or":
                combined = r if combined is None else combined.or_(r)
            else:
                combined = r if combined is None else combined.and_(r)
                if not combined.remain():
                    return combined
        return REMAIN if combined is None else combined
