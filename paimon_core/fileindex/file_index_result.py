"""What an index says about a data file (Java's ``FileIndexResult`` and ``BitmapIndexResult``).

:data:`REMAIN`: rows may match, read the file; :data:`SKIP`: no row can match. A bitmap index
answers with the row positions that may match (:class:`BitmapIndexResult`); an empty bitmap is a
skip. ``and_`` / ``or_`` combine results as Java does.
"""

from __future__ import annotations

from pyroaring import BitMap

__all__ = ["REMAIN", "SKIP", "BitmapIndexResult", "FileIndexResult"]


class FileIndexResult:
    """Base: :meth:`remain` says whether the file must be read."""

    def remain(self) -> bool:
        raise NotImplementedError

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return self if other.remain() else SKIP

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return REMAIN if other.remain() else self


class _Remain(FileIndexResult):
    def remain(self) -> bool:
        return True

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return other

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return self

    def __repr__(self) -> str:
        return "REMAIN"


class _Skip(FileIndexResult):
    def remain(self) -> bool:
        return False

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return self

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return other

    def __repr__(self) -> str:
        return "SKIP"


REMAIN: FileIndexResult = _Remain()
SKIP: FileIndexResult = _Skip()


class BitmapIndexResult(FileIndexResult):
    """The row positions (0-based, in the file) that may match."""

    def __init__(self, bitmap: BitMap) -> None:
        self.bitmap = bitmap

    def remain(self) -> bool:
        return len(self.bitmap) > 0

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        if isinstance(other, BitmapIndexResult):
            return BitmapIndexResult(self.bitmap & other.bitmap)
        return super().and_(other)

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        if isinstance(other, BitmapIndexResult):
            return BitmapIndexResult(self.bitmap | other.bitmap)
        return super().or_(other)

    def __repr__(self) -> str:
        return f"BitmapIndexResult({len(self.bitmap)} rows)"
