"""One commit path (issue 26): writers commit through ``paimon_core.table.table_commit.TableCommit``.

An AST walk over every module of ``paimon_core/``, ``spark_jobs/``, ``plugins/`` and ``dags/``
fails on any use of the low-level committer (``FileStoreCommit`` imported, or
``<table>.new_file_store_commit(...)``) outside the commit package and :data:`ALLOWED`: the
maintenance operations that commit their own COMPACT / OVERWRITE snapshots (never a writer's
APPEND, so precommit-compact and "keep a landed APPEND" do not apply to them). A read-only
identity lookup, ``<table>.new_file_store_commit(user).is_committed(ident)``, commits nothing and
is allowed anywhere. A module added later is covered without editing a list; an allowlisted
module that stops using the committer fails too, so the list cannot go stale.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("paimon_core", "spark_jobs", "plugins", "dags")
COMMIT_PACKAGE = "paimon_core/operation/commit/"
COMMITTER_MODULE = "paimon_core.operation.commit.committer"

#: module -> why it may create the low-level committer itself
ALLOWED: dict[str, str] = {
    "paimon_core/table/table_commit.py": "the one commit path (Java's TableCommitImpl)",
    "paimon_core/table/table.py": "defines the factory new_file_store_commit (Java's FileStoreTable.store().newCommit)",
    "paimon_core/store/file_store.py": "defines the factory new_commit (Java's FileStore.newCommit)",
    "paimon_core/table/fixed_bucket_commit.py": (
        "TableCommit's own postpone fixed-bucket step: commits in strict mode from its base snapshot, "
        "plus the rescale OVERWRITE before it"
    ),
    "paimon_core/operation/compact/table_compact.py": "dedicated compaction: COMPACT snapshots, a conflict re-plans",
    "paimon_core/operation/compact/sort_compact.py": "sort compaction: a COMPACT of exactly the files it read",
    "paimon_core/table/postpone_bucket_compact.py": "postpone compaction: strict-mode COMPACT/OVERWRITE",
    "paimon_core/operation/manifest_compact.py": "compact_manifest: a COMPACT snapshot of manifests only",
    "paimon_core/operation/partition_drop.py": "drop_partition: an OVERWRITE deleting whole partitions",
    "paimon_core/operation/partition_expire.py": "partition expiry: an OVERWRITE deleting whole partitions",
    "paimon_core/operation/purge_files.py": "purge_files: an OVERWRITE removing every file",
    "paimon_core/operation/rewrite_file_index.py": "rewrite_file_index: a COMPACT re-adding files with new indexes",
    "paimon_core/operation/remove_unexisting_files.py": "repair: an OVERWRITE dropping entries of missing files",
    "paimon_core/branch/branch_merge.py": (
        "merge_branch: re-commits another branch's existing files (no writer compaction or small new files)"
    ),
    "paimon_core/tag/tag_auto_creation.py": "an empty APPEND snapshot for a process-time tag (Java's forced snapshot)",
}


def _uses(path: Path) -> list[str]:
    """The low-level committer uses in one module, as 'line: what'."""
    tree = ast.parse(path.read_text(), filename=str(path))
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == COMMITTER_MODULE:
            if any(a.name in ("FileStoreCommit", "*") for a in node.names):
                found.append(f"{node.lineno}: imports FileStoreCommit")
        elif isinstance(node, ast.Import) and any(a.name == COMMITTER_MODULE for a in node.names):
            found.append(f"{node.lineno}: imports {COMMITTER_MODULE}")
        elif isinstance(node, ast.Attribute) and node.attr in ("new_file_store_commit", "new_commit"):
            call = parents.get(node)
            if node.attr == "new_commit" and not _is_store_commit(node, call):
                continue  # a write builder's new_commit(): the TableCommit itself
            outer = parents.get(call) if isinstance(call, ast.Call) else None
            if isinstance(outer, ast.Attribute) and outer.attr == "is_committed":
                continue  # a read-only identity lookup
            found.append(f"{node.lineno}: calls {node.attr}")
    return found


def _is_store_commit(node: ast.Attribute, call: ast.AST | None) -> bool:
    """``<x>.store.new_commit(...)``, ``store.new_commit(...)`` or ``new_commit(user)``: the store's
    low-level committer (Java's ``FileStore.newCommit(commitUser)``); a write builder's ``new_commit()``
    takes no argument and returns the TableCommit."""
    receiver = node.value
    named_store = (isinstance(receiver, ast.Name) and receiver.id.endswith("store")) or (
        isinstance(receiver, ast.Attribute) and receiver.attr.endswith("store")
    )
    with_user = isinstance(call, ast.Call) and bool(call.args or call.keywords)
    return named_store or with_user


def _modules() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix()
        for root in SCANNED
        for p in (ROOT / root).rglob("*.py")
        if "__pycache__" not in p.parts
    )


def test_only_the_table_commit_and_maintenance_operations_use_the_low_level_committer() -> None:
    modules = _modules()
    assert (
        len(modules) > 100 and "spark_jobs/datasource/stream_writer.py" in modules
    )  # the walk sees the tree
    offenders = {
        m: uses
        for m in modules
        if not m.startswith(COMMIT_PACKAGE) and m not in ALLOWED and (uses := _uses(ROOT / m))
    }
    assert offenders == {}, (
        "Commit through paimon_core.table.table_commit.TableCommit (precommit-compact, the postpone "
        f"fixed-bucket step, a landed APPEND kept, post-commit maintenance), not the low-level committer: {offenders}"
    )


def test_the_allowlist_is_not_stale() -> None:
    stale = [m for m in ALLOWED if not (ROOT / m).exists() or not _uses(ROOT / m)]
    assert stale == [], f"allowlisted modules that no longer use the low-level committer: {stale}"


def test_the_guard_sees_a_direct_commit(tmp_path: Path) -> None:
    """The walk finds each form a writer used before the one commit path."""
    src = tmp_path / "writer.py"
    src.write_text(
        "from paimon_core.operation.commit.committer import FileStoreCommit, OverwriteSpec\n"
        "def commit(table, flat, i):\n"
        "    if table.new_file_store_commit('u').is_committed(i):\n"
        "        return None\n"
        "    return table.new_file_store_commit('u').commit(flat, i)\n"
    )
    assert _uses(src) == ["1: imports FileStoreCommit", "5: calls new_file_store_commit"]
