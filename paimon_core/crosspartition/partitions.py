"""Dense ids for the partitions a cross-partition write sees (Java's ``IDMapping<BinaryRow>``).

Each id keeps the partition's serialized row (as the manifests spell it, so commit messages
and sequence restores match the files on disk), its directory and its Arrow values (to
rewrite the partition columns of rows that go to another partition).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_core.data.binary_row import deserialize_binary_row, serialize_binary_row
from paimon_core.data.internal import arrow_scalar_to_internal, internal_to_arrow_scalar
from paimon_core.schema.data_types import DataField

_ROW = "__paimon_row"


class PartitionRegistry:
    """Partition <-> int id, with the partition's bytes, path and Arrow values."""

    def __init__(
        self,
        fields: Sequence[DataField],
        arrow_schema: pa.Schema,
        path_of: Callable[[list[object | None]], str],
    ) -> None:
        self.fields = list(fields)
        self.types = [f.type for f in self.fields]
        self.names = [f.name for f in self.fields]
        self.arrow_schema = arrow_schema  # the partition columns' Arrow fields
        self.path_of = path_of
        self.partitions: list[bytes] = []
        self.paths: list[str] = []
        self._rows: list[pa.Table] = []
        self._by_canonical: dict[bytes, int] = {}
        self._values: pa.Table | None = None

    def __len__(self) -> int:
        return len(self.partitions)

    def _add(self, stored: bytes, canonical: bytes, internal: list[object | None], row: pa.Table) -> int:
        pid = len(self.partitions)
        self.partitions.append(stored)
        self.paths.append(self.path_of(internal))
        self._rows.append(row.cast(self.arrow_schema))
        self._by_canonical[canonical] = pid
        self._values = None
        return pid

    def register_stored(self, partition: bytes) -> int:
        """Id of a partition read from a manifest (its bytes stay as stored)."""
        internal = list(deserialize_binary_row(partition, self.types))
        canonical = serialize_binary_row(internal, self.types)
        pid = self._by_canonical.get(canonical)
        if pid is not None:
            return pid
        arrays = [pa.array([internal_to_arrow_scalar(v, t)]) for v, t in zip(internal, self.types, strict=True)]
        return self._add(partition, canonical, internal, pa.Table.from_arrays(arrays, schema=self.arrow_schema))

    def ids_for(self, data: pa.Table) -> npt.NDArray[np.int32]:
        """The partition id of every row of ``data`` (registering new partitions)."""
        n = data.num_rows
        indexed = data.select(self.names).append_column(_ROW, pa.array(np.arange(n, dtype=np.int64)))
        groups = indexed.group_by(self.names, use_threads=False).aggregate([(_ROW, "list")])
        lists = groups.column(f"{_ROW}_list").combine_chunks()
        out = np.empty(n, dtype=np.int32)
        rows = lists.values.to_numpy()
        offsets = lists.offsets.to_numpy()
        for g in range(groups.num_rows):
            members = rows[offsets[g] : offsets[g + 1]]
            first = int(members[0])
            internal = [
                arrow_scalar_to_internal(data.column(name)[first], t) for name, t in zip(self.names, self.types, strict=True)
            ]
            canonical = serialize_binary_row(internal, self.types)
            pid = self._by_canonical.get(canonical)
            if pid is None:
                pid = self._add(canonical, canonical, internal, data.select(self.names).slice(first, 1))
            out[members] = pid
        return out

    def values(self) -> pa.Table:
        """One row of partition values per id (row i = partition id i)."""
        if self._values is None:
            self._values = pa.concat_tables(self._rows).combine_chunks() if self._rows else self.arrow_schema.empty_table()
        return self._values
