"""The peers' side of each measurement; runs INSIDE the peer virtualenv (pyarrow 19).

    <peers-venv>/bin/python bench/peer_ops.py '{"op": "read", "engine": "pypaimon", ...}'

Imports only the standard library, pyarrow, pypaimon and pypaimon_rust (plus the sibling
``sidekit.py``, itself stdlib + pyarrow). Engines are called as in tests/interop/peer_driver.py:

* ``pypaimon``: ``CatalogFactory.create({"warehouse"}).get_table(name).copy(NATIVE_OFF)`` so every
  route (plan, read, write, commit) stays in pure Python, never through pypaimon_rust.
* ``rust``: ``pypaimon_rust.datafusion.PaimonCatalog``; writes go batch by batch into
  ``BatchTableWrite.write_arrow``.

Ops and result fields are those of ``bench/ours_ops.py`` (write, read, plan), plus ``info``
(versions). Imports, catalog and table handles and the input load happen before the timer.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

try:  # run as a script: this directory is sys.path[0]
    from sidekit import Checksum, Stopwatch, serve, stream_read  # type: ignore[import-not-found]
except ImportError:  # imported as bench.peer_ops (e.g. by a linter or a test)
    from bench.sidekit import Checksum, Stopwatch, serve, stream_read

#: Options that would route pypaimon through pypaimon_rust (as in peer_driver.py): "pypaimon"
#: must measure the pure-Python implementation although both packages live in this venv.
PYPAIMON_NATIVE_OFF = {
    "scan.native-plan.enabled": "false",
    "read.native.enabled": "false",
    "commit.native.enabled": "false",
    "write.native.enabled": "false",
}
_RUST_METHODS = {"=": "equal", "<": "lessThan", "<=": "lessOrEqual", ">": "greaterThan",
                 ">=": "greaterOrEqual"}
#: Data file names inside a serialized pypaimon_rust Split (its only view of the files).
_DATA_FILE = re.compile(rb"data-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d+\.\w+")


def _warehouse(spec: dict[str, Any]) -> str:
    return os.path.abspath(spec["warehouse"])  # pypaimon-rust needs absolute paths


# ---------------------------------------------------------------------------------------------
# pypaimon (pure Python)
# ---------------------------------------------------------------------------------------------

def _pp_table(spec: dict[str, Any]) -> Any:
    from pypaimon import CatalogFactory  # type: ignore[import-not-found]
    return CatalogFactory.create({"warehouse": _warehouse(spec)}).get_table(spec["table"]).copy(
        dict(PYPAIMON_NATIVE_OFF))


def _pp_read_builder(table: Any, conjuncts: Sequence[Sequence[Any]] | None) -> Any:
    from pypaimon.common.predicate_builder import PredicateBuilder  # type: ignore[import-not-found]
    rb = table.new_read_builder()
    if conjuncts:
        pb = rb.new_predicate_builder()
        makers = {"=": pb.equal, "<": pb.less_than, "<=": pb.less_or_equal, ">": pb.greater_than,
                  ">=": pb.greater_or_equal}
        preds = [makers[op](field, value) for op, field, value in conjuncts]
        rb = rb.with_filter(PredicateBuilder.and_predicates(preds))
    return rb


def _pp_plan_info(splits: Sequence[Any]) -> dict[str, int]:
    return {"splits": len(splits), "files": sum(len(s.files) for s in splits),
            "rows": sum(int(s.row_count) for s in splits)}


def _pp_write(spec: dict[str, Any], data: pa.Table) -> dict[str, Any]:
    table = _pp_table(spec)
    sw = Stopwatch()
    with sw.phase("write"):
        wb = table.new_batch_write_builder()
        write = wb.new_write()
        write.write_arrow(data)
        messages = write.prepare_commit()
        write.close()
    with sw.phase("commit"):
        commit = wb.new_commit()
        commit.commit(messages)
        commit.close()
    snap = table.snapshot_manager().get_latest_snapshot()
    return sw.result(rows=data.num_rows, snapshot_id=None if snap is None else snap.id)


def _pp_read(spec: dict[str, Any]) -> dict[str, Any]:
    table = _pp_table(spec)
    sw = Stopwatch()
    acc = Checksum()
    with sw.phase("plan"):
        rb = _pp_read_builder(table, spec.get("filter"))
        splits = rb.new_scan().plan().splits()
    if spec.get("mode", "table") == "stream":
        streamed = stream_read(lambda: rb.new_read().to_arrow_batch_reader(splits), sw)
    else:
        with sw.phase("read"):
            out = rb.new_read().to_arrow(splits)
        if out is not None:  # pypaimon returns None for an empty result
            acc.add(out)
        streamed = {"rows": acc.rows, "checksum": acc.result()}
    result = sw.result(plan=_pp_plan_info(splits), **streamed)
    if spec.get("pruning_baseline"):
        result["plan_unfiltered"] = _pp_plan_info(table.new_read_builder().new_scan().plan().splits())
    return result


def _pp_plan(spec: dict[str, Any]) -> dict[str, Any]:
    table = _pp_table(spec)
    sw = Stopwatch()
    with sw.phase("plan"):
        splits = table.new_read_builder().new_scan().plan().splits()
    info = _pp_plan_info(splits)
    return sw.result(rows=info["rows"], checksum={"files": info["files"], "rows": info["rows"]}, plan=info)


# ---------------------------------------------------------------------------------------------
# pypaimon-rust
# ---------------------------------------------------------------------------------------------

def _rs_table(spec: dict[str, Any]) -> Any:
    import pypaimon_rust.datafusion as df  # type: ignore[import-not-found]
    return df.PaimonCatalog({"warehouse": _warehouse(spec)}).get_table(spec["table"])


def _rs_read_builder(table: Any, conjuncts: Sequence[Sequence[Any]] | None) -> Any:
    rb = table.new_read_builder()
    if conjuncts:
        children = [{"method": _RUST_METHODS[op], "field": field, "literals": [value]}
                    for op, field, value in conjuncts]
        rb = rb.with_filter(children[0] if len(children) == 1 else {"method": "and", "children": children})
    return rb


def _rs_plan_info(splits: Sequence[Any]) -> dict[str, int]:
    # A Split exposes only row_count(); files are counted in its serialized form (file names).
    return {"splits": len(splits), "files": sum(len(_DATA_FILE.findall(s.serialize())) for s in splits),
            "rows": sum(int(s.row_count()) for s in splits)}


def _rs_write(spec: dict[str, Any], data: pa.Table) -> dict[str, Any]:
    table = _rs_table(spec)
    sw = Stopwatch()
    with sw.phase("write"):
        wb = table.new_batch_write_builder()
        write = wb.new_write()
        for batch in data.to_batches():
            if batch.num_rows:
                write.write_arrow(batch)
        messages = write.prepare_commit()
        write.close()
    with sw.phase("commit"):
        commit = wb.new_commit()
        commit.commit(messages)
        commit.close()
    snap = _rs_table(spec).latest_snapshot()
    return sw.result(rows=data.num_rows, snapshot_id=None if snap is None else snap.id())


def _rs_read(spec: dict[str, Any]) -> dict[str, Any]:
    table = _rs_table(spec)
    sw = Stopwatch()
    acc = Checksum()
    with sw.phase("plan"):
        rb = _rs_read_builder(table, spec.get("filter"))
        splits = rb.new_scan().plan().splits()
    if spec.get("mode", "table") == "stream":
        streamed = stream_read(lambda: rb.new_read().read_arrow(splits), sw)
    else:
        with sw.phase("read"):
            batches = rb.new_read().read(splits)
            out = pa.Table.from_batches(batches) if batches else None
        if out is not None:  # no batch (hence no schema) for an empty result
            acc.add(out)
        streamed = {"rows": acc.rows, "checksum": acc.result()}
    result = sw.result(plan=_rs_plan_info(splits), **streamed)
    if spec.get("pruning_baseline"):
        result["plan_unfiltered"] = _rs_plan_info(table.new_read_builder().new_scan().plan().splits())
    return result


def _rs_plan(spec: dict[str, Any]) -> dict[str, Any]:
    table = _rs_table(spec)
    sw = Stopwatch()
    with sw.phase("plan"):
        splits = table.new_read_builder().new_scan().plan().splits()
    info = _rs_plan_info(splits)
    return sw.result(rows=info["rows"], checksum={"files": info["files"], "rows": info["rows"]}, plan=info)


# ---------------------------------------------------------------------------------------------
# dispatch
# ---------------------------------------------------------------------------------------------

def _engine(spec: dict[str, Any]) -> str:
    engine = spec.get("engine")
    if engine not in ("pypaimon", "rust"):
        raise ValueError(f"engine must be 'pypaimon' or 'rust', got {engine!r}")
    return str(engine)


def _import_engine(engine: str) -> None:
    """Import before any timer starts (pypaimon takes ~1.4 s to import)."""
    if engine == "pypaimon":
        import pypaimon  # noqa: F401
        from pypaimon import CatalogFactory  # noqa: F401
        from pypaimon.common.predicate_builder import PredicateBuilder  # noqa: F401
    else:
        import pypaimon_rust.datafusion  # noqa: F401


def op_write(spec: dict[str, Any]) -> dict[str, Any]:
    engine = _engine(spec)
    _import_engine(engine)
    data = pq.read_table(spec["input"])
    return _pp_write(spec, data) if engine == "pypaimon" else _rs_write(spec, data)


def op_read(spec: dict[str, Any]) -> dict[str, Any]:
    engine = _engine(spec)
    _import_engine(engine)
    return _pp_read(spec) if engine == "pypaimon" else _rs_read(spec)


def op_plan(spec: dict[str, Any]) -> dict[str, Any]:
    engine = _engine(spec)
    _import_engine(engine)
    return _pp_plan(spec) if engine == "pypaimon" else _rs_plan(spec)


def op_info(spec: dict[str, Any]) -> dict[str, Any]:
    from importlib import metadata
    versions = {"pyarrow": pa.__version__}
    for dist in ("pypaimon", "pypaimon-rust", "deltalake"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {"python": sys.version.split()[0], "versions": versions}


HANDLERS = {"write": op_write, "read": op_read, "plan": op_plan, "info": op_info}

if __name__ == "__main__":
    sys.exit(serve(HANDLERS))
