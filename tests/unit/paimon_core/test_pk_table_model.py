"""Model-based property test of whole primary-key tables (writer + commit + merge-on-read).

Random sequences of commits, each a batch of +I/+U/-D rows over a small key space
(so keys repeat within a batch, across buffer spills, across commits and buckets),
are written to a real table and compared with a plain-Python model of the engine.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from paimon_core import FileSystemCatalog

KEYS = st.integers(min_value=0, max_value=12)
VALUES = st.one_of(st.none(), st.integers(min_value=-50, max_value=50))
ROW = st.tuples(st.sampled_from(["+I", "+U", "-D"]), KEYS, VALUES, VALUES)
COMMITS = st.lists(st.lists(ROW, min_size=1, max_size=25), min_size=1, max_size=5)


Row = tuple[str, Any, Any]  # (kind, a, b)


def _java_merge(engine: str, rs: list[Row]) -> Row:
    """One merge of a key's rows, as Java's merge function wrapper does it."""
    if len(rs) == 1:
        return rs[0]  # single rows are passed through unmerged (ReducerMergeFunctionWrapper)
    if engine == "deduplicate":
        return rs[-1]
    if engine == "partial-update":  # ignore-delete: the writer never stores retractions
        # The first row initializes the row even when it is a retraction (initRow); only
        # files of Paimon 0.7- hold retractions here, so this branch is Java's, not ours.
        kind0, va, vb = rs[0]
        met_insert = kind0 != "-D"
        for kind, a, b in rs[1:]:
            if kind == "-D":
                continue
            met_insert = True
            va = a if a is not None else va
            vb = b if b is not None else vb
        return ("+I" if met_insert else "-D", va, vb)
    sa: Any = None  # aggregation: a = sum (retracts), b = max (ignore-retract)
    mb: Any = None
    for kind, a, b in rs:
        if a is not None:
            sa = (-a if kind == "-D" else a) if sa is None else (sa - a if kind == "-D" else sa + a)
        if kind != "-D" and b is not None:
            mb = b if mb is None else max(mb, b)
    return ("+I", sa, mb)


def _model(engine: str, commits: list[list[tuple[str, int, Any, Any]]]) -> dict[int, tuple[Any, Any]]:
    """Java's two merges: each commit's write buffer merges its rows per key (one flush per
    commit here), then the read merges the flushed rows of all commits; retractions drop."""
    flushed: dict[int, list[Row]] = {}
    for batch in commits:
        per_key: dict[int, list[Row]] = {}
        for kind, k, a, b in batch:
            if engine == "partial-update" and kind == "-D":
                continue  # Java's RowKindFilter: ignore-delete drops retractions before the buffer
            per_key.setdefault(k, []).append((kind, a, b))
        for k, rs in per_key.items():
            flushed.setdefault(k, []).append(_java_merge(engine, rs))
    out: dict[int, tuple[Any, Any]] = {}
    for k, rs in flushed.items():
        kind, a, b = _java_merge(engine, rs)
        if kind != "-D":
            out[k] = (a, b)
    return out


ENGINE_OPTIONS = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update", "ignore-delete": "true"},
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.a.aggregate-function": "sum",
        "fields.b.aggregate-function": "max",
        "fields.b.ignore-retract": "true",
    },
}


@settings(max_examples=int(os.environ.get("MODEL_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(engine=st.sampled_from(sorted(ENGINE_OPTIONS)), commits=COMMITS, spill=st.booleans())
# a leading -D with ignore-delete: dropped by the writer, so it cannot initialise the row
@example(engine="partial-update", commits=[[("-D", 1, None, 0), ("+I", 1, None, None)]], spill=False)
def test_table_matches_model(engine: str, commits: list[list[tuple[str, int, Any, Any]]], spill: bool) -> None:
    # Partial-update results depend on where flushes cut a commit (as in Java); spills
    # make those cuts depend on byte counts, so the model covers it without spills.
    assume(not (spill and engine == "partial-update"))
    cat = FileSystemCatalog(f"memory://model-{uuid.uuid4().hex}")
    cat.create_database("db")
    schema = pa.schema([("k", pa.int64()), ("a", pa.int64()), ("b", pa.int64()), ("op", pa.string())])
    options = {"bucket": "2", "rowkind.field": "op", **ENGINE_OPTIONS[engine]}
    if spill:
        options["write-buffer-size"] = "1 kb"  # many level-0 runs per commit
    t = cat.create_table("db.t", schema, primary_keys=["k"], options=options)
    for batch in commits:
        w_builder = t.new_batch_write_builder()
        w = w_builder.new_write()
        for row in batch:  # one write call per row: exercises buffering order
            kind, k, a, b = row
            w.write_arrow(pa.table({"k": pa.array([k], pa.int64()), "a": pa.array([a], pa.int64()),
                                    "b": pa.array([b], pa.int64()), "op": [kind]}))
        w_builder.new_commit().commit(w.prepare_commit())
    got = t.to_arrow().sort_by("k")
    got_state = {
        k: (a, b)
        for k, a, b in zip(got.column("k").to_pylist(), got.column("a").to_pylist(), got.column("b").to_pylist(), strict=True)
    }
    assert got_state == _model(engine, commits)
