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
``bytes``/``string`` field. Deeper values stay bytes, decoded on demand. A caller
may name the paths it needs: the others are still walked (records are variable
length) but not stored.

Most steps take one of a few numpy calls over every lane at once (``ALL``, a slice:
no index arrays) while every lane does the same (one-byte varints and lengths, a
union every lane takes the same branch of, arrays of one length).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from paimon_core.manifest.avro_chain import Unsupported as Unsupported
from paimon_core.manifest.avro_chain import _chain

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


def _zigzag_byte(b: npt.NDArray[np.uint8]) -> I64:
    """The values of single-byte varints (every byte below 0x80), computed on the bytes."""
    s = b.view(np.int8)
    out: I64 = ((s >> 1) ^ -(s & 1)).astype(np.int64)
    return out




@dataclass
class Columns:
    """What :func:`decode_columns` collected, one value per record, in file order.

    Paths are dotted field names (``_FILE._FILE_NAME``). Accessors return None for a
    path nothing was collected under (e.g. a union whose every value was null). Their
    arrays may be shared with these columns: do not modify them.
    """

    starts: I64
    ends: I64
    #: the lane of each record (None: lane ``i`` is record ``i``)
    order: I64 | None = None
    _ints: dict[str, I64] = field(default_factory=dict)
    _branches: dict[str, I64] = field(default_factory=dict)
    _spans: dict[str, tuple[I64, I64]] = field(default_factory=dict)
    _content: dict[str, I64] = field(default_factory=dict)

    def _at(self, col: I64) -> I64:
        return col if self.order is None else col[self.order]

    def ints(self, path: str) -> I64 | None:
        """int/long values (0 where null)."""
        col = self._ints.get(path)
        return None if col is None else self._at(col)

    def branches(self, path: str) -> I64 | None:
        """Union branch index per record (union-typed fields only)."""
        col = self._branches.get(path)
        return None if col is None else self._at(col)

    def span(self, path: str) -> tuple[I64, I64] | None:
        """(start, end) of the whole encoded value."""
        col = self._spans.get(path)
        return None if col is None else (self._at(col[0]), self._at(col[1]))

    def content(self, path: str) -> tuple[I64, I64] | None:
        """(start, end) of a bytes/string value's content."""
        col = self._content.get(path)
        span = self._spans.get(path)
        return None if col is None or span is None else (self._at(col), self._at(span[1]))

    def keep(self, paths: Sequence[str]) -> Columns:
        """Only ``paths``, already in record order: the lanes of every other field (and of the
        candidates that were no record) are released."""
        at = self._at

        def pick(store: dict[str, I64]) -> dict[str, I64]:
            return {p: at(store[p]) for p in paths if p in store}

        spans = {p: (at(self._spans[p][0]), at(self._spans[p][1])) for p in paths if p in self._spans}
        return Columns(self.starts, self.ends, None, pick(self._ints), pick(self._branches), spans,
                       pick(self._content))


class _Lanes:
    def __init__(
        self, buf: npt.NDArray[np.uint8], pos: I64, limit: I64, collect_depth: int, want: frozenset[str] | None
    ) -> None:
        self.buf = buf
        self.pos = pos
        self.limit = limit
        self.alive = np.ones(len(pos), dtype=bool)
        self.n = len(pos)
        self.dead_pos = len(buf) - PAD
        self.steps = 0
        self.depth = collect_depth
        self.want = want
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

    def step(self, sel: Sel, width: int) -> None:
        """Move the lanes ``width`` bytes on (a lane passing its limit dies)."""
        if isinstance(sel, slice):
            self.pos += width
            self.kill(sel, self.pos > self.limit)
        else:
            self.advance(sel, self.pos[sel] + width)

    def _col(self, store: dict[str, I64], path: str) -> I64:
        col = store.get(path)
        if col is None:
            col = store[path] = np.zeros(self.n, dtype=np.int64)
        return col

    def _put(self, store: dict[str, I64], path: str, sel: Sel, values: I64) -> None:
        """Collect ``values`` (a new array, not kept elsewhere) for the lanes ``sel``."""
        if isinstance(sel, slice) and path not in store:
            store[path] = values
        else:
            self._col(store, path)[sel] = values

    # -- primitives --
    def varint(self, sel: Sel) -> I64:
        """The zig-zag varint values at ``sel``."""
        b = self.buf[self.pos[sel]]
        if b.size and b.max() < 0x80:  # the common case: single bytes
            self.step(sel, 1)
            return _zigzag_byte(b)
        return self._varints(sel, b, True)

    def skip_varint(self, sel: Sel) -> None:
        """Step over the varints at ``sel``."""
        b = self.buf[self.pos[sel]]
        if b.size and b.max() < 0x80:
            self.step(sel, 1)
        else:
            self._varints(sel, b, False)

    def _varints(self, sel: Sel, b: npt.NDArray[np.uint8], value: bool) -> I64:
        """Varints of any length (``b``: their first bytes); ``value=False``: only step over them."""
        p = self.get(self.pos, sel)  # then the last byte read so far
        more = b >= 0x80
        z = (b & 0x7F).astype(np.int64)
        shift = 7
        while shift < 63 and more.size and more.all():  # every lane goes on (values of one length): no indexing
            p += 1
            bb = self.buf[p]
            if value:
                z |= (bb & 0x7F).astype(np.int64) << shift
            more = bb >= 0x80
            shift += 7
        if more.any():
            # continuation bytes, one byte position at a time over the lanes that still need one
            idx = np.flatnonzero(more)
            q = p[idx] + 1
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

    def sized(self, sel: Sel, *, start: bool = True) -> I64 | None:
        """Step over the bytes/string values at ``sel``; returns where their contents start
        (``start=False``: None)."""
        b = self.buf[self.pos[sel]]
        if b.size and b.max() < 0x80 and not (b & 1).any():  # the usual case: short lengths, one byte
            if isinstance(sel, slice):
                first = self.pos + 1 if start else None
                self.pos += (b >> 1) + 1
                self.kill(sel, self.pos > self.limit)
                return first
            first = self.pos[sel] + 1
            end = first + (b >> 1)
            self.pos[sel] = end
            self.kill(sel, end > self.limit[sel])
            return first
        length = self._varints(sel, b, True)
        if isinstance(sel, slice):
            first = self.pos.copy() if start else None
            self.pos += length
            end, limit = self.pos, self.limit
        else:
            first = self.pos[sel]
            end = first + length
            self.pos[sel] = end
            limit = self.limit[sel]
        self.kill(sel, (length < 0) | (end > limit))
        return first

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
        # ``path`` names the value (its record fields are named under it); ``keep``: collected
        keep = path if path is not None and (self.want is None or path in self.want) else None
        span_start = None  # every lane's start, when the whole span column is made here
        if keep is not None:
            if isinstance(sel, slice) and keep not in self.spans:
                span_start = self.pos.copy()
            else:
                self._span_cols(keep)[0][sel] = self.pos[sel]
        if isinstance(schema, list):
            self.union(schema, sel, keep, depth)
        elif isinstance(schema, str):
            self.primitive(schema, sel, keep)
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
                self.step(sel, int(schema["size"]))
            else:
                raise Unsupported(f"unsupported Avro type {kind!r}")
        else:
            raise Unsupported(f"invalid Avro schema {schema!r}")
        if span_start is not None:
            assert keep is not None
            self.spans[keep] = (span_start, self.pos.copy())
        elif keep is not None:
            self._span_cols(keep)[1][sel] = self.pos[sel]

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
                self.skip_varint(sel)
            else:
                self._put(self.ints, path, sel, self.varint(sel))
        elif kind in ("string", "bytes"):
            start = self.sized(sel, start=path is not None)
            if path is not None:
                assert start is not None
                self._put(self.content, path, sel, start)
        elif kind == "boolean":
            self.step(sel, 1)
        elif kind == "float":
            self.step(sel, 4)
        elif kind == "double":
            self.step(sel, 8)
        else:
            raise Unsupported(f"unsupported Avro type {kind!r}")

    def union(self, branches: list[Any], sel: Sel, path: str | None, depth: int) -> None:
        if len(branches) > 63:
            raise Unsupported("unions of more than 63 branches")
        b = self.buf[self.pos[sel]]
        if b.size and b[0] < 2 * len(branches) and not b[0] & 1 and (b == b[0]).all():
            # every lane takes the same branch (e.g. all null): no per-branch selection
            self.step(sel, 1)
            if path is not None:
                self._col(self.branches, path)[sel] = int(b[0]) >> 1
            self.value_inner(branches[int(b[0]) >> 1], sel, path, depth + 1)
            return
        idx = (b >> 1).astype(np.int64)
        self.kill(sel, ((b & 1) == 1) | (idx >= len(branches)))
        self.step(sel, 1)
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
                self.skip_varint(_subset(sel, neg))  # the block's byte size
            self.kill(sel, count > MAX_ITEMS)
            more = (count > 0) & self.alive[sel]
            if not more.any():
                return
            # ALL stays ALL while every lane takes part (e.g. arrays of one length): no indexing
            if not more.all():
                sel, count = _subset(sel, more), count[more]
            active, left = sel, count
            while True:
                self.steps += 1
                if self.steps > MAX_STEPS:  # only garbage lanes walk this long: decode sequentially
                    raise Unsupported("too many array items")
                if is_map:
                    self.sized(active, start=False)
                item(active)
                left = left - 1
                keep = (left > 0) & self.alive[active]
                if not keep.any():
                    break
                if not keep.all():
                    active, left = _subset(active, keep), left[keep]
            alive = self.alive[sel]
            if not alive.any():
                return
            if not alive.all():
                sel = _subset(sel, alive)


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
    padded: bool = False,
    collect: Collection[str] | None = None,
) -> Columns:
    """Decode every record of the concatenated blocks ``data`` into :class:`Columns`.

    ``block_starts`` are the offsets of the blocks in ``data`` (the last one ends at
    ``len(data)``, or ``len(data) - PAD`` when ``padded``: ``data`` then ends with PAD zero
    bytes, which saves a copy), ``block_counts`` their record counts; every record starts with
    the byte ``first_byte`` (e.g. a constant ``_VERSION``). ``accept`` may drop more
    candidate starts up front (a heuristic: a true record it drops only makes this
    raise). ``prefix``: bytes every record starts with before ``writer_schema``'s value
    (e.g. the branch byte of a nullable top-level record, whose record schema is then
    passed); record starts include it. ``collect``: the paths to collect (default: every
    field of the top record and of its record fields). Raises :class:`Unsupported` when the
    records cannot be decoded this way.
    """
    if padded:
        if len(data) < PAD or data[-PAD:] != bytes(PAD):
            raise ValueError(f"padded data must end with {PAD} zero bytes")
        n = len(data) - PAD
        buf = np.frombuffer(data, dtype=np.uint8)
    else:
        n = len(data)
        buf = np.frombuffer(data + bytes(PAD), dtype=np.uint8)
    total = int(sum(block_counts))
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
    want = None if collect is None else frozenset(collect)
    lanes = _Lanes(buf, cand + k, limit, collect_depth=2, want=want)
    lanes.value(writer_schema, ALL, None, 0)
    ends = lanes.pos
    alive = lanes.alive
    order = _chain(cand, ends, alive, bounds, block_counts)
    if len(order) == len(cand):  # every candidate is a record: lane i is record i
        return Columns(cand, ends, None, lanes.ints, lanes.branches, lanes.spans, lanes.content)
    return Columns(cand[order], ends[order], order, lanes.ints, lanes.branches, lanes.spans, lanes.content)
