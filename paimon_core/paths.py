"""Every file and directory name of a table, in one place (Paimon's FileStorePathFactory).

Layout under the table root::

    schema/schema-N                  snapshot/{snapshot-N,LATEST,EARLIEST}
    manifest/{manifest-,manifest-list-,index-manifest-}<uuid>-<n>
    index/index-<uuid>-<n>           tag/tag-<name>   consumer/consumer-<id>
    changelog/changelog-N            statistics/      branch/branch-<name>/...
    k1=v1/k2=v2/bucket-N/data-<uuid>-<n>.parquet

Names read from metadata (manifest lists, manifests, index and data files, tags, consumers) only
become paths here, and each is checked on the way (see :mod:`paimon_core.path_confinement`): a
bare file name, or an external path under the table or its ``data-file.external-paths``.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
import threading
import uuid
from collections.abc import Sequence
from typing import cast

from paimon_core.data.internal import escape_path_name, partition_dir_value
from paimon_core.exceptions import UnsafePathError
from paimon_core.io.file_io import FileIO, join
from paimon_core.io.uri import parse_path
from paimon_core.path_confinement import check_file_name, confine
from paimon_core.schema.data_types import DataField

SNAPSHOT_DIR = "snapshot"
SNAPSHOT_PREFIX = "snapshot-"
LATEST = "LATEST"
EARLIEST = "EARLIEST"
SCHEMA_DIR = "schema"
SCHEMA_PREFIX = "schema-"
MANIFEST_DIR = "manifest"
MANIFEST_PREFIX = "manifest-"
MANIFEST_LIST_PREFIX = "manifest-list-"
INDEX_MANIFEST_PREFIX = "index-manifest-"
INDEX_DIR = "index"
INDEX_PREFIX = "index-"
TAG_DIR = "tag"
TAG_PREFIX = "tag-"
CONSUMER_DIR = "consumer"
CONSUMER_PREFIX = "consumer-"
CHANGELOG_DIR = "changelog"
CHANGELOG_PREFIX = "changelog-"
STATISTICS_DIR = "statistics"
BRANCH_DIR = "branch"
#: Where engines stage files before moving them under their Paimon names (e.g. Spark's own
#: Parquet writer); leftovers of a crashed write are orphans for remove_orphan_files.
STAGING_DIR = "_staging"
BRANCH_PREFIX = "branch-"
BUCKET_PREFIX = "bucket-"
POSTPONE_BUCKET_DIR = "bucket-postpone"
POSTPONE_BUCKET = -2
DB_SUFFIX = ".db"
_SCHEMA_FILE = re.compile(rf"^{re.escape(SCHEMA_PREFIX)}\d+$")
#: The default branch: its metadata lives in the table directory itself (Java's DEFAULT_MAIN_BRANCH).
MAIN_BRANCH = "main"


def branch_path(table_path: str, branch: str) -> str:
    """The directory of a branch's metadata: the table path itself for ``main``, else
    ``branch/branch-<name>`` (Java's ``BranchManager.branchPath``; the name is checked)."""
    if branch == MAIN_BRANCH:
        return table_path.rstrip("/")
    return join(table_path, BRANCH_DIR, check_file_name(f"{BRANCH_PREFIX}{branch}", kind="branch directory"))


def is_table_dir(file_io: FileIO, path: str) -> bool:
    """Whether ``path`` is a Paimon table's (or branch's) directory: it has ``schema/schema-N``."""
    return any(_SCHEMA_FILE.match(st.name) for st in file_io.list_files(join(path, SCHEMA_DIR)))


def enclosing_table(file_io: FileIO, path: str) -> str | None:
    """The innermost Paimon table directory that is ``path`` or one of its ancestors, or None
    (one listing per ancestor, up to the root of the store)."""
    parsed = parse_path(path)
    current = posixpath.normpath(parsed.path) if parsed.path.startswith("/") else os.path.abspath(parsed.path)
    while True:
        where = parsed.with_path(current)
        if is_table_dir(file_io, where):
            return where
        parent = posixpath.dirname(current)
        if parent == current:
            return None
        current = parent


def bucket_dir_name(bucket: int) -> str:
    """``bucket-N`` (``bucket-postpone`` for the postpone bucket)."""
    return POSTPONE_BUCKET_DIR if bucket == POSTPONE_BUCKET else f"{BUCKET_PREFIX}{bucket}"


class PathFactory:
    """Names every file of one table. One instance per writer/committer (it owns a uuid).

    ``branch``: whose ``snapshot/``, ``schema/``, ``tag/``, ``consumer/`` and ``changelog/``
    these are (under :attr:`branch_root`); manifests, index, statistics and data files always
    live in the table's own directories, shared by every branch (Java's layout).
    """

    def __init__(
        self,
        table_path: str,
        *,
        data_file_prefix: str = "data-",
        file_format: str = "parquet",
        external_roots: Sequence[str] = (),
        branch: str = MAIN_BRANCH,
    ) -> None:
        self.table_path = table_path.rstrip("/")
        self.branch = branch
        #: Where this branch's snapshot, schema, tag, consumer and changelog directories live.
        self.branch_root = branch_path(self.table_path, branch)
        #: Where a path from metadata may point: the table and its ``data-file.external-paths``.
        self.roots = (self.table_path, *external_roots)
        self.data_file_prefix = data_file_prefix
        self.file_format = file_format
        self._uuid = str(uuid.uuid4())
        self._manifest_counter = itertools.count()
        self._manifest_list_counter = itertools.count()
        self._index_manifest_counter = itertools.count()
        self._data_counter = itertools.count()
        self._index_counter = itertools.count()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        return {
            "table_path": self.table_path,
            "data_file_prefix": self.data_file_prefix,
            "file_format": self.file_format,
            "external_roots": self.roots[1:],
            "branch": self.branch,
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(  # type: ignore[misc]
            str(state["table_path"]),
            data_file_prefix=str(state["data_file_prefix"]),
            file_format=str(state["file_format"]),
            external_roots=cast("tuple[str, ...]", state.get("external_roots", ())),
            branch=str(state.get("branch", MAIN_BRANCH)),
        )

    def _next(self, counter: itertools.count[int]) -> int:
        with self._lock:
            return next(counter)

    # --- metadata directories --------------------------------------------------
    @property
    def snapshot_dir(self) -> str:
        return join(self.branch_root, SNAPSHOT_DIR)

    def snapshot_path(self, snapshot_id: int) -> str:
        return join(self.snapshot_dir, f"{SNAPSHOT_PREFIX}{snapshot_id}")

    @property
    def schema_dir(self) -> str:
        return join(self.branch_root, SCHEMA_DIR)

    def schema_path(self, schema_id: int) -> str:
        return join(self.schema_dir, f"{SCHEMA_PREFIX}{schema_id}")

    @property
    def manifest_dir(self) -> str:
        return join(self.table_path, MANIFEST_DIR)

    def manifest_path(self, name: str) -> str:
        """A manifest, manifest list or index manifest (``name`` from metadata: checked)."""
        return join(self.manifest_dir, check_file_name(name, kind="manifest"))

    def new_manifest_name(self) -> str:
        return f"{MANIFEST_PREFIX}{self._uuid}-{self._next(self._manifest_counter)}"

    def new_manifest_list_name(self) -> str:
        return f"{MANIFEST_LIST_PREFIX}{self._uuid}-{self._next(self._manifest_list_counter)}"

    def new_index_manifest_name(self) -> str:
        return f"{INDEX_MANIFEST_PREFIX}{self._uuid}-{self._next(self._index_manifest_counter)}"

    @property
    def index_dir(self) -> str:
        return join(self.table_path, INDEX_DIR)

    def new_index_file_name(self) -> str:
        return f"{INDEX_PREFIX}{self._uuid}-{self._next(self._index_counter)}"

    def index_file_path(self, name: str) -> str:
        return join(self.index_dir, check_file_name(name, kind="index file"))

    @property
    def tag_dir(self) -> str:
        return join(self.branch_root, TAG_DIR)

    def tag_path(self, name: str) -> str:
        return join(self.tag_dir, check_file_name(f"{TAG_PREFIX}{name}", kind="tag file"))

    @property
    def consumer_dir(self) -> str:
        return join(self.branch_root, CONSUMER_DIR)

    def consumer_path(self, consumer_id: str) -> str:
        return join(self.consumer_dir, check_file_name(f"{CONSUMER_PREFIX}{consumer_id}", kind="consumer file"))

    @property
    def changelog_dir(self) -> str:
        return join(self.branch_root, CHANGELOG_DIR)

    @property
    def statistics_dir(self) -> str:
        return join(self.table_path, STATISTICS_DIR)

    def statistics_path(self, name: str) -> str:
        return join(self.statistics_dir, check_file_name(name, kind="statistics file"))

    @property
    def branch_dir(self) -> str:
        return join(self.table_path, BRANCH_DIR)

    @property
    def staging_dir(self) -> str:
        return join(self.table_path, STAGING_DIR)

    def new_staging_path(self) -> str:
        """A fresh directory under :attr:`staging_dir` for one write."""
        return join(self.staging_dir, str(uuid.uuid4()))

    # --- data files ------------------------------------------------------------
    def bucket_path(self, partition_path: str, bucket: int) -> str:
        """``<table>/<partition path>/bucket-N``; ``partition_path`` is '' when unpartitioned."""
        if partition_path:
            return join(self.table_path, partition_path, bucket_dir_name(bucket))
        return join(self.table_path, bucket_dir_name(bucket))

    def new_data_file_name(self, *, extension: str | None = None, prefix: str | None = None) -> str:
        ext = extension or self.file_format
        pre = self.data_file_prefix if prefix is None else prefix
        return f"{pre}{self._uuid}-{self._next(self._data_counter)}.{ext}"

    def data_file_path(self, partition_path: str, bucket: int, file_name: str, external_path: str | None = None) -> str:
        return self.file_in_dir(self.bucket_path(partition_path, bucket), file_name, external_path)

    def file_in_dir(self, directory: str, file_name: str, external_path: str | None = None, *, kind: str = "data file") -> str:
        """``directory/file_name``, or ``external_path`` when set (from metadata: both checked).
        An external path ends in the file's own name, as Java's ``ExternalPathProvider`` writes it
        (``<root>/<partition>/bucket-N/[entropy dirs/]<file name>``): anything else is refused."""
        if external_path:
            path = self.confine(external_path, kind=kind)
            if posixpath.basename(path) != check_file_name(file_name, kind=kind):
                raise UnsafePathError(
                    f"Refusing {kind} path {external_path!r} from metadata: it does not end in the file's "
                    f"name {file_name!r}",
                    path=external_path,
                    kind=kind,
                )
            return path
        return join(directory, check_file_name(file_name, kind=kind))

    def confine(self, path: str, *, kind: str) -> str:
        """``path`` resolved, if under the table or its external data paths; else UnsafePathError."""
        return confine(path, self.roots, kind=kind)


def partition_dir(
    fields: Sequence[DataField],
    values: Sequence[object | None],
    *,
    default_partition_name: str,
    legacy_name: bool = True,
) -> str:
    """``k1=v1/k2=v2`` for internal partition values, escaped exactly as Java writes it
    (null and blank values become ``default_partition_name``); '' when unpartitioned."""
    return "/".join(
        f"{escape_path_name(f.name)}="
        + partition_dir_value(v, f.type, default_partition_name=default_partition_name, legacy_name=legacy_name)
        for f, v in zip(fields, values, strict=True)
    )
