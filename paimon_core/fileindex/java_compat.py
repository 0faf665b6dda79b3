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
    ``computeIfAbsent`` links it at the head, and a resize splits each bin keeping its order.
    ``put`` doubles the table right after the insert that exceeds 0.75 of it; ``computeIfAbsent``
    only before its next insert. Removal keeps the capacity, as Java's does.
    """

    def __init__(self, hash_code: Callable[[K], int]) -> None:
        self._hash = hash_code
        self._data: dict[K, V] = {}
        self._order: list[K] = []  # keys in an order whose restriction to each bin is the bin's
        self._capacity = 0  # no table yet

    def _bin(self, key: K) -> int:
        h = self._hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (self._capacity - 1)

    def _resize(self) -> None:
        self._capacity = _DEFAULT_CAPACITY if self._capacity == 0 else self._capacity * 2

    def put(self, key: K, value: V) -> None:
        """``map.put``: a new key goes to the tail of its bin; an existing key keeps its place."""
        if key in self._data:
            self._data[key] = value
            return
        if self._capacity == 0:
            self._resize()
        self._data[key] = value
        self._order.append(key)
        if len(self._data) > self._capacity * _LOAD_FACTOR:
            self._resize()

    def compute_if_absent(self, key: K, make: Callable[[], V]) -> V:
        """``map.computeIfAbsent``: a new key goes to the head of its bin."""
        if key in self._data:
            return self._data[key]
        if self._capacity == 0 or len(self._data) > self._capacity * _LOAD_FACTOR:
            self._resize()
        value = make()
        b = self._bin(key)
        at = next((i for i, k in enumerate(self._order) if self._bin(k) == b), len(self._order))
        self._order.insert(at, key)
        self._data[key] = value
        return value

    def remove(self, key: K) -> None:
        if key in self._data:
            del self._data[key]
            self._order.remove(key)

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> list[K]:
        """The keys in Java's iteration order (by bin, then the bin's order: ``sorted`` is stable)."""
        if self._capacity == 0:
            return []
        return sorted(self._order, key=self._bin)

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
