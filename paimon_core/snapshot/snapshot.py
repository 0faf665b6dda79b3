"""The ``snapshot/snapshot-N`` JSON model (Paimon snapshot version 3)."""

from __future__ import annotations

import enum
import uuid as uuid_mod
from dataclasses import dataclass, field, replace
from typing import Any

from paimon_core.exceptions import CorruptFileError
from paimon_core.utils.json_util import dumps_java, loads_checked

CURRENT_VERSION = 3
FIRST_SNAPSHOT_ID = 1
BATCH_COMMIT_IDENTIFIER = 2**63 - 1  # Java Long.MAX_VALUE: what batch writes commit with


class CommitKind(enum.StrEnum):
    """Why a snapshot was made."""

    APPEND = "APPEND"
    COMPACT = "COMPACT"
    OVERWRITE = "OVERWRITE"
    ANALYZE = "ANALYZE"


# JSON key order as Java writes it; optional keys are omitted when None.
_KEYS: tuple[tuple[str, str, bool], ...] = (
    # (json key, attribute, optional)
    ("version", "version", False),
    ("uuid", "uuid", True),
    ("id", "id", False),
    ("schemaId", "schema_id", False),
    ("baseManifestList", "base_manifest_list", False),
    ("baseManifestListSize", "base_manifest_list_size", True),
    ("deltaManifestList", "delta_manifest_list", False),
    ("deltaManifestListSize", "delta_manifest_list_size", True),
    ("changelogManifestList", "changelog_manifest_list", True),
    ("changelogManifestListSize", "changelog_manifest_list_size", True),
    ("indexManifest", "index_manifest", True),
    ("commitUser", "commit_user", False),
    ("writerVersion", "writer_version", True),
    ("commitIdentifier", "commit_identifier", False),
    ("commitKind", "commit_kind", False),
    ("timeMillis", "time_millis", False),
    ("totalRecordCount", "total_record_count", False),
    ("deltaRecordCount", "delta_record_count", False),
    ("changelogRecordCount", "changelog_record_count", True),
    ("watermark", "watermark", True),
    ("statistics", "statistics", True),
    ("properties", "properties", True),
    ("nextRowId", "next_row_id", True),
    ("operation", "operation", True),
)
_REQUIRED = [k for k, _, opt in _KEYS if not opt and k != "version"]
_STR_ATTRS = frozenset(
    {"base_manifest_list", "delta_manifest_list", "changelog_manifest_list", "index_manifest", "statistics",
     "commit_user", "uuid", "writer_version", "operation"}
)
_INT_ATTRS = frozenset(
    {"version", "base_manifest_list_size", "delta_manifest_list_size", "changelog_manifest_list_size",
     "delta_record_count", "changelog_record_count", "watermark", "next_row_id"}
)


_REQUIRED_ATTRS = frozenset(attr for _, attr, opt in _KEYS if not opt)


def _check_types(kwargs: dict[str, Any]) -> None:
    """TypeError naming the key whose JSON value has the wrong type."""
    for attr, v in kwargs.items():
        if v is None:
            if attr in _REQUIRED_ATTRS:
                raise TypeError(f"{attr} must not be null")
            continue
        if attr in _STR_ATTRS and not isinstance(v, str):
            raise TypeError(f"{attr} must be a string, got {v!r}")
        if attr in _INT_ATTRS and (not isinstance(v, int) or isinstance(v, bool)):
            raise TypeError(f"{attr} must be an integer, got {v!r}")
    props = kwargs.get("properties")
    if props is not None and not isinstance(props, dict):
        raise TypeError(f"properties must be an object, got {props!r}")
    tct = kwargs.get("tag_create_time")
    if tct is not None and not (isinstance(tct, list) and all(isinstance(x, int) for x in tct)):
        raise TypeError(f"tagCreateTime must be a list of integers, got {tct!r}")


@dataclass(frozen=True)
class Snapshot:
    """One published version of a table."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: CommitKind
    time_millis: int
    total_record_count: int
    delta_record_count: int
    version: int = CURRENT_VERSION
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: dict[str, str] | None = None
    next_row_id: int | None = None
    operation: str | None = None
    uuid: str | None = field(default_factory=lambda: str(uuid_mod.uuid4()))
    writer_version: str | None = None
    # Tag files carry these two extra keys.
    tag_create_time: list[int] | None = None
    tag_time_retained: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, attr, optional in _KEYS:
            v = getattr(self, attr)
            if isinstance(v, CommitKind):
                v = v.value
            if v is None and optional:
                continue
            out[key] = v
        if self.tag_create_time is not None:
            out["tagCreateTime"] = self.tag_create_time
        if self.tag_time_retained is not None:
            out["tagTimeRetained"] = float(self.tag_time_retained)  # a Duration: a JSON number of seconds
        return out

    def to_json(self) -> str:
        return dumps_java(self.to_dict())

    @staticmethod
    def from_json(text: str | bytes, *, path: str = "<snapshot>") -> Snapshot:
        obj = loads_checked(text, path=path, what="snapshot")
        missing = [k for k in _REQUIRED if k not in obj]
        if missing:
            raise CorruptFileError(f"Corrupt snapshot file {path}: missing {', '.join(missing)}", path=path)
        kwargs: dict[str, Any] = {}
        try:
            for key, attr, _ in _KEYS:
                if key in obj:
                    kwargs[attr] = obj[key]
            kwargs["commit_kind"] = CommitKind(str(obj["commitKind"]))
            for attr in ("id", "schema_id", "commit_identifier", "time_millis", "total_record_count"):
                kwargs[attr] = int(kwargs[attr])
            kwargs.setdefault("version", 1)
            kwargs.setdefault("uuid", None)
            kwargs["tag_create_time"] = obj.get("tagCreateTime")
            ttr = obj.get("tagTimeRetained")
            kwargs["tag_time_retained"] = None if ttr is None else str(ttr)
            _check_types(kwargs)
            return Snapshot(**kwargs)
        except (TypeError, ValueError) as e:
            raise CorruptFileError(f"Corrupt snapshot file {path}: {e}", path=path) from e

    def copy(self, **changes: Any) -> Snapshot:
        return replace(self, **changes)
