"""Every Paimon table kind and option family the compatibility matrix and the refusal tests use.

:data:`KINDS` lists them (bucket modes, merge engines, changelog producers, deletion vectors, row
tracking, data evolution, file index, manifest sort, branches, and the Paimon 2.x kinds we refuse:
chain tables, global index, blob and vector columns, vector and primary-key indexes).
:func:`build` creates each one as a small table of three commits in one warehouse: with our
writer where we write that kind, else with pypaimon 2.1.0 (one peer process for all of them), as
a user of that kind would. Unsupported kinds are *made by their real writer* (pypaimon), never by
editing our own files into shape.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from paimon_core import FileSystemCatalog

__all__ = ["DATABASE", "KINDS", "UNSUPPORTED", "TableKindSpec", "build", "identifier", "tree_digest"]

logger = logging.getLogger(__name__)

DATABASE = "kinds"

PK_SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())]
)
APPEND_SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.int64())])

#: Three commits: inserts, an update of keys 1 and 2 (a new row on append tables), a third batch.
COMMITS: tuple[dict[str, list[Any]], ...] = (
    {"id": [1, 2, 3, 4], "dt": ["a", "a", "b", "b"], "v": [10, 20, 30, 40]},
    {"id": [1, 2, 5], "dt": ["a", "a", "b"], "v": [11, 21, 50]},
    {"id": [3, 6], "dt": ["b", "a"], "v": [31, 60]},
)

Writer = Literal["ours", "pypaimon"]
Extra = Literal["", "branch", "global_index", "blob", "vector", "pk_vector", "variant"]


@dataclass(frozen=True)
class TableKindSpec:
    """One row of the matrix: a family, the kind, and how its table is made."""

    family: str
    kind: str
    writer: Writer
    primary_key: bool = True
    options: Mapping[str, str] = field(default_factory=dict)
    partitioned: bool = True
    #: a kind made by more than options: a branch, a global index, a BLOB / VECTOR column
    extra: Extra = ""
    #: the feature an UnsupportedTableKindError names for this kind ("" when supported)
    refused_as: str = ""

    @property
    def name(self) -> str:
        """The table's name: the kind as an identifier."""
        out = "".join(c if c.isalnum() else "_" for c in f"{self.family}_{self.kind}".lower())
        while "__" in out:
            out = out.replace("__", "_")
        return out.strip("_")


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` -> its SHA-256: a directory compares byte for byte."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()
    }


def identifier(spec: TableKindSpec) -> str:
    """``kinds.<name>`` (a branch kind: its branch, ``kinds.<name>$branch_b1``)."""
    base = f"{DATABASE}.{spec.name}"
    return f"{base}$branch_b1" if spec.extra == "branch" else base


def _pk(**options: str) -> dict[str, str]:
    return {"bucket": "2", **options}


KINDS: tuple[TableKindSpec, ...] = (
    TableKindSpec("bucket mode", "fixed (primary key, bucket = 2)", "ours", options=_pk()),
    TableKindSpec("bucket mode", "dynamic (bucket = -1)", "ours", options={"bucket": "-1"}),
    TableKindSpec("bucket mode", "postpone (bucket = -2)", "pypaimon", options={"bucket": "-2"}),
    TableKindSpec("bucket mode", "unaware (append, bucket = -1)", "ours", primary_key=False, options={"bucket": "-1"}),
    TableKindSpec(
        "bucket mode", "fixed append (bucket-key)", "ours", primary_key=False, options={"bucket": "2", "bucket-key": "id"}
    ),
    TableKindSpec("bucket mode", "cross-partition upsert", "ours", options={"bucket": "-1"}),
    TableKindSpec("merge engine", "deduplicate", "ours", options=_pk(**{"merge-engine": "deduplicate"})),
    TableKindSpec("merge engine", "partial-update", "ours", options=_pk(**{"merge-engine": "partial-update"})),
    TableKindSpec(
        "merge engine",
        "aggregation (sum)",
        "ours",
        options=_pk(**{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}),
    ),
    TableKindSpec("merge engine", "first-row", "ours", options=_pk(**{"merge-engine": "first-row"})),
    TableKindSpec("changelog producer", "none", "ours", options=_pk(**{"changelog-producer": "none"})),
    TableKindSpec("changelog producer", "input", "ours", options=_pk(**{"changelog-producer": "input"})),
    TableKindSpec("changelog producer", "lookup", "ours", options=_pk(**{"changelog-producer": "lookup"})),
    TableKindSpec(
        "changelog producer", "full-compaction", "ours", options=_pk(**{"changelog-producer": "full-compaction"})
    ),
    TableKindSpec("deletion vectors", "primary key", "ours", options=_pk(**{"deletion-vectors.enabled": "true"})),
    TableKindSpec(
        "deletion vectors",
        "append",
        "ours",
        primary_key=False,
        options={"bucket": "-1", "deletion-vectors.enabled": "true"},
    ),
    TableKindSpec(
        "row tracking", "append", "pypaimon", primary_key=False, options={"row-tracking.enabled": "true"}
    ),
    TableKindSpec(
        "data evolution",
        "append",
        "pypaimon",
        primary_key=False,
        options={"row-tracking.enabled": "true", "data-evolution.enabled": "true"},
    ),
    TableKindSpec(
        "file index",
        "bloom filter",
        "ours",
        primary_key=False,
        options={"bucket": "-1", "file-index.bloom-filter.columns": "id"},
    ),
    TableKindSpec(
        "file index",
        "bloom filter in the manifest (primary key)",
        "ours",
        options=_pk(**{"file-index.bloom-filter.columns": "v", "file-index.bloom-filter.v.items": "100"}),
    ),
    TableKindSpec(
        "file index",
        "bitmap",
        "ours",
        primary_key=False,
        options={"bucket": "-1", "file-index.bitmap.columns": "id,v"},
    ),
    TableKindSpec(
        "file index",
        "bsi, range-bitmap (files written without them)",
        "ours",
        primary_key=False,
        options={"bucket": "-1", "file-index.bsi.columns": "v", "file-index.range-bitmap.columns": "id"},
    ),
    TableKindSpec("manifest sort", "manifest-sort.enabled", "ours", options=_pk(**{"manifest-sort.enabled": "true"})),
    TableKindSpec("branches", "a branch (db.t$branch_b1)", "ours", options=_pk(), extra="branch"),
    # pypaimon 2.1.0 writes a mod table with the default hash (its fixed-bucket writer ignores the
    # option), so Java's layout is made by our writer, which assigns floorMod as Java does
    TableKindSpec("bucket mode", "bucket-function.type = mod", "ours", options=_pk(**{"bucket-function.type": "mod"})),
    TableKindSpec(
        "bucket mode",
        "bucket-function.type = hive",
        "pypaimon",
        options=_pk(**{"bucket-function.type": "hive"}),
        refused_as="bucket function",
    ),
    TableKindSpec(
        "data file path directory",
        "data-file.path-directory",
        "pypaimon",
        options=_pk(**{"data-file.path-directory": "data"}),
        refused_as="data file path directory",
    ),
    TableKindSpec(
        "chain table",
        "chain-table.enabled",
        "pypaimon",
        options=_pk(**{"chain-table.enabled": "true"}),
        refused_as="chain table",
    ),
    TableKindSpec(
        "global index",
        "btree (create_global_index)",
        "pypaimon",
        primary_key=False,
        options={"row-tracking.enabled": "true", "data-evolution.enabled": "true"},
        extra="global_index",
        refused_as="global index",
    ),
    TableKindSpec(
        "blob",
        "BLOB column (blob-field)",
        "pypaimon",
        primary_key=False,
        partitioned=False,
        options={"row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-field": "b"},
        extra="blob",
        refused_as="blob columns",
    ),
    TableKindSpec(
        "vector",
        "VECTOR column",
        "pypaimon",
        primary_key=False,
        partitioned=False,
        extra="vector",
        refused_as="vector columns",
    ),
    TableKindSpec(
        "variant",
        "VARIANT column",
        "pypaimon",
        primary_key=False,
        partitioned=False,
        extra="variant",
        refused_as="variant columns",
    ),
    TableKindSpec(
        "vector index",
        "pk-vector.index.columns",
        "pypaimon",
        partitioned=False,
        options={"bucket": "1", "pk-vector.index.columns": "vec", "fields.vec.pk-vector.index.type": "ivf-flat"},
        extra="pk_vector",
        refused_as="vector index",
    ),
    TableKindSpec(
        "primary-key index",
        "pk-btree.index.columns",
        "pypaimon",
        options=_pk(**{"pk-btree.index.columns": "v"}),
        refused_as="primary-key index",
    ),
)


def _keys(spec: TableKindSpec) -> tuple[list[str], list[str]]:
    partition = ["dt"] if spec.partitioned else []
    if not spec.primary_key:
        return [], partition
    if spec.kind == "cross-partition upsert":
        return ["id"], partition  # the key lacks the partition column: upserts across partitions
    return (["id", "dt"] if spec.partitioned else ["id"]), partition


def _build_ours(catalog: FileSystemCatalog, spec: TableKindSpec) -> None:
    pks, parts = _keys(spec)
    schema = PK_SCHEMA if spec.primary_key else APPEND_SCHEMA
    ident = f"{DATABASE}.{spec.name}"
    table = catalog.create_table(ident, schema, primary_keys=pks, partition_keys=parts, options=dict(spec.options))
    for i, commit in enumerate(COMMITS):
        if spec.extra == "branch" and i == 1:
            table.maintenance.create_tag("t1")
            table.maintenance.create_branch("b1", "t1")
            table = catalog.get_table(identifier(spec))
        table.write_arrow(pa.table(commit, schema=schema))


#: Builds the pypaimon kinds: ``argv[1]`` is the warehouse, ``argv[2]`` a JSON list of specs.
_PEER_SCRIPT = r"""
import json, sys
import pyarrow as pa
from pypaimon import CatalogFactory, Schema

wh, specs, commits = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
catalog = CatalogFactory.create({"warehouse": wh})
catalog.create_database(sys.argv[4], True)
for s in specs:
    fields = [pa.field("id", pa.int64(), nullable=not s["pks"]), ("v", pa.int64())]
    if s["parts"]:
        fields.insert(1, pa.field("dt", pa.string(), nullable=not s["pks"]))
    if s["extra"] == "blob":
        fields.append(("b", pa.large_binary()))
    if s["extra"] in ("vector", "pk_vector"):
        fields.append(("vec", pa.list_(pa.float32(), 2)))
    if s["extra"] == "variant":
        fields.append(("var", pa.struct([pa.field("value", pa.binary(), nullable=False),
                                         pa.field("metadata", pa.binary(), nullable=False)])))
    schema = pa.schema(fields)
    catalog.create_table(s["ident"], Schema.from_pyarrow_schema(
        schema, primary_keys=s["pks"] or None, partition_keys=s["parts"] or None, options=s["options"]), False)
    table = catalog.get_table(s["ident"])
    for c in commits:
        data = {"id": c["id"], "v": c["v"]}
        if s["parts"]:
            data["dt"] = c["dt"]
        if s["extra"] == "blob":
            data["b"] = [b"blob-%d" % i for i in c["id"]]
        if s["extra"] in ("vector", "pk_vector"):
            data["vec"] = [[float(i), 1.0] for i in c["id"]]
        if s["extra"] == "variant":
            from pypaimon.data.generic_variant import GenericVariant
            data["var"] = GenericVariant.to_arrow_array([GenericVariant.from_python({"k": i}) for i in c["id"]])
        wb = table.new_batch_write_builder()
        w, cm = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.Table.from_pydict(data, schema=schema))
        cm.commit(w.prepare_commit())
        w.close()
        cm.close()
    if s["extra"] == "global_index":
        assert table.create_global_index("v", "btree") > 0
    print(s["ident"])
"""


#: The kinds paimon_core refuses.
UNSUPPORTED: tuple[TableKindSpec, ...] = tuple(k for k in KINDS if k.refused_as)


def build(warehouse: str, kinds: Sequence[TableKindSpec] = KINDS) -> FileSystemCatalog:
    """Create ``kinds`` (default: every kind of :data:`KINDS`) in ``warehouse`` (database :data:`DATABASE`)."""
    from tests.peer_python import run_peer_script

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database(DATABASE, ignore_if_exists=True)
    peer_specs = []
    for spec in kinds:
        if spec.writer == "ours":
            _build_ours(catalog, spec)
        else:
            pks, parts = _keys(spec)
            peer_specs.append(
                {
                    "ident": f"{DATABASE}.{spec.name}",
                    "pks": pks,
                    "parts": parts,
                    "options": dict(spec.options),
                    "extra": spec.extra,
                }
            )
    if peer_specs:
        run_peer_script(_PEER_SCRIPT, warehouse, json.dumps(peer_specs), json.dumps(list(COMMITS)), DATABASE)
    return catalog
