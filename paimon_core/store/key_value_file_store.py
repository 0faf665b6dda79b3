"""KeyValueFileStore: the store of a primary-key table (Java's ``KeyValueFileStore``).

The key fields, the merge function and the sort order inside a bucket are derived here, once, from
the resolved options, so the read, the write and the compaction of one handle merge the same way
(before, the read built its merge function from the schema's options alone and ignored a dynamic
``ignore-delete`` or ``fields.<f>.aggregate-function``).
"""

from __future__ import annotations

from functools import cached_property

from paimon_core.mergetree.base import KeyedMergeFunction
from paimon_core.mergetree.merge_function import create_merge_function
from paimon_core.mergetree.writer import sort_keys_for
from paimon_core.schema.data_types import DataField
from paimon_core.store.file_store import FileStore

__all__ = ["KeyValueFileStore"]

SEQUENCE_FIELD = "sequence.field"
SEQUENCE_SORT_ORDER = "sequence.field.sort-order"


class KeyValueFileStore(FileStore):
    """A primary-key table's store: key fields, merge function factory, sort order."""

    @cached_property
    def key_fields(self) -> list[DataField]:
        """The trimmed primary key (partition fields removed), as Java's ``trimmedPrimaryKeys``."""
        return self.schema.fields_of(self.schema.trimmed_primary_keys)

    @property
    def key_names(self) -> list[str]:
        return [f.name for f in self.key_fields]

    @cached_property
    def sequence_fields(self) -> list[str]:
        """``sequence.field`` (unknown fields raise a clear error)."""
        fields = [s.strip() for s in self.options.options.get(SEQUENCE_FIELD, "").split(",") if s.strip()]
        self.schema.fields_of(fields)
        return fields

    @property
    def sequence_descending(self) -> bool:
        return self.options.options.get(SEQUENCE_SORT_ORDER, "ascending").lower() == "descending"

    def new_merge_function(self) -> KeyedMergeFunction:
        """A merge function of the table's engine under the resolved options (Java's
        ``MergeFunctionFactory.create``). Invalid options raise ``InvalidOptionError``."""
        return create_merge_function(self.key_fields, list(self.schema.fields), self.options.options)

    @property
    def sort_keys(self) -> list[tuple[str, str, str]]:
        """Order of rows inside a bucket: key, ``sequence.field``, then the sequence number
        (Java's key comparator plus ``UserDefinedSeqComparator``)."""
        return sort_keys_for(self.key_names, self.sequence_fields, sequence_descending=self.sequence_descending)
