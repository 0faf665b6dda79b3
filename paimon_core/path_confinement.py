"""Confine every path read from metadata to the table (Paimon's FileStorePathFactory owns names).

Metadata is input: a snapshot, tag, manifest list, manifest or index manifest names files that
readers open and maintenance deletes. A writable warehouse must not become a way to read or
delete arbitrary files, so every name from metadata passes one of two checks before it becomes
a path:

* :func:`check_file_name`: a bare file name (manifest lists, manifests, index manifests, index
  files, statistics, data, changelog and extra files, tag and consumer file names). Not empty, no
  ``/`` or ``\\``, not ``.`` or ``..``, no control characters (so no scheme either).
* :func:`confine`: a full path (a data or index file's ``external_path``). It is parsed by the
  one parser every file IO uses (:func:`paimon_core.io.uri.parse_path`: ``file:/x``,
  ``file:///x`` and ``file://localhost/x`` are all the local ``/x``; ``file://otherhost/x`` and
  relative paths are refused), its ``.`` and ``..`` segments are resolved, then it must lie
  under the table directory or under one of the table's ``data-file.external-paths`` roots (as
  Java allows), on the same scheme and authority. The result is that normalised path (a plain
  path when local), so what was confined is what is opened.

Anything else raises :class:`UnsafePathError`; :func:`naming_snapshot` adds the snapshot (or tag)
whose metadata held the name. Symbolic links inside the table are not followed: a link is made
through the file system, not through metadata.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from paimon_core.exceptions import UnsafePathError
from paimon_core.io.uri import ForeignHostError, ParsedPath, parse_path

if TYPE_CHECKING:
    from paimon_core.io.file_io import FileIO
    from paimon_core.snapshot.snapshot import Snapshot

__all__ = [
    "EXTERNAL_PATHS_OPTION",
    "canonical",
    "check_file_name",
    "check_snapshot_names",
    "confine",
    "external_roots",
    "link_below",
    "naming_snapshot",
]

EXTERNAL_PATHS_OPTION = "data-file.external-paths"


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


#: a path separator or a control character: never part of a bare file name
_UNSAFE_NAME_CHAR = re.compile(r"[\x00-\x1f\x7f/\\]")


def check_file_name(name: object, *, kind: str) -> str:
    """``name`` if it is a bare file name, else :class:`UnsafePathError` (``kind`` says what it names)."""
    if not isinstance(name, str) or not name or name in (".", "..") or _UNSAFE_NAME_CHAR.search(name):
        raise UnsafePathError(
            f"Refusing {kind} name {_describe(name)} from metadata: it must be a bare file name "
            "(no '/', '\\', '..' or control characters)",
            path=name if isinstance(name, str) else repr(name),
            kind=kind,
        )
    return name


def _resolve(path: str, *, what: str, kind: str, root: bool) -> ParsedPath | None:
    """``path`` parsed by the one parser (:func:`~paimon_core.io.uri.parse_path`) with its ``.``
    and ``..`` segments resolved; None when it cannot lie under a root (a relative path from
    metadata, a ``file:`` URI naming another host). A relative local ``root`` is a table opened
    by a relative path: resolved against the current directory."""
    try:
        parsed = parse_path(path)
    except ForeignHostError as e:
        if root:
            return None
        raise UnsafePathError(
            f"Refusing {kind} {what} {_describe(path)} from metadata: {e.message}", path=path, kind=kind
        ) from e
    rest = parsed.path
    if not rest.startswith("/"):
        if not (root and parsed.is_local):
            return None
        rest = os.path.abspath(rest)
    return ParsedPath(parsed.scheme, parsed.authority, "/" + posixpath.normpath(rest).lstrip("/"))


def canonical(path: str) -> str:
    """``path`` in the one normalised form :func:`confine` returns (a plain absolute path when
    local, ``.``/``..`` resolved); :class:`UnsafePathError` for another host's ``file:`` URI."""
    resolved = _resolve(path, what="path", kind="directory", root=True)
    if resolved is None:
        raise UnsafePathError(f"Path {_describe(path)} cannot be resolved to a directory", path=path, kind="directory")
    return str(resolved)


def confine(path: object, roots: Sequence[str], *, kind: str) -> str:
    """``path`` normalised (every local form becomes a plain absolute path, see
    :mod:`paimon_core.io.uri`) with its ``.``/``..`` segments resolved, if it lies strictly under
    one of ``roots`` on the same store; else :class:`UnsafePathError`."""
    if not isinstance(path, str) or not path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise UnsafePathError(
            f"Refusing {kind} path {_describe(path)} from metadata: it is not a path",
            path=path if isinstance(path, str) else repr(path),
            kind=kind,
        )
    resolved = _resolve(path, what="path", kind=kind, root=False)
    if resolved is not None:
        for root in roots:
            r = _resolve(root, what="root", kind=kind, root=True)
            if (
                r is not None
                and r.where == resolved.where
                and resolved.path.startswith(r.path.rstrip("/") + "/")
            ):
                return str(resolved)
    raise UnsafePathError(
        f"Refusing {kind} path {_describe(path)} from metadata: it is outside the table directory "
        f"and its external data paths ({', '.join(roots)})",
        path=path,
        kind=kind,
    )


def link_below(file_io: FileIO, path: str, roots: Sequence[str], *, include_self: bool = False) -> str | None:
    """The first symbolic link among the directories from the root ``path`` lies under down to
    ``path``'s parent (and ``path`` itself with ``include_self``), or None. The roots themselves
    may be links (a warehouse or table mounted elsewhere); below them nothing that deletes may
    go through one: a link is made through the file system, and following it would delete files
    of the directory it points to. A path under no root is checked from its first component."""
    try:
        target = parse_path(path)
    except ForeignHostError:
        return None
    if not target.path.startswith("/"):
        return None
    start = "/"
    for root in roots:
        r = _resolve(root, what="root", kind="directory", root=True)
        if r is not None and r.where == target.where and target.path.startswith(r.path.rstrip("/") + "/"):
            start = r.path.rstrip("/") + "/"
            break
    parts = target.path[len(start) :].strip("/").split("/")
    if not include_self:
        parts = parts[:-1]
    current = start.rstrip("/")
    for part in parts:
        current = f"{current}/{part}"
        candidate = target.with_path(current)
        if file_io.is_symlink(candidate):
            return candidate
    return None


def external_roots(options: object) -> tuple[str, ...]:
    """The ``data-file.external-paths`` roots of a table's options (a mapping or CoreOptions)."""
    get = getattr(options, "get", None)
    value = get(EXTERNAL_PATHS_OPTION) if callable(get) else None
    if not isinstance(value, str):
        return ()
    return tuple(p.strip().rstrip("/") for p in value.split(",") if p.strip())


def check_snapshot_names(snapshot: Snapshot, *, what: str = "snapshot") -> Snapshot:
    """The names a snapshot (or tag, or changelog: ``what``) file holds, checked before use."""
    with naming_snapshot(snapshot.id, what=what):
        check_file_name(snapshot.base_manifest_list, kind="base manifest list")
        check_file_name(snapshot.delta_manifest_list, kind="delta manifest list")
        for kind, name in (
            ("changelog manifest list", snapshot.changelog_manifest_list),
            ("index manifest", snapshot.index_manifest),
            ("statistics", snapshot.statistics),
        ):
            if name is not None:
                check_file_name(name, kind=kind)
    return snapshot


@contextmanager
def naming_snapshot(snapshot_id: object, *, what: str = "snapshot") -> Iterator[None]:
    """Re-raise an :class:`UnsafePathError` with the snapshot (or ``what``: a tag) named."""
    try:
        yield
    except UnsafePathError as e:
        if e.context.get("snapshot_id") is not None:
            raise
        raise UnsafePathError(
            f"{what[:1].upper()}{what[1:]} {snapshot_id}: {e.message}",
            **{**e.context, "snapshot_id": snapshot_id},
        ) from e
