"""Vectorized (numpy) decoding of Avro record blocks into columns.

Avro records are variable-length, so record ``k + 1`` starts where record ``k``
ends: a decoder is sequential by nature, and a Python one pays per field. This
module decodes all records of a file at once, field by field over numpy arrays,
by *speculating* on where records start:

1. every byte that can start a record is a candidate lane (the records of a
   Paimon manifest start with ``_VERSION``: one known byte);
2. all lanes are decoded together, field after field, exactly as the
   sequential decoder would decode a record there; a lane that cannot be a
   record (a bad union branch, a length past its block) dies;
3. the true records are the chain that starts at each block's first byte and
   follows "next record starts where this one ends", block by block, with the
   block's record count and end checked.

A true record's decoding does not depend on the lanes around it, so the chain
holds exactly what the sequential decoder reads. Whenever anything does not fit
(the chain breaks, a writer schema this module does not model), the caller
falls back to the sequential decoder, which raises the precise error.

Collected per record (for the fields of the top record and of its record-typed
fields, one level down): the byte span of every field value, the value of every
``int``/``long`` (possibly nullable) field, and the content span of every
``bytes``/``string`` field. Deeper values stay bytes, decoded on demand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
#: The lanes an operation works on: an index array, or ALL of them (a slice: no fancy indexing).
Sel = slice | I64
ALL = slice(None)
#: Array/map blocks holding more items than this are not decoded here (fallback).
MAX_ITEMS = 1 << 16
#: Bound on the item steps of all arrays/maps of one pass (each a few numpy calls) before
#: falling back to the sequential decoder.
MAX_STEPS = 1 << 14
#: Zero bytes after the data, so a 10-byte varint window never reads past the buffer.
PAD = 16
_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def _zigzag(z: I64) -> I64:
    u = z.view(np.uint64)
    return (u >> np.uint64(1)).view(np.int64) ^ -(u & np.uint64(1)).view(np.int64)


class Unsupported(Exception):
    """The writer schema or the data is outside what the vectorized path handles."""


@dataclass
class Columns:
    """What :func:`decode_columns` collected, one value per record, in file order.

    Paths are dotted field names (``_FILE._FILE_NAME``). Accessors return None for a
    path nothing was collected under (e.g. a union whose every value was null).
    """

    starts: I64
    ends: I64
    order: I64 = field(default_factory=lambda: np.zeros(0, np.int64))
    _ints: dict[str, I64] = field(default_factory=dict)
    _branches: dict[str, I64] = field(default_factory=dict)
    _spans: dict[str, tuple[I64, I64]] = field(default_factory=dict)
    _content: dict[str, I64] = field(default_factory=dict)

    def ints(self, path: str) -> I64 | None:
        """int/long values (0 where null)."""
        col = self._ints.get(path)
        return None if col is None else col[self.order]

    def branches(self, path: str) -> I64 | None:
        """Union branch index per record (union-typed fields only)."""
        col = self._branches.get(path)
        return None if col is None else col[self.order]

    def span(self, path: str) -> tuple[I64, I64] | None:
        """(start, end) of the whole encoded value."""
        col = self._spans.get(path)
        return None if col is None else (col[0][self.order], col[1][self.order])

    def content(self, path: str) -> tuple[I64, I64] | None:
        """(start, end) of a bytes/string value's content."""
        col = self._content.get(path)
        span = self._spans.get(path)
        return None if col is None or span is None else (col[self.order], span[1][self.order])

    def keep(self, paths: Sequence[str]) -> Columns:
        """Only ``paths``, already in record order: the lanes of every other field (and of the
        candidates that were no record) are released."""
        o = self.order

        def pick(store: dict[str, I64]) -> dict[str, I64]:
            return {p: store[p][o] for p in paths if p in store}

        spans = {p: (self._spans[p][0][o], self._spans[p][1][o]) for p in paths if p in self._spans}
        n = len(o)
        return Columns(self.starts, self.ends, np.arange(n, dtype=np.int64), pick(self._ints), pick(self._branches),
                       spans, pick(self._content))


class _Lanes:
    def __init__(self, buf: npt.NDArray[np.uint8], pos: I64, limit: I64, collect_depth: int) -> None:
        self.buf = buf
        self.pos = pos
        self.limit = limit
        self.alive = np.ones(len(pos), dtype=bool)
        self.n = len(pos)
        self.dead_pos = len(buf) - PAD
        self.steps = 0
        self.depth = collect_depth
        self.ints: dict[str, I64] = {}
        self.branches: dict[str, I64] = {}
        self.spans: dict[str, tuple[I64, I64]] = {}
        self.content: dict[str, I64] = {}
        self.named: dict[str, Any] = {}

    # -- lane bookkeeping (``sel``: the lanes an op works on; ALL: every lane, without indexing) --
    def get(self, arr: I64, sel: Sel) -> I64:
        """``arr`` at ``sel``, always a copy (a slice would give a view)."""
        return arr[sel].copy() if isinstance(sel, slice) else arr[sel]

    def kill(self, sel: Sel, bad: npt.NDArray[np.bool_]) -> None:
        if bad.any():
            dead = np.flatnonzero(bad) if isinstance(sel, slice) else sel[bad]
            self.alive[dead] = False
            self.pos[dead] = self.dead_pos  # in bounds, on zero bytes: decodes as 0/null/empty

    def advance(self, sel: Sel, new_pos: I64) -> None:
        bad = new_pos > self.limit[sel]
        self.pos[sel] = new_pos
        self.kill(sel, bad)

    def _col(self, store: dict[str, I64], path: str) -> I64:
        col = store.get(path)
        if col is None:
            col = store[path] = np.zeros(self.n, dtype=np.int64)
        return col

    # -- primitives --
    def varint(self, sel: Sel, *, value: bool = True) -> I64:
        """Zig-zag varints at ``sel`` (``value=False``: only skip them; returns the raw first bytes)."""
        p = self.get(self.pos, sel)
        b = self.buf[p]
        more = b >= 0x80
        z = (b & 0x7F).astype(np.int64) if value else b.astype(np.int64)
        if more.any():
            # continuation bytes, one byte position at a time over the lanes that still need one
            idx = np.flatnonzero(more)
            q = p[idx] + 1
            shift = 7
            while idx.size:
                if shift > 63:  # an 11th byte: not a 64-bit varint
                    bad = np.zeros(len(p), dtype=bool)
                    bad[idx] = True
                    self.kill(sel, bad)
                    break
                bb = self.buf[q]
                if shift == 63:
                    bad = np.zeros(len(p), dtype=bool)
                    bad[idx] = bb > 1  # beyond 64 bits
                    self.kill(sel, bad)
                if value:
                    z[idx] |= (bb & 0x7F).astype(np.int64) << shift
                p[idx] = q  # the last byte read so far
                cont = bb >= 0x80
                idx, q = idx[cont], q[cont] + 1
                shift += 7
        self.advance(sel, p + 1)
        return _zigzag(z) if value else z

    def sized(self, sel: Sel) -> tuple[I64, I64]:
        length = self.varint(sel)
        start = self.get(self.pos, sel)
        end = start + length
        bad = (length < 0) | (end > self.limit[sel])
        self.kill(sel, bad)
        self.pos[sel] = np.where(bad | ~self.alive[sel], self.dead_pos, end)
        return start, end

    def skip(self, sel: Sel, width: int) -> None:
        self.advance(sel, self.pos[sel] + width)

    # -- schema walk --
    def resolve(self, schema: Any) -> Any:
        for _ in range(32):
            if isinstance(schema, str):
                if schema in _PRIMITIVES:
                    return schema
                found = self.named.get(schema) or self.named.get(schema.rsplit(".", 1)[-1])
                if found is None:
                    raise Unsupported(f"unknown Avro type {schema!r}")
                return found
            if isinstance(schema, dict) and schema.get("type") not in (
                "record", "error", "array", "map", "enum", "fixed"
            ):
                schema = schema.get("type")
                continue
            return schema
        raise Unsupported("Avro schema nested too deeply")

    def register(self, schema: dict[str, Any]) -> None:
        name = str(schema.get("name", ""))
        self.named.setdefault(name, schema)
        self.named.setdefault(name.rsplit(".", 1)[-1], schema)
        ns = schema.get("namespace")
        if ns and "." not in name:
            self.named.setdefault(f"{ns}.{name}", schema)

    def value(self, schema: Any, sel: Sel, path: str | None, depth: int) -> None:
        if depth > 32:
            raise Unsupported("Avro schema nested too deeply")
        schema = self.resolve(schema)
        if path is not None:
            self._span_cols(path)[0][sel] = self.pos[sel]
        if isinstance(schema, list):
            self.union(schema, sel, path, depth)
        elif isinstance(schema, str):
            self.primitive(schema, sel, path)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "error"):
                self.register(schema)
                for f in schema.get("fields", []):
                    sub = f"{path}.{f['name']}" if path is not None and depth < self.depth else None
                    if path is None and depth == 0:
                        sub = str(f["name"])
                    self.value(f["type"], sel, sub, depth + 1)
            elif kind == "array":
                self.blocks(sel, lambda s: self.value(schema["items"], s, None, depth + 1), False)
            elif kind == "map":
                self.blocks(sel, lambda s: self.value(schema["values"], s, None, depth + 1), True)
            elif kind == "enum":
                self.register(schema)
                idx = self.varint(sel)
                self.kill(sel, (idx < 0) | (idx >= len(schema.get("symbols", []))))
            elif kind == "fixed":
                self.register(schema)
                self.skip(sel, int(schema["size"]))
            else:
                raise Unsupported(f"unsupported Avro type {kind!r}")
        else:
            raise Unsupported(f"invalid Avro schema {schema!r}")
        if path is not None:
            self._span_cols(path)[1][sel] = self.pos[sel]

    def _span_cols(self, path: str) -> tuple[I64, I64]:
        cols = self.spans.get(path)
        if cols is None:
            cols = self.spans[path] = (np.zeros(self.n, np.int64), np.zeros(self.n, np.int64))
        return cols

    def primitive(self, kind: str, sel: Sel, path: str | None) -> None:
        if kind == "null":
            return
        if kind in ("int", "long"):
            if path is None:
                self.varint(sel, value=False)
            else:
                self._col(self.ints, path)[sel] = self.varint(sel)
        elif kind in ("string", "bytes"):
            start, _ = self.sized(sel)
            if path is not None:
                self._col(self.content, path)[sel] = start
        elif kind == "boolean":
            self.skip(sel, 1)
        elif kind == "float":
            self.skip(sel, 4)
        elif kind == "double":
            self.skip(sel, 8)
        else:
            raise Unsupported(f"unsupported Avro type {kind!r}")

    def union(self, branches: list[Any], sel: Sel, path: str | None, depth: int) -> None:
        if len(branches) > 63:
            raise Unsupported("unions of more than 63 branches")
        p = self.get(self.pos, sel)
        b = self.buf[p]
        if b.size and b[0] < 2 * len(branches) and not b[0] & 1 and (b == b[0]).all():
            # every lane takes the same branch (e.g. all null): no per-branch selection
            self.advance(sel, p + 1)
            if path is not None:
                self._col(self.branches, path)[sel] = int(b[0]) >> 1
            self.value_inner(branches[int(b[0]) >> 1], sel, path, depth + 1)
            return
        idx = (b >> 1).astype(np.int64)
        self.kill(sel, ((b & 1) == 1) | (idx >= len(branches)))
        self.advance(sel, p + 1)
        if path is not None:
            self._col(self.branches, path)[sel] = idx
        for i, branch in enumerate(branches):
            sub = _subset(sel, (idx == i) & self.alive[sel])
            if sub.size:
                self.value_inner(branch, sub, path, depth + 1)

    def value_inner(self, schema: Any, sel: Sel, path: str | None, depth: int) -> None:
        """A union branch: its ints/content are collected under the union's path."""
        resolved = self.resolve(schema)
        if path is not None and isinstance(resolved, str):
            self.primitive(resolved, sel, path)
        else:
            self.value(schema, sel, None, depth)

    def blocks(self, sel: Sel, item: Any, is_map: bool) -> None:
        while True:
            count = self.varint(sel)
            neg = count < 0
            if neg.any():
                count = np.abs(count)
                self.varint(_subset(sel, neg), value=False)  # the block's byte size
            self.kill(sel, count > MAX_ITEMS)
            more = (count > 0) & self.alive[sel]
            if not more.any():
                return
            sel, rem = _subset(sel, more), count[more]
            active, left = sel, rem
            while active.size:
                self.steps += 1
                if self.steps > MAX_STEPS:  # only garbage lanes walk this long: decode sequentially
                    raise Unsupported("too many array items")
                if is_map:
                    self.sized(active)
                item(active)
                left = left - 1
                keep = (left > 0) & self.alive[active]
                active, left = active[keep], left[keep]
            sel = sel[self.alive[sel]]
            if not sel.size:
                return


def _subset(sel: Sel, mask: npt.NDArray[np.bool_]) -> I64:
    """The lanes of ``sel`` where ``mask`` holds, as an index array."""
    return np.flatnonzero(mask) if isinstance(sel, slice) else sel[mask]


def decode_columns(
    data: bytes,
    block_starts: Sequence[int],
    block_counts: Sequence[int],
    writer_schema: dict[str, Any],
    first_byte: int,
    *,
    accept: Callable[[npt.NDArray[np.uint8], I64], npt.NDArray[np.bool_]] | None = None,
    prefix: bytes = b"",
) -> Columns:
    """Decode every record of the concatenated blocks ``data`` into :class:`Columns`.

    ``block_starts`` are the offsets of the blocks in ``data`` (the last one ends at
    ``len(data)``), ``block_counts`` their record counts; every record starts with
    the byte ``first_byte`` (e.g. a constant ``_VERSION``). ``accept`` may drop more
    candidate starts up front (a heuristic: a true record it drops only makes this
    raise). ``prefix``: bytes every record starts with before ``writer_schema``'s value
    (e.g. the branch byte of a nullable top-level record, whose record schema is then
    passed); record starts include it. Raises :class:`Unsupported` when the records
    cannot be decoded this way.
    """
    total = int(sum(block_counts))
    n = len(data)
    buf = np.frombuffer(data + bytes(PAD), dtype=np.uint8)
    if total == 0:
        empty = np.zeros(0, np.int64)
        return Columns(empty, empty)
    k = len(prefix)
    cand = np.flatnonzero(buf[k:n] == first_byte).astype(np.int64)  # where the value starts, minus k
    for j, byte in enumerate(prefix):
        cand = cand[buf[cand + j] == byte]
    if accept is not None:
        cand = cand[accept(buf, cand + k)]
    if len(cand) > 16 * total + 4096:
        raise Unsupported("too many candidate record starts")
    bounds = np.asarray(list(block_starts) + [n], dtype=np.int64)
    limit = bounds[np.searchsorted(bounds, cand, side="right")]
    lanes = _Lanes(buf, cand + k, limit, collect_depth=2)
    lanes.value(writer_schema, ALL, None, 0)
    ends = lanes.pos
    alive = lanes.alive
    order = _chain(cand, ends, alive, bounds, block_counts)
    return Columns(cand[order], ends[order], order, lanes.ints, lanes.branches, lanes.spans, lanes.content)


def _chain(cand: I64, ends: I64, alive: npt.NDArray[np.bool_], bounds: I64, counts: Sequence[int]) -> I64:
    """Lane indices of the true records: from each block's first byte, end to start.

    Pointer doubling over "the lane starting where this one ends" (within a block),
    so the chains of every block are followed in O(log n) numpy steps.
    """
    live = np.flatnonzero(alive)
    if not len(live):
        raise Unsupported("no decodable record")
    m = len(live)
    starts = cand[live]
    live_ends = ends[live]
    block = np.searchsorted(bounds, starts, side="right") - 1
    at_end = live_ends == bounds[block + 1]
    at = np.minimum(np.searchsorted(starts, live_ends), m - 1)
    nxt = np.where(~at_end & (starts[at] == live_ends), at, -1)
    counts_a = np.asarray(counts, dtype=np.int64)
    nonempty = np.flatnonzero(counts_a > 0)
    first = np.minimum(np.searchsorted(starts, bounds[nonempty]), m - 1)
    if np.any(starts[first] != bounds[nonempty]):
        raise Unsupported("a block does not start with a decodable record")
    reach = np.zeros(m, dtype=bool)
    reach[first] = True
    jump = nxt
    while True:
        src = np.flatnonzero(reach & (jump >= 0))
        if not src.size:
            break
        reach[jump[src]] = True
        jump = np.where(jump >= 0, jump[np.maximum(jump, 0)], -1)
    if np.any(reach & (nxt < 0) & ~at_end):
        raise Unsupported("record chain broken")
    got = np.bincount(block[reach], minlength=len(counts_a))
    if not np.array_equal(got[: len(counts_a)], counts_a):
        raise Unsupported("records do not fill their blocks")
    return live[reach]
