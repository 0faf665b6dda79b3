"""``changelog-producer = full-compaction``: every full compaction writes, as the COMPACT snapshot's
changelog, the diff between the table before it and after it, per key (Java's
``FullChangelogMergeTreeCompactRewriter``). Checked against a model of the table over several
rounds of random writes and deletes, for the deduplicate, partial-update and aggregation engines,
read back through our streaming (changelog) scan."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidOptionError
from paimon_core.snapshot.snapshot import CommitKind, Snapshot
from paimon_core.table.stream_scan import StreamTableScan
from paimon_core.table.table import FileStoreTable
from paimon_core.table.table_read import TableRead

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("a", pa.int64()), ("s", pa.string())])
Row = tuple[Any, Any]  # (a, s)
State = dict[int, Row]
INSERT, DELETE = 0, 3


def _changes(t: FileStoreTable, snapshot: Snapshot) -> list[tuple[str, int, Any, Any]]:
    scan = StreamTableScan(t, options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    units = scan.plan_delta(snapshot)
    if units is None:
        return []
    got = TableRead(t, row_kind=True).to_arrow(units)
    cols = [got[c].to_pylist() for c in ("_ROW_KIND", "k", "a", "s")]
    return list(zip(*cols, strict=True))


def _state(t: FileStoreTable) -> State:
    return {r["k"]: (r["a"], r["s"]) for r in t.to_arrow().to_pylist()}


def _write(t: FileStoreTable, rows: list[tuple[int, Any, Any]], kinds: list[int]) -> list[Snapshot]:
    b = t.new_batch_write_builder()  # a new writer (commit user) every time, as separate batch jobs
    w = b.new_write()
    data = pa.table({"k": [r[0] for r in rows], "a": [r[1] for r in rows], "s": [r[2] for r in rows]}, schema=SCHEMA)
    w.write_arrow(data, row_kinds=pa.array(kinds, pa.int8()))
    result = b.new_commit().commit(w.prepare_commit())
    return [t.snapshot_manager.snapshot(s) for s in result.snapshot_ids]


def _last(acc: Row, row: Row) -> Row:
    return row


def _non_null(acc: Row, row: Row) -> Row:  # partial-update
    return (row[0] if row[0] is not None else acc[0], row[1] if row[1] is not None else acc[1])


def _sum(acc: Row, row: Row) -> Row:  # aggregation: sum, last_non_null_value
    total = row[0] if acc[0] is None else acc[0] + (row[0] or 0)
    return (total, row[1] if row[1] is not None else acc[1])


def _commit(state: State, data: list[tuple[int, Any, Any]], kinds: list[int], fold: Callable[[Row, Row], Row]) -> None:
    """Apply one commit to the model as the LSM does: the writer's flush folds each key's rows
    (a ``-D`` -- with ``remove-record-on-delete`` -- restarts from its own values and deletes the
    key unless an insert follows), then the compaction folds that row onto the table's row."""
    batch: dict[int, tuple[bool, Row]] = {}
    for (k, a, s), kind in zip(data, kinds, strict=True):
        if kind == DELETE:
            batch[k] = (True, (a, s))
        else:
            prev = batch.get(k)
            batch[k] = (False, (a, s) if prev is None else fold(prev[1], (a, s)))
    for k, (deleted, row) in batch.items():
        if deleted:
            state.pop(k, None)
        else:
            state[k] = fold(state[k], row) if k in state else row


ENGINES: dict[str, tuple[dict[str, str], Callable[[Row, Row], Row]]] = {
    "deduplicate": ({}, _last),
    "partial-update": (
        {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
        _non_null,
    ),
    "aggregation": (
        {
            "merge-engine": "aggregation",
            "fields.a.aggregate-function": "sum",
            "fields.s.aggregate-function": "last_non_null_value",
            "aggregation.remove-record-on-delete": "true",
        },
        _sum,
    ),
}


def _expected(before: State, after: State, touched: set[int], *, dedup: bool) -> list[tuple[str, int, Any, Any]]:
    """The full-compaction changelog of a model: per key written since the last full compaction."""
    out: list[tuple[str, int, Any, Any]] = []
    for k in sorted(touched):
        old, new = before.get(k), after.get(k)
        if old is None and new is not None:
            out.append(("+I", k, *new))
        elif old is not None and new is None:
            out.append(("-D", k, *old))
        elif old is not None and new is not None and not (dedup and old == new):
            out += [("-U", k, *old), ("+U", k, *new)]
    return out


def _random_round(rng: random.Random, *, keys: int, rows: int) -> tuple[list[tuple[int, Any, Any]], list[int]]:
    data, kinds = [], []
    for _ in range(rows):
        k = rng.randrange(keys)
        a = rng.choice([None, rng.randrange(5)])
        s = rng.choice([None, "x", "y", f"s{rng.randrange(3)}"])
        data.append((k, a, s))
        kinds.append(DELETE if rng.random() < 0.2 else INSERT)
    return data, kinds


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("dedup", [False, True])
def test_full_compaction_changelog_is_the_diff_of_the_table(
    catalog: FileSystemCatalog, engine: str, dedup: bool
) -> None:
    options, fold = ENGINES[engine]
    t = catalog.create_table(
        "db.fc",
        SCHEMA,
        primary_keys=["k"],
        options={
            "bucket": "1",
            "changelog-producer": "full-compaction",
            "changelog-producer.row-deduplicate": str(dedup).lower(),
            **options,
        },
    )
    rng = random.Random(f"{engine}-{dedup}")
    model: State = {}
    consumer: State = {}
    for _ in range(6):
        before = dict(model)
        data, kinds = _random_round(rng, keys=12, rows=rng.randrange(1, 15))
        _commit(model, data, kinds, fold)
        snaps = _write(t, data, kinds)
        # every commit is a full compaction (no delta-commits): APPEND without changelog, COMPACT with it
        assert [s.commit_kind for s in snaps] == [CommitKind.APPEND, CommitKind.COMPACT]
        assert snaps[0].changelog_manifest_list is None
        assert _state(t) == model
        got = _changes(t, snaps[1])
        assert got == _expected(before, model, {r[0] for r in data}, dedup=dedup)
        for kind, k, a, s in got:  # a consumer of the changelog ends where the table is
            if kind in ("+I", "+U"):
                consumer[k] = (a, s)
            else:
                assert consumer.pop(k) == (a, s)
        assert consumer == model


def test_row_deduplicate_skips_unchanged_rows(catalog: FileSystemCatalog) -> None:
    opts = {"bucket": "1", "changelog-producer": "full-compaction"}
    plain = catalog.create_table("db.p", SCHEMA, primary_keys=["k"], options=opts)
    dedup = catalog.create_table(
        "db.d",
        SCHEMA,
        primary_keys=["k"],
        options={
            **opts,
            "changelog-producer.row-deduplicate": "true",
            "changelog-producer.row-deduplicate-ignore-fields": "s",
        },
    )
    for t in (plain, dedup):
        _write(t, [(1, 1, "a"), (2, 2, "b"), (3, 3, "c")], [INSERT] * 3)
    rows, kinds = [(1, 1, "a"), (2, 2, "changed-s"), (3, 30, "c")], [INSERT] * 3
    got_plain = _changes(plain, _write(plain, rows, kinds)[1])
    got_dedup = _changes(dedup, _write(dedup, rows, kinds)[1])
    assert got_plain == [
        ("-U", 1, 1, "a"), ("+U", 1, 1, "a"),
        ("-U", 2, 2, "b"), ("+U", 2, 2, "changed-s"),
        ("-U", 3, 3, "c"), ("+U", 3, 30, "c"),
    ]  # fmt: skip
    # key 1 is equal, key 2 differs only in the ignored field 's'
    assert got_dedup == [("-U", 3, 3, "c"), ("+U", 3, 30, "c")]


def test_multi_bucket_changelog_and_files(catalog: FileSystemCatalog) -> None:
    from tests.unit.paimon_core.maintenance.expiry_helpers import unreferenced_files

    t = catalog.create_table(
        "db.mb", SCHEMA, primary_keys=["k"], options={"bucket": "3", "changelog-producer": "full-compaction"}
    )
    _write(t, [(k, k, "v0") for k in range(30)], [INSERT] * 30)
    snaps = _write(t, [(k, k + 1, "v1") for k in range(0, 30, 3)] + [(1, None, None)], [INSERT] * 10 + [DELETE])
    got = sorted(_changes(t, snaps[1]), key=lambda r: (r[1], r[0] != "-U"))
    want = [("-D", 1, 1, "v0")]
    for k in range(0, 30, 3):
        want += [("-U", k, k, "v0"), ("+U", k, k + 1, "v1")]
    assert got == sorted(want, key=lambda r: (r[1], r[0] != "-U"))
    compact = snaps[1]
    assert compact.changelog_record_count == len(want)
    assert compact.changelog_manifest_list is not None
    scan = t.new_file_store_scan()
    changelog_files = [e.file for e in scan.read_entries(scan.read_list(compact.changelog_manifest_list))]
    assert changelog_files and all(f.file_name.startswith("changelog-") for f in changelog_files)
    assert unreferenced_files(t) == set()  # every changelog file is referenced, nothing left behind
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than="2999-01-01T00:00:00")
    assert unreferenced_files(t) == set()


def test_dedicated_full_compaction_produces_the_changelog(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table(
        "db.wo",
        SCHEMA,
        primary_keys=["k"],
        options={"bucket": "1", "changelog-producer": "full-compaction", "write-only": "true"},
    )
    _write(t, [(1, 1, "a"), (2, 2, "b")], [INSERT] * 2)
    snaps = _write(t, [(1, 10, "a"), (2, None, None), (3, 3, "c")], [INSERT, DELETE, INSERT])
    assert [s.commit_kind for s in snaps] == [CommitKind.APPEND]  # write-only: no compaction, no changelog
    result = t.maintenance.compact(compact_strategy="full")
    assert result.snapshot_id is not None
    got = _changes(t, t.snapshot_manager.snapshot(result.snapshot_id))
    assert got == [("+I", 1, 10, "a"), ("+I", 3, 3, "c")]  # first full compaction: everything is new
    _write(t, [(1, 11, "a"), (4, 4, "d")], [INSERT] * 2)
    result = t.maintenance.compact(compact_strategy="minor")  # 2 runs, below the trigger: nothing
    assert result.snapshot_id is None
    result = t.maintenance.compact(compact_strategy="full")
    got = _changes(t, t.snapshot_manager.snapshot(result.snapshot_id))  # type: ignore[arg-type]
    assert got == [("-U", 1, 10, "a"), ("+U", 1, 11, "a"), ("+I", 4, 4, "d")]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (("merge-engine", "first-row"), "first-row merge engine supports only 'none' and 'lookup'"),
        (("deletion-vectors.enabled", "true"), "deletion vectors mode is only supported for"),
    ],
)
def test_combinations_java_refuses_are_refused(
    catalog: FileSystemCatalog, option: tuple[str, str], message: str
) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        catalog.create_table(
            "db.fr",
            SCHEMA,
            primary_keys=["k"],
            options={"bucket": "1", option[0]: option[1], "changelog-producer": "full-compaction"},
        )
    assert not catalog.table_exists("db.fr")
