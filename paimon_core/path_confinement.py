"""Confine every path read from metadata to the table (Paimon's FileStorePathFactory owns names).

Metadata is input: a snapshot, tag, manifest list, manifest or index manifest names files that
readers open and maintenance deletes. A writable warehouse must not become a way to read or
delete arbitrary files, so every name from metadata passes one of two checks before it becomes
a path:

* :func:`check_file_name`: a bare file name (manifest lists, manifests, index manifests, index
  files, statistics, data, changelog and extra files, tag and consumer file names). Not empty, no
  ``/`` or ``\\``, not ``.`` or ``..``, no control characters (so no scheme either).
* :func:`confine`: a full path (a data or index file's ``external_path``). Its ``.`` and ``..``
  segments are resolved, then it must lie under the table directory or under one of the table's
  ``data-file.external-paths`` roots (as Java allows), on the same scheme and authority.

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

if TYPE_CHECKING:
    from paimon_core.snapshot.snapshot import Snapshot

__all__ = [
    "EXTERNAL_PATHS_OPTION",
    "check_file_name",
    "check_snapshot_names",
    "confine",
    "external_roots",
    "naming_snapshot",
]

EXTERNAL_PATHS_OPTION = "data-file.external-paths"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(.*)$", re.DOTALL)
_LOCAL_SCHEMES = frozenset({"", "file", "local"})


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


def _split(path: str) -> tuple[str, str, str]:
    """(prefix as written, e.g. ``s3://bucket`` or ``file:``; where: scheme and authority, with
    plain paths and ``file:`` both local; the absolute normalised path, '' when relative)."""
    scheme, rest = "", path
    m = _SCHEME.match(path)
    if m and len(m.group(1)) > 1:  # one letter would be a Windows drive, never a scheme here
        scheme, rest = m.group(1).lower(), m.group(2)
    authority = ""
    if rest.startswith("//"):
        authority, _, tail = rest[2:].partition("/")
        rest = "/" + tail
    prefix = path[: len(path) - len(rest)]
    if scheme in _LOCAL_SCHEMES and authority in ("", "localhost"):
        scheme = authority = ""
        if not prefix and not rest.startswith("/"):
            rest = os.path.abspath(rest)  # a local table opened by a relative path
    if not rest.startswith("/"):
        return prefix, f"{scheme}://{authority}", ""
    return prefix, f"{scheme}://{authority}", "/" + posixpath.normpath(rest).lstrip("/")


def confine(path: object, roots: Sequence[str], *, kind: str) -> str:
    """``path`` with its ``.``/``..`` segments resolved, if it lies strictly under one of
    ``roots``; else :class:`UnsafePathError`. The result keeps ``path``'s scheme and authority."""
    if not isinstance(path, str) or not path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise UnsafePathError(
            f"Refusing {kind} path {_describe(path)} from metadata: it is not a path",
            path=path if isinstance(path, str) else repr(path),
            kind=kind,
        )
    prefix, where, resolved = _split(path)
    if resolved:
        for root in roots:
            _, root_where, root_path = _split(root)
            if root_where == where and root_path and resolved.startswith(root_path.rstrip("/") + "/"):
                return prefix + resolved
    raise UnsafePathError(
        f"Refusing {kind} path {_describe(path)} from metadata: it is outside the table directory "
        f"and its external data paths ({', '.join(roots)})",
        path=path,
        kind=kind,
    )


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
            f"{what[:1].upper()}{what[1:]} {snapshot_id}: {e.message}", **{**e.context, "snapshot_id": snapshot_id}
        ) from e
