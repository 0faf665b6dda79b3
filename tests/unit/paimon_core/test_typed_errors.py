"""Typed errors (issue 26): context in typed fields, storage errors classified at the FileIO
boundary, and job exit codes that agree with the ``retryable`` verdict.

* No error context is set with ``setattr`` or read back by name (``getattr(e, "snapshot_id")``)
  in the product code (an AST scan of every module), and every class of the exception tree
  (enumerated from :mod:`paimon_core.exceptions`) pickles with its typed fields.
* Every path-taking FileIO call of :class:`LocalFileIO` and :class:`FsspecFileIO` raises
  ``PermissionError`` / S3 ``AccessDenied`` as a terminal :class:`FileIOPermissionError`, a
  missing file as a terminal :class:`FileIONotFoundError` (still a ``FileNotFoundError``), and any
  other ``OSError`` as a transient :class:`FileIOError`.
* Every job of :data:`spark_jobs.JOBS` that runs without Spark, hit by a storage timeout
  (:class:`~tests.fixtures.failing_file_io.FailingFileIO`), reports ``retryable: true`` and exits
  75; a permission error reports ``retryable: false`` and exits 3.
"""

from __future__ import annotations

import ast
import errno
import importlib
import inspect
import json
import pickle
from pathlib import Path
from typing import Any

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from paimon_core import exceptions as paimon_exceptions
from paimon_core.exceptions import (
    FileIOError,
    FileIONotFoundError,
    FileIOPermissionError,
    PaimonError,
    TerminalError,
    TransientError,
)
from paimon_core.io.file_io import FileIO, classify_io_error
from paimon_core.io.fsspec_io import FsspecFileIO
from paimon_core.io.local_io import LocalFileIO
from spark_jobs import JOBS
from spark_jobs.common.output import EXIT_TERMINAL, EXIT_TRANSIENT, exit_code_for, is_retryable
from tests.fixtures.failing_file_io import FailingFileIO, install_for_warehouse
from tests.unit.paimon_core.ledger.job_scenarios import SCENARIOS, prepare

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = ("paimon_core", "spark_jobs", "plugins", "dags")
ERRORS = sorted(
    (c for c in vars(paimon_exceptions).values() if isinstance(c, type) and issubclass(c, PaimonError)),
    key=lambda c: c.__name__,
)


# --- fields, not setattr --------------------------------------------------------------------


def _by_name_accesses(tree: ast.AST) -> list[tuple[int, str]]:
    """``getattr(e, "name")`` / ``setattr(e, "name", ...)`` on an exception bound by
    ``except ... as e``, and any ``setattr`` in an exception class."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.name:
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Name)
                    and inner.func.id in ("getattr", "setattr", "hasattr")
                    and inner.args
                    and isinstance(inner.args[0], ast.Name)
                    and inner.args[0].id == node.name
                ):
                    found.append((inner.lineno, ast.unparse(inner)))
        if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Name)
                    and inner.func.id == "setattr"
                ):
                    found.append((inner.lineno, ast.unparse(inner)))
    return found


def test_no_error_context_by_name() -> None:
    offenders = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, text in _by_name_accesses(ast.parse(path.read_text(), str(path))):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    assert offenders == [], "read/set error context through typed fields:\n" + "\n".join(offenders)


def _sample(annotation: Any, name: str) -> Any:
    text = str(annotation)
    if "Sequence[int]" in text:
        return (3, 4)
    if "Sequence[str]" in text:
        return ("data-1.parquet",)
    if text.startswith("int") or text == "int | None":
        return 7
    if "Any" in text:
        return {"v": 1}
    return f"{name}-value"


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_pickles_with_its_typed_fields(cls: type[PaimonError]) -> None:
    fields: dict[str, Any] = {}
    for klass in cls.__mro__:
        if not (isinstance(klass, type) and issubclass(klass, PaimonError)):
            continue
        for name, param in inspect.signature(klass.__init__).parameters.items():
            if param.kind is inspect.Parameter.KEYWORD_ONLY:
                fields.setdefault(name, _sample(param.annotation, name))
    err = cls("something failed", **fields)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cls and str(again) == "something failed"
    for name, value in fields.items():
        got = getattr(again, name)
        assert got == (tuple(value) if isinstance(value, (list, tuple)) else value), (cls.__name__, name)
    if cls not in (PaimonError, paimon_exceptions.CommitError):  # the roots: every leaf is one or the other
        assert isinstance(again, (TransientError, TerminalError)), (
            f"{cls.__name__} is neither transient nor terminal"
        )


# --- the FileIO boundary ----------------------------------------------------------------------

#: FileIO methods whose first argument is a path
PATH_METHODS = sorted(
    name
    for name, fn in inspect.getmembers(FileIO, inspect.isfunction)
    if not name.startswith("_")
    and list(inspect.signature(fn).parameters)[1:2] in (["path"], ["src"])
    and name not in ("arrow_path", "read_text", "overwrite_text", "write_hint", "list_files", "list_dirs")
)


@pytest.mark.parametrize("impl", [LocalFileIO, FsspecFileIO], ids=lambda c: c.__name__)
def test_every_path_call_of_a_file_io_is_wrapped(impl: type[FileIO]) -> None:
    assert "read_bytes" in PATH_METHODS and "rename" in PATH_METHODS
    # the calls the class implements (an inherited default such as FileIO.is_symlink does no I/O)
    own = [m for m in PATH_METHODS if m in vars(impl)]
    assert {"read_bytes", "write_bytes", "try_write_atomic", "delete", "list_status", "rename"} <= set(own)
    unwrapped = [m for m in own if not hasattr(vars(impl)[m], "__wrapped__")]
    assert unwrapped == [], f"{impl.__name__} calls without wrap_io_error: {unwrapped}"


def test_local_file_io_classifies_storage_errors(tmp_path: Path) -> None:
    io = LocalFileIO(str(tmp_path))
    with pytest.raises(FileIONotFoundError) as missing:
        io.read_bytes(str(tmp_path / "nope"))
    assert isinstance(missing.value, FileNotFoundError) and not is_retryable(missing.value)
    assert missing.value.path == str(tmp_path / "nope") and missing.value.operation == "read"
    assert missing.value.errno == errno.ENOENT
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(FileExistsError) as taken:  # a lost race is an answer, not an error to classify
        io.write_bytes(str(tmp_path / "f"), b"y")
    assert not isinstance(taken.value, PaimonError)
    assert io.list_status(str(tmp_path / "nope")) == [] and io.delete(str(tmp_path / "nope")) is False


@pytest.mark.parametrize(
    ("raised", "expected", "retryable"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), FileIOPermissionError, False),
        (FileNotFoundError(errno.ENOENT, "No such file"), FileIONotFoundError, False),
        (TimeoutError("read timed out"), FileIOError, True),
        (ConnectionResetError("connection reset by peer"), FileIOError, True),
        (OSError(errno.EIO, "I/O error"), FileIOError, True),
    ],
    ids=["permission", "not-found", "timeout", "reset", "eio"],
)
def test_failing_calls_arrive_typed(
    tmp_path: Path, raised: OSError, expected: type[PaimonError], retryable: bool
) -> None:
    io = FailingFileIO(str(tmp_path), fail_at=1, error=lambda op, path: raised)
    with pytest.raises(expected) as info:
        io.write_bytes(str(tmp_path / "f"), b"x")
    assert info.value.__cause__ is raised and is_retryable(info.value) is retryable
    assert isinstance(info.value, OSError)  # best-effort `except OSError` handlers keep working
    io.write_bytes(str(tmp_path / "f"), b"x")  # only the first call failed
    assert io.count == 2 and [f.index for f in io.failures] == [1]


def _client_error(code: str) -> Exception:
    from botocore.exceptions import ClientError  # type: ignore[import-untyped]

    error: Exception = ClientError({"Error": {"Code": code, "Message": code}}, "GetObject")
    return error


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("AccessDenied", FileIOPermissionError),
        ("403", FileIOPermissionError),
        ("NoSuchKey", FileIONotFoundError),
    ],
)
def test_s3_client_errors_are_classified(code: str, expected: type[PaimonError]) -> None:
    typed = classify_io_error(_client_error(code), "s3://b/k", "read")
    assert isinstance(typed, expected) and not is_retryable(typed)
    assert (
        classify_io_error(_client_error("SlowDown"), "s3://b/k", "read") is None
    )  # the name decides (transient)


class _DeniedFileSystem(MemoryFileSystem):
    """A store that refuses every read and listing as s3fs reports an S3 ``AccessDenied``."""

    protocol = ("denied-test",)

    @staticmethod
    def _denied() -> BaseException:
        from s3fs.errors import translate_boto_error  # type: ignore[import-untyped]

        error: BaseException = translate_boto_error(_client_error("AccessDenied"))
        return error

    def cat_file(self, path: str, start: Any = None, end: Any = None, **kwargs: Any) -> bytes:
        raise self._denied()

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> Any:
        raise self._denied()


def test_fsspec_access_denied_is_terminal() -> None:
    fsspec.register_implementation("denied-test", _DeniedFileSystem, clobber=True)
    io = FsspecFileIO("denied-test")
    for call in (lambda: io.read_bytes("denied-test://b/k"), lambda: io.list_status("denied-test://b/")):
        with pytest.raises(FileIOPermissionError) as info:
            call()
        assert isinstance(info.value, PermissionError) and not is_retryable(info.value)
        assert isinstance(info.value.__cause__, PermissionError)  # what s3fs raised


# --- exit codes -----------------------------------------------------------------------------

LOCAL_JOBS = sorted(j for j in JOBS if not SCENARIOS[j].spark)


def _run_failing(
    job: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: OSError,
) -> tuple[int, dict[str, Any]]:
    wh = str(tmp_path / "wh")
    prepared = prepare(job, wh)
    # every storage call of the job fails (its catalog, the tables it opens, its ledger)
    install_for_warehouse(monkeypatch, wh, FailingFileIO(wh, probability=1.0, error=lambda op, path: error))
    capsys.readouterr()
    rc = importlib.import_module(JOBS[job]).main(prepared.argv[1:])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, (job, lines)
    return rc, json.loads(lines[0])


def test_every_job_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(JOBS) and LOCAL_JOBS


@pytest.mark.parametrize("job", LOCAL_JOBS)
def test_a_storage_timeout_exits_transient(
    job: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, line = _run_failing(job, tmp_path, monkeypatch, capsys, TimeoutError("storage timed out"))
    assert line["status"] == "error" and line["retryable"] is True, line
    assert rc == EXIT_TRANSIENT == exit_code_for(line["retryable"]), (rc, line)


@pytest.mark.parametrize("job", LOCAL_JOBS)
def test_a_permission_error_exits_terminal(
    job: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, line = _run_failing(
        job, tmp_path, monkeypatch, capsys, PermissionError(errno.EACCES, "Access Denied")
    )
    assert line["status"] == "error" and line["retryable"] is False, line
    assert rc == EXIT_TERMINAL == exit_code_for(line["retryable"]), (rc, line)
