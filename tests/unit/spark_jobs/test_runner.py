"""One runner for every job (issue 26): :func:`spark_jobs.common.runner.run_job`.

* The shape of every job module of :data:`spark_jobs.JOBS` (enumerated, so a job added later is
  checked without editing this file), read with :mod:`ast`: ``main`` is one ``return run_job(...)``
  or ``return run_procedure(...)``, and the module does none of what the runner owns itself (exit
  codes, the JSON line, logging set-up, the result file, creating or stopping a Spark session,
  ``sys.exit`` outside the ``__main__`` guard). The checker is shown to catch a hand-rolled
  ``main`` like the ones the jobs had.
* The runner's contract, in-process on a real warehouse: a late :class:`UsageError` exits 2, a
  transient error 75, a terminal one 3, each with one JSON line; a payload whose status is
  ``error`` exits by its ``retryable``; a job declared without Spark cannot start a session; the
  runner stops a session it created and never one it found running.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, SnapshotNotFoundError
from spark_jobs import JOBS
from spark_jobs.common.args import UsageError, base_parser, parse_job_args
from spark_jobs.common.output import EXIT_TERMINAL, EXIT_TRANSIENT, EXIT_USAGE
from spark_jobs.common.runner import JobContext, run_job

#: What only the runner may do: names (imported or used) and attributes (``x.stop()``).
RUNNER_NAMES = frozenset(
    {
        "emit",
        "emit_error",
        "exit_code_for",
        "configure_logging",
        "set_result_file",
        "use_result_file",
        "get_spark",
        "EXIT_OK",
        "EXIT_USAGE",
        "EXIT_TERMINAL",
        "EXIT_TRANSIENT",
        "EXIT_FAILURE",
        "SystemExit",
    }
)
RUNNER_ATTRIBUTES = frozenset({"getActiveSession", "getOrCreate", "builder", "stop", "exit"})
#: The calls a job's ``main`` hands itself to.
RUNNERS = frozenset({"run_job", "run_procedure"})


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _called_name(call: ast.expr) -> str | None:
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def runner_violations(source: str) -> list[str]:
    """What a job module does that the runner owns (empty: the module leaves it to the runner)."""
    tree = ast.parse(source)
    found: list[str] = []
    body = [n for n in tree.body if not _is_main_guard(n)]  # `sys.exit(main())` under the guard is the CLI's
    mains = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    if len(mains) != 1:
        found.append("no main() function")
    else:
        stmts = [s for s in mains[0].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if not (len(stmts) == 1 and isinstance(stmts[0], ast.Return) and _called_name(stmts[0].value) in RUNNERS):
            found.append(f"main() is not one `return run_job(...)` / `return run_procedure(...)` (line {mains[0].lineno})")
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id in RUNNER_NAMES:
            found.append(f"uses {node.id} (line {node.lineno})")
        elif isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] in RUNNER_NAMES:
            found.append(f"imports {node.name}")
        elif isinstance(node, ast.Attribute) and node.attr in RUNNER_ATTRIBUTES | RUNNER_NAMES:
            found.append(f"uses .{node.attr} (line {node.lineno})")
    return found


def _source(module: str) -> str:
    return Path(inspect.getfile(importlib.import_module(module))).read_text()


@pytest.mark.parametrize("job", sorted(JOBS))
def test_every_job_leaves_exit_codes_output_and_spark_to_the_runner(job: str) -> None:
    assert runner_violations(_source(JOBS[job])) == [], f"spark_jobs.{job}: move it onto spark_jobs.common.runner.run_job"


def test_run_procedure_is_a_use_of_the_runner() -> None:
    from spark_jobs.common import procedure

    tree = ast.parse(_source("spark_jobs.common.procedure"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run_procedure")
    stmts = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    assert len(stmts) == 1 and isinstance(stmts[0], ast.Return) and _called_name(stmts[0].value) == "run_job"
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
    }
    assert not names & RUNNER_NAMES, sorted(names & RUNNER_NAMES)
    assert procedure.run_procedure.__module__ == "spark_jobs.common.procedure"


def test_the_check_catches_a_hand_rolled_main() -> None:
    """The shape the jobs had before the runner (ingest's, compact_database's): every piece is named."""
    hand_rolled = textwrap.dedent(
        '''
        import sys
        from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE, UsageError
        from spark_jobs.common.output import configure_logging, emit, emit_error


        def main(argv=None):
            """Entry point."""
            configure_logging()
            try:
                plan = parse_args(argv)
            except UsageError as e:
                return emit_error(JOB, e, exit_code=EXIT_USAGE)
            from pyspark.sql import SparkSession
            from spark_jobs.common.session import get_spark

            existing = SparkSession.getActiveSession()
            spark = get_spark(plan.config.session_config())
            try:
                emit(run(spark, plan))
            finally:
                spark.stop()
            return 0


        if __name__ == "__main__":
            sys.exit(main())
        '''
    )
    found = " | ".join(runner_violations(hand_rolled))
    for piece in ("main() is not one", "EXIT_USAGE", "configure_logging", "emit_error", "get_spark",
                  ".getActiveSession", ".stop"):  # fmt: skip
        assert piece in found, (piece, found)
    assert runner_violations("import sys\n\ndef main(argv=None):\n    return run_job('j', argv, p, b)\n") == []
    assert "uses .exit" in " | ".join(runner_violations("import sys\n\ndef main(argv=None):\n    sys.exit(run_job())\n"))


# --- the runner's contract -------------------------------------------------------------------------


class _Args:
    def __init__(self, config: Any) -> None:
        self.config = config
        self.dry_run = False


def _parse(argv: Any) -> _Args:
    parser = base_parser("probe", "A probe job.")
    config, _ = parse_job_args("probe", parser, argv)
    return _Args(config)


@pytest.fixture
def wh(tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.write_arrow(pa.table({"id": pa.array([1], pa.int64())}))
    return wh


def _run(
    wh: str, body: Any, capsys: pytest.CaptureFixture[str], *, table: str = "db.t", **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = run_job("probe", ["--warehouse", wh, "--table", table, "--no-ledger"], _parse, body, **kwargs)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return rc, json.loads(lines[0])


def _raises(error: BaseException) -> Any:
    def body(ctx: JobContext[_Args]) -> Mapping[str, Any]:
        ctx.table()
        raise error

    return body


def test_exit_codes_of_a_body(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, line = _run(wh, lambda ctx: {"rows": ctx.table().to_arrow().num_rows}, capsys)
    assert rc == 0 and line == {"job": "probe", "status": "ok", "table": "db.t", "rows": 1}
    for error, code, retryable in (
        (UsageError("--tag must name a tag"), EXIT_USAGE, False),  # refused after parsing: still a usage error
        (CommitConflictError("a concurrent commit"), EXIT_TRANSIENT, True),
        (SnapshotNotFoundError("no snapshot 9"), EXIT_TERMINAL, False),
        (KeyError("a bug"), EXIT_TERMINAL, False),
    ):
        rc, line = _run(wh, _raises(error), capsys)
        assert (rc, line["status"], line["retryable"], line["error_type"]) == (
            code, "error", retryable, type(error).__name__
        ), line  # fmt: skip
    rc, line = _run(wh, lambda ctx: {}, capsys, table="db.missing")
    assert rc == 0  # the body never opened it
    rc, line = _run(wh, lambda ctx: ctx.table() and {}, capsys, table="db.missing")
    assert rc == EXIT_TERMINAL and line["error_type"] == "TableNotFoundError", line


def test_a_payload_with_status_error_exits_by_its_retryable(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    for retryable, code in ((True, EXIT_TRANSIENT), (False, EXIT_TERMINAL)):
        rc, line = _run(wh, lambda ctx, r=retryable: {"status": "error", "retryable": r, "tables": []}, capsys)
        assert rc == code and line["status"] == "error", line


def test_a_job_without_spark_cannot_start_one(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, line = _run(wh, lambda ctx: {"spark": str(ctx.spark())}, capsys)
    assert rc == EXIT_TERMINAL and "needs_spark=False" in line["error"], line


class _Session:
    def __init__(self) -> None:
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1


@pytest.mark.parametrize("active", [False, True])
def test_the_runner_stops_only_a_session_it_created(
    wh: str, active: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in session (the real ones: tests/integration/test_spark_compact.py keeps a shared
    session running across ``main()``; the CLI tests start and end their own)."""
    from pyspark.sql import SparkSession

    session = _Session()
    monkeypatch.setattr("spark_jobs.common.session.get_spark", lambda config: session)
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: session if active else None))
    for body in (lambda ctx: {"same": ctx.spark() is ctx.spark()}, _raises(CommitConflictError("x"))):
        session.stopped = 0
        rc, line = _run(wh, lambda ctx, b=body: (ctx.spark(), b(ctx))[1], capsys, needs_spark=True)
        assert session.stopped == (0 if active else 1), (active, line)
    session.stopped = 0
    rc, line = _run(wh, lambda ctx: {}, capsys, needs_spark=True)  # never asked for: never created
    assert rc == 0 and session.stopped == 0
