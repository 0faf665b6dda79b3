"""One data file's deletion vector, and its serialized form (Java ``DeletionVector.read``).

A serialized deletion vector, as it sits in a DV index file at ``DeletionFile.offset``::

    int32 BE  L          bytes that follow, up to the CRC (magic + bitmap)
    L bytes   magic + bitmap
    int32 BE  CRC-32 of those L bytes

Two bitmap kinds exist, told apart by the magic:

* ``BitmapDeletionVector`` (default): magic ``0x5E43F2D0`` written big-endian, then a
  portable 32-bit RoaringBitmap. The index manifest's range length is ``L``.
* ``Bitmap64DeletionVector`` (``deletion-vectors.bitmap64``, Iceberg compatible): magic
  ``0x6439D3D1`` written little-endian, then a portable 64-bit RoaringBitmap (LE count of
  32-bit bitmaps, then per bitmap a LE 32-bit key and a portable 32-bit bitmap). The range
  length here is the whole blob, ``4 + L + 4``.

Bitmaps are decoded with ``pyroaring`` (CRoaring's portable format reader).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap, BitMap64

from paimon_core.exceptions import CorruptFileError

#: ``BitmapDeletionVector.MAGIC_NUMBER`` (1581511376), stored big-endian.
BITMAP32_MAGIC = 0x5E43F2D0
#: ``Bitmap64DeletionVector.MAGIC_NUMBER`` (1681511377), stored little-endian.
BITMAP64_MAGIC = 0x6439D3D1
#: Bytes around the bitmap data: the length field and the CRC.
LENGTH_SIZE = 4
CRC_SIZE = 4
MAGIC_SIZE = 4


class DeletionVector:
    """The sorted, distinct row positions deleted from one data file (0-based row ordinals)."""

    __slots__ = ("_positions", "bitmap64")

    def __init__(self, positions: npt.NDArray[np.int64], *, bitmap64: bool = False) -> None:
        """``positions`` must be sorted ascending and distinct (as a roaring bitmap iterates).

        The array is taken over (not copied) and made read-only; use :meth:`of` for any input.
        """
        arr = np.ascontiguousarray(positions, dtype=np.int64)
        arr.flags.writeable = False
        self._positions = arr
        self.bitmap64 = bitmap64

    @classmethod
    def of(cls, positions: npt.ArrayLike, *, bitmap64: bool = False) -> DeletionVector:
        """A deletion vector of any iterable of positions (sorted and deduplicated here)."""
        arr = np.unique(np.asarray(positions, dtype=np.int64))
        if arr.size and arr[0] < 0:
            raise ValueError("deleted row positions must be >= 0")
        return cls(arr, bitmap64=bitmap64)

    @property
    def cardinality(self) -> int:
        """Number of deleted rows (Java ``getCardinality``)."""
        return int(self._positions.size)

    def is_empty(self) -> bool:
        return self._positions.size == 0

    def deleted_positions(self) -> npt.NDArray[np.int64]:
        """The deleted positions, ascending, as a read-only int64 array."""
        return self._positions

    def is_deleted(self, position: int) -> bool:
        i = int(np.searchsorted(self._positions, position))
        return i < self._positions.size and int(self._positions[i]) == position

    def deleted_mask(self, num_rows: int, start: int = 0) -> npt.NDArray[np.bool_]:
        """Boolean mask of rows ``start .. start + num_rows - 1``: True where deleted.

        Positions outside that window are ignored (as Java's ``isDeleted`` never asks for them).
        """
        pos = self._positions
        lo, hi = np.searchsorted(pos, [start, start + num_rows])
        mask = np.zeros(num_rows, dtype=np.bool_)
        mask[pos[lo:hi] - start] = True
        return mask

    def deletes_all(self, num_rows: int) -> bool:
        """True when every row of a file of ``num_rows`` rows is deleted."""
        pos = self._positions
        return pos.size >= num_rows and int(np.searchsorted(pos, num_rows)) == num_rows

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeletionVector):
            return NotImplemented
        return np.array_equal(self._positions, other._positions)

    def __hash__(self) -> int:
        return hash(self._positions.tobytes())

    def __repr__(self) -> str:
        kind = "64" if self.bitmap64 else "32"
        return f"DeletionVector(bitmap{kind}, cardinality={self.cardinality})"


def _corrupt(path: str, what: str) -> CorruptFileError:
    return CorruptFileError(f"corrupt deletion vector in {path}: {what}", path=path)


def deserialize_deletion_vector(
    blob: bytes | memoryview, *, path: str = "<bytes>", range_length: int | None = None
) -> DeletionVector:
    """Decode one serialized deletion vector starting at its length field.

    ``range_length`` is the index manifest's length for it (checked as Java does: ``L`` for
    32-bit bitmaps, ``4 + L + 4`` for 64-bit ones). The CRC is always verified. Raises
    :class:`CorruptFileError` naming ``path`` on any inconsistency.
    """
    view = memoryview(blob)
    if len(view) < LENGTH_SIZE + MAGIC_SIZE:
        raise _corrupt(path, f"only {len(view)} bytes, no length and magic")
    (length,) = struct.unpack_from(">i", view, 0)
    (magic_be,) = struct.unpack_from(">I", view, LENGTH_SIZE)
    (magic_le,) = struct.unpack_from("<I", view, LENGTH_SIZE)
    if magic_be == BITMAP32_MAGIC:
        bitmap64 = False
        expected = range_length
    elif magic_le == BITMAP64_MAGIC:
        bitmap64 = True
        expected = None if range_length is None else range_length - LENGTH_SIZE - CRC_SIZE
    else:
        raise _corrupt(path, f"unknown magic 0x{magic_be:08x} (expected 0x{BITMAP32_MAGIC:08x} or LE 0x{BITMAP64_MAGIC:08x})")
    if expected is not None and length != expected:
        raise _corrupt(path, f"bitmap length {length} does not match the index manifest ({expected})")
    end = LENGTH_SIZE + length
    if length < MAGIC_SIZE or len(view) < end + CRC_SIZE:
        raise _corrupt(path, f"bitmap length {length} runs past the {len(view)} bytes available")
    data = view[LENGTH_SIZE:end]
    (stored_crc,) = struct.unpack_from(">I", view, end)
    actual_crc = zlib.crc32(data)
    if stored_crc != actual_crc:
        raise _corrupt(path, f"CRC mismatch (stored 0x{stored_crc:08x}, computed 0x{actual_crc:08x})")
    payload = bytes(data[MAGIC_SIZE:])
    try:
        if bitmap64:
            positions = np.frombuffer(BitMap64.deserialize(payload).to_array(), dtype=np.uint64).astype(np.int64)
        else:
            positions = np.frombuffer(BitMap.deserialize(payload).to_array(), dtype=np.uint32).astype(np.int64)
    except ValueError as exc:
        raise _corrupt(path, f"undecodable roaring bitmap ({exc})") from exc
    if positions.size and positions[-1] < 0:  # a 64-bit position beyond Java's MAX_VALUE
        raise _corrupt(path, "deleted row position out of range")
    return DeletionVector(positions, bitmap64=bitmap64)
