"""One manifest file decoded in bulk: columns, lazily materialised entries, a bounded cache.

:func:`read_manifest_batch` decodes a manifest file with the vectorized decoder
(:mod:`paimon_core.manifest.avro_vector`) into a :class:`ManifestBatch`: the
scalar fields of every entry as columns, the rest left as the record's bytes.
Entries and :class:`~paimon_core.manifest.entries.DataFileMeta` objects are
made only for the rows a caller asks for (:meth:`ManifestBatch.entry`,
:meth:`ManifestBatch.file`); a ``DataFileMeta`` made here is a
:class:`LazyDataFileMeta`, equal (and hashing equal) to the eager one, that
decodes its stats and lists from the record bytes on first use. When the
vectorized decoder does not apply, the file is decoded sequentially (the old
path, with its exact errors) and the batch wraps those objects.

Manifest files never change once written, so decoded batches are cached per
process, keyed by path and checked against the file's bytes (which are read
anyway: a file rewritten in place is decoded again), bounded by
:data:`CACHE_MAX_BYTES` (least recently used first out).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from paimon_core.exceptions import CorruptFileError
from paimon_core.io.file_io import FileIO
from paimon_core.manifest.entries import DataFileMeta, FileKind, ManifestEntry

#: Bound of the per-process cache of decoded manifests (decoded bytes + file bytes).
CACHE_MAX_BYTES = 256 * 1024 * 1024

#: DataFileMeta fields served from columns: (attribute, Avro field, kind); kind "int" (int/long),
#: "bytes" or "str"; a nullable field gives None where null.
HOT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("file_name", "_FILE_NAME", "str"),
    ("file_size", "_FILE_SIZE", "int"),
    ("row_count", "_ROW_COUNT", "int"),
    ("min_key", "_MIN_KEY", "bytes"),
    ("max_key", "_MAX_KEY", "bytes"),
    ("min_sequence_number", "_MIN_SEQUENCE_NUMBER", "int"),
    ("max_sequence_number", "_MAX_SEQUENCE_NUMBER", "int"),
    ("schema_id", "_SCHEMA_ID", "int"),
    ("level", "_LEVEL", "int"),
    ("creation_time", "_CREATION_TIME", "int"),
    ("delete_row_count", "_DELETE_ROW_COUNT", "int"),
    ("embedded_index", "_EMBEDDED_FILE_INDEX", "bytes"),
    ("file_source", "_FILE_SOURCE", "int"),
    ("external_path", "_EXTERNAL_PATH", "str"),
    ("first_row_id", "_FIRST_ROW_ID", "int"),
)
_KINDS = (FileKind.ADD, FileKind.DELETE)


class ManifestBatch:
    """The entries of one manifest file as columns (Python lists), in file order."""

    def __init__(self, path: str, n: int) -> None:
        self.path = path
        self.n = n
        self.kind: list[int] = []
        self.bucket: list[int] = []
        self.total_buckets: list[int] = []
        self.partition: list[bytes] = []
        #: True where extra files, embedded index and external path are empty/None (the usual case)
        self.plain_key: list[bool] = []
        self.cols: dict[str, list[Any]] = {}
        self.nbytes = 0
        self._raw = b""
        self._decoder: Callable[[], Any] | None = None
        self._starts: list[int] = []
        self._eager: list[ManifestEntry] | None = None
        self._full: dict[int, ManifestEntry] = {}

    def set_records(self, raw: bytes, starts: list[int], decoder: Callable[[], Any], cols: dict[str, list[Any]]) -> None:
        """Back the rows by Avro records: ``raw[starts[i]:]`` is row ``i``, ``decoder()`` gives
        the sequential decoder of their writer schema (made on first use), ``cols`` the hot columns."""
        self._raw = raw
        self._starts = starts
        self._decoder = decoder
        self.cols = cols

    def set_eager(self, entries: list[ManifestEntry], *, nbytes: int) -> None:
        """Back the rows by entries already decoded (the sequential path)."""
        self._eager = entries
        self.kind = [int(e.kind) for e in entries]
        self.bucket = [e.bucket for e in entries]
        self.total_buckets = [e.total_buckets for e in entries]
        self.partition = [e.partition for e in entries]
        self.plain_key = [False] * len(entries)
        self.cols = {name: [getattr(e.file, name) for e in entries] for name, _, _ in HOT_FIELDS}
        self.nbytes = nbytes

    def entries(self) -> list[ManifestEntry]:
        """Every row as a :class:`ManifestEntry` (files lazy)."""
        if self._eager is not None:
            return list(self._eager)
        return [self.entry(i) for i in range(self.n)]

    @property
    def is_eager(self) -> bool:
        """Whether the rows were decoded sequentially into objects (not lazily)."""
        return self._eager is not None

    def entry(self, i: int) -> ManifestEntry:
        """Row ``i`` as a :class:`ManifestEntry` whose file is lazy."""
        return ManifestEntry(_KINDS[self.kind[i]], self.partition[i], self.bucket[i], self.total_buckets[i], self.file(i))

    def file(self, i: int) -> DataFileMeta:
        """Row ``i``'s data file meta (lazy unless the batch was decoded sequentially)."""
        if self._eager is not None:
            return self._eager[i].file
        return LazyDataFileMeta.of(self, i)

    def full(self, i: int) -> ManifestEntry:
        """Row ``i`` decoded completely by the sequential decoder (cached)."""
        if self._eager is not None:
            return self._eager[i]
        got = self._full.get(i)
        if got is None:
            out: list[ManifestEntry] = []
            try:
                assert self._decoder is not None
                self._decoder()(self._raw, self._starts[i], 1, out)
            except Exception as e:  # noqa: BLE001 - the vectorized pass read it: should not happen
                raise CorruptFileError(f"Cannot read Avro file {self.path}: {type(e).__name__}: {e}", path=self.path) from e
            got = self._full[i] = out[0]
        return got

    def identifier(self, i: int) -> tuple[Any, ...]:
        """Row ``i``'s ``FileEntry.Identifier`` (as :meth:`ManifestEntry.identifier`)."""
        if self.plain_key[i]:
            c = self.cols
            return (self.partition[i], self.bucket[i], c["level"][i], c["file_name"][i], (), None, None)
        return self.full(i).identifier() if self._eager is None else self._eager[i].identifier()


class LazyDataFileMeta(DataFileMeta):
    """A :class:`DataFileMeta` read from a :class:`ManifestBatch` row on access.

    Equal to (and hashing as) the eager meta with the same values; pickles,
    copies and ``dataclasses.replace`` results are plain :class:`DataFileMeta`.
    """

    __slots__ = ("_batch", "_row")

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # dataclasses.replace() lands here
        return DataFileMeta(*args, **kwargs)

    @classmethod
    def of(cls, batch: ManifestBatch, row: int) -> LazyDataFileMeta:
        obj: LazyDataFileMeta = object.__new__(cls)
        _SET_BATCH(obj, batch)
        _SET_ROW(obj, row)
        return obj

    def eager(self) -> DataFileMeta:
        """The same meta as a plain :class:`DataFileMeta`."""
        return DataFileMeta(*_values(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (DataFileMeta, _values(self))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DataFileMeta):
            return _values(self) == _values(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(_values(self))


_SET_BATCH = LazyDataFileMeta._batch.__set__  # type: ignore[attr-defined]
_SET_ROW = LazyDataFileMeta._row.__set__  # type: ignore[attr-defined]
_FIELD_NAMES = tuple(DataFileMeta.__dataclass_fields__)


def _values(meta: DataFileMeta) -> tuple[Any, ...]:
    return tuple(getattr(meta, name) for name in _FIELD_NAMES)


def _hot_property(name: str) -> property:
    def get(self: LazyDataFileMeta) -> Any:
        return self._batch.cols[name][self._row]  # type: ignore[attr-defined]

    return property(get)


def _cold_property(name: str) -> property:
    def get(self: LazyDataFileMeta) -> Any:
        return getattr(self._batch.full(self._row).file, name)  # type: ignore[attr-defined]

    return property(get)


_HOT_NAMES = {name for name, _, _ in HOT_FIELDS}
for _name in _FIELD_NAMES:
    setattr(LazyDataFileMeta, _name, _hot_property(_name) if _name in _HOT_NAMES else _cold_property(_name))


# --- the cache -----------------------------------------------------------------------------------


class _Cache:
    def __init__(self) -> None:
        self._items: OrderedDict[str, tuple[bytes, ManifestBatch]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, path: str, data: bytes) -> ManifestBatch | None:
        with self._lock:
            hit = self._items.get(path)
            if hit is None or hit[0] != data:
                return None
            self._items.move_to_end(path)
            return hit[1]

    def put(self, path: str, data: bytes, batch: ManifestBatch) -> None:
        size = batch.nbytes + len(data)
        if size > CACHE_MAX_BYTES // 4:
            return
        with self._lock:
            old = self._items.pop(path, None)
            if old is not None:
                self._bytes -= old[1].nbytes + len(old[0])
            self._items[path] = (data, batch)
            self._bytes += size
            while self._bytes > CACHE_MAX_BYTES and self._items:
                _, (d, b) = self._items.popitem(last=False)
                self._bytes -= b.nbytes + len(d)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_CACHE = _Cache()


def clear_manifest_cache() -> None:
    """Drop every cached decoded manifest of this process."""
    _CACHE.clear()


def read_manifest_batch(file_io: FileIO, path: str) -> ManifestBatch:
    """Read and decode a manifest file (cached per process, checked against its bytes)."""
    return decode_cached([(path, file_io.read_bytes(path))])[0]


def decode_cached(items: Sequence[tuple[str, bytes]]) -> list[ManifestBatch]:
    """Decode manifest files given as ``(path, bytes)``, from the cache where it holds them;
    the others are decoded together (one vectorized pass) and cached."""
    from paimon_core.manifest.manifest_decode import decode_manifest_batches

    out: list[ManifestBatch | None] = [_CACHE.get(path, data) for path, data in items]
    missing = [i for i, b in enumerate(out) if b is None]
    if missing:
        decoded = decode_manifest_batches([items[i] for i in missing])
        for i, batch in zip(missing, decoded, strict=True):
            out[i] = batch
            _CACHE.put(items[i][0], items[i][1], batch)
    return [b for b in out if b is not None]
