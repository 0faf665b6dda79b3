"""Every form a path may take, parsed in one place (Hadoop's ``Path``/``URI`` rules for ``file:``).

A path is a plain local path (``/wh/t``, or relative ``wh/t``) or a URI. The local URI forms are
the ones Hadoop and Java Paimon write and read:

* ``file:/wh/t`` (what Hadoop's ``Path.toString()`` writes for a local file, so Java-written
  tables carry it in ``externalPath``),
* ``file:///wh/t`` (empty authority),
* ``file://localhost/wh/t`` (the local host named),

and all three are the local path ``/wh/t``. ``file://otherhost/wh/t`` names a file on another
machine, which this process cannot reach: refused (:class:`ForeignHostError`), never read as the
local ``/otherhost/wh/t`` nor as a relative ``./file:/...``. ``file:wh/t`` (a relative URI) is
refused as well. Any other scheme (``s3://bucket/key``, ``memory://...``) is a remote path.

:func:`parse_path` is the only parser: :func:`paimon_core.path_confinement.confine` confines the
result, and the file IOs (:class:`~paimon_core.io.local_io.LocalFileIO`,
:class:`~paimon_core.io.fsspec_io.FsspecFileIO`) open it, so a path that passed the confinement is
the path that is opened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from paimon_core.exceptions import InvalidArgumentError

__all__ = ["LOCAL_SCHEMES", "ForeignHostError", "ParsedPath", "local_path", "parse_path", "scheme_of"]

#: Schemes of the local file system ('' is a plain path).
LOCAL_SCHEMES = frozenset({"", "file", "local"})
#: The host names that are this machine in a ``file://host/path`` URI.
_LOCAL_HOSTS = frozenset({"", "localhost"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(.*)$", re.DOTALL)


class ForeignHostError(InvalidArgumentError):
    """A ``file:`` URI naming another host, or a relative ``file:`` URI: not a local path."""


@dataclass(frozen=True, slots=True)
class ParsedPath:
    """One path, parsed. ``scheme`` is '' for every local form, lower case otherwise;
    ``authority`` the host (or bucket) of a remote path; ``path`` the local path (absolute, or
    relative for a plain relative path) or the remote key with its leading ``/``."""

    scheme: str
    authority: str
    path: str

    @property
    def is_local(self) -> bool:
        return self.scheme == ""

    @property
    def where(self) -> str:
        """Scheme and authority: two paths on different ``where`` are on different stores."""
        return f"{self.scheme}://{self.authority}"

    def with_path(self, path: str) -> str:
        """This location's canonical text with another ``path`` (a plain path when local)."""
        if self.is_local:
            return path
        return f"{self.scheme}://{self.authority}{path}"

    def __str__(self) -> str:
        return self.with_path(self.path)


def _split_scheme(text: str) -> tuple[str, str]:
    m = _SCHEME.match(text)
    if m and len(m.group(1)) > 1:  # one letter would be a Windows drive, never a scheme here
        return m.group(1).lower(), m.group(2)
    return "", text


def parse_path(path: str) -> ParsedPath:
    """``path`` parsed (see the module docstring); :class:`ForeignHostError` for a ``file:``
    URI that names another host or is relative."""
    scheme, rest = _split_scheme(path)
    if scheme == "":
        return ParsedPath("", "", path)
    if scheme in LOCAL_SCHEMES:
        if rest.startswith("//"):
            host, slash, tail = rest[2:].partition("/")
            if host.lower() not in _LOCAL_HOSTS:
                raise ForeignHostError(
                    f"Path {path!r} names the host {host!r}: a file: URI must be local "
                    "(file:/path, file:///path or file://localhost/path)",
                    path=path,
                )
            rest = slash + tail
        if not rest.startswith("/"):
            raise ForeignHostError(
                f"Path {path!r} is a relative file: URI: write file:/absolute/path or a plain path", path=path
            )
        return ParsedPath("", "", "/" + rest.lstrip("/"))
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        return ParsedPath(scheme, authority, slash + tail)
    return ParsedPath(scheme, "", rest)


def local_path(path: str) -> str:
    """The operating system's path for a local ``path`` in any form; :class:`InvalidArgumentError`
    for a remote one (a local file IO must never open ``s3://b/k`` as a relative ``b/k``)."""
    parsed = parse_path(path)
    if not parsed.is_local:
        raise InvalidArgumentError(
            f"Path {path!r} is on '{parsed.scheme}://' storage, not on the local file system", path=path
        )
    return parsed.path


def scheme_of(path: str) -> str:
    """The storage scheme of a path: ``file`` for every local form (never raises)."""
    scheme, _ = _split_scheme(path)
    return "file" if scheme in LOCAL_SCHEMES else scheme
