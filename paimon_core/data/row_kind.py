"""Row kinds (+I, -U, +U, -D) of primary-key writes, vectorized."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import SchemaMismatchError

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
#: Kind codes indexed into their short strings (Paimon's RowKind.shortString()).
SHORT_STRINGS = pa.array(["+I", "-U", "+U", "-D"], pa.string())
#: The retracting kinds, -U and -D.
RETRACT_KINDS = pa.array([UPDATE_BEFORE, DELETE], pa.int8())


def kinds_from_strings(column: pa.ChunkedArray | pa.Array, field_name: str) -> pa.Array:
    """Map a ``rowkind.field`` column of ``+I/-U/+U/-D`` strings to int8 kinds."""
    idx = pc.index_in(column, value_set=SHORT_STRINGS)
    bad = pc.sum(pc.is_null(idx)).as_py() or 0
    if bad:
        sample = pc.filter(column, pc.is_null(idx)).slice(0, 3).to_pylist()
        raise SchemaMismatchError(
            f"Column '{field_name}' (rowkind.field) must hold +I, -U, +U or -D; {bad} row(s) do not, e.g. {sample}",
            column=field_name,
        )
    arr = idx.combine_chunks() if isinstance(idx, pa.ChunkedArray) else idx
    return arr.cast(pa.int8())


def constant_kinds(n: int, kind: int) -> pa.Array:
    return pa.array(np.full(n, kind, dtype=np.int8))
