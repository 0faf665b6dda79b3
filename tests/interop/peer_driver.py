#!/usr/bin/env python3
"""Drive the official Paimon peers (pypaimon 2.1.0, pypaimon-rust 0.4.0) for interop tests.

This script runs INSIDE the peer virtualenv (see scripts/setup_peers.sh). It imports only
the standard library, pyarrow, pypaimon and pypaimon_rust; never paimon_core.

Two modes:

* one-shot: ``python peer_driver.py '<json command>'`` (or the JSON on stdin). Prints exactly
  one JSON line on stdout and exits 0 on success, 1 on a failed command.
* serve: ``python peer_driver.py --serve``. Reads one JSON command per line on stdin and
  answers each with one JSON line on stdout, in order, until EOF or ``{"cmd": "shutdown"}``.
  This is what tests/interop/peers.py uses: it pays the ~1 s pypaimon import once per session.

In both modes anything the peers print on stdout is diverted to stderr, so stdout carries only
protocol lines.

Every command is an object ``{"cmd": ..., "engine": "pypaimon" | "rust", ...}``. Answers are
``{"ok": true, ...result fields}`` or ``{"ok": false, "error_type", "error", "traceback",
"unsupported": bool}``; ``unsupported`` is true when the engine cannot do what was asked (as
opposed to failing while doing it). A request's ``"id"`` is echoed back.

Data never travels through JSON: rows come and go as Parquet files. Filter literals that JSON
cannot type are tagged: ``{"$date": "2024-01-31"}``, ``{"$datetime": "2024-01-31T12:00:00.123456"}``
(an offset makes it tz-aware), ``{"$decimal": "1.2300"}``, ``{"$bytes": "<base64>"}``.
Arrow types in ``alter_table`` travel as ``{"arrow_type": "<base64 of an Arrow IPC schema
with one field>"}``; a plain string or JSON object there is a Paimon type as in schema files.

Commands (see tests/interop/peers.py for the typed client):

  ping            -> {pid, python, versions, import_ms}
  create_table    {warehouse, table "db.t", schema_parquet | schema_json, primary_keys,
                   partition_keys, options, ignore_if_exists} -> {}
  write           {warehouse, table, parquet, overwrite, overwrite_partition} -> {snapshot_id}
  delete          {warehouse, table, parquet} -> {snapshot_id}   (PK tables with rowkind.field)
  delete_where    {warehouse, table, filter} -> {snapshot_id}   (rows matching the filter; on
                   data-evolution tables with deletion vectors both peers write DV index files)
  read            {warehouse, table, output, options, projection, filter} -> {rows, output}
  create_tag      {warehouse, table, tag, snapshot_id|null} -> {}
  delete_tag      {warehouse, table, tag} -> {}
  rollback_to     {warehouse, table, snapshot_id | tag | timestamp_millis} -> {}
  list_snapshots  {warehouse, table} -> {snapshots: [{id, commit_kind, time_millis,
                   total_record_count, delta_record_count}] ascending by id}
  list_tags       {warehouse, table} -> {tags: [{name, snapshot_id}] sorted by name}
  alter_table     {warehouse, table, changes: [{action: add_column|rename_column|drop_column|
                   update_column_type|set_option|remove_option, ...}]} -> {}
  table_schema    {warehouse, table} -> {fields: [...Paimon JSON...], partition_keys,
                   primary_keys, options}
  shutdown        (serve mode) -> {} and exit
  _crash          {code} -> the process exits at once (harness self-test)
"""

import base64
import datetime
import decimal
import json
import os
import sys
import time
import traceback

import pyarrow as pa
import pyarrow.parquet as pq

PROTOCOL_VERSION = 1
ENGINES = ("pypaimon", "rust")

# Options that would route pypaimon through pypaimon_rust. The "pypaimon" engine must stay the
# pure-Python implementation even though both packages live in this venv.
_PYPAIMON_NATIVE_OFF = {
    "scan.native-plan.enabled": "false",
    "read.native.enabled": "false",
    "commit.native.enabled": "false",
    "write.native.enabled": "false",
}


class Unsupported(Exception):
    """The engine cannot do this (a known gap of the peer), as opposed to a failure."""


class BadRequest(Exception):
    """The command itself is malformed."""


_import_ms = {}


def _timed_import(key, fn):
    t0 = time.perf_counter()
    mod = fn()
    _import_ms.setdefault(key, round((time.perf_counter() - t0) * 1000, 1))
    return mod


def _pypaimon():
    def imp():
        import pypaimon  # noqa: F401
        from pypaimon import CatalogFactory  # noqa: F401
        from pypaimon.schema.data_types import DataTypeParser  # noqa: F401
        return pypaimon
    return _timed_import("pypaimon", imp)


def _rust():
    def imp():
        import pypaimon_rust.datafusion as df
        return df
    return _timed_import("pypaimon_rust", imp)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _req(cmd, key):
    if key not in cmd or cmd[key] is None:
        raise BadRequest(f"command {cmd.get('cmd')!r} needs {key!r}")
    return cmd[key]


def _split_table(name):
    parts = name.split(".")
    if len(parts) != 2 or not all(parts):
        raise BadRequest(f"table must be 'db.table', got {name!r}")
    return parts[0], parts[1]


def _warehouse(cmd):
    wh = _req(cmd, "warehouse")
    # pypaimon-rust needs absolute warehouse paths; use the same one for both engines.
    return os.path.abspath(wh)


def _decode_literal(value):
    if isinstance(value, dict) and len(value) == 1:
        (tag, raw), = value.items()
        if tag == "$date":
            return datetime.date.fromisoformat(raw)
        if tag == "$datetime":
            return datetime.datetime.fromisoformat(raw)
        if tag == "$decimal":
            return decimal.Decimal(raw)
        if tag == "$bytes":
            return base64.b64decode(raw)
    if isinstance(value, list):
        return [_decode_literal(v) for v in value]
    return value


# JSON filter ops -> Paimon predicate method names (shared by pypaimon's Predicate and the
# dict API of pypaimon_rust's ReadBuilder.with_filter).
_LEAF_OPS = {
    "=": ("equal", 1), "==": ("equal", 1), "eq": ("equal", 1),
    "!=": ("notEqual", 1), "<>": ("notEqual", 1), "ne": ("notEqual", 1),
    "<": ("lessThan", 1), "lt": ("lessThan", 1),
    "<=": ("lessOrEqual", 1), "le": ("lessOrEqual", 1),
    ">": ("greaterThan", 1), "gt": ("greaterThan", 1),
    ">=": ("greaterOrEqual", 1), "ge": ("greaterOrEqual", 1),
    "is_null": ("isNull", 0), "is null": ("isNull", 0),
    "is_not_null": ("isNotNull", 0), "is not null": ("isNotNull", 0),
    "in": ("in", None), "not_in": ("notIn", None), "not in": ("notIn", None),
    "between": ("between", 2), "not_between": ("notBetween", 2),
    "startswith": ("startsWith", 1), "endswith": ("endsWith", 1),
    "contains": ("contains", 1), "like": ("like", 1),
}


def _normalize_filter(f):
    """JSON filter -> {'method', 'field', 'literals'} / {'method': and|or, 'children'}."""
    if not isinstance(f, dict) or "op" not in f:
        raise BadRequest(f"filter must be an object with 'op': {f!r}")
    op = str(f["op"]).lower()
    if op in ("and", "or"):
        children = f.get("children", f.get("args"))
        if not children:
            raise BadRequest(f"{op} filter needs non-empty 'children'")
        return {"method": op, "children": [_normalize_filter(c) for c in children]}
    if op not in _LEAF_OPS:
        raise BadRequest(f"unknown filter op {op!r} (known: {sorted(_LEAF_OPS)})")
    method, arity = _LEAF_OPS[op]
    field = _req(f, "field")
    if arity == 0:
        literals = []
    elif arity == 1:
        if "value" not in f:
            raise BadRequest(f"filter op {op!r} needs 'value'")
        literals = [_decode_literal(f["value"])]
    else:
        literals = _decode_literal(f.get("values"))
        if not isinstance(literals, list) or (arity is not None and len(literals) != arity):
            what = "a list" if arity is None else f"a list of {arity}"
            raise BadRequest(f"filter op {op!r} needs 'values' ({what})")
    return {"method": method, "field": field, "literals": literals}


def _to_pypaimon_predicate(pb, node):
    from pypaimon.common.predicate_builder import PredicateBuilder
    if node["method"] in ("and", "or"):
        children = [_to_pypaimon_predicate(pb, c) for c in node["children"]]
        if node["method"] == "and":
            return PredicateBuilder.and_predicates(children)
        return PredicateBuilder.or_predicates(children)
    return pb._build_predicate(node["method"], node["field"], list(node["literals"]))


def _clean_schema_metadata(table):
    """Drop schema/field metadata (PARQUET:field_id etc.) so outputs are engine-neutral."""
    schema = pa.schema([f.remove_metadata() for f in table.schema])
    return pa.Table.from_arrays(table.columns, schema=schema)


def _write_output(table, path):
    table = _clean_schema_metadata(table)
    tmp = path + ".tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return {"rows": table.num_rows, "output": path}


def _read_input(cmd, key="parquet"):
    return pq.read_table(_req(cmd, key))


def _schema_from_cmd(cmd):
    """Return ('arrow', pa.Schema) or ('paimon', [field json...])."""
    if cmd.get("schema_parquet"):
        return "arrow", pq.read_schema(cmd["schema_parquet"]).remove_metadata()
    if cmd.get("schema_json") is not None:
        sj = cmd["schema_json"]
        fields = sj["fields"] if isinstance(sj, dict) else sj
        return "paimon", fields
    raise BadRequest("create_table needs schema_parquet or schema_json")


def _arrow_type_from_change(change):
    """Arrow type of an alter change, or None if it carries a Paimon type."""
    if change.get("arrow_type"):
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(change["arrow_type"])))
        return schema.field(0)
    return None


def _paimon_type_of_change(change):
    """pypaimon DataType for add_column / update_column_type."""
    _pypaimon()
    from pypaimon.schema.data_types import PyarrowFieldParser
    field = _arrow_type_from_change(change)
    if field is not None:
        return PyarrowFieldParser.to_paimon_type(field.type, field.nullable)
    if change.get("type") is None:
        raise BadRequest(f"{change.get('action')} needs 'type' or 'arrow_type'")
    return _parse_paimon_type(change["type"])


def _parse_paimon_type(type_json):
    from pypaimon.schema.data_types import AtomicInteger, DataTypeParser
    return DataTypeParser.parse_data_type(type_json, AtomicInteger(-1))


def _paimon_fields_from_json(fields_json):
    """Schema JSON fields (name/type[/description]) -> pypaimon DataFields with fresh ids."""
    from pypaimon.schema.data_types import AtomicInteger, DataTypeParser
    def strip_ids(node):  # ids are assigned here, also for nested ROW fields
        if isinstance(node, dict):
            return {k: strip_ids(v) for k, v in node.items() if k != "id"}
        if isinstance(node, list):
            return [strip_ids(v) for v in node]
        return node

    counter = AtomicInteger(-1)
    return [DataTypeParser.parse_data_field(strip_ids(f), counter) for f in fields_json]


# ---------------------------------------------------------------------------------------------
# pypaimon engine
# ---------------------------------------------------------------------------------------------

class PypaimonEngine:
    name = "pypaimon"

    def __init__(self):
        _pypaimon()

    def _catalog(self, cmd):
        from pypaimon import CatalogFactory
        return CatalogFactory.create({"warehouse": _warehouse(cmd)})

    def _table(self, cmd, options=None):
        t = self._catalog(cmd).get_table(_req(cmd, "table"))
        opts = dict(_PYPAIMON_NATIVE_OFF)
        if options:
            opts.update({str(k): str(v) for k, v in options.items()})
        return t.copy(opts)

    # -- DDL --------------------------------------------------------------------------------
    def create_table(self, cmd):
        from pypaimon import Schema
        cat = self._catalog(cmd)
        db, _ = _split_table(_req(cmd, "table"))
        cat.create_database(db, True)
        kind, sch = _schema_from_cmd(cmd)
        pks = list(cmd.get("primary_keys") or [])
        parts = list(cmd.get("partition_keys") or [])
        options = {str(k): str(v) for k, v in (cmd.get("options") or {}).items()}
        if kind == "arrow":
            schema = Schema.from_pyarrow_schema(sch, partition_keys=parts, primary_keys=pks,
                                                options=options)
        else:
            schema = Schema(fields=_paimon_fields_from_json(sch), partition_keys=parts,
                            primary_keys=pks, options=options)
        cat.create_table(cmd["table"], schema, bool(cmd.get("ignore_if_exists", False)))
        return {}

    def alter_table(self, cmd):
        from pypaimon.schema.schema_change import SchemaChange
        changes = []
        for ch in _req(cmd, "changes"):
            action = ch.get("action")
            if action == "add_column":
                changes.append(SchemaChange.add_column(_req(ch, "name"), _paimon_type_of_change(ch),
                                                       comment=ch.get("comment")))
            elif action == "rename_column":
                changes.append(SchemaChange.rename_column(_req(ch, "name"), _req(ch, "new_name")))
            elif action == "drop_column":
                changes.append(SchemaChange.drop_column(_req(ch, "name")))
            elif action == "update_column_type":
                changes.append(SchemaChange.update_column_type(_req(ch, "name"),
                                                               _paimon_type_of_change(ch)))
            elif action == "set_option":
                changes.append(SchemaChange.set_option(_req(ch, "key"), str(_req(ch, "value"))))
            elif action == "remove_option":
                changes.append(SchemaChange.remove_option(_req(ch, "key")))
            else:
                raise BadRequest(f"unknown alter action {action!r}")
        self._catalog(cmd).alter_table(_req(cmd, "table"), changes)
        return {}

    def table_schema(self, cmd):
        t = self._catalog(cmd).get_table(_req(cmd, "table"))
        ts = t.table_schema
        return {"fields": [f.to_dict() for f in ts.fields], "partition_keys": list(ts.partition_keys),
                "primary_keys": list(ts.primary_keys), "options": dict(ts.options)}

    # -- DML --------------------------------------------------------------------------------
    def _commit(self, t, data, overwrite, overwrite_partition):
        wb = t.new_batch_write_builder()
        if overwrite:
            wb = wb.overwrite(overwrite_partition or None)
        w = wb.new_write()
        c = wb.new_commit()
        try:
            w.write_arrow(data)
            c.commit(w.prepare_commit())
        finally:
            w.close()
            c.close()
        snap = t.snapshot_manager().get_latest_snapshot()
        return {"snapshot_id": None if snap is None else snap.id}

    def write(self, cmd):
        return self._commit(self._table(cmd), _read_input(cmd), bool(cmd.get("overwrite")),
                            cmd.get("overwrite_partition"))

    def delete(self, cmd):
        t = self._table(cmd)
        data = _deletion_rows(_read_input(cmd), _arrow_schema_of(t), dict(t.table_schema.options),
                              list(t.table_schema.primary_keys))
        return self._commit(t, data, False, None)

    def delete_where(self, cmd):
        """``delete_by_predicate``: data-evolution tables only; writes deletion vectors."""
        t = self._table(cmd)
        predicate = _to_pypaimon_predicate(t.new_read_builder().new_predicate_builder(),
                                           _normalize_filter(_req(cmd, "filter")))
        wb = t.new_batch_write_builder()
        messages = wb.new_update().delete_by_predicate(predicate)
        c = wb.new_commit()
        try:
            c.commit(messages)
        finally:
            c.close()
        snap = t.snapshot_manager().get_latest_snapshot()
        return {"snapshot_id": None if snap is None else snap.id}

    def read(self, cmd):
        from pypaimon.schema.data_types import PyarrowFieldParser
        options = dict(cmd.get("options") or {})
        if "incremental-between" in options:
            raise Unsupported(
                "pypaimon 2.1.0 silently ignores 'incremental-between' (snapshot ids) and returns a "
                "full read; use 'incremental-between-timestamp' or the rust engine")
        t = self._table(cmd, options)
        rb = t.new_read_builder()
        if cmd.get("projection") is not None:
            rb = rb.with_projection(list(cmd["projection"]))
        if cmd.get("filter") is not None:
            rb = rb.with_filter(_to_pypaimon_predicate(rb.new_predicate_builder(),
                                                       _normalize_filter(cmd["filter"])))
        splits = rb.new_scan().plan().splits()
        out = rb.new_read().to_arrow(splits)
        if out is None:
            out = PyarrowFieldParser.from_paimon_schema(rb.read_type()).empty_table()
        return _write_output(out, _req(cmd, "output"))

    # -- snapshots & tags -------------------------------------------------------------------
    def create_tag(self, cmd):
        sid = cmd.get("snapshot_id")
        self._table(cmd).create_tag(_req(cmd, "tag"), None if sid is None else int(sid))
        return {}

    def delete_tag(self, cmd):
        if not self._table(cmd).delete_tag(_req(cmd, "tag")):
            raise ValueError(f"tag {cmd['tag']!r} does not exist")
        return {}

    def rollback_to(self, cmd):
        t = self._table(cmd)
        if cmd.get("snapshot_id") is not None:
            t.rollback_to(int(cmd["snapshot_id"]))
        elif cmd.get("tag") is not None:
            t.rollback_to(str(cmd["tag"]))
        elif cmd.get("timestamp_millis") is not None:
            t.rollback_to_timestamp(int(cmd["timestamp_millis"]))
        else:
            raise BadRequest("rollback_to needs snapshot_id, tag or timestamp_millis")
        return {}

    def list_snapshots(self, cmd):
        snaps = self._table(cmd).snapshot_manager().list_snapshots()
        return {"snapshots": [{"id": s.id, "commit_kind": s.commit_kind, "time_millis": s.time_millis,
                               "total_record_count": s.total_record_count,
                               "delta_record_count": s.delta_record_count} for s in snaps]}

    def list_tags(self, cmd):
        tm = self._table(cmd).tag_manager()
        tags = []
        for name in tm.list_tags():
            tag = tm.get(name)
            tags.append({"name": name, "snapshot_id": None if tag is None else tag.id})
        return {"tags": sorted(tags, key=lambda x: x["name"])}


# ---------------------------------------------------------------------------------------------
# pypaimon-rust engine
# ---------------------------------------------------------------------------------------------

def _q_ident(name):
    return '"' + name.replace('"', '""') + '"'


def _q_str(value):
    return "'" + str(value).replace("'", "''") + "'"


_PAIMON_DEFAULT_PRECISION = {
    "TIMESTAMP": "TIMESTAMP(6)",  # DataFusion: TIMESTAMP(3)
    "TIMESTAMP WITHOUT TIME ZONE": "TIMESTAMP(6)",
    "DECIMAL": "DECIMAL(10, 0)",
    "CHAR": "CHAR(1)",
    "VARCHAR": "VARCHAR(1)",
    "BINARY": "BINARY(1)",
    "VARBINARY": "VARBINARY(1)",
}


def _paimon_json_to_sql(type_json, top_level=True):
    """Paimon type (schema-file JSON) -> DataFusion DDL type understood by pypaimon-rust.

    Only top-level NOT NULL can be expressed: DataFusion's DDL has no syntax for non-null array
    elements / struct fields (map keys are always NOT NULL).
    """
    if isinstance(type_json, dict):
        t = type_json["type"].upper()
        not_null = (type_json.get("nullable") is False) or t.rstrip().endswith("NOT NULL")
        if t.startswith("ARRAY"):
            sql = f"ARRAY<{_paimon_json_to_sql(type_json['element'], False)}>"
        elif t.startswith("MAP"):
            key = _paimon_json_to_sql(type_json["key"], False)
            value = _paimon_json_to_sql(type_json["value"], False)
            sql = f"MAP({key}, {value})"
        elif t.startswith("ROW"):
            sql = "STRUCT<" + ", ".join(
                f"{_q_ident(f['name'])} {_paimon_json_to_sql(f['type'], False)}"
                for f in type_json["fields"]) + ">"
        else:
            raise Unsupported(f"rust engine: cannot express Paimon type {t!r} in DataFusion DDL")
        return sql + (" NOT NULL" if top_level and not_null else "")
    t = str(type_json).strip().upper()
    not_null = t.endswith("NOT NULL")
    for suffix in (" NOT NULL", " NULL"):
        if t.endswith(suffix):
            t = t[: -len(suffix)].rstrip()
            break
    base = t.split("(")[0].strip()
    if t.startswith("TIMESTAMP_LTZ") or t.endswith("WITH LOCAL TIME ZONE"):
        prec = t[t.index("(") + 1:t.index(")")] if "(" in t else "6"
        sql = f"TIMESTAMP({prec}) WITH TIME ZONE"
    elif base == "BYTES":
        sql = "BYTEA"
    elif t in _PAIMON_DEFAULT_PRECISION:  # Paimon's defaults differ from DataFusion's
        sql = _PAIMON_DEFAULT_PRECISION[t]
    elif base in ("TIME", "BLOB", "VARIANT", "MULTISET", "VECTOR"):
        raise Unsupported(f"rust engine: DataFusion DDL in pypaimon-rust 0.4.0 has no {base} type")
    else:
        sql = t
    return sql + (" NOT NULL" if top_level and not_null else "")


_SQL_COMPARISONS = {"equal": "=", "notEqual": "<>", "lessThan": "<", "lessOrEqual": "<=",
                    "greaterThan": ">", "greaterOrEqual": ">="}


def _sql_literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, str):
        return _q_str(value)
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP {_q_str(value.isoformat(sep=' '))}"
    if isinstance(value, datetime.date):
        return f"DATE {_q_str(value.isoformat())}"
    raise Unsupported(f"rust engine: no SQL literal for {type(value).__name__} in a DELETE filter")


def _filter_to_sql(node):
    """Normalized filter -> SQL boolean expression (for DELETE ... WHERE)."""
    method = node["method"]
    if method in ("and", "or"):
        return "(" + f" {method.upper()} ".join(_filter_to_sql(c) for c in node["children"]) + ")"
    col = _q_ident(node["field"])
    lits = node["literals"]
    if method in _SQL_COMPARISONS:
        return f"{col} {_SQL_COMPARISONS[method]} {_sql_literal(lits[0])}"
    if method in ("isNull", "isNotNull"):
        return f"{col} IS {'NOT ' if method == 'isNotNull' else ''}NULL"
    if method in ("in", "notIn"):
        values = ", ".join(_sql_literal(v) for v in lits)
        return f"{col} {'NOT ' if method == 'notIn' else ''}IN ({values})"
    if method in ("between", "notBetween"):
        neg = "NOT " if method == "notBetween" else ""
        return f"{col} {neg}BETWEEN {_sql_literal(lits[0])} AND {_sql_literal(lits[1])}"
    raise Unsupported(f"rust engine: filter op {method!r} has no SQL form in DELETE")


class RustEngine:
    name = "rust"

    def __init__(self):
        _rust()

    def _catalog(self, cmd):
        return _rust().PaimonCatalog({"warehouse": _warehouse(cmd)})

    def _table(self, cmd):
        return self._catalog(cmd).get_table(_req(cmd, "table"))

    def _sql(self, cmd, statement):
        ctx = _rust().SQLContext()
        ctx.register_catalog("paimon", {"warehouse": _warehouse(cmd)})
        ctx.set_current_catalog("paimon")
        return ctx.sql(statement)

    def _sql_table(self, cmd):
        db, name = _split_table(_req(cmd, "table"))
        return f"{_q_ident(db)}.{_q_ident(name)}"

    # -- DDL --------------------------------------------------------------------------------
    def create_table(self, cmd):
        _pypaimon()
        from pypaimon.schema.data_types import PyarrowFieldParser
        db, _ = _split_table(_req(cmd, "table"))
        kind, sch = _schema_from_cmd(cmd)
        if kind == "arrow":
            # Same Arrow -> Paimon mapping as pypaimon, then Paimon -> DataFusion DDL.
            fields = [{"name": f.name, "type": f.type.to_dict()}
                      for f in PyarrowFieldParser.to_paimon_schema(sch)]
        else:
            fields = sch
        cols = [f"{_q_ident(f['name'])} {_paimon_json_to_sql(f['type'])}" for f in fields]
        pks = list(cmd.get("primary_keys") or [])
        if pks:
            cols.append("PRIMARY KEY (" + ", ".join(_q_ident(k) for k in pks) + ")")
        if_not_exists = "IF NOT EXISTS " if cmd.get("ignore_if_exists") else ""
        stmt = f"CREATE TABLE {if_not_exists}{self._sql_table(cmd)} ({', '.join(cols)})"
        parts = list(cmd.get("partition_keys") or [])
        if parts:
            stmt += " PARTITIONED BY (" + ", ".join(_q_ident(k) for k in parts) + ")"
        options = cmd.get("options") or {}
        if options:
            stmt += " WITH (" + ", ".join(f"{_q_str(k)} = {_q_str(v)}" for k, v in options.items()) + ")"
        self._sql(cmd, f"CREATE DATABASE IF NOT EXISTS {_q_ident(db)}")
        self._sql(cmd, stmt)
        return {}

    def _sql_type_of_change(self, ch):
        _pypaimon()
        from pypaimon.schema.data_types import PyarrowFieldParser
        field = _arrow_type_from_change(ch)
        if field is not None:
            return _paimon_json_to_sql(PyarrowFieldParser.to_paimon_type(field.type, True).to_dict())
        if ch.get("type") is None:
            raise BadRequest(f"{ch.get('action')} needs 'type' or 'arrow_type'")
        return _paimon_json_to_sql(ch["type"])

    def alter_table(self, cmd):
        tbl = self._sql_table(cmd)
        stmts = []
        for ch in _req(cmd, "changes"):
            action = ch.get("action")
            if action == "add_column":
                col = _q_ident(_req(ch, "name"))
                stmts.append(f"ALTER TABLE {tbl} ADD COLUMN {col} {self._sql_type_of_change(ch)}")
            elif action == "rename_column":
                old, new = _q_ident(_req(ch, "name")), _q_ident(_req(ch, "new_name"))
                stmts.append(f"ALTER TABLE {tbl} RENAME COLUMN {old} TO {new}")
            elif action == "drop_column":
                stmts.append(f"ALTER TABLE {tbl} DROP COLUMN {_q_ident(_req(ch, 'name'))}")
            elif action == "update_column_type":
                col = _q_ident(_req(ch, "name"))
                stmts.append(f"ALTER TABLE {tbl} ALTER COLUMN {col} TYPE {self._sql_type_of_change(ch)}")
            elif action == "set_option":
                kv = f"{_q_str(_req(ch, 'key'))} = {_q_str(_req(ch, 'value'))}"
                stmts.append(f"ALTER TABLE {tbl} SET TBLPROPERTIES ({kv})")
            elif action == "remove_option":
                raise Unsupported("rust engine: pypaimon-rust 0.4.0's SQL has no UNSET/RESET "
                                  "TBLPROPERTIES (parser: 'Expected: ADD, RENAME, ... found: UNSET')")
            else:
                raise BadRequest(f"unknown alter action {action!r}")
        for s in stmts:  # one statement per change: not atomic, like Spark's ALTER chains
            self._sql(cmd, s)
        return {}

    def table_schema(self, cmd):
        ts = self._table(cmd).schema()
        return {"fields": [{"id": f.id(), "name": f.name(), "type": f.field_type()} for f in ts.fields()],
                "partition_keys": list(ts.partition_keys()), "primary_keys": list(ts.primary_keys()),
                "options": dict(ts.options())}

    # -- DML --------------------------------------------------------------------------------
    def _commit(self, cmd, data, overwrite, overwrite_partition):
        rt = self._table(cmd)
        wb = rt.new_batch_write_builder()
        if overwrite:
            wb = wb.with_overwrite(dict(overwrite_partition or {}))
        w = wb.new_write()
        try:
            for batch in data.to_batches():
                if batch.num_rows:
                    w.write_arrow(batch)
            messages = w.prepare_commit()
        finally:
            w.close()
        c = wb.new_commit()
        try:
            c.commit(messages)
        finally:
            c.close()
        snap = self._table(cmd).latest_snapshot()
        return {"snapshot_id": None if snap is None else snap.id()}

    def write(self, cmd):
        return self._commit(cmd, _read_input(cmd), bool(cmd.get("overwrite")),
                            cmd.get("overwrite_partition"))

    def delete(self, cmd):
        pt = PypaimonEngine()._table(cmd)  # metadata only: the Arrow schema and options
        data = _deletion_rows(_read_input(cmd), _arrow_schema_of(pt), dict(pt.table_schema.options),
                              list(pt.table_schema.primary_keys))
        return self._commit(cmd, data, False, None)

    def delete_where(self, cmd):
        """SQL ``DELETE FROM t WHERE ...``: deletion vectors on data-evolution tables (which need
        'deletion-vectors.enabled'); plain append tables get their files rewritten instead."""
        where = _filter_to_sql(_normalize_filter(_req(cmd, "filter")))
        self._sql(cmd, f"DELETE FROM {self._sql_table(cmd)} WHERE {where}")
        snap = self._table(cmd).latest_snapshot()
        return {"snapshot_id": None if snap is None else snap.id()}

    def read(self, cmd):
        options = {str(k): str(v) for k, v in (cmd.get("options") or {}).items()}
        incremental = options.pop("incremental-between", None)
        if "incremental-between-timestamp" in options:
            raise Unsupported("rust engine: pypaimon-rust 0.4.0 rejects 'incremental-between-timestamp' "
                              "(\"not supported by the Rust reader yet\"); use 'incremental-between' "
                              "with snapshot ids")
        rt = self._table(cmd)
        rb = rt.new_read_builder(options or None)
        projection = cmd.get("projection")
        if projection is not None:
            rb = rb.with_projection(list(projection))
        if cmd.get("filter") is not None:
            rb = rb.with_filter(_normalize_filter(cmd["filter"]))
        if incremental is not None:
            try:
                start, end = (int(x) for x in incremental.split(","))
            except ValueError:
                raise Unsupported("rust engine: 'incremental-between' must be two snapshot ids "
                                  f"'start,end' (tags are not supported), got {incremental!r}") from None
            scan = rb.new_incremental_scan(start, end)
        else:
            scan = rb.new_scan()
        batches = rb.new_read().read(scan.plan().splits())
        if batches:
            out = pa.Table.from_batches(batches)
        else:
            # Rust returns no batch (hence no schema) for an empty result: take the schema from
            # pypaimon's view of the same table, options and projection.
            pt = PypaimonEngine()._table(cmd, {k: v for k, v in options.items()
                                               if not k.startswith("incremental")})
            schema = _arrow_schema_of(pt)
            if projection is not None:
                schema = pa.schema([schema.field(n) for n in projection])
            out = schema.empty_table()
        return _write_output(out, _req(cmd, "output"))

    # -- snapshots & tags -------------------------------------------------------------------
    def _call(self, cmd, proc, **args):
        argstr = ", ".join(f"{k} => {v if isinstance(v, int) else _q_str(v)}"
                           for k, v in args.items())
        return self._sql(cmd, f"CALL sys.{proc}({argstr})")

    def create_tag(self, cmd):
        args = {"table": _req(cmd, "table"), "tag": _req(cmd, "tag")}
        if cmd.get("snapshot_id") is not None:
            args["snapshot_id"] = int(cmd["snapshot_id"])
        self._call(cmd, "create_tag", **args)
        return {}

    def delete_tag(self, cmd):
        tag = _req(cmd, "tag")
        if tag not in {t.name() for t in self._table(cmd).list_tags()}:
            # sys.delete_tag silently succeeds on a missing tag; match pypaimon's driver behaviour.
            raise ValueError(f"tag {tag!r} does not exist")
        self._call(cmd, "delete_tag", table=cmd["table"], tag=tag)
        return {}

    def rollback_to(self, cmd):
        table = _req(cmd, "table")
        if cmd.get("snapshot_id") is not None:
            self._call(cmd, "rollback_to", table=table, snapshot_id=int(cmd["snapshot_id"]))
        elif cmd.get("tag") is not None:
            self._call(cmd, "rollback_to", table=table, tag=str(cmd["tag"]))
        elif cmd.get("timestamp_millis") is not None:
            self._call(cmd, "rollback_to_timestamp", table=table,
                       timestamp=int(cmd["timestamp_millis"]))
        else:
            raise BadRequest("rollback_to needs snapshot_id, tag or timestamp_millis")
        return {}

    def list_snapshots(self, cmd):
        snaps = sorted(self._table(cmd).list_snapshots(), key=lambda s: s.id())
        return {"snapshots": [{"id": s.id(), "commit_kind": s.commit_kind(), "time_millis": s.commit_time_ms(),
                               "total_record_count": s.total_record_count(),
                               "delta_record_count": s.delta_record_count()} for s in snaps]}

    def list_tags(self, cmd):
        tags = [{"name": t.name(), "snapshot_id": t.snapshot_id()} for t in self._table(cmd).list_tags()]
        return {"tags": sorted(tags, key=lambda x: x["name"])}


# ---------------------------------------------------------------------------------------------
# shared
# ---------------------------------------------------------------------------------------------

def _arrow_schema_of(pypaimon_table):
    from pypaimon.schema.data_types import PyarrowFieldParser
    return PyarrowFieldParser.from_paimon_schema(pypaimon_table.table_schema.fields)


def _deletion_rows(data, schema, options, primary_keys):
    """Rows to retract on a PK table: full table schema, missing columns null, rowkind '-D'."""
    if not primary_keys:
        raise Unsupported("delete needs a primary-key table (append tables have no row-kind deletes "
                          "in these peers' write APIs)")
    rk = options.get("rowkind.field")
    if not rk:
        raise Unsupported("delete needs the table option 'rowkind.field': neither peer has a "
                          "delete API for PK tables, only '-D' rows through that column")
    missing = [k for k in primary_keys if k not in data.column_names]
    if missing:
        raise BadRequest(f"delete rows must carry the primary key columns; missing {missing}")
    cols = []
    for field in schema:
        if field.name == rk:
            cols.append(pa.array(["-D"] * data.num_rows, type=field.type))
        elif field.name in data.column_names:
            cols.append(data.column(field.name).cast(field.type))
        else:
            cols.append(pa.nulls(data.num_rows, type=field.type))
    return pa.Table.from_arrays(cols, schema=pa.schema([f.with_nullable(True) for f in schema]))


_ENGINES = {}


def _engine(name):
    if name not in ENGINES:
        raise BadRequest(f"engine must be one of {ENGINES}, got {name!r}")
    if name not in _ENGINES:
        _ENGINES[name] = PypaimonEngine() if name == "pypaimon" else RustEngine()
    return _ENGINES[name]


def _versions():
    from importlib import metadata
    out = {"pyarrow": pa.__version__}
    for dist in ("pypaimon", "pypaimon-rust"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


_COMMANDS = ("create_table", "write", "delete", "delete_where", "read", "create_tag", "delete_tag",
             "rollback_to", "list_snapshots", "list_tags", "alter_table", "table_schema")


def handle(cmd):
    """Run one command dict; return the answer dict (never raises)."""
    t0 = time.perf_counter()
    rid = cmd.get("id") if isinstance(cmd, dict) else None
    try:
        if not isinstance(cmd, dict):
            raise BadRequest("command must be a JSON object")
        name = cmd.get("cmd")
        if name == "ping":
            if cmd.get("preload"):
                for e in cmd["preload"]:
                    _engine(e)
            result = {"pid": os.getpid(), "python": sys.version.split()[0], "versions": _versions(),
                      "import_ms": dict(_import_ms), "protocol": PROTOCOL_VERSION}
        elif name == "_crash":  # harness self-test: die mid-request
            sys.stderr.write("peer_driver: _crash requested\n")
            sys.stderr.flush()
            os._exit(int(cmd.get("code", 70)))
        elif name in _COMMANDS:
            engine = _engine(cmd.get("engine"))
            result = getattr(engine, name)(cmd)
        else:
            raise BadRequest(f"unknown cmd {name!r} (known: ping, shutdown, {', '.join(_COMMANDS)})")
        answer = {"ok": True}
        answer.update(result)
    except Exception as exc:  # report everything; the client decides
        answer = {"ok": False, "error_type": type(exc).__name__, "error": str(exc),
                  "unsupported": isinstance(exc, Unsupported), "traceback": traceback.format_exc()}
    answer["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    if rid is not None:
        answer["id"] = rid
    return answer


def _protocol_stdout():
    """Keep a private handle on the real stdout and point fd 1 (and sys.stdout) at stderr."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _emit(out, answer):
    out.write(json.dumps(answer, default=str, allow_nan=False) + "\n")
    out.flush()


def serve():
    out = _protocol_stdout()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except ValueError as exc:
            _emit(out, {"ok": False, "error_type": "BadRequest", "error": f"bad JSON: {exc}",
                        "unsupported": False, "traceback": ""})
            continue
        if isinstance(cmd, dict) and cmd.get("cmd") == "shutdown":
            _emit(out, {"ok": True, "id": cmd.get("id")})
            break
        _emit(out, handle(cmd))
    return 0


def main(argv):
    if argv[1:] == ["--serve"]:
        return serve()
    out = _protocol_stdout()
    raw = argv[1] if len(argv) > 1 else sys.stdin.read()
    try:
        cmd = json.loads(raw)
    except ValueError as exc:
        answer = {"ok": False, "error_type": "BadRequest", "error": f"bad JSON: {exc}",
                  "unsupported": False, "traceback": ""}
    else:
        answer = handle(cmd)
    _emit(out, answer)
    return 0 if answer["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
