"""Command-line arguments shared by every job, parsed into a frozen :class:`JobConfig`.

Common flags: ``--warehouse`` and ``--table`` (required), ``--master``, ``--driver-memory``,
``--conf k=v`` (repeatable), ``--app-name``, ``--storage-option k=v`` (fsspec options of the
warehouse), ``--no-ledger`` (record nothing in the warehouse's maintenance ledger and do not create
it; see :mod:`spark_jobs.common.ledger`), ``--result-file PATH`` (the job's JSON result line is
also written there, through the warehouse's FileIO: :func:`use_result_file`). Each job adds its own flags with :func:`base_parser` and reads them from the
returned namespace. A bad argument raises :class:`UsageError` (the job prints it as its JSON
line and exits 2) instead of argparse's ``SystemExit``.

Arguments that several jobs share are checked here by name, for every job, whether given as a
flag or (procedure jobs, :mod:`spark_jobs.common.procedure`) positionally
(:func:`check_argument`):

* ``partitions`` / ``partition`` (Paimon's ``'k=v,k2=v2;k=v3'``): must name at least one
  partition; a spec that parses to nothing (``';'``, ``';;;'``, ``' '``) would otherwise mean
  "every partition" (:func:`parse_partition_specs`);
* ``commit_identifier``: from 0 to Java's ``Long.MAX_VALUE``;
* ``parallelism`` (and ``source.parallelism``, ``sink.parallelism`` ...): at least 1;
* ``buckets`` (``'0,3'``, ranges ``'0-999'``, ``'0,3,5-7'``): at least one bucket, each from 0,
  ranges not reversed (the table's own range is checked by the job once the table is open).
"""

from __future__ import annotations

import argparse
import re
import sys
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from spark_jobs.common.output import EXIT_TERMINAL, EXIT_USAGE, ResultFile, set_result_file
from spark_jobs.common.session import SessionConfig, parse_conf_pairs, s3_executor_env

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "LONG_MAX",
    "JobConfig",
    "UsageError",
    "add_dry_run_flag",
    "base_parser",
    "check_argument",
    "parse_bucket_list",
    "parse_job_args",
    "parse_options",
    "parse_partition_specs",
    "use_result_file",
]

#: a job that failed (terminal; :func:`~spark_jobs.common.output.emit_error` returns
#: ``EXIT_TRANSIENT`` instead when the error is retryable); the codes live in :mod:`.output`
EXIT_FAILURE = EXIT_TERMINAL
#: Java's ``Long.MAX_VALUE``: the largest commit identifier a snapshot can hold.
LONG_MAX = 2**63 - 1


class UsageError(ValueError):
    """A bad command-line argument."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status:
            raise UsageError(message or f"{self.prog}: exit {status}")
        raise SystemExit(status)  # --help


@dataclass(frozen=True)
class JobConfig:
    """What every job needs: where the table is and how to run Spark."""

    job: str
    warehouse: str
    table: str
    master: str | None = None
    driver_memory: str | None = None
    app_name: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    storage_options: Mapping[str, str] = field(default_factory=dict)
    #: record the run in the warehouse's maintenance ledger (created if missing); ``--no-ledger``: not
    ledger: bool = True

    def session_config(self) -> SessionConfig:
        """The SparkSession settings of this run (executors of an S3 warehouse get the driver's
        S3 environment, see :func:`spark_jobs.common.session.s3_executor_env`)."""
        return SessionConfig(
            app_name=self.app_name or f"paimon-{self.job}-{self.table}",
            master=self.master,
            driver_memory=self.driver_memory,
            conf=dict(self.conf),
            executor_env=s3_executor_env(self.warehouse),
        )


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def parse_partition_specs(text: str, *, name: str = "partitions") -> tuple[dict[str, str], ...]:
    """Paimon's partition argument ``'k=v,k2=v2;k=v3'`` as specs (paimon_core's
    :func:`~paimon_core.operation.compact.compact_planner.parse_partitions`); :class:`UsageError`
    when a segment is not ``key=value[,key=value...]`` or the argument names no partition at
    all (empty segments between specs are ignored, as Paimon does)."""
    from paimon_core.exceptions import InvalidArgumentError
    from paimon_core.operation.compact.compact_planner import parse_partitions

    try:
        specs = parse_partitions(text)
    except InvalidArgumentError as e:
        raise UsageError(f"{_flag(name)}: {e}") from None
    if not specs:
        raise UsageError(
            f"{_flag(name)} names no partition (got {text!r}); give 'k=v[,k2=v2][;k=v3...]', "
            "or leave it out to cover every partition"
        )
    return tuple(dict(s) for s in specs)


def parse_options(text: str | None, *, name: str = "options") -> dict[str, str]:
    """Paimon's table-options argument ``'k=v,k2=v2'`` (``compact``'s ``options``,
    ``compact_database``'s ``table_options``, the migrations' ``options``) as a dict; empty items
    are ignored; :class:`UsageError` naming the argument and the item for one without ``=`` or
    without a key."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{_flag(name)} must be 'k=v[,k2=v2]', got {item.strip()!r} in {text!r}")
        out[key.strip()] = value.strip()
    return out


#: One item of a bucket list: a bucket or a closed range (Java's ``ParameterUtils.INTEGER_RANGE``).
_BUCKET_ITEM = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")

#: The most buckets one ``--buckets`` may name (a range like ``'0-99999999'`` would only build a
#: huge set; no table has that many buckets).
MAX_BUCKETS_LISTED = 1 << 20


def parse_bucket_list(text: str, *, name: str = "buckets") -> frozenset[int]:
    """``'0,3'``, ``'0-999'`` or ``'0,3,5-7'`` as bucket numbers, parsed as Java's
    ``ParameterUtils.parseIntegerRanges`` (``CompactProcedure``'s ``buckets``): comma-separated
    buckets and closed ranges ``start-end``. :class:`UsageError` naming the item for an empty list
    or item (``''``, ``','``, ``'0,,3'``), a non-integer (``'a-b'``), a negative bucket (``'-1'``)
    or a range whose start is above its end (``'5-3'``). The table's upper bound is checked by
    the job once the table is open."""
    flag = _flag(name)
    if not text.strip():
        raise UsageError(f"{flag} names no bucket (got {text!r}); give e.g. '0,3' or '0-999', or leave it out")
    buckets: set[int] = set()
    for token in text.split(","):
        item = token.strip()
        if not item:
            raise UsageError(f"{flag} has an empty item in {text!r}; give e.g. '0,3,5-7'")
        if item.startswith("-") and item[1:].strip().isdigit():
            raise UsageError(f"{flag}: buckets are numbered from 0, got {item!r}")
        m = _BUCKET_ITEM.fullmatch(item)
        if m is None:
            raise UsageError(f"{flag}: {item!r} is not a bucket or a range like '0-999' (in {text!r})")
        start = int(m.group(1))
        end = start if m.group(2) is None else int(m.group(2))
        if start > end:
            raise UsageError(f"{flag}: range {item!r} starts above its end ({start} > {end})")
        if end - start + len(buckets) >= MAX_BUCKETS_LISTED:
            raise UsageError(f"{flag}: {item!r} names more than {MAX_BUCKETS_LISTED} buckets")
        buckets.update(range(start, end + 1))
    return frozenset(buckets)


def _as_int(name: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise UsageError(f"{_flag(name)} must be an integer, got {value!r}") from None


def check_argument(name: str, value: object) -> None:
    """The shared rule of argument ``name`` (a flag's ``dest``, e.g. ``commit_identifier``), if it
    has one: :class:`UsageError` naming the argument and the value when ``value`` breaks it."""
    if value is None or isinstance(value, bool):
        return
    key = name.replace("-", "_")
    if key in ("partition", "partitions"):
        parse_partition_specs(str(value), name=name)
    elif key == "buckets":
        parse_bucket_list(str(value), name=name)
    elif key == "commit_identifier":
        n = _as_int(name, value)
        if not 0 <= n <= LONG_MAX:
            raise UsageError(f"{_flag(name)} must be from 0 to {LONG_MAX}, got {n}")
    elif key.endswith("parallelism"):
        n = _as_int(name, value)
        if n < 1:
            raise UsageError(f"{_flag(name)} must be at least 1, got {n}")


def base_parser(job: str, description: str, *, table: bool = True) -> argparse.ArgumentParser:
    """A parser with the common flags; add the job's own flags to it. ``table=False``: the job
    takes no ``--table`` (a job over a whole warehouse, such as ``compact_database``)."""
    p = _Parser(prog=f"python -m spark_jobs {job}", description=description)
    p.add_argument("--warehouse", required=True, help="warehouse path or URL")
    if table:
        p.add_argument("--table", required=True, help="target table, DB.TABLE")
    p.add_argument(
        "--master", help="Spark master (default: $SPARK_MASTER, else local[*]; spark-submit's wins)"
    )
    p.add_argument("--driver-memory", help="driver memory, e.g. 2g (default: $SPARK_DRIVER_MEMORY)")
    p.add_argument("--app-name", help="Spark application name")
    p.add_argument("--conf", action="append", default=[], metavar="K=V", help="Spark conf (repeatable)")
    p.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="K=V",
        help="fsspec storage option of the warehouse (repeatable)",
    )
    p.add_argument(
        "--no-ledger",
        dest="no_ledger",
        action="store_true",
        help="record nothing in the warehouse's maintenance ledger (paimon_maintenance.ledger), do not create it",
    )
    p.add_argument(
        "--result-file",
        metavar="PATH",
        help="also write the JSON result line to this file (through the warehouse's FileIO; "
        "for spark-submit's cluster deploy mode, where the driver's stdout stays on the cluster)",
    )
    return p


def _values(argv: Sequence[str], flag: str) -> list[str]:
    found = []
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            found.append(str(argv[i + 1]))
        elif arg.startswith(flag + "="):
            found.append(arg.split("=", 1)[1])
    return found


def use_result_file(argv: Sequence[str]) -> ResultFile | None:
    """The ``--result-file`` of ``argv`` (with ``--warehouse`` and ``--storage-option``), made the
    target of the job's result line (:func:`spark_jobs.common.output.set_result_file`), so that
    even a line for an argument the parser rejects reaches it. Read before parsing; never raises."""
    paths = [p.strip() for p in _values(argv, "--result-file") if p.strip()]
    if not paths:
        return None
    warehouses = [w.strip() for w in _values(argv, "--warehouse") if w.strip()]
    try:
        options = parse_conf_pairs(_values(argv, "--storage-option"))
    except ValueError:
        options = {}
    target = ResultFile(paths[-1], warehouses[-1] if warehouses else None, options)
    set_result_file(target)
    return target


def parse_job_args(
    job: str, parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> tuple[JobConfig, argparse.Namespace]:
    """Parse ``argv``; returns the common :class:`JobConfig` and the full namespace."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if parser in _VALUED_DRY_RUN:  # add_dry_run_flag's flag (not a job's own --dry-run switch)
        argv = _explicit_dry_run(argv)
    use_result_file(argv)
    ns = parser.parse_args(argv)
    for name, value in vars(ns).items():
        check_argument(name, value)
    table = (getattr(ns, "table", None) or "*.*").strip()
    if table != "*.*" and (table.count(".") != 1 or not all(table.split("."))):
        raise UsageError(f"--table must be DB.TABLE, got {ns.table!r}")
    if not ns.warehouse.strip():
        raise UsageError("--warehouse must not be empty")
    try:
        conf = parse_conf_pairs(ns.conf)
        storage = parse_conf_pairs(ns.storage_option)
    except ValueError as e:
        raise UsageError(f"--conf/--storage-option: {e}") from None
    config = JobConfig(
        job=job,
        warehouse=ns.warehouse.strip(),
        table=table,
        master=ns.master,
        driver_memory=ns.driver_memory,
        app_name=ns.app_name,
        conf=conf,
        storage_options=storage,
        ledger=not getattr(ns, "no_ledger", False),
    )
    return config, ns


#: The spellings of every job's dry-run flag.
DRY_RUN_FLAGS = ("--dry-run", "--dry_run")
#: The parsers whose dry-run flag takes a value (:func:`add_dry_run_flag`).
_VALUED_DRY_RUN: weakref.WeakSet[argparse.ArgumentParser] = weakref.WeakSet()
_BOOL_WORDS = {"true": True, "false": False}


def _bool_word(text: str) -> bool:
    value = _BOOL_WORDS.get(str(text).strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"must be true or false, got {text!r}")
    return value


def _explicit_dry_run(argv: Sequence[str]) -> list[str]:
    """``--dry-run`` not followed by ``true``/``false`` becomes ``--dry-run=true``, so a bare flag
    never takes the next (positional) argument as its value."""
    out = list(argv)
    for i, arg in enumerate(out):
        following = out[i + 1].strip().lower() if i + 1 < len(out) else None
        if arg in DRY_RUN_FLAGS and following not in _BOOL_WORDS:
            out[i] = f"{arg}=true"
    return out


def add_dry_run_flag(parser: argparse.ArgumentParser, *, default: bool, help: str) -> None:  # noqa: A002 - argparse's name
    """``--dry-run [BOOL]``: bare or ``true`` reports and changes nothing, ``false`` changes;
    absent: ``default``, the action's one default on every entry point
    (:func:`paimon_core.table.maintenance.dry_run_defaults`). Where that is true the help says
    how this differs from Paimon's procedure of the same name, which applies unless told."""
    note = (
        "; unlike Paimon's procedure, which applies unless told: pass --dry-run false to apply"
        if default
        else ""
    )
    _VALUED_DRY_RUN.add(parser)
    parser.add_argument(
        *DRY_RUN_FLAGS,
        dest="dry_run",
        nargs="?",
        const=True,
        default=default,
        type=_bool_word,
        metavar="BOOL",
        help=f"{help} (default: {str(default).lower()}{note})",
    )
