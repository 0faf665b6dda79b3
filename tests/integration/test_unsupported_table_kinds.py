"""Paimon 2.x table kinds paimon_core does not support are refused at every entry point (issue 25).

The tables are made by their real writer, pypaimon 2.1.0 (:mod:`tests.tools.table_kinds`): a chain
table, a global (btree) index, a BLOB column, a VECTOR column, a primary-key vector index and a
primary-key btree index. Every entry point must refuse each of them with an
:class:`~paimon_core.exceptions.UnsupportedTableKindError` naming the feature, never a traceback or
a wrong answer, and leave the table's directory byte-for-byte unchanged:

* the Python API (the catalog, ``FileStoreTable``, ``copy`` with a dynamic option, create and
  alter with each refused option of :data:`~paimon_core.options_support.UNSUPPORTED_TABLE_KINDS`);
* every subcommand of ``python -m paimon_core`` (enumerated from its parser);
* every job of :data:`spark_jobs.JOBS` (enumerated, so a job added later is covered; a job that
  cannot name an existing table must be listed in :data:`NOT_ON_A_TABLE` with the reason).

No Spark session is needed for the refusals: the table is refused when it is opened.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import UnsupportedTableKindError
from paimon_core.options_catalog import OPTION_KINDS
from paimon_core.options_support import UNSUPPORTED_TABLE_KINDS, UNSUPPORTED_TYPES
from paimon_core.paths import PathFactory
from paimon_core.schema.schema_change import SetOption
from paimon_core.schema.schema_manager import SchemaManager
from paimon_core.table.table import FileStoreTable
from spark_jobs import JOBS
from tests.integration.test_job_bad_input_args import _help, _required, _run
from tests.tools.table_kinds import DATABASE, UNSUPPORTED, TableKindSpec, build, identifier, tree_digest

pytestmark = pytest.mark.integration

#: Jobs that never open an existing table of the warehouse by name, and why.
NOT_ON_A_TABLE: dict[str, str] = {
    "migrate_database": "makes new Paimon tables from another database's directory",
}

#: Values for required arguments, by name (anything else: "1" for numbers, "x1" for text).
VALUES = {"partitions": "dt=a", "timestamp": "1000"}




@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("unsupported-kinds") / "wh")
    build(wh, UNSUPPORTED)
    return wh


def _root(wh: str, spec: TableKindSpec) -> Path:
    return Path(wh) / f"{DATABASE}.db" / spec.name


def _assert_refused(e: BaseException, spec: TableKindSpec) -> None:
    assert isinstance(e, UnsupportedTableKindError), repr(e)
    assert getattr(e, "feature", None) == spec.refused_as, (e, spec.refused_as)
    assert f"'{spec.refused_as}'" in str(e) and identifier(spec) in str(e), str(e)


def test_the_kinds_cover_the_issue() -> None:
    """The issue's four kinds (chain tables, global index, blob columns, vector index) are built."""
    assert {"chain table", "global index", "blob columns", "vector index"} <= {k.refused_as for k in UNSUPPORTED}


@pytest.mark.parametrize("spec", UNSUPPORTED, ids=[k.refused_as for k in UNSUPPORTED])
def test_the_python_api_refuses_the_table(warehouse: str, spec: TableKindSpec) -> None:
    root = _root(warehouse, spec)
    before = tree_digest(root)
    catalog = FileSystemCatalog(warehouse)
    assert identifier(spec).split(".")[1] in catalog.list_tables(DATABASE)  # listed, never hidden
    with pytest.raises(UnsupportedTableKindError) as info:
        catalog.get_table(identifier(spec))
    _assert_refused(info.value, spec)
    with pytest.raises(UnsupportedTableKindError):  # nor can a table be altered out of its kind
        catalog.alter_table(identifier(spec), [SetOption("snapshot.num-retained.max", "1")])
    if spec.refused_as != "global index":  # the schema itself names the kind
        with pytest.raises(UnsupportedTableKindError):
            SchemaManager(catalog.file_io, PathFactory(str(root))).latest()
    assert tree_digest(root) == before


def _option_kinds() -> list[tuple[str, str, str]]:
    """``(feature, option, a value that makes the kind)`` for every refused option, from the code."""
    out = []
    for kind in UNSUPPORTED_TABLE_KINDS:
        for key in kind.options:
            enum = OPTION_KINDS.get(key, ("", ()))[1]  # a value Paimon accepts for the key
            value = next(v for v in (*enum, "true", "format-table", "v") if kind.applies(v))
            out.append((kind.feature, key, value))
    return out


REFUSED_OPTIONS = _option_kinds()


@pytest.mark.parametrize(("feature", "key", "value"), REFUSED_OPTIONS, ids=[k for _, k, _ in REFUSED_OPTIONS])
def test_each_refused_option_is_refused_at_create_alter_and_open(
    tmp_path: Path, feature: str, key: str, value: str
) -> None:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    with pytest.raises(UnsupportedTableKindError) as info:
        catalog.create_table("db.new", schema, primary_keys=["id"], options={"bucket": "1", key: value})
    assert info.value.feature == feature and f"'{feature}'" in str(info.value) and key in str(info.value)
    assert not catalog.table_exists("db.new") and not (tmp_path / "wh" / "db.db" / "new").exists()

    table = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1], "v": [1]}, schema=schema))
    before = tree_digest(tmp_path / "wh")
    with pytest.raises(UnsupportedTableKindError, match=feature):
        catalog.alter_table("db.t", [SetOption(key, value)])
    with pytest.raises(UnsupportedTableKindError, match=feature):  # a dynamic option makes the kind too
        table.copy({key: value})
    with pytest.raises(UnsupportedTableKindError, match=feature):  # every table object is made here
        FileStoreTable(table.file_io, table.path, table.schema.copy(options={**table.schema.options, key: value}))
    assert tree_digest(tmp_path / "wh") == before


@pytest.mark.parametrize("type_name", sorted(UNSUPPORTED_TYPES))
def test_each_refused_column_type_names_the_column(tmp_path: Path, type_name: str) -> None:
    """A schema file with such a column (top level or nested), as Java writes it."""
    from paimon_core.schema.table_schema import TableSchema

    for raw in (type_name, {"type": "ARRAY", "element": type_name}):
        text = json.dumps({"id": 0, "fields": [{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "c", "type": raw}]})
        with pytest.raises(UnsupportedTableKindError) as info:
            TableSchema.from_json(text)
        assert info.value.feature == UNSUPPORTED_TYPES[type_name]
        assert f"column 'c' of type {type_name}" in str(info.value)


# --- python -m paimon_core ----------------------------------------------------------------------


def _cli_commands() -> list[str]:
    from paimon_core.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return sorted(sub.choices)


CLI = _cli_commands()


@pytest.mark.parametrize("command", CLI)
def test_every_cli_command_refuses(warehouse: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    from paimon_core.cli import main

    parquet = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"id": pa.array([9], pa.int64()), "v": pa.array([9], pa.int64())}), parquet)
    extra = {"write": [str(parquet)], "create-tag": ["t9"], "create-table": ["--schema-from", str(parquet)]}
    for spec in UNSUPPORTED:
        before = tree_digest(_root(warehouse, spec))
        capsys.readouterr()
        rc = main([command, warehouse, identifier(spec), *extra.get(command, [])])
        err = capsys.readouterr().err
        assert rc != 0, (command, spec.refused_as)
        if command == "create-table":  # the table exists: refused before its kind matters
            assert "already exists" in err, err
        else:
            assert f"'{spec.refused_as}'" in err and "Traceback" not in err, (command, err)
        assert tree_digest(_root(warehouse, spec)) == before, (command, spec.refused_as)


# --- python -m spark_jobs -------------------------------------------------------------------------


def _flags(job: str) -> set[str]:
    return set(re.findall(r"--[\w.-]+", _help(job)))


def _argv(job: str, wh: str, spec: TableKindSpec) -> list[str]:
    module = importlib.import_module(JOBS[job])
    flags = _flags(job)
    argv = ["--warehouse", wh, "--no-ledger"]
    if "--table" in flags:
        argv += ["--table", identifier(spec)]
    if "--including-tables" in flags:  # compact_database: this table only
        argv += ["--including-tables", re.escape(identifier(spec))]
    if "--execution" in flags:  # threads, no JVM: the refusal comes first either way
        argv += ["--execution", "local"]
    if "--target_table" in flags:  # merge_into
        argv += ["--target_table", identifier(spec), "--source_table", "db.src", "--merge_condition", "t.id = s.id"]
        argv += ["--matched_delete_condition", "true"]
    for flag in _required(job):
        argv += [flag, "x1"]
    for p in getattr(module, "PARAMS", ()):
        if p.name == "database_or_table":  # repair: this table only
            argv += [p.flags()[0], identifier(spec)]
        elif p.required:
            argv += [p.flags()[0], VALUES.get(p.name, "1" if p.kind == "int" else "x1")]
    return argv


def test_not_on_a_table_lists_only_jobs() -> None:
    assert set(NOT_ON_A_TABLE) <= set(JOBS)


@pytest.mark.parametrize("job", sorted(set(JOBS) - set(NOT_ON_A_TABLE)))
def test_every_spark_job_refuses(warehouse: str, job: str, capsys: pytest.CaptureFixture[str]) -> None:
    for spec in UNSUPPORTED:
        before = tree_digest(Path(warehouse) / f"{DATABASE}.db")
        rc, line = _run(job, _argv(job, warehouse, spec), capsys)
        if job == "compact_database":  # a warehouse-wide job skips the table, naming why (issue 25)
            assert rc == 0 and line["status"] == "ok" and line["skipped_tables"] == [identifier(spec)], line
            entry = next(t for t in line["tables"] if t["table"] == identifier(spec))
            assert entry["status"] == "skipped" and entry["error_type"] == "UnsupportedTableKindError", entry
            assert f"'{spec.refused_as}'" in entry["reason"], entry
        else:
            assert rc != 0 and line["status"] == "error", (job, spec.refused_as, line)
            assert line["error_type"] == "UnsupportedTableKindError", (job, line)
            assert f"'{spec.refused_as}'" in line["error"] and line["retryable"] is False, (job, line)
        assert tree_digest(Path(warehouse) / f"{DATABASE}.db") == before, (job, spec.refused_as)


def test_orphan_clean_of_a_whole_database_skips_each_refused_table(
    warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``remove_orphan_files --table DB.*``: each refused table is skipped, named with its feature,
    and nothing of them changes (the other tables are cleaned: tests/integration/test_multi_table_skip.py)."""
    before = tree_digest(Path(warehouse) / f"{DATABASE}.db")
    rc, line = _run(
        "remove_orphan_files",
        ["--warehouse", warehouse, "--no-ledger", "--table", f"{DATABASE}.*", "--mode", "local"],
        capsys,
    )
    assert rc == 0 and line["status"] == "ok", line
    entries = {t["table"]: t for t in line["tables"]}
    for spec in UNSUPPORTED:
        entry = entries[identifier(spec)]
        assert entry["status"] == "skipped" and f"'{spec.refused_as}'" in entry["reason"], (spec.refused_as, entry)
    assert tree_digest(Path(warehouse) / f"{DATABASE}.db") == before


@pytest.mark.parametrize("key", ["scan.fallback-branch", "scan.primary-branch"])
def test_batch_reads_that_fall_back_to_a_branch_are_refused(
    tmp_path: Path, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Java's batch read of such a table takes partitions from another branch; ours would miss
    them: refused naming the feature (API, CLI). Writes and maintenance of the branch go on."""
    from paimon_core.cli import main

    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False)])
    t = catalog.create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    t.write_arrow(pa.table({"id": [1], "dt": ["a"]}, schema=schema))
    t.maintenance.create_branch("b1")
    catalog.get_table("db.t$branch_b1").write_arrow(pa.table({"id": [2], "dt": ["b"]}, schema=schema))
    t = catalog.alter_table("db.t", [SetOption(key, "b1")])
    with pytest.raises(UnsupportedTableKindError, match="'fallback branch'") as info:
        t.to_arrow()
    assert info.value.feature == "fallback branch" and key in str(info.value)
    assert main(["read", wh, "db.t"]) != 0 and "'fallback branch'" in capsys.readouterr().err
    t.write_arrow(pa.table({"id": [3], "dt": ["a"]}, schema=schema))  # the main branch is written and kept
    assert t.maintenance.compact().to_dict()["snapshot_id"] is not None
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1)
    unset = t.copy({key: ""})  # the main branch alone, asked for explicitly
    assert sorted(unset.to_arrow().column("id").to_pylist()) == [1, 3]
