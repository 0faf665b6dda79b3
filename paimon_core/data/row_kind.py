"""Row kinds (+I, -U, +U, -D) of primary-key writes, vectorized."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import SchemaMismatchError

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
# Built from buffers, not Python lists: pyarrow imports pandas (~0.5 s) on its first conversion of
# Python objects, which a metadata-only process (e.g. an expiry job) should never pay at import.
#: Kind codes indexed into their short strings (Paimon's RowKind.shortString()).
SHORT_STRINGS = pa.Array.from_buffers(
    pa.string(), 4, [None, pa.py_buffer(np.array([0, 2, 4, 6, 8], np.int32).tobytes()), pa.py_buffer(b"+I-U+U-D")]
)
#: The retracting kinds, -U and -D.
RETRACT_KINDS = pa.Array.from_buffers(
    pa.int8(), 2, [None, pa.py_buffer(np.array([UPDATE_BEFORE, DELETE], np.int8).tobytes())]
)


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
