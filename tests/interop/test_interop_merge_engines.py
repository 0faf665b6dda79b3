"""Merge engines across engines: paimon_core <-> pypaimon 2.1.0 / pypaimon-rust 0.4.0, both directions.

Every case is a primary-key table, a few commits with overlapping keys, nulls in values, keys repeated
inside one commit (so the writer's own buffer merges them) and row kinds through the ``rowkind.field``
column ``op``, and the merged result written out by hand from Java's MergeFunction semantics
(paimon-core ``mergetree/compact/...``). ``op`` is an ordinary value column that the engines merge
like the others; it is left out of the comparisons.

* ``test_we_write_peers_read_merged``: we commit, every peer that supports the case reads it;
  their answers, ours and the expected rows must all be equal.
* ``test_peer_writes_we_read_merged``: a peer commits (where it can write the case), we read;
  then we commit more on top and every reader reads our files merged with the peer's.

A case lists only the peers that can do it. What a peer refuses or gets wrong is pinned in the small
tests at the end (each docstring says why), so the gaps stay visible instead of skipped. Tests marked
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest
from peers import Peer, PeerError

from paimon_core import FileSystemCatalog
from paimon_core.mergetree.errors import MergeError

TABLE = "db.t"
OP = "op"  # the rowkind.field column of every table here

# A commit is a list of rows; each row is (row kind, *values in schema order without ``op``).
Row = tuple[Any, ...]
Commit = Sequence[Row]


@dataclass(frozen=True)
class Case:
    id: str
    schema: pa.Schema
    options: dict[str, str]
    commits: tuple[Commit, ...]
    expected: list[Row]  # merged rows (values without ``op``), sorted by primary key
    more: tuple[Commit, ...]  # what we commit on top of a peer's table
    expected_more: list[Row]
    readers: tuple[str, ...]  # peers that read this case correctly
    writers: tuple[str, ...]  # peers that write it
    primary_keys: tuple[str, ...] = ("id",)
    partition_keys: tuple[str, ...] = ()

    @property
    def table_options(self) -> dict[str, str]:
        return {"bucket": "2", "rowkind.field": OP, **self.options}


BOTH = ("pypaimon", "rust")
RUST = ("rust",)


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([*fields, (OP, pa.string())])


def _batch(schema: pa.Schema, rows: Commit) -> pa.Table:
    names = [n for n in schema.names if n != OP]
    cols = {n: pa.array([r[1 + i] for r in rows], schema.field(n).type) for i, n in enumerate(names)}
    cols[OP] = pa.array([r[0] for r in rows], pa.string())
    return pa.table(cols, schema=schema)


def _merged(t: pa.Table, schema: pa.Schema, keys: Sequence[str]) -> list[Row]:
    names = [n for n in schema.names if n != OP]
    assert sorted(t.column_names) == sorted(schema.names)
    rows = [tuple(r[n] for n in names) for r in t.to_pylist()]
    return sorted(rows, key=lambda r: tuple(r[names.index(k)] for k in keys))


def _peer(request: pytest.FixtureRequest, engine: str) -> Peer:
    peer = request.getfixturevalue(f"{engine}_peer")
    assert isinstance(peer, Peer)
    return peer


def _read_all(warehouse: str, case: Case, readers: Mapping[str, Peer]) -> dict[str, list[Row]]:
    """paimon_core's read and each reader's read of the merged table."""
    ours = FileSystemCatalog(warehouse).get_table(TABLE).to_arrow()
    out = {"paimon_core": _merged(ours, case.schema, case.primary_keys)}
    for engine, peer in readers.items():
        out[engine] = _merged(peer.read(warehouse, TABLE), case.schema, case.primary_keys)
    return out


def _readers(request: pytest.FixtureRequest, case: Case) -> dict[str, Peer]:
    return {engine: _peer(request, engine) for engine in case.readers}


# -------------------------------------------------------------------------------------------------
# partial-update
# -------------------------------------------------------------------------------------------------

PU_SCHEMA = _schema(("id", pa.int64()), ("a", pa.int64()), ("b", pa.string()), ("c", pa.float64()))
PU_C1: Commit = [("+I", 1, 10, "x", None), ("+I", 2, None, "y", 2.0), ("+I", 3, 30, None, None)]

PARTIAL_UPDATE = Case(
    "partial-update",
    PU_SCHEMA,
    {"merge-engine": "partial-update"},
    commits=(
        PU_C1,
        [("+I", 1, None, "x2", 1.5), ("+I", 2, 20, None, None), ("+I", 4, 40, None, 4.0),
         ("+I", 1, 11, None, None)],  # id 1 twice in one commit: the writer's buffer merges it
        [("+I", 3, None, None, 3.5), ("+U", 2, None, "y3", None)],
    ),
    # per field: the last non-null value
    expected=[(1, 11, "x2", 1.5), (2, 20, "y3", 2.0), (3, 30, None, 3.5), (4, 40, None, 4.0)],
    more=([("+I", 4, None, "d", None), ("+I", 5, 50, None, None)],),
    expected_more=[(1, 11, "x2", 1.5), (2, 20, "y3", 2.0), (3, 30, None, 3.5), (4, 40, "d", 4.0),
                   (5, 50, None, None)],
    readers=BOTH,
    writers=BOTH,
)

PARTIAL_UPDATE_IGNORE_DELETE = Case(
    "partial-update-ignore-delete",
    PU_SCHEMA,
    {"merge-engine": "partial-update", "ignore-delete": "true"},
    commits=(
        PU_C1,
        [("+I", 1, None, "x2", None), ("-D", 2, None, None, None), ("-U", 3, 31, None, None)],
        [("+U", 3, None, None, 3.5)],
    ),
    # -D / -U rows are dropped (Java: by the writer's RowKindFilter, and by the merge function)
    expected=[(1, 10, "x2", None), (2, None, "y", 2.0), (3, 30, None, 3.5)],
    more=([("-D", 2, None, None, None), ("+I", 5, 50, "e", None)],),
    expected_more=[(1, 10, "x2", None), (2, None, "y", 2.0), (3, 30, None, 3.5), (5, 50, "e", None)],
    readers=RUST,
    writers=RUST,
)

PARTIAL_UPDATE_REMOVE_ON_DELETE = Case(
    "partial-update-remove-record-on-delete",
    PU_SCHEMA,
    {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
    commits=(
        PU_C1,
        [("-D", 2, 99, None, None), ("+I", 1, None, "x2", None)],
        # Java re-starts a deleted key from the -D row's values (initRow(kv.value())), so a = 99
        [("+I", 2, None, "z", None)],
    ),
    expected=[(1, 10, "x2", None), (2, 99, "z", None), (3, 30, None, None)],
    more=([("-D", 3, None, None, None)],),
    expected_more=[(1, 10, "x2", None), (2, 99, "z", None)],
    readers=RUST,
    writers=RUST,
)

SG_SCHEMA = _schema(("id", pa.int64()), ("a", pa.int64()), ("b", pa.string()), ("g1", pa.int64()),
                    ("c", pa.int64()), ("g2", pa.int64()))
SG_OPTIONS = {"merge-engine": "partial-update", "fields.g1.sequence-group": "a,b",
              "fields.g2.sequence-group": "c", "fields.c.aggregate-function": "sum"}
SG_COMMITS: tuple[Commit, ...] = (
    [("+I", 1, 10, "x", 1, 100, 1), ("+I", 2, 20, "y", 5, 200, 5)],
    # id 1: group g1 newer (whole group replaced, b becomes null), g2 older (sum still adds: aggReversed)
    # id 2: group g1 older (ignored), g2 newer with c null (sum keeps 200)
    [("+I", 1, 11, None, 2, 101, 0), ("+I", 2, 21, "y2", 4, None, 6)],
    # id 1: -D retracts group g1 (a, b -> null, g1 -> 3); g2 is null in the row: untouched
    # id 2: -U retracts group g2 only (sum retract: 200 - 50)
    [("-D", 1, None, None, 3, None, None), ("-U", 2, None, None, None, 50, 7)],
)

PARTIAL_UPDATE_SEQUENCE_GROUP = Case(
    "partial-update-sequence-group",
    SG_SCHEMA,
    SG_OPTIONS,
    commits=SG_COMMITS,
    expected=[(1, None, None, 3, 201, 1), (2, 20, "y", 5, 150, 7)],
    more=([("+I", 2, 22, "m", 6, 1, 8)],),
    expected_more=[(1, None, None, 3, 201, 1), (2, 22, "m", 6, 151, 8)],
    readers=RUST,
    writers=RUST,
)

PARTIAL_UPDATE_REMOVE_ON_SEQUENCE_GROUP = Case(
    "partial-update-remove-record-on-sequence-group",
    SG_SCHEMA,
    {**SG_OPTIONS, "partial-update.remove-record-on-sequence-group": "g1"},
    commits=SG_COMMITS,
    # id 1's -D hits group g1 -> the whole row goes; id 2's -U is not a delete: as above
    expected=[(2, 20, "y", 5, 150, 7)],
    # re-insert: starts from the -D row (g1 = 3), g2 null sorts first
    more=([("+I", 1, 12, "n", 4, 7, 2)],),
    expected_more=[(1, 12, "n", 4, 7, 2), (2, 20, "y", 5, 150, 7)],
    readers=RUST,
    writers=RUST,
)

# -------------------------------------------------------------------------------------------------
# aggregation
# -------------------------------------------------------------------------------------------------

AGG_SCHEMA = _schema(("id", pa.int64()), ("s", pa.int64()), ("mx", pa.int32()), ("mn", pa.float64()),
                     ("lnn", pa.string()), ("la", pa.string()), ("bo", pa.bool_()),
                     ("co", pa.list_(pa.int32())), ("d", pa.int64()))
AGG_OPTIONS = {
    "merge-engine": "aggregation",
    "fields.s.aggregate-function": "sum",
    "fields.mx.aggregate-function": "max",
    "fields.mn.aggregate-function": "min",
    "fields.lnn.aggregate-function": "last_non_null_value",
    "fields.la.aggregate-function": "listagg",
    "fields.bo.aggregate-function": "bool_or",
    "fields.co.aggregate-function": "collect",
}  # d (and op): no function -> the default last_non_null_value
AGG_COMMITS: tuple[Commit, ...] = (
    [("+I", 1, 10, 5, 1.5, "a", "x", False, [1, 2], 7),
     ("+I", 2, 20, None, 2.5, None, "p", None, None, None),
     ("+I", 3, 1, 1, 1.0, "z", None, True, [9], 1)],
    [("+I", 1, 5, 3, 0.5, None, "y", None, [2, 3], 8),
     ("+I", 2, None, 7, None, "b", None, True, [4], 2)],
    [("+I", 1, None, 9, None, "c", "", True, [], None),  # listagg skips blank strings
     ("+I", 4, 4, 4, 4.0, "d", "w", False, [4], 4),
     ("+I", 4, 1, 2, 8.0, None, "v", True, None, None)],  # id 4 twice in one commit
)
AGG_MORE: tuple[Commit, ...] = ([("+I", 2, 1, 100, -1.0, None, "q", False, [5], None)],)

AGGREGATION = Case(
    "aggregation",
    AGG_SCHEMA,
    AGG_OPTIONS,
    commits=AGG_COMMITS,
    expected=[(1, 15, 9, 0.5, "c", "x,y", True, [1, 2, 2, 3], 8),
              (2, 20, 7, 2.5, "b", "p", True, [4], 2),
              (3, 1, 1, 1.0, "z", None, True, [9], 1),
              (4, 5, 4, 4.0, "d", "w,v", True, [4], 4)],
    more=AGG_MORE,
    expected_more=[(1, 15, 9, 0.5, "c", "x,y", True, [1, 2, 2, 3], 8),
                   (2, 21, 100, -1.0, "b", "p,q", True, [4, 5], 2),
                   (3, 1, 1, 1.0, "z", None, True, [9], 1),
                   (4, 5, 4, 4.0, "d", "w,v", True, [4], 4)],
    readers=BOTH,
    writers=BOTH,
)

AGGREGATION_DEFAULT_FUNCTION = Case(
    "aggregation-default-function",
    AGG_SCHEMA,
    # s and d take the default sum; the string column op must then name its own function
    {**{k: v for k, v in AGG_OPTIONS.items() if k != "fields.s.aggregate-function"},
     "fields.default-aggregate-function": "sum", f"fields.{OP}.aggregate-function": "last_value"},
    commits=AGG_COMMITS,
    expected=[(1, 15, 9, 0.5, "c", "x,y", True, [1, 2, 2, 3], 15),
              (2, 20, 7, 2.5, "b", "p", True, [4], 2),
              (3, 1, 1, 1.0, "z", None, True, [9], 1),
              (4, 5, 4, 4.0, "d", "w,v", True, [4], 4)],
    more=AGG_MORE,
    expected_more=[(1, 15, 9, 0.5, "c", "x,y", True, [1, 2, 2, 3], 15),
                   (2, 21, 100, -1.0, "b", "p,q", True, [4, 5], 2),
                   (3, 1, 1, 1.0, "z", None, True, [9], 1),
                   (4, 5, 4, 4.0, "d", "w,v", True, [4], 4)],
    readers=BOTH,
    writers=BOTH,
)

DISTINCT_SCHEMA = _schema(("id", pa.int64()), ("la", pa.string()), ("co", pa.list_(pa.int32())))

AGGREGATION_DISTINCT = Case(
    "aggregation-distinct",
    DISTINCT_SCHEMA,
    {"merge-engine": "aggregation", "fields.la.aggregate-function": "listagg", "fields.la.distinct": "true",
     "fields.la.list-agg-delimiter": "|", "fields.co.aggregate-function": "collect",
     "fields.co.distinct": "true"},
    # Every key gets at least two rows: see test_pypaimon_collect_distinct_folds_lone_rows. Java's
    # distinct collect uses a HashSet; with small ints in ascending first-seen order its order is the same.
    commits=(
        [("+I", 1, "x", [1, 2]), ("+I", 2, "p", None)],
        [("+I", 1, "y|x", [2, 3]), ("+I", 2, "p|q|p", [4, 4])],
        [("+I", 1, None, [3, 1, 4])],
    ),
    expected=[(1, "x|y", [1, 2, 3, 4]), (2, "p|q", [4])],
    more=([("+I", 2, "q|r", [5, 4])],),
    expected_more=[(1, "x|y", [1, 2, 3, 4]), (2, "p|q|r", [4, 5])],
    readers=BOTH,
    writers=BOTH,
)

SEQ_AGG_SCHEMA = _schema(("id", pa.int64()), ("ts", pa.int64()), ("lv", pa.string()), ("la", pa.string()),
                         ("fv", pa.int64()), ("fnn", pa.int64()), ("pr", pa.float64()), ("ba", pa.bool_()),
                         ("s", pa.int64()))

AGGREGATION_SEQUENCE_FIELD = Case(
    "aggregation-sequence-field",
    SEQ_AGG_SCHEMA,
    {"merge-engine": "aggregation", "sequence.field": "ts", "fields.lv.aggregate-function": "last_value",
     "fields.la.aggregate-function": "listagg", "fields.fv.aggregate-function": "first_value",
     "fields.fnn.aggregate-function": "first_non_null_value", "fields.pr.aggregate-function": "product",
     "fields.ba.aggregate-function": "bool_and", "fields.s.aggregate-function": "sum"},
    # rows are folded in ts order, not commit order (ts itself: last value in that order)
    commits=(
        [("+I", 1, 20, "m", "b", None, None, 2.0, True, None),
         ("+I", 2, 5, "x", "x", 1, 1, None, None, None)],
        [("+I", 1, 10, None, "a", 7, 7, 3.0, True, None),
         ("+I", 2, 6, None, None, None, None, 4.0, True, None)],
        [("+I", 1, 30, "n", "c", 8, 8, 0.5, False, None)],
    ),
    expected=[(1, 30, "n", "a,b,c", 7, 7, 3.0, False, None), (2, 6, None, "x", 1, 1, 4.0, True, None)],
    more=([("+I", 2, 4, "early", "w", 9, 9, 2.0, False, 3)],),  # ts 4: sorts before everything of id 2
    expected_more=[(1, 30, "n", "a,b,c", 7, 7, 3.0, False, None), (2, 6, None, "w,x", 9, 9, 8.0, False, 3)],
    readers=BOTH,
    writers=BOTH,
)

RETRACT_SCHEMA = _schema(("id", pa.int64()), ("s", pa.int64()), ("mx", pa.int32()), ("lnn", pa.string()),
                         ("co", pa.list_(pa.int32())))
RETRACT_C1: Commit = [("+I", 1, 10, 5, "a", [1, 2]), ("+I", 2, 20, 6, "b", [3]), ("+I", 3, 30, 7, "c", [4])]
RETRACT_C2: Commit = [("+I", 1, 5, 8, None, [2, 5]), ("+I", 2, 1, 1, None, None)]

AGGREGATION_RETRACT = Case(
    "aggregation-retract",
    RETRACT_SCHEMA,
    {"merge-engine": "aggregation", "fields.s.aggregate-function": "sum",
     "fields.mx.aggregate-function": "max", "fields.mx.ignore-retract": "true",
     "fields.lnn.aggregate-function": "last_non_null_value", "fields.co.aggregate-function": "collect"},
    # sum subtracts, max ignores (ignore-retract), last_non_null_value -> null when the retracted value
    # is non-null, collect removes one occurrence per element; a lone retraction (id 5) stays a -D
    commits=(
        RETRACT_C1,
        RETRACT_C2,
        [("-U", 1, 3, 100, "zz", [2]), ("-D", 2, 20, 6, "b", [3]), ("-D", 5, 1, 1, "q", [1])],
    ),
    expected=[(1, 12, 8, None, [1, 2, 5]), (2, 1, 6, None, []), (3, 30, 7, "c", [4])],
    more=([("-U", 3, 5, 1, None, [4]), ("+I", 4, 1, 1, "d", [1])],),
    expected_more=[(1, 12, 8, None, [1, 2, 5]), (2, 1, 6, None, []), (3, 25, 7, "c", []),
                   (4, 1, 1, "d", [1])],
    readers=RUST,
    writers=RUST,
)

AGGREGATION_REMOVE_ON_DELETE = Case(
    "aggregation-remove-record-on-delete",
    RETRACT_SCHEMA,
    {"merge-engine": "aggregation", "aggregation.remove-record-on-delete": "true",
     "fields.s.aggregate-function": "sum", "fields.mx.aggregate-function": "last_value",
     "fields.lnn.aggregate-function": "last_non_null_value", "fields.co.aggregate-function": "collect"},
    commits=(RETRACT_C1, RETRACT_C2, [("-U", 1, 3, 100, "zz", [2]), ("-D", 2, 20, 6, "b", [3])]),
    expected=[(1, 12, None, None, [1, 2, 5]), (3, 30, 7, "c", [4])],
    # Java (AggregateMergeFunction.add): a -D resets the row to the -D row's values, and a later
    # insert aggregates onto them: s = 20 + 7, co = [3] + [7].
    more=([("+I", 2, 7, 7, "n", [7])],),
    expected_more=[(1, 12, None, None, [1, 2, 5]), (2, 27, 7, "n", [3, 7]), (3, 30, 7, "c", [4])],
    readers=RUST,
    writers=RUST,
)

# -------------------------------------------------------------------------------------------------
# deduplicate with sequence.field
# -------------------------------------------------------------------------------------------------

DEDUP_SEQUENCE_FIELD = Case(
    "deduplicate-sequence-field",
    _schema(("dt", pa.string()), ("id", pa.int64()), ("v", pa.string()), ("ts", pa.int64())),
    {"merge-engine": "deduplicate", "sequence.field": "ts"},
    commits=(
        [("+I", "p1", 1, "a", 10), ("+I", "p1", 2, "b", 10), ("+I", "p2", 3, "c", 10)],
        # older ts loses whatever the commit order: (1, a2) and (3, c0) are ignored
        [("+I", "p1", 1, "a2", 5), ("+U", "p1", 2, None, 20), ("+I", "p2", 4, "d", 1),
         ("+I", "p2", 3, "c0", 9)],
        # a delete wins only with a newer ts: 4 and 1 go, 3 and 2 stay
        [("-D", "p2", 3, None, 5), ("-D", "p2", 4, None, 2), ("-D", "p1", 2, None, 15),
         ("-D", "p1", 1, None, 11)],
    ),
    expected=[("p1", 2, None, 20), ("p2", 3, "c", 10)],
    # equal ts: the later write (higher system sequence number) wins
    more=([("+I", "p2", 4, "d2", 3), ("+U", "p2", 3, "c9", 10)],),
    expected_more=[("p1", 2, None, 20), ("p2", 3, "c9", 10), ("p2", 4, "d2", 3)],
    readers=BOTH,
    writers=BOTH,
    primary_keys=("dt", "id"),
    partition_keys=("dt",),
)

DEDUP_SEQUENCE_DESCENDING = Case(
    "deduplicate-sequence-field-descending",
    _schema(("id", pa.int64()), ("v", pa.string()), ("ts", pa.int64())),
    {"sequence.field": "ts", "sequence.field.sort-order": "descending"},  # the smallest ts wins
    commits=(
        [("+I", 1, "a", 10), ("+I", 2, "b", 10), ("+I", 3, "c", 10)],
        [("+I", 1, "a2", 5), ("+I", 2, None, 20), ("+I", 4, "d", 1)],
        [("-D", 3, None, 5), ("-D", 4, None, 2), ("-D", 2, None, 15)],
    ),
    expected=[(1, "a2", 5), (2, "b", 10), (4, "d", 1)],
    more=([("+I", 2, "b0", 9), ("-D", 4, None, 0)],),
    expected_more=[(1, "a2", 5), (2, "b0", 9)],
    readers=BOTH,
    writers=BOTH,
)

CASES = [
    PARTIAL_UPDATE,
    PARTIAL_UPDATE_IGNORE_DELETE,
    PARTIAL_UPDATE_REMOVE_ON_DELETE,
    PARTIAL_UPDATE_SEQUENCE_GROUP,
    PARTIAL_UPDATE_REMOVE_ON_SEQUENCE_GROUP,
    AGGREGATION,
    AGGREGATION_DEFAULT_FUNCTION,
    AGGREGATION_DISTINCT,
    AGGREGATION_SEQUENCE_FIELD,
    AGGREGATION_RETRACT,
    AGGREGATION_REMOVE_ON_DELETE,
    DEDUP_SEQUENCE_FIELD,
    DEDUP_SEQUENCE_DESCENDING,
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_we_write_peers_read_merged(case: Case, request: pytest.FixtureRequest, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table(TABLE, case.schema, primary_keys=case.primary_keys,
                         partition_keys=case.partition_keys, options=case.table_options)
    for commit in case.commits:
        t.write_arrow(_batch(case.schema, commit))
    got = _read_all(warehouse, case, _readers(request, case))
    assert got == dict.fromkeys(got, case.expected)


@pytest.mark.parametrize(
    ("case", "writer"), [pytest.param(c, w, id=f"{c.id}-{w}") for c in CASES for w in c.writers]
)
def test_peer_writes_we_read_merged(case: Case, writer: str, request: pytest.FixtureRequest,
                                    warehouse: str) -> None:
    peer = _peer(request, writer)
    peer.create_table(warehouse, TABLE, case.schema, primary_keys=case.primary_keys,
                      partition_keys=case.partition_keys, options=case.table_options)
    for commit in case.commits:
        peer.write(warehouse, TABLE, _batch(case.schema, commit))
    got = _read_all(warehouse, case, _readers(request, case))
    assert got == dict.fromkeys(got, case.expected)
    # We commit on top of their files; they read our files merged with theirs.
    t = FileSystemCatalog(warehouse).get_table(TABLE)
    for commit in case.more:
        t.write_arrow(_batch(case.schema, commit))
    got = _read_all(warehouse, case, _readers(request, case))
    assert got == dict.fromkeys(got, case.expected_more)


# -------------------------------------------------------------------------------------------------
# first-row: level-0 files are invisible to batch reads (Java semantics, every engine)
# -------------------------------------------------------------------------------------------------

FR_SCHEMA = _schema(("id", pa.int64()), ("v", pa.string()))
FR_OPTIONS = {"bucket": "2", "rowkind.field": OP, "merge-engine": "first-row", "write-only": "true"}  # level 0 stays level 0 (no writer compaction)
FR_COMMITS: tuple[Commit, ...] = ([("+I", 1, "a"), ("+I", 2, "b")], [("+I", 1, "a2"), ("+I", 3, None)])


@pytest.mark.parametrize("writer", ["paimon_core", "pypaimon", "rust"])
def test_first_row_level0_invisible_everywhere(writer: str, request: pytest.FixtureRequest,
                                               pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """first-row tables skip level-0 files on batch reads (Java: ``batchScanSkipLevel0``), and none of
    these engines compacts, so every read is empty, for anyone's files, until a Java compaction
    (which would give 1 -> a, 2 -> b, 3 -> null). The rows are on disk: the snapshot counts them."""
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    if writer == "paimon_core":
        t = cat.create_table(TABLE, FR_SCHEMA, primary_keys=["id"], options=FR_OPTIONS)
        for commit in FR_COMMITS:
            t.write_arrow(_batch(FR_SCHEMA, commit))
    else:
        peer = _peer(request, writer)
        peer.create_table(warehouse, TABLE, FR_SCHEMA, primary_keys=["id"], options=FR_OPTIONS)
        for commit in FR_COMMITS:
            peer.write(warehouse, TABLE, _batch(FR_SCHEMA, commit))
    assert pypaimon_peer.list_snapshots(warehouse, TABLE)[-1]["total_record_count"] == 4

    def reads() -> dict[str, int]:
        return {"paimon_core": cat.get_table(TABLE).to_arrow().num_rows,
                "pypaimon": pypaimon_peer.read(warehouse, TABLE).num_rows,
                "rust": rust_peer.read(warehouse, TABLE).num_rows}

    assert reads() == {"paimon_core": 0, "pypaimon": 0, "rust": 0}
    cat.get_table(TABLE).write_arrow(_batch(FR_SCHEMA, [("+I", 4, "d"), ("+I", 1, "a3")]))
    assert pypaimon_peer.list_snapshots(warehouse, TABLE)[-1]["total_record_count"] == 6
    assert reads() == {"paimon_core": 0, "pypaimon": 0, "rust": 0}


def test_first_row_lone_delete(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """first-row without ignore-delete rejects retractions only when it merges them (Java's
    FirstRowMergeFunction). Java's write buffer hands a key's lone record through unmerged
    (ReducerMergeFunctionWrapper), so a lone -D is written; we and pypaimon-rust do the same.
    pypaimon 2.1.0 runs its merge function on single-row runs too and refuses the write."""
    batch = _batch(FR_SCHEMA, [("+I", 1, "a"), ("-D", 2, None)])
    for engine, peer in (("pypaimon", pypaimon_peer), ("rust", rust_peer)):
        peer.create_table(warehouse, f"db.{engine}", FR_SCHEMA, primary_keys=["id"], options=FR_OPTIONS)
    with pytest.raises(PeerError, match="First row merge engine can not accept DELETE"):
        pypaimon_peer.write(warehouse, "db.pypaimon", batch)
    rust_peer.write(warehouse, "db.rust", batch)
    cat = FileSystemCatalog(warehouse)
    cat.create_table("db.ours", FR_SCHEMA, primary_keys=["id"], options=FR_OPTIONS).write_arrow(batch)
    for name in ("rust", "ours"):
        assert pypaimon_peer.list_snapshots(warehouse, f"db.{name}")[-1]["total_record_count"] == 2
        assert cat.get_table(f"db.{name}").to_arrow().num_rows == 0  # level 0: invisible
        assert rust_peer.read(warehouse, f"db.{name}").num_rows == 0


# -------------------------------------------------------------------------------------------------
# Java semantics every engine shares, and what the peers refuse or get wrong
# -------------------------------------------------------------------------------------------------

def test_partial_update_merged_delete_fails_everywhere(pypaimon_peer: Peer, rust_peer: Peer,
                                                       warehouse: str) -> None:
    """Plain partial-update cannot merge a delete (Java throws "By default, Partial update can not
    accept delete records"); every engine refuses the read rather than guess. The write itself is
    accepted, as in Java, because the -D is alone in its commit."""
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table(TABLE, PU_SCHEMA, primary_keys=["id"], options=PARTIAL_UPDATE.table_options)
    t.write_arrow(_batch(PU_SCHEMA, PU_C1))
    t.write_arrow(_batch(PU_SCHEMA, [("-D", 1, None, None, None)]))
    with pytest.raises(MergeError, match="Partial update can not accept delete records"):
        t.to_arrow()
    with pytest.raises(PeerError, match="NotImplementedError: PartialUpdateMergeFunction received a -D"):
        pypaimon_peer.read(warehouse, TABLE)
    with pytest.raises(PeerError, match="partial-update does not support DELETE"):
        rust_peer.read(warehouse, TABLE)


def test_pypaimon_fails_on_lone_retractions(pypaimon_peer: Peer, rust_peer: Peer, warehouse: str) -> None:
    """A retraction with nothing to merge with (a key's only record) is returned as is by Java
    (ReducerMergeFunctionWrapper) and then dropped from the batch read, on partial-update and
    aggregation tables alike: we and pypaimon-rust read the other keys. pypaimon 2.1.0 calls its merge
    function on every key and fails: it cannot read such a table at all."""
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    schema = _schema(("id", pa.int64()), ("a", pa.int64()))
    for name, options in (("pu", {"merge-engine": "partial-update"}),
                          ("agg", {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum"})):
        t = cat.create_table(f"db.{name}", schema, primary_keys=["id"],
                             options={"bucket": "1", "rowkind.field": OP, **options})
        t.write_arrow(_batch(schema, [("+I", 1, 1)]))
        t.write_arrow(_batch(schema, [("-D", 2, 5), ("-U", 3, 7)]))
        for got in (t.to_arrow(), rust_peer.read(warehouse, f"db.{name}")):
            assert _merged(got, schema, ["id"]) == [(1, 1)]
        with pytest.raises(PeerError, match="NotImplementedError: .*MergeFunction received a -D row"):
            pypaimon_peer.read(warehouse, f"db.{name}")


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id) for c in (PARTIAL_UPDATE_IGNORE_DELETE, PARTIAL_UPDATE_REMOVE_ON_DELETE,
                                         PARTIAL_UPDATE_SEQUENCE_GROUP, AGGREGATION_RETRACT,
                                         AGGREGATION_REMOVE_ON_DELETE)],
)
def test_pypaimon_refuses_delete_handling_options(case: Case, pypaimon_peer: Peer, warehouse: str) -> None:
    """pypaimon 2.1.0 implements partial-update as last-non-null only (no ignore-delete,
    remove-record-on-*, sequence-group or per-field aggregation) and aggregation without
    retraction options (ignore-retract, remove-record-on-delete): it refuses to read or write such
    tables (NotImplementedError) instead of merging them wrongly. pypaimon-rust and we do both."""
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table(TABLE, case.schema, primary_keys=case.primary_keys, options=case.table_options)
    t.write_arrow(_batch(case.schema, case.commits[0]))
    with pytest.raises(PeerError, match="NotImplementedError: merge-engine .* not yet implement"):
        pypaimon_peer.read(warehouse, TABLE)
    with pytest.raises(PeerError, match="NotImplementedError: merge-engine .* not yet implement"):
        pypaimon_peer.write(warehouse, TABLE, _batch(case.schema, case.commits[0]))


def test_pypaimon_aggregation_refuses_retractions(pypaimon_peer: Peer, rust_peer: Peer,
                                                  warehouse: str) -> None:
    """Java's aggregation engine retracts -U/-D rows field by field (sum subtracts, ...). pypaimon
    2.1.0 raises on any retraction, on read and on write; pypaimon-rust and we retract
    (aggregation-retract above)."""
    opts = {"merge-engine": "aggregation", "fields.s.aggregate-function": "sum",
            "fields.lnn.aggregate-function": "last_non_null_value", "fields.co.aggregate-function": "collect"}
    case = Case("sum-retract", RETRACT_SCHEMA, opts, (RETRACT_C1, RETRACT_C2,
                [("-U", 1, 3, 100, "zz", [2]), ("-D", 2, 20, 6, "b", [3])]),
                # mx uses the default last_non_null_value: its retraction nulls it
                expected=[(1, 12, None, None, [1, 2, 5]), (2, 1, None, None, []), (3, 30, 7, "c", [4])],
                more=(), expected_more=[], readers=RUST, writers=RUST)
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table(TABLE, case.schema, primary_keys=["id"], options=case.table_options)
    for commit in case.commits:
        t.write_arrow(_batch(case.schema, commit))
    got = _read_all(warehouse, case, {"rust": rust_peer})
    assert got == {"paimon_core": case.expected, "rust": case.expected}
    with pytest.raises(PeerError, match="AggregateMergeFunction received a -U row"):
        pypaimon_peer.read(warehouse, TABLE)
    pypaimon_peer.create_table(warehouse, "db.theirs", case.schema, primary_keys=["id"],
                               options=case.table_options)
    pypaimon_peer.write(warehouse, "db.theirs", _batch(case.schema, RETRACT_C1))
    with pytest.raises(PeerError, match="AggregateMergeFunction received a -U row"):
        pypaimon_peer.write(warehouse, "db.theirs", _batch(case.schema, case.commits[2]))


def test_pypaimon_collect_distinct_folds_lone_rows(pypaimon_peer: Peer, rust_peer: Peer,
                                                   warehouse: str) -> None:
    """Java never runs the merge function on a key's lone record (ReducerMergeFunctionWrapper, in the
    write buffer and in merging reads), so a distinct ``collect`` of a single [9, 8, 8] stays
    [9, 8, 8]; we and pypaimon-rust agree. pypaimon 2.1.0 folds single-row runs: its writer stores
    [9, 8] (when the buffer holds more than one row), and its merging read of our file returns [9, 8]
    as soon as another file overlaps the bucket, while its raw read returns [9, 8, 8]."""
    schema = _schema(("id", pa.int64()), ("co", pa.list_(pa.int32())))
    opts = {"bucket": "1", "rowkind.field": OP, "merge-engine": "aggregation",
            "fields.co.aggregate-function": "collect", "fields.co.distinct": "true"}
    c1 = _batch(schema, [("+I", 1, [9, 8, 8]), ("+I", 2, [1])])
    c2 = _batch(schema, [("+I", 2, [1, 1])])
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.ours", schema, primary_keys=["id"], options=opts)
    t.write_arrow(c1)
    ours_raw = pypaimon_peer.read(warehouse, "db.ours")
    t.write_arrow(c2)
    assert _merged(ours_raw, schema, ["id"]) == [(1, [9, 8, 8]), (2, [1])]
    for got in (t.to_arrow(), rust_peer.read(warehouse, "db.ours")):
        assert _merged(got, schema, ["id"]) == [(1, [9, 8, 8]), (2, [1])]
    assert _merged(pypaimon_peer.read(warehouse, "db.ours"), schema, ["id"]) == [(1, [9, 8]), (2, [1])]
    pypaimon_peer.create_table(warehouse, "db.theirs", schema, primary_keys=["id"], options=opts)
    pypaimon_peer.write(warehouse, "db.theirs", c1)
    for got in (cat.get_table("db.theirs").to_arrow(), rust_peer.read(warehouse, "db.theirs")):
        assert _merged(got, schema, ["id"]) == [(1, [9, 8]), (2, [1])]  # what it wrote


# -------------------------------------------------------------------------------------------------
# Former paimon_core discrepancies from Java (RowKindFilter at write time; ignore-delete fallback keys)
# -------------------------------------------------------------------------------------------------



IGNORED_RETRACTIONS = {
    # aggregation does not look at ignore-delete when merging: only the writer's filter applies it
    "aggregation-ignore-delete": (
        {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "ignore-delete": "true"},
        [(1, 10), (2, 20)],
    ),
    # no merge function knows ignore-update-before: only the writer's filter applies it
    "deduplicate-ignore-update-before": ({"ignore-update-before": "true"}, [(2, 20)]),
}


@pytest.mark.parametrize(
    ("writer", "options", "expected"),
    [
        pytest.param(w, o, e, id=f"{name}-{w}")
        for name, (o, e) in IGNORED_RETRACTIONS.items()
        for w in ("pypaimon", "rust", "paimon_core")
    ],
)
def test_ignored_retractions_are_dropped_by_the_writer(writer: str, options: dict[str, str],
                                                       expected: list[Row], request: pytest.FixtureRequest,
                                                       warehouse: str) -> None:
    """Java's TableWriteImpl drops -D rows under ignore-delete and -U rows under ignore-update-before
    before they reach a file (RowKindFilter), and both peers do the same. paimon_core writes them,
    and since aggregation retracts whatever is in the files and no merge knows ignore-update-before,
    its tables read differently, for us and for pypaimon-rust alike: sums 7 and 16 instead of 10 and
    20; no row instead of (2, 20). Minimal repro: the paimon_core parameters."""
    schema = _schema(("id", pa.int64()), ("a", pa.int64()))
    options = {"bucket": "1", "rowkind.field": OP, **options}
    commits = [_batch(schema, [("+I", 1, 10), ("+I", 2, 20)]), _batch(schema, [("-D", 1, 3), ("-U", 2, 4)])]
    if writer == "paimon_core":
        cat = FileSystemCatalog(warehouse)
        cat.create_database("db")
        t = cat.create_table(TABLE, schema, primary_keys=["id"], options=options)
        for c in commits:
            t.write_arrow(c)
    else:
        peer = _peer(request, writer)
        peer.create_table(warehouse, TABLE, schema, primary_keys=["id"], options=options)
        for c in commits:
            peer.write(warehouse, TABLE, c)
    ours = FileSystemCatalog(warehouse).get_table(TABLE).to_arrow()
    rust = _peer(request, "rust").read(warehouse, TABLE)
    assert {"paimon_core": _merged(ours, schema, ["id"]), "rust": _merged(rust, schema, ["id"])} == {
        "paimon_core": expected, "rust": expected}


@pytest.mark.parametrize("key", ["first-row.ignore-delete", "deduplicate.ignore-delete",
                                 "partial-update.ignore-delete"])
def test_ignore_delete_fallback_keys_accepted(key: str, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    cat.create_table(TABLE, PU_SCHEMA, primary_keys=["id"], options={"bucket": "1", key: "true"})


def test_ignore_delete_fallback_key_honoured_on_peer_tables(rust_peer: Peer, warehouse: str) -> None:
    """Java's CoreOptions.IGNORE_DELETE falls back to 'partial-update.ignore-delete' (and the first-row
    and deduplicate spellings). pypaimon-rust creates such a table; we read and extend it like Java."""
    opts = {"bucket": "2", "rowkind.field": OP, "merge-engine": "partial-update",
            "partial-update.ignore-delete": "true"}
    rust_peer.create_table(warehouse, TABLE, PU_SCHEMA, primary_keys=["id"], options=opts)
    rust_peer.write(warehouse, TABLE, _batch(PU_SCHEMA, PU_C1))
    t = FileSystemCatalog(warehouse).get_table(TABLE)
    t.write_arrow(_batch(PU_SCHEMA, [("-D", 1, None, None, None), ("+I", 2, 21, None, None)]))
    want = [(1, 10, "x", None), (2, 21, "y", 2.0), (3, 30, None, None)]
    for got in (t.to_arrow(), rust_peer.read(warehouse, TABLE)):
        assert _merged(got, PU_SCHEMA, ["id"]) == want
