"""Command-line arguments shared by every job, parsed into a frozen :class:`JobConfig`.

Common flags: ``--warehouse`` and ``--table`` (required), ``--master``, ``--driver-memory``,
``--conf k=v`` (repeatable), ``--app-name``, ``--storage-option k=v`` (fsspec options of the
warehouse), ``--no-ledger`` (record nothing in the warehouse's maintenance ledger and do not create
it; see :mod:`spark_jobs.common.ledger`). Each job adds its own flags with :func:`base_parser` and reads them from the
returned namespace. A bad argument raises :class:`UsageError` (the job prints it as its JSON
line and exits 2) instead of argparse's ``SystemExit``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from spark_jobs.common.session import SessionConfig, parse_conf_pairs, s3_executor_env

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "JobConfig", "UsageError", "base_parser", "parse_job_args"]

EXIT_FAILURE = 1
EXIT_USAGE = 2


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
    return p


def parse_job_args(
    job: str, parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> tuple[JobConfig, argparse.Namespace]:
    """Parse ``argv``; returns the common :class:`JobConfig` and the full namespace."""
    ns = parser.parse_args(argv)
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
