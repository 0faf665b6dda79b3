"""``python -m paimon_core`` / ``paimon-py``: tables from the command line.

Every command prints JSON on stdout (one line unless it lists rows) and, on
failure, one ``error: ...`` line on stderr with a non-zero exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core.catalog import FileSystemCatalog, parse_identifier
from paimon_core.exceptions import InvalidArgumentError, PaimonError
from paimon_core.options import SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS
from paimon_core.predicate import parse_predicate
from paimon_core.table.table import FileStoreTable


def _split(v: str | None) -> list[str]:
    return [x.strip() for x in v.split(",") if x.strip()] if v else []


def _kv(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise InvalidArgumentError(f"--option expects key=value, got {p!r}")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=str, ensure_ascii=False) + "\n")


def _table(args: argparse.Namespace) -> FileStoreTable:
    return FileSystemCatalog(args.warehouse).get_table(args.table)


def cmd_create_table(args: argparse.Namespace) -> None:
    catalog = FileSystemCatalog(args.warehouse)
    db, _ = parse_identifier(args.table)
    catalog.create_database(db, ignore_if_exists=True)
    schema = _open_parquet(args.schema_from).schema_arrow
    t = catalog.create_table(
        args.table,
        schema,
        primary_keys=_split(args.primary_key),
        partition_keys=_split(args.partition_by),
        options=_kv(args.option or []),
        ignore_if_exists=args.if_not_exists,
    )
    _emit({"table": args.table, "path": t.path, "schema_id": t.schema.id, "fields": t.schema.field_names})


def cmd_write(args: argparse.Namespace) -> None:
    table = _table(args)
    overwrite: bool | dict[str, str] = False
    if args.overwrite_partition:
        overwrite = _kv(args.overwrite_partition)
    elif args.overwrite:
        overwrite = True
    parquet = _open_parquet(args.file)
    source = pa.RecordBatchReader.from_batches(parquet.schema_arrow, _batches(parquet, args.file))
    _emit(table.write_arrow(source, overwrite=overwrite).to_dict())


def _open_parquet(path: str) -> pq.ParquetFile:
    """The Parquet file at ``path``; InvalidArgumentError naming the path if it is not one."""
    try:
        return pq.ParquetFile(path)
    except FileNotFoundError:
        raise InvalidArgumentError(f"Input file {path} does not exist", path=path) from None
    except (pa.ArrowException, OSError) as e:
        raise InvalidArgumentError(f"Input file {path} is not a valid Parquet file: {e}", path=path) from None


def _batches(parquet: pq.ParquetFile, path: str) -> Iterator[pa.RecordBatch]:
    """The file's batches; a damaged page is reported with the file's path."""
    try:
        yield from parquet.iter_batches(batch_size=256 * 1024)
    except (pa.ArrowException, OSError) as e:
        raise InvalidArgumentError(f"Input file {path} is not a valid Parquet file: {e}", path=path) from None


def cmd_read(args: argparse.Namespace) -> None:
    table = _table(args)
    dyn = {}
    if args.snapshot is not None:
        dyn[SCAN_SNAPSHOT_ID] = str(args.snapshot)
    if args.tag:
        dyn[SCAN_TAG_NAME] = args.tag
    if args.timestamp_ms is not None:
        dyn[SCAN_TIMESTAMP_MILLIS] = str(args.timestamp_ms)
    if args.incremental_between:
        dyn["incremental-between"] = args.incremental_between
    if dyn:
        table = table.copy(dyn)
    predicate = parse_predicate(args.where, list(table.schema.fields)) if args.where else None
    rb = table.new_read_builder().with_projection(_split(args.columns) or None).with_filter(predicate)
    rb = rb.with_limit(args.limit)
    plan = rb.new_scan().plan()
    reader = rb.new_read().to_arrow_batch_reader(plan.splits)
    if args.output:
        rows = 0
        with pq.ParquetWriter(args.output, reader.schema) as w:
            for batch in reader:
                w.write_batch(batch)
                rows += batch.num_rows
        _emit({"table": args.table, "snapshot_id": plan.snapshot_id, "rows": rows, "output": args.output})
        return
    for batch in reader:
        for row in pa.Table.from_batches([batch]).to_pylist():
            _emit(row)


def cmd_snapshots(args: argparse.Namespace) -> None:
    table = _table(args)
    _emit([s.to_dict() for s in table.snapshot_manager.snapshots()])


def cmd_schema(args: argparse.Namespace) -> None:
    _emit(_table(args).schema.to_dict())


def cmd_files(args: argparse.Namespace) -> None:
    table = _table(args)
    snap = table.snapshot_manager.snapshot(args.snapshot) if args.snapshot is not None else table.latest_snapshot()
    out = []
    for e in table.new_file_store_scan().live_entries(snap):
        out.append(
            {
                "partition": table.partition_path(e.partition),
                "bucket": e.bucket,
                "file_name": e.file.file_name,
                "file_size": e.file.file_size,
                "row_count": e.file.row_count,
                "level": e.file.level,
                "schema_id": e.file.schema_id,
            }
        )
    _emit(out)


def cmd_create_tag(args: argparse.Namespace) -> None:
    tag = _table(args).maintenance.create_tag(args.name, args.snapshot)
    _emit({"tag": args.name, "snapshot_id": tag.snapshot_id})


class _Parser(argparse.ArgumentParser):
    """Usage errors print one ``error: ...`` line (not argparse's usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="paimon-py", description="Apache Paimon tables in pure Python")
    sub = p.add_subparsers(dest="command", required=True)

    def table_cmd(name: str, help_text: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_text)
        sp.add_argument("warehouse", help="warehouse path or URL (/path, file://, s3://, memory://)")
        sp.add_argument("table", help="DB.TABLE")
        return sp

    sp = table_cmd("create-table", "create a table from a Parquet file's schema")
    sp.add_argument("--schema-from", required=True, metavar="FILE.parquet")
    sp.add_argument("--primary-key", metavar="a,b")
    sp.add_argument("--partition-by", metavar="p,q")
    sp.add_argument("--option", action="append", metavar="k=v")
    sp.add_argument("--if-not-exists", action="store_true")
    sp.set_defaults(func=cmd_create_table)

    sp = table_cmd("write", "append (or overwrite) the rows of a Parquet file as one commit")
    sp.add_argument("file", metavar="FILE.parquet")
    sp.add_argument("--overwrite", action="store_true", help="replace the partitions written (or the table)")
    sp.add_argument("--overwrite-partition", action="append", metavar="k=v", help="replace this static partition")
    sp.set_defaults(func=cmd_write)

    sp = table_cmd("read", "read rows (JSON lines on stdout, or --output FILE.parquet)")
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--snapshot", type=int)
    g.add_argument("--tag")
    g.add_argument("--timestamp-ms", type=int)
    g.add_argument("--incremental-between", metavar="START,END")
    sp.add_argument("--columns", metavar="a,b")
    sp.add_argument("--where", metavar="EXPR", help="e.g. \"dt = '2024-01-01' AND v > 3\"")
    sp.add_argument("--limit", type=int)
    sp.add_argument("--output", metavar="FILE.parquet")
    sp.set_defaults(func=cmd_read)

    table_cmd("snapshots", "list snapshots").set_defaults(func=cmd_snapshots)
    table_cmd("schema", "show the current schema").set_defaults(func=cmd_schema)
    sp = table_cmd("files", "list the live data files")
    sp.add_argument("--snapshot", type=int)
    sp.set_defaults(func=cmd_files)
    sp = table_cmd("create-tag", "tag a snapshot")
    sp.add_argument("name")
    sp.add_argument("--snapshot", type=int)
    sp.set_defaults(func=cmd_create_tag)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except PaimonError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except (OSError, pa.ArrowException) as e:
        sys.stderr.write(f"error: {type(e).__name__}: {e}\n")
        return 1
    return 0
