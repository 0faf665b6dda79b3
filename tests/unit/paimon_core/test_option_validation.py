"""Option values Java's SchemaValidation refuses are refused at create and alter, and a table
that already holds one (its schema written by another engine) says so at its first write,
commit or expiry, naming the option and the value (issue 17)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidOptionError, SchemaError
from paimon_core.schema.schema_change import SetOption
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema([("k", pa.int32()), ("q", pa.int32()), ("v", pa.string())])

#: (options, primary key, partition keys, the text the error must hold)
BAD_CREATE: list[tuple[dict[str, str], list[str], list[str], str]] = [
    ({"bucket": "99999999999999999999", "bucket-key": "k"}, [], [], "'bucket' must be .*got '99999999999999999999'"),
    ({"bucket": "2147483648", "bucket-key": "k"}, [], [], "'bucket' must be .*got '2147483648'"),
    ({"bucket": "0"}, ["k"], [], "'bucket' must be .*got '0'"),
    ({"bucket": "-3"}, ["k"], [], "'bucket' must be .*got '-3'"),
    ({"bucket": "-2"}, [], [], "'bucket' = '-2' .*needs a primary key"),
    ({"bucket": "2", "sequence.field": "nope"}, ["k"], [], "Sequence field: 'nope' .*sequence.field"),
    ({"bucket": "2", "sequence.field": "v,v"}, ["k"], [], "'v' is defined repeatedly"),
    ({"dynamic-bucket.target-row-num": "0"}, ["k"], [], "'dynamic-bucket.target-row-num' must be 1 or more, got '0'"),
    ({"dynamic-bucket.target-row-num": "99999999999999999999"}, ["k"], [], "target-row-num' must be at most"),
    ({"snapshot.num-retained.min": "0"}, [], [], "'snapshot.num-retained.min' must be 1 or more, got '0'"),
    (
        {"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "3"},
        [],
        [],
        r"'snapshot.num-retained.min' \(5\) should not be larger than 'snapshot.num-retained.max' \(3\)",
    ),
    ({"snapshot.num-retained.max": "0"}, [], [], "'snapshot.num-retained.max' must be 1 or more, got '0'"),
    ({"snapshot.expire.limit": "0"}, [], [], "'snapshot.expire.limit' must be 1 or more, got '0'"),
    ({"snapshot.expire.limit": "-4"}, [], [], "'snapshot.expire.limit' must be 1 or more, got '-4'"),
    ({"changelog.num-retained.min": "0"}, ["k"], [], "'changelog.num-retained.min' must be 1 or more"),
    (
        {"changelog.num-retained.min": "20", "changelog.num-retained.max": "15"},
        ["k"],
        [],
        r"'changelog.num-retained.min' \(20\) should not be larger than 'changelog.num-retained.max' \(15\)",
    ),
    ({"target-file-row-num": "0"}, [], [], "'target-file-row-num' must be 1 or more"),
    ({"manifest.merge-min-count": "2147483648"}, [], [], "'manifest.merge-min-count' must be at most 2147483647"),
    ({"changelog-producer": "input"}, [], [], "'changelog-producer' = 'input' needs a primary key"),
    ({"rowkind.field": "nope"}, ["k"], [], "'rowkind.field' = 'nope' names no column"),
    ({"partition.expiration-time": "1 d"}, [], [], "'partition.expiration-time' = '1 d' cannot be set on a table without"),
    ({"bucket-key": "k"}, ["k"], [], "'bucket-key' = 'k' cannot be used with bucket = -1"),
    ({"fields.nope.stats-mode": "full"}, [], [], "'fields.nope.stats-mode' names column 'nope'"),
    (
        {"bucket": "1", "merge-engine": "aggregation", "fields.v.aggregate-function": "nosuch"},
        ["k"],
        [],
        "nosuch.*fields.v.aggregate-function",
    ),
    ({"bucket": "1", "merge-engine": "first-row", "sequence.field": "q"}, ["k"], [], "sequence field on FIRST_ROW"),
    ({"sequence.field": "v"}, ["k"], ["q"], "'sequence.field' = 'v' cannot be used .*cross-partition"),
    ({"full-compaction.delta-commits": "2"}, [], [], "'full-compaction.delta-commits' = '2' is not supported by append"),
    (
        {"bucket": "1", "changelog-producer": "lookup", "full-compaction.delta-commits": "2"},
        ["k"],
        [],
        "'full-compaction.delta-commits' = '2' is incompatible with changelog-producer = 'lookup'",
    ),
    ({"streaming-read-overwrite": "true"}, [], [], "'streaming-read-overwrite' = 'true' needs a primary key"),
    ({"scan.mode": "from-snapshot"}, [], [], r"scan.mode 'from-snapshot' needs exactly one of .*scan.snapshot-id"),
    (
        {"scan.snapshot-id": "3", "scan.timestamp-millis": "5"},
        [],
        [],
        "'scan.snapshot-id' = '3' cannot be used with scan.mode 'from-timestamp'",
    ),
    ({"scan.mode": "latest", "scan.tag-name": "t1"}, [], [], "'scan.tag-name' = 't1' cannot be used with scan.mode 'latest'"),
]


@pytest.fixture
def cat(local_warehouse: str) -> FileSystemCatalog:
    c = FileSystemCatalog(local_warehouse)
    c.create_database("db")
    return c


def _rows(n: int = 3) -> pa.Table:
    return pa.table(
        {
            "k": pa.array(range(n), pa.int32()),
            "q": pa.array([1] * n, pa.int32()),
            "v": [f"v{i}" for i in range(n)],
        }
    )


@pytest.mark.parametrize(("options", "pk", "parts", "match"), BAD_CREATE)
def test_create_refuses_what_java_refuses(
    cat: FileSystemCatalog, options: dict[str, str], pk: list[str], parts: list[str], match: str
) -> None:
    with pytest.raises((InvalidOptionError, SchemaError), match=match):
        cat.create_table("db.t", SCHEMA, primary_keys=pk, partition_keys=parts, options=options)
    assert not cat.table_exists("db.t")


@pytest.mark.parametrize("name", ["_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID", "_KEY_k"])
def test_system_column_names_are_refused(cat: FileSystemCatalog, name: str) -> None:
    with pytest.raises(SchemaError, match=f"Column name '{name}'"):
        cat.create_table("db.t", pa.schema([("k", pa.int32()), (name, pa.int64())]))
    assert not cat.table_exists("db.t")


_IMMUTABLE = {"bucket", "bucket-key", "merge-engine", "sequence.field"}
ALTER_CASES = [c for c in BAD_CREATE if not c[2] and not set(c[0]) & _IMMUTABLE]


@pytest.mark.parametrize(("options", "pk", "parts", "match"), ALTER_CASES)
def test_alter_refuses_and_writes_no_schema(
    cat: FileSystemCatalog, options: dict[str, str], pk: list[str], parts: list[str], match: str
) -> None:
    t = cat.create_table("db.t", SCHEMA, primary_keys=pk)
    with pytest.raises((InvalidOptionError, SchemaError), match=match):
        cat.alter_table("db.t", [SetOption(k, v) for k, v in options.items()])
    assert t.schema_manager.list_ids() == [0]  # no schema-1 written
    assert cat.get_table("db.t").schema.options == t.schema.options


def test_values_at_the_limits_are_accepted(cat: FileSystemCatalog) -> None:
    cat.create_table("db.a", SCHEMA, options={"bucket": "2147483647", "bucket-key": "k"})
    cat.create_table("db.b", SCHEMA, primary_keys=["k"], options={"bucket": "-2"})
    cat.create_table(
        "db.c",
        SCHEMA,
        primary_keys=["k"],
        options={
            "snapshot.num-retained.min": "1",
            "snapshot.num-retained.max": "1",
            "snapshot.expire.limit": "1",
            "dynamic-bucket.target-row-num": "1",
            "target-file-row-num": "9223372036854775807",
        },
    )
    cat.create_table("db.e", SCHEMA, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    t = cat.create_table(
        "db.d", SCHEMA, primary_keys=["k"], options={"bucket": "2", "sequence.field": "q", "rowkind.field": "v"}
    )
    assert t.options.bucket == 2


def test_dynamic_options_are_checked_too(cat: FileSystemCatalog) -> None:
    t = cat.create_table("db.t", SCHEMA)
    for key, value in [("snapshot.expire.limit", "0"), ("snapshot.num-retained.max", "0"), ("commit.max-retries", "-1")]:
        with pytest.raises(InvalidOptionError, match=f"'{key}' must be"):
            t.copy({key: value})
    with pytest.raises(InvalidOptionError, match="'snapshot.num-retained.min' \\(20\\) should not be larger"):
        t.copy({"snapshot.num-retained.min": "20", "snapshot.num-retained.max": "15"}).write_arrow(_rows())
    assert t.latest_snapshot() is None


# --- a table that already holds a bad value (schema written by another engine) --------------


def _force_options(cat: FileSystemCatalog, name: str, options: dict[str, str], drop: tuple[str, ...] = ()) -> FileStoreTable:
    """Rewrite schema-0's options in place, as an engine without these checks could have."""
    t = cat.get_table(name)
    path = t.paths.schema_path(0)
    doc: dict[str, Any] = json.loads(t.file_io.read_bytes(path))
    doc["options"].update(options)
    for k in drop:
        doc["options"].pop(k, None)
    t.file_io.write_bytes(path, json.dumps(doc).encode(), overwrite=True)
    return cat.get_table(name)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"bucket": "99999999999999999999"}, "'bucket' must be .*got '99999999999999999999'"),
        ({"bucket": "2147483648"}, "'bucket' must be .*got '2147483648'"),
        ({"bucket": "0"}, "'bucket' must be .*got '0'"),
    ],
)
def test_stored_bad_bucket_fails_the_first_write_clearly(
    cat: FileSystemCatalog, options: dict[str, str], match: str
) -> None:
    cat.create_table("db.t", SCHEMA, options={"bucket": "2", "bucket-key": "k"})
    t = _force_options(cat, "db.t", options)
    with pytest.raises(InvalidOptionError, match=match):
        t.write_arrow(_rows())
    with pytest.raises(InvalidOptionError, match=match):
        t.new_batch_write_builder().new_write()
    assert t.latest_snapshot() is None


def test_stored_bad_dynamic_bucket_option_fails_the_first_write_clearly(cat: FileSystemCatalog) -> None:
    cat.create_table("db.t", SCHEMA, primary_keys=["k"])
    t = _force_options(cat, "db.t", {"dynamic-bucket.target-row-num": "0"})
    with pytest.raises(InvalidOptionError, match="'dynamic-bucket.target-row-num' must be 1 or more, got '0'"):
        t.write_arrow(_rows())
    assert t.latest_snapshot() is None


def test_stored_missing_sequence_field_fails_writes_and_reads_clearly(cat: FileSystemCatalog) -> None:
    t = cat.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    t.write_arrow(_rows())
    t = _force_options(cat, "db.t", {"sequence.field": "nope"})
    for op in (lambda: t.write_arrow(_rows()), t.to_arrow):
        with pytest.raises(InvalidOptionError, match="Sequence field: 'nope'.*sequence.field"):
            op()
    assert t.latest_snapshot().id == 1  # type: ignore[union-attr]


MAINTENANCE_BAD = [
    ({"snapshot.num-retained.min": "0"}, "'snapshot.num-retained.min' must be 1 or more, got '0'"),
    (
        {"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "3"},
        r"'snapshot.num-retained.min' \(5\) should not be larger than 'snapshot.num-retained.max' \(3\)",
    ),
    ({"snapshot.num-retained.max": "0"}, "'snapshot.num-retained.max' must be 1 or more, got '0'"),
    ({"snapshot.expire.limit": "0"}, "'snapshot.expire.limit' must be 1 or more, got '0'"),
    ({"changelog.num-retained.min": "0"}, "'changelog.num-retained.min' must be 1 or more, got '0'"),
]


@pytest.mark.parametrize(("options", "match"), MAINTENANCE_BAD)
def test_stored_bad_expiry_option_fails_write_commit_and_expire_clearly(
    cat: FileSystemCatalog, options: dict[str, str], match: str
) -> None:
    t = cat.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    t.write_arrow(_rows())
    t = _force_options(cat, "db.t", options)
    # Before this check every commit landed and its post-commit expiry failed: maintenance off.
    with pytest.raises(InvalidOptionError, match=f"Table db.t: Option {match}.*write-only=true"):
        t.write_arrow(_rows())
    with pytest.raises(InvalidOptionError, match=match):
        t.new_batch_write_builder().new_commit()
    with pytest.raises(InvalidOptionError, match=match):
        t.new_stream_write_builder("u").new_commit()
    with pytest.raises(InvalidOptionError, match=match):
        t.maintenance.expire_snapshots()
    assert t.maintenance.compact(dry_run=True).tasks == 1  # planning reads no expiry option
    with pytest.raises(InvalidOptionError, match=match):
        t.maintenance.compact()
    assert t.latest_snapshot().id == 1  # type: ignore[union-attr]
    assert t.to_arrow().num_rows == 3  # reads do not need these options
    # write-only tables do not expire after commits: their writes go on
    assert t.copy({"write-only": "true"}).write_arrow(_rows()).snapshot_id == 2
    # and the fix is an ordinary alter
    cat.alter_table("db.t", [SetOption(k, "10") for k in options])
    assert cat.get_table("db.t").write_arrow(_rows()).maintenance_error is None


def test_pypaimon_reads_a_table_created_through_the_checks(local_warehouse: str, pypaimon: Any) -> None:
    cat = FileSystemCatalog(local_warehouse)
    cat.create_database("db")
    t = cat.create_table(
        "db.t",
        SCHEMA,
        primary_keys=["k"],
        options={
            "bucket": "2",
            "sequence.field": "q",
            "snapshot.num-retained.min": "1",
            "snapshot.num-retained.max": "3",
            "snapshot.expire.limit": "5",
        },
    )
    for i in range(4):
        t.write_arrow(pa.table({"k": pa.array([1, 2], pa.int32()), "q": pa.array([i, i], pa.int32()), "v": [f"a{i}", "b"]}))
    got = pypaimon.read(local_warehouse, "db.t").sort_by("k").to_pylist()
    assert got == [{"k": 1, "q": 3, "v": "a3"}, {"k": 2, "q": 3, "v": "b"}]


# --- options every later write would fail on (issue 27, item 8) ---------------------------------

#: (options, the text the error must hold); refused on primary-key and append tables alike
WRITE_BAD: list[tuple[dict[str, str], str]] = [
    ({"num-levels": "1"}, r"'num-levels' = '1': Number of levels must be at least 2\."),
    ({"num-levels": "0"}, r"'num-levels' = '0': Number of levels must be at least 2\."),
    ({"num-sorted-run.compaction-trigger": "0"}, r"'num-sorted-run.compaction-trigger' = '0': must be 1 or more"),
    ({"num-sorted-run.compaction-trigger": "-2"}, r"'num-sorted-run.compaction-trigger' = '-2': must be 1 or more"),
    (
        {"num-sorted-run.compaction-trigger": "5", "num-sorted-run.stop-trigger": "3"},
        r"'num-sorted-run.stop-trigger' \(3\) should not be smaller than 'num-sorted-run.compaction-trigger' \(5\)",
    ),
    ({"num-sorted-run.stop-trigger": "4"}, r"'num-sorted-run.stop-trigger' \(4\) should not be smaller than .*\(5\)"),
    ({"write-buffer-size": "0"}, r"'write-buffer-size' = '0': must be more than 0 bytes"),
    ({"write-buffer-size": "0 kb"}, r"'write-buffer-size' = '0 kb': must be more than 0 bytes"),
    ({"page-size": "0"}, r"'page-size' = '0': must be more than 0 bytes"),
    ({"data-file.external-paths": "ext/dir"}, r"'ext/dir' is a relative path \(Java: \"scheme should not be null"),
    ({"data-file.external-paths": "./ext"}, r"'\./ext' is a relative path"),
    ({"data-file.external-paths": "/data/ext, ext2"}, r"'ext2' is a relative path"),
    ({"data-file.external-paths": "file:ext"}, r"'file:ext' is a relative path; it would resolve"),
]
WRITE_GOOD: list[dict[str, str]] = [
    {"num-levels": "2"},
    {"num-sorted-run.compaction-trigger": "1"},
    {"num-sorted-run.compaction-trigger": "1", "num-levels": "2"},
    {"num-sorted-run.compaction-trigger": "3", "num-sorted-run.stop-trigger": "3"},
    {"num-sorted-run.stop-trigger": "5"},
    {"write-buffer-size": "1 b"},
    {"page-size": "1 b"},
    {"data-file.external-paths": "{ext}"},
    {"data-file.external-paths": "file://{ext},s3://bucket/ext"},
]


def _pk_opts(pk: bool) -> dict[str, str]:
    return {"bucket": "1"} if pk else {}


@pytest.mark.parametrize("pk", [True, False], ids=["pk", "append"])
@pytest.mark.parametrize(("options", "match"), WRITE_BAD)
def test_options_every_write_would_fail_on_are_refused_at_create_and_alter(
    cat: FileSystemCatalog, options: dict[str, str], match: str, pk: bool
) -> None:
    keys = ["k"] if pk else []
    with pytest.raises(InvalidOptionError, match=match):
        cat.create_table("db.bad", SCHEMA, primary_keys=keys, options={**_pk_opts(pk), **options})
    assert not cat.table_exists("db.bad")
    t = cat.create_table("db.t", SCHEMA, primary_keys=keys, options=_pk_opts(pk))
    t.write_arrow(_rows())
    with pytest.raises(InvalidOptionError, match=match):
        cat.alter_table("db.t", [SetOption(k, v) for k, v in options.items()])
    after = cat.get_table("db.t")
    assert t.schema_manager.list_ids() == [0] and after.schema.options == t.schema.options
    assert after.write_arrow(_rows(5)).snapshot_id == 2  # the table still takes writes
    assert after.to_arrow().num_rows == (5 if pk else 8)


@pytest.mark.parametrize("pk", [True, False], ids=["pk", "append"])
@pytest.mark.parametrize("options", WRITE_GOOD, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_boundary_values_are_accepted_and_writes_work(
    cat: FileSystemCatalog, options: dict[str, str], pk: bool, tmp_path: Any
) -> None:
    ext = str(tmp_path / "ext")
    opts = {k: v.format(ext=ext) for k, v in options.items()}
    keys = ["k"] if pk else []
    t = cat.create_table("db.c", SCHEMA, primary_keys=keys, options={**_pk_opts(pk), **opts})
    a = cat.create_table("db.a", SCHEMA, primary_keys=keys, options=_pk_opts(pk))
    a.write_arrow(_rows())
    a = cat.alter_table("db.a", [SetOption(k, v) for k, v in opts.items()])
    for table, before in ((t, 0), (a, 3)):
        for i in range(3):
            table.write_arrow(_rows(4 + i))
        if pk:
            table.maintenance.compact()
        got = table.to_arrow()
        assert got.num_rows == (6 if pk else before + 4 + 5 + 6), opts
