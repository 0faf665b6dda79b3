"""``merge_into`` on local Spark: Paimon's seed example, a randomized comparison with a plain-Python
model (primary-key and append tables, every clause combination), dry run, errors, a concurrent
commit against copy-on-write, and pypaimon reading the result."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError
from paimon_core.table.table import FileStoreTable
from spark_jobs import merge_into as job
from spark_jobs.common import merge_run
from spark_jobs.common.merge_io import write_changes
from spark_jobs.common.merge_run import merge_into
from spark_jobs.common.merge_spec import MergeIntoError, MergeIntoSpec

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("grp", pa.int32()), ("v", pa.int64()), ("s", pa.string())]
)
Row = dict[str, Any]


def _catalog(wh: str) -> FileSystemCatalog:
    c = FileSystemCatalog(wh)
    c.create_database("db", ignore_if_exists=True)
    c.create_database("default", ignore_if_exists=True)
    return c


def _create(c: FileSystemCatalog, name: str, *, pk: bool, rows: list[Row], commits: int = 2) -> FileStoreTable:
    opts = {"bucket": "2"} if pk else {}
    t = c.create_table(name, SCHEMA, primary_keys=["id"] if pk else [], partition_keys=[], options=opts)
    step = max(1, len(rows) // commits)
    for i in range(0, len(rows), step):  # several commits: several files per bucket
        t.write_arrow(pa.Table.from_pylist(rows[i : i + step], schema=SCHEMA))
    return t


def _sorted(rows: list[Row]) -> list[tuple[Any, ...]]:
    """Rows as tuples, sorted (None sorts first)."""
    tuples = [(r["id"], r["grp"], r["v"], r["s"]) for r in rows]
    return sorted(tuples, key=lambda t: tuple((x is not None, x if x is not None else 0) for x in t))


def _read(t: FileStoreTable) -> list[tuple[Any, ...]]:
    return _sorted(t.to_arrow().to_pylist())


def _fresh(c: FileSystemCatalog, name: str) -> FileStoreTable:
    return c.get_table(name)


def _run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = job.main(list(argv))
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return rc, json.loads(lines[0])


# ---------------------------------------------------------------------------------------------
# the seed example, positional and named
# ---------------------------------------------------------------------------------------------


def test_seed_example_positional_and_named(spark: Any, wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    c = _catalog(wh)
    schema_t = pa.schema([pa.field("id", pa.int64(), nullable=False), ("price", pa.int64())])
    schema_s = pa.schema([pa.field("order_id", pa.int64(), nullable=False), ("price", pa.int64())])
    t = c.create_table("default.T", schema_t, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "price": pa.array([10, 20, 30], pa.int64())}))
    s = c.create_table("default.S", schema_s)
    s.write_arrow(pa.table({"order_id": pa.array([2, 3, 4], pa.int64()), "price": pa.array([0, 0, 400], pa.int64())}))
    seed = ["default.T", "", "", "default.S", "T.id=S.order_id", "", "price=T.price+20", "", "*"]

    rc, out = _run_main(capsys, "--warehouse", wh, *seed, "--dry-run")
    assert rc == 0 and out["status"] == "ok", out
    assert (out["updated_rows"], out["deleted_rows"], out["inserted_rows"], out["dry_run"]) == (2, 0, 1, True)
    assert _fresh(c, "default.T").snapshot_manager.latest_snapshot_id() == 1  # dry run: nothing written

    rc, out = _run_main(capsys, "--warehouse", wh, *seed)
    assert rc == 0 and out["snapshot_id"] == 2 and out["mode"] == "merge-on-read", out
    got = _fresh(c, "default.T").to_arrow().sort_by("id").to_pylist()
    assert got == [{"id": 1, "price": 10}, {"id": 2, "price": 40}, {"id": 3, "price": 50}, {"id": 4, "price": 400}]

    # named flags, --table form; a delete-only (Java's short form: 6 arguments)
    rc, out = _run_main(
        capsys, "--warehouse", wh, "--table", "default.T", "--source_table", "default.S",
        "--merge-condition", "T.id=S.order_id", "--matched_upsert_setting", "price=S.price + T.price",
        "--matched_upsert_condition", "S.price > 0", "--run-id", "r1",
    )  # fmt: skip
    assert rc == 0 and (out["updated_rows"], out["inserted_rows"]) == (1, 0), out
    assert _fresh(c, "default.T").to_arrow().sort_by("id").column("price").to_pylist() == [10, 40, 50, 800]
    rc, again = _run_main(
        capsys, "--warehouse", wh, "--table", "default.T", "--source_table", "default.S",
        "--merge-condition", "T.id=S.order_id", "--matched_upsert_setting", "price=S.price + T.price",
        "--matched_upsert_condition", "S.price > 0", "--run-id", "r1",
    )  # fmt: skip
    assert rc == 0 and again["already_committed"] and again["snapshot_id"] == out["snapshot_id"], again
    rc, out = _run_main(capsys, "--warehouse", wh, "default.T", "", "", "default.S", "T.id=S.order_id", "S.price = 0")
    assert rc == 0 and out["deleted_rows"] == 2, out
    assert _fresh(c, "default.T").to_arrow().sort_by("id").column("id").to_pylist() == [1, 4]


# ---------------------------------------------------------------------------------------------
# randomized, against a plain-Python model
# ---------------------------------------------------------------------------------------------

UPSERT_CONDITIONS: dict[str | None, Callable[[Row, Row], bool]] = {
    None: lambda t, s: True,
    "S.v > 50": lambda t, s: s["v"] is not None and s["v"] > 50,
    "T.grp = S.grp OR S.grp IS NULL": lambda t, s: s["grp"] is None or (t["grp"] is not None and t["grp"] == s["grp"]),
}
UPSERT_SETTINGS: dict[str, Callable[[Row, Row], Row]] = {
    "*": lambda t, s: {k: s[k] for k in ("id", "grp", "v", "s")},
    "v = T.v + S.v, s = concat(T.s, '+', S.s)": lambda t, s: {
        **t,
        "v": None if t["v"] is None or s["v"] is None else t["v"] + s["v"],
        "s": None if t["s"] is None or s["s"] is None else f"{t['s']}+{s['s']}",
    },
}
DELETE_CONDITIONS: dict[str | None, Callable[[Row, Row], bool]] = {
    None: lambda t, s: False,
    "TRUE": lambda t, s: True,
    "T.v < 40": lambda t, s: t["v"] is not None and t["v"] < 40,
}
INSERT_CONDITIONS: dict[str | None, Callable[[Row], bool]] = {
    None: lambda s: True,
    "S.v % 2 = 0": lambda s: s["v"] is not None and s["v"] % 2 == 0,
}
INSERT_VALUES: dict[str | None, Callable[[Row], Row]] = {
    None: lambda s: {},
    "*": lambda s: dict(s),
    "S.id, S.grp, S.v * 10, 'ins'": lambda s: {
        "id": s["id"], "grp": s["grp"], "v": None if s["v"] is None else s["v"] * 10, "s": "ins"
    },
}  # fmt: skip


def _model(target: list[Row], source: list[Row], c: dict[str, Any]) -> tuple[list[Row], tuple[int, int, int]]:
    out: list[Row] = []
    updated = deleted = 0
    for t in target:
        matches = [s for s in source if s["id"] == t["id"]]
        assert len(matches) <= 1
        if not matches:
            out.append(t)
            continue
        s = matches[0]
        if c["set"] is not None and UPSERT_CONDITIONS[c["ucond"]](t, s):
            out.append(UPSERT_SETTINGS[c["set"]](t, s))
            updated += 1
        elif c["dcond"] is not None and DELETE_CONDITIONS[c["dcond"]](t, s):
            deleted += 1
        else:
            out.append(t)
    target_ids = {t["id"] for t in target}
    inserts = [
        INSERT_VALUES[c["values"]](s)
        for s in source
        if c["values"] is not None and s["id"] not in target_ids and INSERT_CONDITIONS[c["icond"]](s)
    ]
    return out + inserts, (updated, deleted, len(inserts))


def _random_rows(rng: random.Random, ids: list[int]) -> list[Row]:
    def maybe(v: Any) -> Any:
        return None if rng.random() < 0.1 else v

    return [
        {"id": i, "grp": maybe(rng.randrange(3)), "v": maybe(rng.randrange(100)), "s": maybe(f"s{rng.randrange(9)}")}
        for i in ids
    ]


def _cases(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        c = {
            "ucond": rng.choice(list(UPSERT_CONDITIONS)),
            "set": rng.choice([None, *UPSERT_SETTINGS]),
            "dcond": rng.choice(list(DELETE_CONDITIONS)),
            "icond": rng.choice(list(INSERT_CONDITIONS)),
            "values": rng.choice(list(INSERT_VALUES)),
        }
        if c["set"] is None:
            c["ucond"] = None
        if c["values"] is None:
            c["icond"] = None
        if c["set"] is None and c["dcond"] is None and c["values"] is None:
            continue
        if c["set"] is not None and c["ucond"] is None and c["dcond"] is not None:
            continue  # refused (the delete could never apply): tested in test_errors
        out.append(c)
    return out


@pytest.mark.parametrize("pk", [True, False], ids=["primary-key", "append"])
def test_randomized_against_model(spark: Any, wh: str, pk: bool) -> None:
    # A fixed draw, as hypothesis' "ci" profile (tests/conftest.py): CI must not pass or fail on the luck
    # of the draw. MERGE_INTO_SEED=<n> explores (MERGE_INTO_SEED=random draws one); a seed that finds a
    # bug becomes the default. 103275527 found the 4-commit fixture of an append target.
    env = os.environ.get("MERGE_INTO_SEED", "")
    seed = random.SystemRandom().randrange(1 << 30) if env == "random" else int(env or "103275527")
    rng = random.Random(seed)
    c = _catalog(wh)
    for n, case in enumerate(_cases(rng, 5)):
        target_ids = rng.sample(range(60), 24)
        if not pk:  # append tables may hold a key twice (one source row may match both)
            target_ids += rng.sample(target_ids, 4)
        target = _random_rows(rng, target_ids)
        source = _random_rows(rng, rng.sample(range(80), 20))
        t = _create(c, f"db.t{n}", pk=pk, rows=target, commits=3)
        created = t.snapshot_manager.latest_snapshot_id()  # 3 or 4 commits: the row count need not divide by 3
        # half the cases read the source from a view made by source_sqls, half from a warehouse table
        if n % 2:
            values = ", ".join(
                f"({s['id']}L, {'NULL' if s['grp'] is None else s['grp']}, "
                f"{'NULL' if s['v'] is None else str(s['v']) + 'L'}, {'NULL' if s['s'] is None else repr(s['s'])})"
                for s in source
            )
            sqls = f"CREATE OR REPLACE TEMPORARY VIEW S AS SELECT * FROM VALUES {values} AS v(id, grp, v, s)"
            src = "S"
        else:
            _create(c, f"db.S{n}", pk=False, rows=source, commits=1)
            sqls, src = "", f"db.S{n}"
        args = {
            "target_table": f"db.t{n}",
            "target_alias": "T",
            "source_sqls": sqls,
            "source_table": src,
            "merge_condition": "T.id = S.id" if src == "S" else f"T.id = S{n}.id",
            "matched_upsert_condition": case["ucond"],
            "matched_upsert_setting": case["set"],
            "not_matched_insert_condition": case["icond"],
            "not_matched_insert_values": case["values"],
            "matched_delete_condition": case["dcond"],
        }
        if src != "S":  # conditions name the source by its table name
            args = {k: (v.replace("S.", f"S{n}.") if isinstance(v, str) and k != "source_table" else v) for k, v in args.items()}
        spec = MergeIntoSpec.of(args)
        expected, counts = _model(target, source, case)
        label = f"seed={seed} case={n} {case}"
        dry = merge_into(spark, c, spec, dry_run=True)
        assert (dry.updated_rows, dry.deleted_rows, dry.inserted_rows) == counts, label
        result = merge_into(spark, c, spec)
        assert (result.updated_rows, result.deleted_rows, result.inserted_rows) == counts, label
        want = _sorted(expected)
        assert _read(_fresh(c, f"db.t{n}")) == want, label
        if not pk and (counts[0] or counts[1]):  # Java's kind of a commit that removes files
            assert result.commit_kind == "OVERWRITE" and result.deleted_files == result.rewritten_files > 0, label
        elif sum(counts):
            assert result.commit_kind == "APPEND" and result.deleted_files == 0, label
        if sum(counts) == 0:
            assert result.snapshot_id is None and t.snapshot_manager.latest_snapshot_id() == created, label


# ---------------------------------------------------------------------------------------------
# errors: nothing changes
# ---------------------------------------------------------------------------------------------


def test_errors_leave_the_table_unchanged(spark: Any, wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    c = _catalog(wh)
    rows = _random_rows(random.Random(7), list(range(10)))
    _create(c, "db.pk", pk=True, rows=rows)
    _create(c, "db.app", pk=False, rows=rows)
    _create(c, "db.src", pk=False, rows=[{**r, "v": 1} for r in rows[:4]] + [{**rows[2], "v": 2}])
    before = {n: _read(_fresh(c, n)) for n in ("db.pk", "db.app")}
    snapshots = {n: _fresh(c, n).snapshot_manager.latest_snapshot_id() for n in before}

    def check(argv: list[str], needle: str, rc_want: int = 3) -> None:  # 3: a terminal error (2: usage)
        rc, out = _run_main(capsys, "--warehouse", wh, *argv)
        assert rc == rc_want and out["status"] == "error" and needle in out["error"], out
        assert "\n" not in out["error"] and len(out["error"]) < 600, out  # one line, no plan or JVM trace
        for n in before:
            assert _fresh(c, n).snapshot_manager.latest_snapshot_id() == snapshots[n]
            assert _read(_fresh(c, n)) == before[n]

    for target in ("db.pk", "db.app"):
        # id 2 is twice in the source: named in the error, for both table kinds
        check([target, "T", "", "db.src", "T.id = src.id", "", "v = src.v"], "matches 2 source rows")
        check([target, "T", "", "db.src", "T.id = src.id", "", "", "", "", "TRUE"], "'id': 2")
        check([target, "T", "", "db.src", "T.id = src.nope", "", "v = src.v"], "nope")
        check([target, "T", "", "db.src", "T.id = = src.id", "", "v = src.v"], "merge_condition: 'T.id = = src.id'")
        check([target, "T", "", "db.src", "T.id = src.id", "", "v = (src.v"], "matched_upsert_setting: '(src.v'")
        check([target, "T", "", "db.src", "T.id = src.id", "", "nope = 1"], "Invalid column reference 'nope'")
        check([target, "T", "", "db.missing", "T.id = missing.id", "", "v = 1"], "db.missing")
        check([target, "T", "", "db.src", "T.id = src.id", "", "", "", "src.id, src.v"], "has 4 columns")
    check(["db.pk", "T", "", "db.src", "T.id = src.id AND src.v = 1", "", "id = T.id + 100"], "primary key")
    check(["db.nope", "T", "", "db.src", "T.id = src.id", "", "v = 1"], "db.nope")
    check(["db.pk", "T", "", "db.src", "T.id = src.id", "", "v = 1", "", "", "TRUE"], "never apply", rc_want=2)
    check(["db.pk", "T", "", "db.src", ""], "merge condition", rc_want=2)


# ---------------------------------------------------------------------------------------------
# copy-on-write against a concurrent commit; pypaimon reads the result
# ---------------------------------------------------------------------------------------------


def _data_files(wh: str, table: str) -> set[str]:
    root = Path(wh) / f"{table.split('.')[0]}.db" / table.split(".")[1]
    return {p.name for p in root.rglob("data-*") if p.is_file()}


def test_copy_on_write_conflict_and_pypaimon_reads(
    spark: Any, wh: str, monkeypatch: pytest.MonkeyPatch, pypaimon: Any
) -> None:
    c = _catalog(wh)
    rows = _random_rows(random.Random(3), list(range(40)))
    for name in ("db.app", "db.app2"):
        _create(c, name, pk=False, rows=rows, commits=4)
    _create(c, "db.pk", pk=True, rows=rows, commits=4)
    spark.createDataFrame([(i, i * 1000) for i in range(0, 50, 5)], "id BIGINT, v BIGINT").createOrReplaceTempView("U")
    args: dict[str, str | None] = {
        "target_alias": "T", "source_table": "U", "merge_condition": "T.id = U.id",
        "matched_upsert_condition": "U.id % 10 = 0", "matched_upsert_setting": "v = U.v",
        "matched_delete_condition": "TRUE", "not_matched_insert_values": "U.id, 7, U.v, 'new'",
    }  # fmt: skip

    # a concurrent commit removes every file after the merge read them: the commit fails cleanly
    def racing_write(df: Any, table: FileStoreTable, *, with_kind: bool) -> Any:
        written = write_changes(df, table, with_kind=with_kind)
        table.new_batch_write_builder().overwrite().new_commit().commit([])
        return written

    monkeypatch.setattr(merge_run, "write_changes", racing_write)
    files_before = _data_files(wh, "db.app")
    with pytest.raises(CommitConflictError, match="already removed by a concurrent commit"):
        merge_into(spark, c, MergeIntoSpec.of({**args, "target_table": "db.app"}))
    monkeypatch.undo()
    app = _fresh(c, "db.app")
    assert app.snapshot_manager.latest_snapshot_id() == 5  # 4 writes + the concurrent overwrite
    assert app.to_arrow().num_rows == 0  # the concurrent overwrite, nothing of the merge
    assert _data_files(wh, "db.app") == files_before  # the merge's new files were deleted

    # without the race: both kinds of tables, read back by pypaimon
    files_before = _data_files(wh, "db.app2")
    for name in ("db.pk", "db.app2"):
        result = merge_into(spark, c, MergeIntoSpec.of({**args, "target_table": name}))
        assert (result.updated_rows, result.deleted_rows, result.inserted_rows) == (4, 4, 2), result
    # four files of ten rows, each with one upserted and one deleted row: all rewritten
    assert (result.mode, result.rewritten_files, result.deleted_files, result.kept_rows) == ("copy-on-write", 4, 4, 32)
    assert files_before <= _data_files(wh, "db.app2")  # old files stay on disk (older snapshots need them)
    for name in ("db.pk", "db.app2"):
        ours = sorted(_fresh(c, name).to_arrow().to_pylist(), key=lambda r: r["id"])
        theirs = sorted(pypaimon.read(wh, name).to_pylist(), key=lambda r: r["id"])
        assert theirs == ours, name
        by_id = {r["id"]: r for r in ours}
        assert len(ours) == 40 - 4 + 2 and 5 not in by_id and 35 not in by_id, name
        assert (by_id[0]["v"], by_id[30]["v"], by_id[45]["s"], by_id[45]["grp"]) == (0, 30000, "new", 7), name
        assert by_id[1] == rows[1], name


def test_spec_parsing_without_spark() -> None:
    with pytest.raises(MergeIntoError, match="matched_upsert_setting"):
        MergeIntoSpec.of({"target_table": "db.t", "source_table": "S", "merge_condition": "c",
                          "matched_upsert_condition": "x"})  # fmt: skip
    spec = MergeIntoSpec.of({"target_table": "db.t", "source_table": "default.S", "merge_condition": "t.a = S.a",
                             "matched_upsert_setting": "`b` = concat(S.x, ','), t.c = 1",
                             "source_sqls": "SET x = 1; CREATE TEMPORARY VIEW S AS SELECT ';' AS a;"})  # fmt: skip
    assert spec.source_sqls == ("SET x = 1", "CREATE TEMPORARY VIEW S AS SELECT ';' AS a")
    assert spec.upsert_values(["a", "b", "c"], ["a", "x"]) == ["`t`.`a`", "concat(S.x, ',')", "1"]
