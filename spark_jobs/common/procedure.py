"""Shared shape of the metadata procedure jobs (expire_snapshots, create_tag, rollback_to ...).

Each procedure job is a thin command line over one :class:`~paimon_core.table.table.FileStoreTable`
facade call, with Paimon's procedure argument names and order (``CALL sys.expire_snapshots(table,
retain_max, retain_min, older_than, max_deletes)``):

* every argument is a flag in both spellings, ``--retain-max 5`` and ``--retain_max 5`` (plus
  Paimon's older camelCase names where they differ, e.g. ``--nextSnapshotId``);
* the arguments may also be given positionally after the flags, in Paimon's order
  (``expire_snapshots --warehouse W --table db.t 5 2``); giving one both ways is an error;
* ``--dry-run [BOOL]`` where the core call takes ``dry_run`` (bare or ``true``: report only;
  ``false``: change), defaulting to the call's own default (``dry_run_default``; true for the
  calls that drop something on request, whose help says so: Paimon's procedures apply);
* a ``bool`` argument (Paimon's BOOLEAN, e.g. ``expire_changelogs``' ``delete_all``) is a switch
  (``--delete-all``) that also takes a value (``--delete-all false``) and may be positional
  (``true``/``false``).

The shared argument rules (non-empty ``partitions``, ``commit_identifier`` >= 0, ``parallelism`` >= 1
...: :func:`spark_jobs.common.args.check_argument`) apply to flags and positional arguments alike.

The job prints exactly one JSON line: the core result's ``to_dict()`` plus ``job``, ``status``
and ``table``; on a bad argument it prints an error line and exits 2, on a core
:class:`~paimon_core.PaimonError` (missing table, unknown tag, invalid retention...) exits 3, or 75
when a retry may succeed (a commit conflict): the job runner's contract,
:func:`spark_jobs.common.runner.run_job`, which :func:`run_procedure` uses.

Each run is one row of the warehouse's maintenance ledger (``paimon_maintenance.ledger``, created
if missing; ``--no-ledger`` records nothing): see :mod:`spark_jobs.common.ledger`.

These jobs only read and write metadata files, so they never start a Spark session (a JVM launch
costs seconds): nothing here imports pyspark. Run them with ``python -m spark_jobs <job>``;
``spark-submit`` works too but only adds the JVM start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from paimon_core.table.table import FileStoreTable
from spark_jobs.common.args import (
    JobConfig,
    UsageError,
    add_dry_run_flag,
    base_parser,
    check_argument,
    parse_job_args,
)
from spark_jobs.common.ledger import job_action, job_catalog
from spark_jobs.common.runner import run_job

__all__ = ["Param", "ProcedureArgs", "open_table", "parse_procedure_args", "result_dict", "run_procedure"]


@dataclass(frozen=True)
class Param:
    """One procedure argument: Paimon's name, its type, and whether it must be given."""

    name: str
    kind: Literal["int", "str", "flag", "bool"]  # flag: a switch, never positional; bool: switch or true/false
    help: str
    required: bool = False
    aliases: tuple[str, ...] = ()  # other accepted flag names (Paimon's camelCase ones)
    default: bool | int | str | None = None  # the value when not given (shown in the help)

    def flags(self) -> list[str]:
        names = [self.name.replace("_", "-"), self.name, *self.aliases]
        return [f"--{n}" for n in dict.fromkeys(names)]


@dataclass(frozen=True)
class ProcedureArgs:
    """The parsed command line: the common config, the procedure arguments, and dry_run."""

    config: JobConfig
    values: Mapping[str, Any]
    dry_run: bool = False

    def get(self, name: str) -> Any:
        return self.values.get(name)


def _convert(param: Param, raw: str) -> int | str | bool:
    value = _typed(param, raw)
    check_argument(param.name, value)  # the shared rules (partitions, commit_identifier, parallelism ...)
    return value


def _typed(param: Param, raw: str) -> int | str | bool:
    if param.kind == "bool":
        text = raw.strip().lower()
        if text not in ("true", "false"):
            raise UsageError(f"--{param.name.replace('_', '-')} must be true or false, got {raw!r}")
        return text == "true"
    if param.kind == "int":
        try:
            return int(raw.strip())
        except ValueError:
            raise UsageError(f"--{param.name.replace('_', '-')} must be an integer, got {raw!r}") from None
    if not raw.strip():
        raise UsageError(f"--{param.name.replace('_', '-')} must not be empty")
    return raw.strip()


def parse_procedure_args(
    job: str,
    description: str,
    params: Sequence[Param],
    argv: Sequence[str] | None,
    *,
    dry_run: bool,
    dry_run_default: bool = False,
    table: bool = True,
) -> ProcedureArgs:
    """Parse flags and positional arguments (in ``params`` order) into :class:`ProcedureArgs`.

    ``dry_run``: the job has ``--dry-run [BOOL]``, absent meaning ``dry_run_default``.
    ``table=False``: a warehouse-wide job without ``--table``."""
    parser = base_parser(job, description, table=table)
    for p in params:
        text = p.help if p.default is None else f"{p.help} (default: {str(p.default).lower()})"
        if p.kind == "flag":
            parser.add_argument(*p.flags(), dest=p.name, action="store_true", help=text)
        elif p.kind == "bool":
            parser.add_argument(*p.flags(), dest=p.name, nargs="?", const="true", metavar="BOOL", help=text)
        else:
            parser.add_argument(*p.flags(), dest=p.name, metavar=p.name.upper(), help=text)
    switches = [p for p in params if p.kind == "flag"]
    params = [p for p in params if p.kind != "flag"]
    parser.add_argument(
        "positional",
        nargs="*",
        metavar="ARG",
        help=f"arguments in Paimon's order: {', '.join(p.name for p in params)}",
    )
    if dry_run:
        add_dry_run_flag(parser, default=dry_run_default, help="report what would change; change nothing")
    config, ns = parse_job_args(job, parser, argv)
    positional: list[str] = list(ns.positional)
    if len(positional) > len(params):
        raise UsageError(f"too many arguments {positional}; {job} takes {', '.join(p.name for p in params)}")
    values: dict[str, Any] = {p.name: True for p in switches if getattr(ns, p.name)}
    for i, p in enumerate(params):
        flag_value: str | None = getattr(ns, p.name)
        pos_value = positional[i] if i < len(positional) else None
        if flag_value is not None and pos_value is not None:
            raise UsageError(f"{p.name} given twice: as --{p.name.replace('_', '-')} and as argument {i + 1}")
        raw = flag_value if flag_value is not None else pos_value
        if raw is None:
            if p.required:
                raise UsageError(f"missing required argument --{p.name.replace('_', '-')}")
            if p.default is not None:
                values[p.name] = p.default
            continue
        values[p.name] = _convert(p, raw)
    # a Paimon BOOLEAN argument named dry_run (remove_unexisting_files, expire_partitions) is the
    # job's dry run: its converted value, not the raw text ("false" is a true string)
    dry = values["dry_run"] if "dry_run" in values else getattr(ns, "dry_run", False)
    return ProcedureArgs(config=config, values=values, dry_run=dry is True)


def open_table(config: JobConfig) -> FileStoreTable:
    """The job's table (TableNotFoundError / DatabaseNotFoundError if it does not exist)."""
    return job_catalog(config).get_table(config.table)


def result_dict(result: object) -> dict[str, Any]:
    """A JSON-safe dict of a core result (``to_dict()``; a tag's snapshot as a short summary),
    as the maintenance ledger records it (:func:`paimon_core.ledger.recorder.result_dict`)."""
    from paimon_core.ledger.recorder import result_dict as ledger_result_dict

    return ledger_result_dict(result)


def run_procedure(
    job: str,
    argv: Sequence[str] | None,
    parse: Callable[[Sequence[str]], ProcedureArgs],
    call: Callable[[FileStoreTable, ProcedureArgs], Mapping[str, Any]],
) -> int:
    """Parse, open the table, run ``call``, print one JSON line; returns the exit code. The run
    is one row of the warehouse's maintenance ledger (:func:`spark_jobs.common.runner.run_job`
    with ``ledger="table"``); no Spark session."""
    return run_job(job, argv, parse, lambda ctx: call(ctx.table(), ctx.args), action=lambda a: job_action(job, a))
