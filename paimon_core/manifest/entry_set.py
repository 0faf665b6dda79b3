"""A selection of manifest entries over decoded manifest batches, as columns.

A scan reads many manifests; :class:`EntrySet` keeps their
:class:`~paimon_core.manifest.manifest_batch.ManifestBatch` es and the positions
of the rows it selects (in order), and serves columns over the selection
(``kind``, ``partition``, ``bucket`` and the hot ``DataFileMeta`` fields) as
lists, without building an object per entry. :func:`merge_live` cancels
ADD/DELETE pairs exactly as :func:`paimon_core.manifest.merger.merge_entries`
does, on the rows' identifiers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from paimon_core.exceptions import CommitConflictError
from paimon_core.manifest.entries import DataFileMeta, FileKind, ManifestEntry
from paimon_core.manifest.manifest_batch import LazyDataFileMeta, ManifestBatch

Idx = npt.NDArray[np.int64]


class EntrySet:
    """Rows ``positions`` of the concatenation of ``batches`` (in that order)."""

    def __init__(self, batches: Sequence[ManifestBatch], positions: Idx | None = None) -> None:
        self.batches = list(batches)
        sizes = [b.n for b in self.batches]
        self._offsets = np.cumsum([0, *sizes]).astype(np.int64)
        total = int(self._offsets[-1])
        self.positions: Idx = np.arange(total, dtype=np.int64) if positions is None else positions
        self._identity = positions is None
        self._cache: dict[str, list[Any]] = {}

    def __len__(self) -> int:
        return len(self.positions)

    def take(self, rows: Idx | Sequence[int]) -> EntrySet:
        """The rows at ``rows`` (indices into this set, ascending keeps the order)."""
        idx = np.asarray(rows, dtype=np.int64)
        return EntrySet(self.batches, self.positions[idx])

    def filter(self, mask: npt.NDArray[np.bool_] | Sequence[bool]) -> EntrySet:
        """The rows where ``mask`` is true (this set itself when all are)."""
        m = np.asarray(mask, dtype=bool)
        if m.all():
            return self
        return EntrySet(self.batches, self.positions[m])

    # --- columns ---------------------------------------------------------------------------
    def _select(self, key: str, full: Callable[[], list[Any]]) -> list[Any]:
        got = self._cache.get(key)
        if got is None:
            values = full()
            got = values if self._identity else list(map(values.__getitem__, self.positions.tolist()))
            self._cache[key] = got
        return got

    def column(self, name: str) -> list[Any]:
        """A hot ``DataFileMeta`` field (see ``HOT_FIELDS``) of every row."""
        return self._select(name, lambda: list(chain.from_iterable(b.cols[name] for b in self.batches)))

    @property
    def kind(self) -> list[int]:
        return self._select("@kind", lambda: list(chain.from_iterable(b.kind for b in self.batches)))

    @property
    def partition(self) -> list[bytes]:
        return self._select("@partition", lambda: list(chain.from_iterable(b.partition for b in self.batches)))

    @property
    def bucket(self) -> list[int]:
        return self._select("@bucket", lambda: list(chain.from_iterable(b.bucket for b in self.batches)))

    @property
    def total_buckets(self) -> list[int]:
        return self._select("@total_buckets", lambda: list(chain.from_iterable(b.total_buckets for b in self.batches)))

    def _plain_key(self) -> list[bool]:
        return self._select("@plain", lambda: list(chain.from_iterable(b.plain_key for b in self.batches)))

    # --- rows as objects ---------------------------------------------------------------------
    def locate(self, rows: Sequence[int] | Idx | None = None) -> tuple[list[int], list[int]]:
        """For ``rows`` (default: all): the batch index and the row within it of each."""
        return self._locate(rows)

    def file_at(self) -> Callable[[int, int], DataFileMeta]:
        """``f(batch index, row)``: that row's data file meta, lazy where the batch is."""
        batches = self.batches
        if any(b.is_eager for b in batches):
            return lambda w, r: batches[w].file(r)
        of = LazyDataFileMeta.of
        return lambda w, r: of(batches[w], r)

    def _locate(self, rows: Sequence[int] | Idx | None = None) -> tuple[list[int], list[int]]:
        pos = self.positions if rows is None else self.positions[np.asarray(rows, dtype=np.int64)]
        which = np.searchsorted(self._offsets, pos, side="right") - 1
        return which.tolist(), (pos - self._offsets[which]).tolist()

    def files(self, rows: Sequence[int] | Idx | None = None) -> list[DataFileMeta]:
        """The data file metas of ``rows`` (default: all), lazy where the batch is."""
        which, local = self._locate(rows)
        return list(map(self.file_at(), which, local))

    def entries(self, rows: Sequence[int] | None = None) -> list[ManifestEntry]:
        """The rows as :class:`ManifestEntry` objects (files lazy)."""
        which, local = self._locate(rows)
        batches = self.batches
        return [batches[w].entry(r) for w, r in zip(which, local, strict=True)]

    def identifiers(self) -> list[tuple[Any, ...]]:
        """Every row's ``FileEntry.Identifier``."""
        plain = self._plain_key()
        if all(plain):
            n = len(self)
            empty: tuple[str, ...] = ()
            return list(zip(self.partition, self.bucket, self.column("level"), self.column("file_name"),
                            [empty] * n, [None] * n, [None] * n, strict=True))
        which, local = self._locate()
        batches = self.batches
        return [batches[w].identifier(r) for w, r in zip(which, local, strict=True)]


def merge_live(entries: EntrySet) -> EntrySet:
    """Cancel ADD/DELETE pairs (as ``merge_entries``): the rows left, in the same order.

    DELETEs of files added elsewhere stay; an ADD of a file already added raises
    :class:`CommitConflictError`.
    """
    kinds = entries.kind
    names = entries.column("file_name")
    if FileKind.DELETE not in kinds and len(set(names)) == len(names):
        return entries  # nothing to cancel, no file added twice
    # ident -> (row where it entered the dict, row held): dict order is insertion order, and
    # replacing a value keeps the key's place, so the result is ordered by the first rank
    out: dict[tuple[Any, ...], tuple[int, int]] = {}
    add = int(FileKind.ADD)
    for i, (ident, kind) in enumerate(zip(entries.identifiers(), kinds, strict=True)):
        if kind == add:
            if ident in out:
                bucket = entries.bucket[i]
                raise CommitConflictError(
                    f"Trying to add file {names[i]} which is already added (bucket {bucket})", file_name=names[i]
                )
            out[ident] = (i, i)
        else:
            prev = out.get(ident)
            if prev is not None and kinds[prev[1]] == add:
                del out[ident]
            else:
                out[ident] = (i, i) if prev is None else (prev[0], i)
    return entries.take([row for _, row in sorted(out.values())])
