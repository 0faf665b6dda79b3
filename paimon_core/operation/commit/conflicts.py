"""Conflict detection: a commit that deletes files needs them to still be live."""

from __future__ import annotations

from collections.abc import Sequence

from paimon_core.exceptions import CommitConflictError
from paimon_core.manifest.entries import FileKind, ManifestEntry


def check_no_conflicts(base: Sequence[ManifestEntry], changes: Sequence[ManifestEntry], *, snapshot_id: int | None) -> None:
    """Fail if the changes delete a file the base snapshot no longer has, or re-add a live one."""
    live = {e.identifier() for e in base}
    for e in changes:
        ident = e.identifier()
        if e.kind == FileKind.DELETE:
            if ident not in live:
                raise CommitConflictError(
                    f"File {e.file.file_name} (bucket {e.bucket}) was already removed by a concurrent commit "
                    f"(latest snapshot {snapshot_id}); this commit is abandoned and the table is unchanged",
                    file_name=e.file.file_name,
                    snapshot_id=snapshot_id,
                )
            live.discard(ident)
        elif ident in live:
            raise CommitConflictError(
                f"File {e.file.file_name} (bucket {e.bucket}) is already part of snapshot {snapshot_id}",
                file_name=e.file.file_name,
                snapshot_id=snapshot_id,
            )
        else:
            live.add(ident)
