"""Issue 27: no operation that deletes or moves files touches anything outside the table, whatever
its metadata or its directory holds.

Enumerated, not sampled:

* **operations** come from the code. Every call of a file IO's ``delete``/``rename`` (and every
  direct ``os``/``shutil`` removal or move) in ``paimon_core/`` and ``spark_jobs/`` is found by an
  AST walk, and each calling function must be mapped to an entry of :data:`OPERATIONS` (or to an
  exemption with its reason) in :data:`CALLERS`; every ``@recorded`` maintenance action of the
  table facade must be in :data:`OPERATIONS` too. A new deleting operation fails
  :func:`test_every_deleting_caller_and_action_is_covered` until it is added here.
* **path-bearing fields**: data, changelog, index, statistics, manifest and manifest list file
  names, data and index external paths, extra files, tag and branch files (:data:`FIELDS`), each
  in every hostile form (:data:`FORMS`: ``../``, absolute, ``file:/``, ``file://host/``,
  ``file:///``, ``file://localhost/``), plus symbolic links (directories and files) at every
  place a deleting listing goes (:data:`LINKS`) and a hand-written schema naming an external root.

Each case is a real directory tree: a warehouse with the victim table, a sibling table and
database, an "outside" directory next to the warehouse (also the process's working directory, so
a path resolved against it shows up there). Every operation runs on its own copy of the case; the
guard compares every entry (path, type, mode, size, mtime, inode, link target) outside the table
before and after. An operation may refuse with a :class:`PaimonError` or succeed; any other
exception, or any change outside the table, fails.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import pathlib
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from paimon_core.ledger.recorder import ledger_disabled
from paimon_core.manifest.entries import FileKind, IndexFileMeta, IndexManifestEntry, ManifestEntry
from paimon_core.manifest.index_manifest import write_index_manifest
from paimon_core.manifest.manifest_file import read_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list, write_manifest_list
from paimon_core.migrate import migrate_directory
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

from .hostile import NOW, delta_entries, rewrite_snapshot, rows, set_delta, with_file, write_list

REPO = pathlib.Path(__file__).resolve().parents[4]
SCANNED = ("paimon_core", "spark_jobs")
LATER = NOW + 400 * 86_400_000  # every file is old enough for orphan cleanup and tag expiry
P1, P2 = "20240101", "20240102"

# --- the operations, found in the code ------------------------------------------------------------

_IO_METHODS = frozenset({"delete", "rename", "delete_quietly", "delete_directory_quietly"})
_DIRECT = frozenset(
    {
        "os.unlink",
        "os.remove",
        "os.rmdir",
        "os.rename",
        "os.replace",
        "os.removedirs",
        "shutil.rmtree",
        "shutil.move",
    }
)


def _is_io_receiver(text: str) -> bool:
    last = text.rsplit(".", 1)[-1]
    return last in ("file_io", "io", "ext_io") or last.endswith("_io")


class _CallFinder(ast.NodeVisitor):
    """The deleting calls of one module, by enclosing ``Class.function``."""

    def __init__(self, rel: str, found: dict[str, list[str]]) -> None:
        self.rel, self.found, self.stack = rel, found, list[str]()

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope  # noqa: N815

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802 - ast's name
        func = node.func
        text = ast.unparse(func)
        io_call = (
            isinstance(func, ast.Attribute)
            and func.attr in _IO_METHODS
            and _is_io_receiver(ast.unparse(func.value))
        )
        path_call = (
            isinstance(func, ast.Attribute)
            and func.attr in ("unlink", "rmdir")
            and not text.startswith("os.")
        )
        if io_call or path_call or text in _DIRECT:
            self.found.setdefault(f"{self.rel}:{'.'.join(self.stack) or '<module>'}", []).append(text)
        self.generic_visit(node)


def deleting_callers() -> dict[str, list[str]]:
    """``path:Qualified.function`` -> the deleting calls it makes (file IO delete/rename calls and
    direct os/shutil/pathlib removals and moves; the file IOs' own implementations excluded)."""
    found: dict[str, list[str]] = {}
    for top in SCANNED:
        for f in sorted((REPO / top).rglob("*.py")):
            rel = f.relative_to(REPO).as_posix()
            if not rel.startswith("paimon_core/io/"):  # the FileIO implementations themselves
                _CallFinder(rel, found).visit(ast.parse(f.read_text(encoding="utf-8")))
    return found


def recorded_actions() -> set[str]:
    """Every ``@recorded("action")`` of the table facade (each a public maintenance operation)."""
    out: set[str] = set()
    for f in (REPO / "paimon_core").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    if (
                        isinstance(d, ast.Call)
                        and ast.unparse(d.func) == "recorded"
                        and d.args
                        and isinstance(d.args[0], ast.Constant)
                    ):
                        out.add(str(d.args[0].value))
    return out


@dataclass
class Ctx:
    catalog: FileSystemCatalog
    table: FileStoreTable
    case_dir: pathlib.Path


Op = Callable[[Ctx], object]

#: Every public operation, run against every case. Keys: the ``@recorded`` action names, plus the
#: catalog's drops, migration and a plain write (whose commit cleans up after itself).
OPERATIONS: dict[str, Op] = {
    "expire_snapshots": lambda c: c.table.maintenance.expire_snapshots(retain_max=1, retain_min=1),
    "expire_changelogs": lambda c: c.table.maintenance.expire_changelogs(delete_all=True),
    "remove_orphan_files": lambda c: c.table.maintenance.remove_orphan_files(dry_run=False),
    "remove_unexisting_files": lambda c: c.table.maintenance.remove_unexisting_files(dry_run=False),
    "remove_unexisting_manifests": lambda c: c.table.maintenance.remove_unexisting_manifests(dry_run=False),
    "purge_files": lambda c: c.table.maintenance.purge_files(dry_run=False),
    "repair_earliest_snapshot": lambda c: c.table.maintenance.repair_earliest_snapshot(3),
    "compact": lambda c: c.table.maintenance.compact(),
    "compact_manifest": lambda c: c.table.maintenance.compact_manifest(),
    "expire_partitions": lambda c: c.table.maintenance.expire_partitions(
        expiration_time="1 d", timestamp_formatter="yyyyMMdd"
    ),
    "mark_partition_done": lambda c: c.table.maintenance.mark_partition_done(f"dt={P1}"),
    "drop_partition": lambda c: c.table.maintenance.drop_partition(f"dt={P1}", dry_run=False),
    "create_tag": lambda c: c.table.maintenance.create_tag("t5", 3),
    "create_tag_from_timestamp": lambda c: c.table.maintenance.create_tag_from_timestamp("t6", NOW + 2500),
    "create_tag_from_watermark": lambda c: c.table.maintenance.create_tag_from_watermark("t7", 0),
    "replace_tag": lambda c: c.table.maintenance.replace_tag("t1", 3),
    "rename_tag": lambda c: c.table.maintenance.rename_tag("t1", "t9"),
    "delete_tag": lambda c: c.table.maintenance.delete_tag("t1", dry_run=False),
    "expire_tags": lambda c: c.table.maintenance.expire_tags(older_than=LATER),
    "trigger_tag_automatic_creation": lambda c: c.table.maintenance.trigger_tag_automatic_creation(),
    "rollback_to": lambda c: c.table.maintenance.rollback_to(1, dry_run=False),
    "rollback_to_timestamp": lambda c: c.table.maintenance.rollback_to_timestamp(NOW + 1500, dry_run=False),
    "rollback_to_watermark": lambda c: c.table.maintenance.rollback_to_watermark(0, dry_run=False),
    "rollback_to_as_latest": lambda c: c.table.maintenance.rollback_to_as_latest("t1"),
    "reset_consumer": lambda c: c.table.maintenance.reset_consumer("c9", 2),
    "clear_consumers": lambda c: c.table.maintenance.clear_consumers(dry_run=False),
    "create_branch": lambda c: c.table.maintenance.create_branch("b2", "t1"),
    "delete_branch": lambda c: c.table.maintenance.delete_branch("b1", dry_run=False),
    "fast_forward": lambda c: c.table.maintenance.fast_forward("b1", dry_run=False),
    "rename_branch": lambda c: c.table.maintenance.rename_branch("b1", "b3"),
    "merge_branch": lambda c: c.table.maintenance.merge_branch("b1"),
    "rewrite_file_index": lambda c: c.table.maintenance.rewrite_file_index(),
    "reassign_row_id": lambda c: c.table.maintenance.reassign_row_id(),
    "write": lambda c: c.table.write_arrow(rows([7], dt=P2)),
    "drop_table": lambda c: c.catalog.drop_table("dbt.t"),
    "drop_database": lambda c: c.catalog.drop_database("dbt", cascade=True),
    "migrate_table": lambda c: migrate_directory(c.catalog, f"{c.table.path}/dt={P1}/bucket-0", "db.new"),
}

#: Operations that are not ``@recorded`` table actions.
BASE_OPERATIONS = frozenset({"write", "drop_table", "drop_database", "migrate_table"})


def active_operations() -> list[str]:
    """The operations of :data:`OPERATIONS` the code has (a ``@recorded`` action, or a base one)."""
    actions = recorded_actions() | BASE_OPERATIONS
    return [op for op in OPERATIONS if op in actions]


_WRITER_OWN = "exempt: deletes files this writer or job wrote in this call (never a name from metadata); run by 'write'/'compact'"
#: Each deleting caller -> the operation of OPERATIONS that runs it, or an exemption and its reason.
CALLERS: dict[str, str] = {
    "paimon_core/append/append_compact_rewriter.py:rewrite_append_files": "compact",
    "paimon_core/append/data_evolution_compact_commit.py:rewrite_deletion_vectors": "compact",
    "paimon_core/append/data_evolution_compact_task.py:run_data_evolution_compact_task": "compact",
    "paimon_core/append/append_compact_rewriter.py:_rewrite_row_tracking": "compact",
    "paimon_core/append/append_deletion_index.py:DeletionIndex.remove": "compact",
    "paimon_core/append/append_pre_commit_compact.py:_delete": "write",
    "paimon_core/branch/branch_manager.py:BranchManager.delete_branch": "delete_branch",
    "paimon_core/branch/branch_manager.py:BranchManager.fast_forward": "fast_forward",
    "paimon_core/catalog/filesystem_catalog.py:FileSystemCatalog.drop_database": "drop_database",
    "paimon_core/catalog/filesystem_catalog.py:FileSystemCatalog.drop_table": "drop_table",
    "paimon_core/consumer/consumer_manager.py:ConsumerManager.delete_consumer": "clear_consumers",
    "paimon_core/consumer/consumer_manager.py:ConsumerManager.expire": "expire_snapshots",
    "paimon_core/consumer/consumer_manager.py:ConsumerManager.clear_consumers": "clear_consumers",
    "paimon_core/format/format_base.py:BaseFormatWriter.abort": _WRITER_OWN,
    "paimon_core/ledger/spool.py:Spool.add": "exempt: the ledger's own spool directory (never table metadata)",
    "paimon_core/ledger/spool.py:Spool.claim": "exempt: the ledger's own spool directory (never table metadata)",
    "paimon_core/ledger/spool.py:Spool.done": "exempt: the ledger's own spool directory (never table metadata)",
    "paimon_core/ledger/spool.py:Spool.release": "exempt: the ledger's own spool directory (never table metadata)",
    "paimon_core/mergetree/compact/lookup_merge_tree_compact_rewriter.py:run_lookup_compact_task": "compact",
    "paimon_core/mergetree/kv_file_writer.py:RollingKeyValueFileWriter.abort": _WRITER_OWN,
    "paimon_core/mergetree/writer.py:MergeTreeWriter.abort": _WRITER_OWN,
    "paimon_core/migrate/file_migrator.py:migrate_directory": "migrate_table",
    "paimon_core/operation/append_writer.py:RollingAppendWriter.abort": _WRITER_OWN,
    "paimon_core/operation/commit/committer.py:FileStoreCommit._attempt": "write",
    "paimon_core/operation/commit/committer.py:FileStoreCommit._write_manifests": "write",
    "paimon_core/operation/commit/committer.py:FileStoreCommit._cleanup": "write",
    "paimon_core/operation/commit/pending_commits.py:withdraw": "write",
    "paimon_core/table/postpone_bucket_compact.py:_as_compaction": "compact",
    "paimon_core/operation/compact/sort_spill.py:spill_sort_task": _WRITER_OWN,
    "paimon_core/operation/compact/sort_task.py:write_sorted_ranges": _WRITER_OWN,
    "paimon_core/operation/compact/sort_task.py:_delete_files": _WRITER_OWN,
    "paimon_core/operation/compact/table_compact.py:delete_written": "compact",
    "paimon_core/operation/file_deletion_base.py:FileDeleter._delete_one": "expire_snapshots",
    "paimon_core/operation/file_deletion_base.py:FileDeletionBase._try_delete_empty_dir": "expire_snapshots",
    "paimon_core/operation/orphan_candidates.py:_remove_if_empty": "remove_orphan_files",
    "paimon_core/operation/orphan_trash.py:_remove_if_empty": "remove_orphan_files",
    "paimon_core/operation/orphan_trash.py:move_to_trash": "remove_orphan_files",
    "paimon_core/operation/orphan_trash.py:purge": "remove_orphan_files",
    "paimon_core/operation/orphan_trash.py:purge_run": "remove_orphan_files",
    "paimon_core/operation/orphan_trash.py:restore": "remove_orphan_files",
    "paimon_core/operation/purge_files.py:PurgeFiles.run": "purge_files",
    "paimon_core/operation/rewrite_file_index.py:_delete": "rewrite_file_index",
    "paimon_core/operation/commit/replace_manifest_list.py:delete_manifests": "remove_unexisting_manifests",
    "paimon_core/table/fixed_bucket_commit.py:PostponeFixedBucketCommit._delete": _WRITER_OWN,
    "paimon_core/table/fixed_bucket_commit.py:_abort": _WRITER_OWN,
    "paimon_core/snapshot/changelog_manager.py:ChangelogManager.delete_hints": "expire_changelogs",
    "paimon_core/snapshot/changelog_manager.py:ChangelogManager.delete": "expire_changelogs",
    "paimon_core/table/builders.py:BatchTableCommit.abort": "write",
    "paimon_core/table/table_commit.py:commit_keeping_landed_append": "write",
    "paimon_core/table/table_commit.py:delete_uncommitted": "write",
    "paimon_core/table/rollback_as_latest.py:_cleanup": "rollback_to_as_latest",
    "paimon_core/table/rollback_helper.py:RollbackHelper._execute": "rollback_to",
    "paimon_core/table/rollback_helper.py:RollbackHelper._undo": "rollback_to",
    "paimon_core/table/write_compaction.py:_combine": "write",
    "paimon_core/tag/tag_manager.py:TagManager.rename": "rename_tag",
    "paimon_core/tag/tag_manager.py:TagManager.delete": "delete_tag",
    "spark_jobs/datasource/native_write.py:write_native": "exempt: the Spark writer's own staging files (tests/integration)",
    "spark_jobs/datasource/native_write.py:_remove_tree": "exempt: the Spark writer's own staging files (tests/integration)",
    "spark_jobs/packaging.py:build_pyfiles_archive": "exempt: the job's own archive in a temp directory",
    "spark_jobs/remove_orphan_files.py:_delete_rows": (
        "remove_orphan_files"  # the distributed run deletes CandidateDirs planned by the same code
    ),
}


# --- the cases ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    craft: Callable[[FileStoreTable, pathlib.Path], None]


def _outside(case_dir: pathlib.Path) -> pathlib.Path:
    return case_dir / "outside"


def _victim(case_dir: pathlib.Path) -> pathlib.Path:
    return _outside(case_dir) / "dt=20240101" / "bucket-0" / "data-victim.parquet"


FORMS: dict[str, Callable[[str, pathlib.Path], str]] = {
    # (the directory a bare name is joined to, or the table for full paths; the victim) -> value
    "dotdot": lambda base, victim: os.path.relpath(victim, base),
    "absolute": lambda base, victim: str(victim),
    "file_slash": lambda base, victim: f"file:{victim}",
    "file_host": lambda base, victim: f"file://evilhost{victim}",
    "file_triple": lambda base, victim: f"file://{victim}",
    "file_localhost": lambda base, victim: f"file://localhost{victim}",
}


def _full(form: str, table: FileStoreTable, victim: pathlib.Path) -> str:
    """A full path (external path) in ``form``; ``dotdot`` climbs out of the table directory."""
    if form == "dotdot":
        return f"{table.path}/{os.path.relpath(victim, table.path)}"
    return FORMS[form](table.path, victim)


def _bucket(t: FileStoreTable) -> str:
    return f"{t.path}/dt={P1}/bucket-0"


def _entry(t: FileStoreTable, sid: int) -> ManifestEntry:
    return delta_entries(t, sid)[0]


def _data_delete(t: FileStoreTable, **change: object) -> None:
    """Snapshot 3 (expired, rolled back) also DELETEs a crafted file."""
    set_delta(t, 3, [*delta_entries(t, 3), with_file(_entry(t, 1), kind=FileKind.DELETE, **change)])  # type: ignore[arg-type]


def _data_add(t: FileStoreTable, **change: object) -> None:
    """Snapshot 1 (tagged t1, the branch's base) also ADDs a crafted file; the tag follows."""
    snap = set_delta(t, 1, [*delta_entries(t, 1), with_file(_entry(t, 1), **change)])  # type: ignore[arg-type]
    tag = t.tag_manager.tag_path("t1")
    doc = json.loads(t.file_io.read_text(tag))
    doc.update(
        deltaManifestList=snap.delta_manifest_list, deltaManifestListSize=snap.delta_manifest_list_size
    )
    t.file_io.write_bytes(tag, json.dumps(doc).encode(), overwrite=True)


def _changelog(t: FileStoreTable, value: str) -> None:
    name, size = write_list(t, [with_file(_entry(t, 1), file_name=value)])
    rewrite_snapshot(t, 3, changelog_manifest_list=name, changelog_manifest_list_size=size)


def _index(t: FileStoreTable, *, file_name: str, external_path: str | None = None) -> None:
    e = _entry(t, 1)
    meta = IndexFileMeta("DELETION_VECTORS", file_name, 4, 1, dv_ranges=(), external_path=external_path)
    name = t.paths.new_index_manifest_name()
    write_index_manifest(
        t.file_io,
        t.paths.manifest_path(name),
        [IndexManifestEntry(FileKind.ADD, e.partition, e.bucket, meta)],
    )
    rewrite_snapshot(t, 3, index_manifest=name)


def _manifest_name(t: FileStoreTable, value: str) -> None:
    snap = t.snapshot_manager.snapshot(3)
    metas = read_manifest_list(t.file_io, t.paths.manifest_path(snap.delta_manifest_list))
    name = t.paths.new_manifest_list_name()
    size = write_manifest_list(
        t.file_io, t.paths.manifest_path(name), [dataclasses.replace(metas[0], file_name=value)]
    )
    rewrite_snapshot(t, 3, delta_manifest_list=name, delta_manifest_list_size=size)


def _snapshot_field(key: str) -> Callable[[FileStoreTable, str], None]:
    """Plant the value in snapshot 3's ``key`` field."""

    def plant(t: FileStoreTable, value: str) -> None:
        rewrite_snapshot(t, 3, **{key: value})

    return plant


def _json_field(path: str, **fields: object) -> None:
    doc = json.loads(pathlib.Path(path).read_text())
    doc.update(fields)
    pathlib.Path(path).write_text(json.dumps(doc))


#: field -> (how to plant a value, the directory a bare name is joined to, or None for full paths)
FIELDS: dict[str, tuple[Callable[[FileStoreTable, str], None], Callable[[FileStoreTable], str] | None]] = {
    "data_file_name.delete": (lambda t, v: _data_delete(t, file_name=v), _bucket),
    "data_file_name.add": (lambda t, v: _data_add(t, file_name=v), _bucket),
    "data_external_path.delete": (
        lambda t, v: _data_delete(t, file_name="data-victim.parquet", external_path=v),
        None,
    ),
    "data_external_path.add": (
        lambda t, v: _data_add(t, file_name="data-victim.parquet", external_path=v),
        None,
    ),
    "extra_file.delete": (lambda t, v: _data_delete(t, extra_files=(v,)), _bucket),
    "extra_file.add": (lambda t, v: _data_add(t, extra_files=(v,)), _bucket),
    "changelog_file_name": (_changelog, _bucket),
    "index_file_name": (lambda t, v: _index(t, file_name=v), lambda t: t.paths.index_dir),
    "index_external_path": (lambda t, v: _index(t, file_name="data-victim.parquet", external_path=v), None),
    "statistics": (_snapshot_field("statistics"), lambda t: t.paths.statistics_dir),
    "manifest_name": (_manifest_name, lambda t: t.paths.manifest_dir),
    "base_manifest_list": (_snapshot_field("base_manifest_list"), lambda t: t.paths.manifest_dir),
    "delta_manifest_list": (_snapshot_field("delta_manifest_list"), lambda t: t.paths.manifest_dir),
    "changelog_manifest_list": (
        _snapshot_field("changelog_manifest_list"),
        lambda t: t.paths.manifest_dir,
    ),
    "index_manifest": (_snapshot_field("index_manifest"), lambda t: t.paths.manifest_dir),
    "tag_file.base_manifest_list": (
        lambda t, v: _json_field(t.tag_manager.tag_path("t1"), baseManifestList=v),
        lambda t: t.paths.manifest_dir,
    ),
    "branch_snapshot.delta_manifest_list": (
        lambda t, v: _json_field(f"{t.path}/branch/branch-b1/snapshot/snapshot-1", deltaManifestList=v),
        lambda t: t.paths.manifest_dir,
    ),
}


def _field_case(field: str, form: str) -> Case:
    plant, base = FIELDS[field]

    def craft(t: FileStoreTable, case_dir: pathlib.Path) -> None:
        victim = _victim(case_dir)
        value = _full(form, t, victim) if base is None else FORMS[form](base(t), victim)
        plant(t, value)

    return Case(f"{field}:{form}", craft)


#: Places a deleting listing or a metadata name leads to, each replaced by a link to a copy outside.
LINKS = (
    f"dt={P1}",
    f"dt={P1}/bucket-0",
    f"dt={P2}/bucket-0",
    "manifest",
    "index",
    "statistics",
    "snapshot",
    "tag",
    "changelog",
    "consumer",
    "_staging/x",
    "branch",
    "branch/branch-b1",
    "branch/branch-b1/snapshot",
    "branch/branch-b1/tag",
)


def _link_case(rel: str) -> Case:
    def craft(t: FileStoreTable, case_dir: pathlib.Path) -> None:
        inside = pathlib.Path(t.path) / rel
        moved = _outside(case_dir) / "moved" / rel.replace("/", "_")
        moved.parent.mkdir(parents=True, exist_ok=True)
        if inside.exists():
            shutil.move(str(inside), str(moved))
        else:
            moved.mkdir()
        (moved / "data-old.parquet").write_bytes(b"not the table's")
        os.utime(moved / "data-old.parquet", (1, 1))
        inside.parent.mkdir(parents=True, exist_ok=True)
        inside.symlink_to(moved, target_is_directory=True)

    return Case(f"link_dir:{rel}", craft)


def _file_link_case() -> Case:
    def craft(t: FileStoreTable, case_dir: pathlib.Path) -> None:
        """Snapshot 1's data file (deleted by snapshot 2) is a link to a file outside."""
        path = pathlib.Path(_bucket(t)) / _entry(t, 1).file.file_name
        target = _outside(case_dir) / "linked-target.parquet"
        shutil.move(str(path), str(target))
        path.symlink_to(target)

    return Case("link_file:data", craft)


#: Schema options that name directories (Java's; a hand-written schema file may carry any of them).
DIRECTORY_OPTIONS = ("data-file.external-paths", "data-file.path-directory", "global-index.external-path")


def _schema_root_case(key: str, form: str, *, with_delete: bool) -> Case:
    """A hand-written ``schema-N`` naming the outside directory in option ``key`` (in ``form``);
    with a DELETE entry naming a file there, or only for the listings."""

    def craft(t: FileStoreTable, case_dir: pathlib.Path) -> None:
        latest = max(t.schema_manager.list_ids())
        doc = json.loads(t.file_io.read_text(t.schema_manager.paths.schema_path(latest)))
        doc["id"] = latest + 1
        value = FORMS[form](t.path, _outside(case_dir))
        doc["options"] = {**doc["options"], key: value if form != "dotdot" else f"{t.path}/{value}"}
        t.file_io.write_bytes(t.schema_manager.paths.schema_path(latest + 1), json.dumps(doc).encode())
        if with_delete:
            _data_delete(t, file_name="data-victim.parquet", external_path=FORMS[form](t.path, _victim(case_dir)))

    return Case(f"schema_root:{key}:{form}:{'delete_entry' if with_delete else 'listing'}", craft)


def _other_table_case() -> Case:
    """A hand-written schema names the sibling table's directory as an external root, and forged
    manifests both ADD (in snapshot 3's base) and DELETE (in its delta) that table's live file:
    metadata consistent with "this table wrote it there", so the root itself must be refused."""

    def craft(t: FileStoreTable, case_dir: pathlib.Path) -> None:
        other = case_dir / "wh" / "db.db" / "other"
        live = next((other / f"dt={P1}" / "bucket-0").glob("*.parquet"))
        latest = max(t.schema_manager.list_ids())
        doc = json.loads(t.file_io.read_text(t.schema_manager.paths.schema_path(latest)))
        doc["id"] = latest + 1
        doc["options"] = {**doc["options"], "data-file.external-paths": str(other)}
        t.file_io.write_bytes(t.schema_manager.paths.schema_path(latest + 1), json.dumps(doc).encode())
        forged = with_file(_entry(t, 1), file_name=live.name, external_path=str(live))
        snap = t.snapshot_manager.snapshot(3)
        base: list[ManifestEntry] = []
        for meta in read_manifest_list(t.file_io, t.paths.manifest_path(snap.base_manifest_list)):
            base.extend(read_manifest_file(t.file_io, t.paths.manifest_path(meta.file_name)))
        name, size = write_list(t, [*base, forged])
        rewrite_snapshot(t, 3, base_manifest_list=name, base_manifest_list_size=size)
        _data_delete(t, file_name=live.name, external_path=str(live))

    return Case("schema_root:other_table:forged_add_and_delete", craft)


CASES: list[Case] = [
    *(_field_case(f, form) for f in FIELDS for form in FORMS),
    *(_link_case(rel) for rel in LINKS),
    _file_link_case(),
    *(_schema_root_case(DIRECTORY_OPTIONS[0], form, with_delete=True) for form in FORMS),
    *(_schema_root_case(key, "absolute", with_delete=False) for key in DIRECTORY_OPTIONS),
    _other_table_case(),
]


# --- the tree and the guard -------------------------------------------------------------------


def _build_template(root: pathlib.Path) -> None:
    """outside/ (victims, old files, a trap for paths resolved against the working directory)
    and wh/ with dbt.t (the table under attack), db.other and db.new's database."""
    wh = root / "wh"
    catalog = FileSystemCatalog(str(wh), clock=ManualClock(NOW))
    catalog.create_database("dbt")
    catalog.create_database("db")
    other = catalog.create_table(
        "db.other", rows([0]).schema, partition_keys=["dt"], options={"bucket": "-1"}
    )
    other.write_arrow(rows([0], dt=P1))
    t = catalog.create_table("dbt.t", rows([0]).schema, partition_keys=["dt"], options={"bucket": "-1"})
    clock = t.clock
    assert isinstance(clock, ManualClock)
    for data, overwrite in (
        (rows([1, 2], dt=P1), False),
        (rows([3], dt=P1), True),
        (rows([4], dt=P2), False),
    ):
        t.write_arrow(data, overwrite=overwrite)
        clock.advance(1000)
    t.maintenance.create_tag("t1", 1)
    t.write_arrow(rows([5], dt=P1))
    t.maintenance.create_branch("b1", "t1")
    outside = root / "outside"
    victim = _victim(root)
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"not the table's")
    for p in (outside / "victim", outside / "index" / "index-old", outside / "manifest-old"):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"not the table's")
    # a path read relative to the working directory (outside/) lands here
    trap = pathlib.Path(f"{outside}/file:{t.path}/dt={P1}/bucket-0")
    trap.mkdir(parents=True)
    for f in pathlib.Path(_bucket(t)).iterdir():
        shutil.copy2(f, trap / f.name)
    for p in outside.rglob("*"):
        if p.is_file():
            os.utime(p, (1, 1))


def _state(case_dir: pathlib.Path) -> dict[str, tuple[object, ...]]:
    """Every entry of the case outside the table directory (links never followed). Directory
    mtimes are kept outside the warehouse; inside it the table's ancestors change when it goes."""
    table = case_dir / "wh" / "dbt.db" / "t"
    ancestors = {str(p) for p in table.parents}
    out: dict[str, tuple[object, ...]] = {}
    stack = [case_dir]
    while stack:
        p = stack.pop()
        if p == table:
            continue
        st = os.lstat(p)
        key = str(p)
        if stat.S_ISLNK(st.st_mode):
            out[key] = ("link", st.st_mode, st.st_ino, os.readlink(p))
        elif stat.S_ISDIR(st.st_mode):
            if p != table.parent:  # the table's own database (drop_database removes it with the table)
                out[key] = (
                    "dir",
                    st.st_mode,
                    st.st_ino,
                    0 if key in ancestors or _ledger(key) else st.st_mtime_ns,
                )
            stack.extend(p / n for n in os.listdir(p))
        else:
            out[key] = ("file", st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    return {k: v for k, v in out.items() if not _ledger(k)}


def _ledger(path: str) -> bool:
    """The warehouse's own maintenance records, written by every recorded action."""
    return "/paimon_maintenance.db" in path or "/_maintenance" in path


def _changes(before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]]) -> list[str]:
    out = [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    out += [f"added {p}" for p in sorted(after.keys() - before.keys())]
    out += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return out


#: A RAM-backed directory when there is one: thousands of small trees are copied and removed.
_FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@pytest.fixture(scope="module")
def work() -> Iterator[pathlib.Path]:
    with tempfile.TemporaryDirectory(prefix="paimon-fuzz-", dir=_FAST_TMP) as d:
        root = pathlib.Path(d)
        (root / "template").mkdir()
        _build_template(root / "template")
        yield root


def _crafted(work: pathlib.Path, case: Case) -> pathlib.Path:
    """The template with ``case``'s hostile metadata or links, built once per case. Every path
    in a case is absolute, so each run copies the tree to the same place (``run/``)."""
    crafted = work / "crafted"
    if crafted.exists():
        shutil.rmtree(crafted)
    run = work / "run"
    if run.exists():
        shutil.rmtree(run)
    shutil.copytree(work / "template", run, symlinks=True)
    case.craft(FileSystemCatalog(str(run / "wh"), clock=ManualClock(NOW)).get_table("dbt.t"), run)
    run.rename(crafted)
    return crafted


def _run(work: pathlib.Path, crafted: pathlib.Path, case: Case, op: str) -> list[str]:
    """Run ``op`` on a fresh copy of the crafted case; the problems found (none: it refused or
    succeeded, and nothing outside the table changed)."""
    case_dir = work / "run"
    if case_dir.exists():
        shutil.rmtree(case_dir)
    shutil.copytree(crafted, case_dir, symlinks=True)
    catalog = FileSystemCatalog(str(case_dir / "wh"), clock=ManualClock(LATER))
    before = _state(case_dir)
    cwd = os.getcwd()
    os.chdir(case_dir / "outside")
    problems: list[str] = []
    try:
        with ledger_disabled():  # the ledger is its own table, written by our commit path
            OPERATIONS[op](Ctx(catalog, catalog.get_table("dbt.t"), case_dir))
    except PaimonError:
        pass  # refused
    except Exception as e:  # noqa: BLE001 - anything else is a finding
        problems.append(f"{type(e).__name__}: {e}")
    finally:
        os.chdir(cwd)
    problems += _changes(before, _state(case_dir))
    return [f"{case.name} / {op}: {p}" for p in problems]


# --- the tests ---------------------------------------------------------------------------------


def test_every_deleting_caller_and_action_is_covered() -> None:
    callers = deleting_callers()
    uncovered = sorted(set(callers) - set(CALLERS))
    assert not uncovered, (
        "new code deletes or moves files: map each caller to the operation that runs it in CALLERS "
        f"(and add the operation to OPERATIONS): {[(c, callers[c]) for c in uncovered]}"
    )
    unknown = sorted(v for v in CALLERS.values() if not v.startswith("exempt:") and v not in OPERATIONS)
    assert not unknown, unknown
    missing = sorted(recorded_actions() - set(OPERATIONS))
    assert not missing, f"maintenance actions the fuzz does not run (add them to OPERATIONS): {missing}"


@pytest.mark.slow
def test_no_operation_changes_anything_outside_the_table(work: pathlib.Path) -> None:
    started = time.monotonic()
    problems: list[str] = []
    runs = 0
    ops = active_operations()
    for case in CASES:
        crafted = _crafted(work, case)
        for op in ops:
            problems += _run(work, crafted, case, op)
            runs += 1
    elapsed = time.monotonic() - started
    print(f"{runs} runs ({len(CASES)} cases x {len(ops)} operations) in {elapsed:.1f} s")
    assert not problems, "\n".join(problems[:80]) + f"\n... {len(problems)} in all"
