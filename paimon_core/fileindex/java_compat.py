"""Java behaviour the file-index bytes depend on: ``String.hashCode``, the iteration order of
``java.util.HashMap``, ``DataOutputStream.writeUTF`` (modified UTF-8) and ``String.split``.

Java writes a file index by iterating ``HashMap`` s (``DataFileIndexWriter.serializeMaintainers``,
``BitmapFileIndex``), so the order of columns and index types in the bytes is a ``HashMap``'s
iteration order: by bin (``(h ^ (h >>> 16)) & (capacity - 1)``), then the order within the bin,
which depends on how each key was inserted. :class:`JavaHashMap` keeps entries in that order so
our bytes equal Java's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

__all__ = [
    "JavaHashMap",
    "java_split",
    "java_string_hash",
    "read_modified_utf8",
    "string_map",
    "to_int32",
    "to_int64",
    "write_modified_utf8",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75


def to_int32(x: int) -> int:
    """``x`` wrapped to a signed 32-bit int (Java ``int`` overflow)."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def to_int64(x: int) -> int:
    """``x`` wrapped to a signed 64-bit int (Java ``long`` overflow)."""
    x &= 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x & 0x8000000000000000 else x


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units)."""
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


class JavaHashMap(Generic[K, V]):
    """A dict that iterates in ``java.util.HashMap`` order for keys hashed by ``hash_code`` (a
    Java ``hashCode``), given the same sequence of calls (no treeified bin: fewer than 8 keys
    share one).

    Java iterates bin by bin; within a bin, ``put`` appends a new key at the bin's tail while
    ``computeIfAbsent`` links it at the head, and a resize splits each bin keeping its order (so
    keys sharing a final bin shared a bin all along: a ``put`` map keeps them in insertion order,
    a ``computeIfAbsent`` map in reverse insertion order). ``put`` doubles the table right after
    the insert that exceeds 0.75 of it; ``computeIfAbsent`` only before its next insert. Removal
    keeps the capacity, as Java's does.
    """

    def __init__(self, hash_code: Callable[[K], int]) -> None:
        self._hash = hash_code
        self._data: dict[K, V] = {}
        self._spread: dict[K, int] = {}  # h ^ (h >>> 16) of each key
        self._seq: dict[K, int] = {}  # insertion number, negated for a head insertion
        self._counter = 0
        self._modes: set[bool] = set()  # True: computeIfAbsent, False: put
        self._log: list[tuple[K, bool]] = []  # the inserts, for a map that mixes both
        self._capacity = 0  # no table yet

    def _insert(self, key: K, value: V, *, head: bool) -> None:
        h = self._hash(key) & 0xFFFFFFFF
        self._spread[key] = h ^ (h >> 16)
        self._counter += 1
        self._seq[key] = -self._counter if head else self._counter
        self._modes.add(head)
        self._log.append((key, head))
        self._data[key] = value

    def _resize(self) -> None:
        self._capacity = _DEFAULT_CAPACITY if self._capacity == 0 else self._capacity * 2

    def put(self, key: K, value: V) -> None:
        """``map.put``: a new key goes to the tail of its bin; an existing key keeps its place."""
        if key in self._data:
            self._data[key] = value
            return
        if self._capacity == 0:
            self._resize()
        self._insert(key, value, head=False)
        if len(self._data) > self._capacity * _LOAD_FACTOR:
            self._resize()

    def compute_if_absent(self, key: K, make: Callable[[], V]) -> V:
        """``map.computeIfAbsent``: a new key goes to the head of its bin."""
        if key in self._data:
            return self._data[key]
        if self._capacity == 0 or len(self._data) > self._capacity * _LOAD_FACTOR:
            self._resize()
        value = make()
        self._insert(key, value, head=True)
        return value

    def remove(self, key: K) -> None:
        if key in self._data:
            del self._data[key]
            del self._spread[key]
            del self._seq[key]

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> list[K]:
        """The keys in Java's iteration order: by bin, then the bin's order."""
        if self._capacity == 0:
            return []
        mask = self._capacity - 1
        if len(self._modes) <= 1:
            return sorted(self._data, key=lambda k: (self._spread[k] & mask, self._seq[k]))
        return self._replayed(mask)

    def _replayed(self, mask: int) -> list[K]:
        """Both kinds of insert: replay them on one list of keys (bin order within each bin)."""
        order: list[K] = []
        capacity = 0
        size = 0
        for key, head in self._log:
            if not head and capacity == 0:
                capacity = _DEFAULT_CAPACITY
            if head and (capacity == 0 or size > capacity * _LOAD_FACTOR):
                capacity = _DEFAULT_CAPACITY if capacity == 0 else capacity * 2
            if key in order:  # removed in between: the later insert is the one that counts
                order.remove(key)
            b = self._spread[key] & (capacity - 1)
            at = len(order)
            if head:
                at = next(
                    (i for i, k in enumerate(order) if self._spread[k] & (capacity - 1) == b), len(order)
                )
            order.insert(at, key)
            size += 1
            if not head and size > capacity * _LOAD_FACTOR:
                capacity *= 2
        live = [k for k in order if k in self._data]
        return sorted(live, key=lambda k: self._spread[k] & mask)

    def items(self) -> list[tuple[K, V]]:
        return [(k, self._data[k]) for k in self.keys()]

    def values(self) -> list[V]:
        return [self._data[k] for k in self.keys()]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


def string_map() -> JavaHashMap[str, Any]:
    """A :class:`JavaHashMap` with ``String`` keys."""
    return JavaHashMap(java_string_hash)


def write_modified_utf8(s: str) -> bytes:
    """``DataOutputStream.writeUTF``: a 2-byte big-endian length, then modified UTF-8 (NUL as two
    bytes, each UTF-16 surrogate as three)."""
    units = s.encode("utf-16-be")
    out = bytearray()
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 0x0001 <= c <= 0x007F:
            out.append(c)
        elif c <= 0x07FF:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    if len(out) > 0xFFFF:
        raise ValueError(f"encoded string too long: {len(out)} bytes")
    return len(out).to_bytes(2, "big") + bytes(out)


def read_modified_utf8(data: bytes | memoryview, pos: int) -> tuple[str, int]:
    """``DataInputStream.readUTF`` at ``pos``: the string and the position after it."""
    length = int.from_bytes(data[pos : pos + 2], "big")
    raw = bytes(data[pos + 2 : pos + 2 + length])
    if len(raw) != length:
        raise ValueError("truncated modified UTF-8 string")
    units: list[int] = []
    i = 0
    while i < length:
        b = raw[i]
        if b < 0x80:
            units.append(b)
            i += 1
        elif b >> 5 == 0b110:
            units.append(((b & 0x1F) << 6) | (raw[i + 1] & 0x3F))
            i += 2
        elif b >> 4 == 0b1110:
            units.append(((b & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
            i += 3
        else:
            raise ValueError(f"malformed modified UTF-8 byte {b:#x}")
    text = b"".join(u.to_bytes(2, "big") for u in units).decode("utf-16-be", errors="surrogatepass")
    return text, pos + 2 + length


def java_split(value: str, sep: str) -> list[str]:
    """Java's ``String.split`` with a literal one-character separator: trailing empty strings
    are dropped, and a string without the separator is itself."""
    if sep not in value:
        return [value]
    parts = value.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts
