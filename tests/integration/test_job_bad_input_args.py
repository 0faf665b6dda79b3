"""Shared argument rules of every job (issue 27, item 6): a partition argument that names no
partition (``';;;'``, ``';'``), a negative commit identifier, a parallelism below 1 and buckets
outside the table are refused with exit 2, one JSON error line (``retryable: false``) naming the
argument, and nothing in the warehouse changes.

The jobs and their arguments are enumerated from the code: every job of :data:`spark_jobs.JOBS`
(what ``python -m spark_jobs`` runs), every flag its ``--help`` lists, so a job or argument added
later is covered without editing this file. No Spark session starts: every refusal comes before one.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.schema.schema_change import SetOption
from spark_jobs import JOBS
from spark_jobs.common.args import EXIT_USAGE

#: Shared rules by argument name (``dest``, dashes as underscores): bad values, and a good one
#: where the flag must still be accepted.
PARTITION_NAMES = ("partition", "partitions")
BAD: dict[str, tuple[str, ...]] = {
    "partition": (";;;", ";", " ; ", ","),
    "partitions": (";;;", ";", " ; ", ","),
    "commit_identifier": ("-1", "-9223372036854775808", "9223372036854775808"),
    "parallelism": ("0", "-3"),
    "buckets": ("-1", ",", ""),
}


def _rule(flag: str) -> str | None:
    name = flag.lstrip("-").replace("-", "_")
    if name in BAD:
        return name
    if name.endswith("parallelism"):
        return "parallelism"
    return None


@cache
def _help(job: str) -> str:
    module = importlib.import_module(JOBS[job])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as info:
        module.main(["--help"])
    assert info.value.code in (0, None), job
    return out.getvalue()


def _flags(job: str) -> list[str]:
    """Every long flag of the job (the first spelling of each argument)."""
    text = _help(job).split("\n\n", 1)[1]  # past the usage line: the option list
    return sorted({m.group(1) for m in re.finditer(r"^\s+(--[\w.-]+)", text, re.M)})


def _required(job: str) -> list[str]:
    """Flags the usage line shows without brackets (required), besides --warehouse/--table."""
    usage = _help(job).split("\n\n", 1)[0]
    while re.search(r"\[[^\[\]]*\]", usage):
        usage = re.sub(r"\[[^\[\]]*\]", "", usage)
    return [f for f in re.findall(r"(--[\w.-]+)", usage) if f not in ("--warehouse", "--table")]


def _cases() -> Iterator[tuple[str, str, str]]:
    for job in sorted(JOBS):
        for flag in _flags(job):
            rule = _rule(flag)
            for value in BAD.get(rule or "", ()):
                yield job, flag, value


CASES = list(_cases())


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
    }


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("bad-args") / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("v", pa.int64())])
    t = catalog.create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"})
    for i in range(2):
        t.write_arrow(pa.table({"id": pa.array([i, i + 1], pa.int64()), "dt": ["a", "b"], "v": pa.array([i, i], pa.int64())}))
    return wh


def _run(job: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    module = importlib.import_module(JOBS[job])
    capsys.readouterr()
    rc = module.main(argv)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 1, (job, argv, lines)
    return rc, json.loads(lines[0])


def _base(job: str, wh: str) -> list[str]:
    argv = ["--warehouse", wh, "--no-ledger"]
    if "--table" in _flags(job):
        argv += ["--table", "db.t"]
    for flag in _required(job):
        argv += [flag, "x"]
    return argv


def test_enumeration_finds_the_shared_arguments() -> None:
    """The enumeration sees the arguments the issue names (a floor, not the list)."""
    found = {(job, _rule(flag)) for job, flag, _ in CASES}
    for expected in [
        ("compact", "partitions"), ("mark_partition_done", "partitions"), ("rescale", "partition"),
        ("compact", "commit_identifier"), ("compact_database", "commit_identifier"),
        ("compact", "parallelism"), ("remove_orphan_files", "parallelism"),
        ("remove_unexisting_files", "parallelism"), ("compact", "buckets"),
    ]:  # fmt: skip
        assert expected in found, (expected, sorted(found))


@pytest.mark.parametrize(("job", "flag", "value"), CASES, ids=[f"{j}-{f}={v!r}" for j, f, v in CASES])
def test_bad_shared_argument_is_refused(
    job: str, flag: str, value: str, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(warehouse)
    before = _snapshot(root)
    rc, line = _run(job, [*_base(job, warehouse), f"{flag}={value}"], capsys)
    assert rc == EXIT_USAGE, line
    assert line["status"] == "error" and line["retryable"] is False and line["error_type"] == "UsageError", line
    name = flag.lstrip("-")
    assert any(f"--{n}" in line["error"] for n in (name, name.replace("_", "-"))), line
    assert _snapshot(root) == before, f"{job} {flag}={value!r} changed the warehouse"


def test_positional_partition_spec_is_refused(warehouse: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Procedure jobs take Paimon's arguments positionally too: a partition argument in the first
    position (its place in Paimon's order) is checked the same way."""
    checked = 0
    for job in sorted(JOBS):
        params = [p for p in getattr(importlib.import_module(JOBS[job]), "PARAMS", ()) if p.kind != "flag"]
        if params and params[0].name in PARTITION_NAMES:
            before = _snapshot(Path(warehouse))
            rc, line = _run(job, [*_base(job, warehouse), ";;;"], capsys)
            assert rc == EXIT_USAGE and line["retryable"] is False and "names no partition" in line["error"], line
            assert _snapshot(Path(warehouse)) == before
            checked += 1
    assert checked >= 2  # compact, mark_partition_done


def test_compact_buckets_outside_the_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``--buckets`` beyond ``bucket - 1`` is refused (exit 2, nothing written); a bucket of the
    table is compacted; a bucket only a partition written before a rescale still holds is accepted."""
    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string())])
    t = catalog.create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "4"})
    for _ in range(2):
        t.write_arrow(pa.table({"id": pa.array(range(40), pa.int64()), "dt": ["a"] * 40}))
    held = sorted({e.bucket for e in t.new_file_store_scan().live_entries(t.latest_snapshot())})
    assert held == [0, 1, 2, 3]
    base = ["--warehouse", wh, "--table", "db.t", "--mode", "local", "--no-ledger"]
    for bad in ("4", "0,4", "99"):
        before = _snapshot(Path(wh))
        rc, line = _run("compact", [*base, "--buckets", bad], capsys)
        assert rc == EXIT_USAGE and line["retryable"] is False and "has buckets 0 to 3" in line["error"], line
        assert _snapshot(Path(wh)) == before
    rc, line = _run("compact", [*base, "--buckets", "3"], capsys)
    assert rc == 0 and line["tasks"] == 1, line
    catalog.alter_table("db.t", [SetOption("bucket", "2")])
    rc, line = _run("compact", [*base, "--buckets", "3", "--dry-run"], capsys)  # dt=a still has 4 buckets
    assert rc == 0, line
    rc, line = _run("compact", [*base, "--buckets", "4"], capsys)
    assert rc == EXIT_USAGE and "has buckets 0 to 1" in line["error"], line
    assert os.path.isdir(os.path.join(wh, "db.db", "t"))
