"""The one JSON result line every job prints on stdout (parsed by Airflow operators).

With ``--result-file PATH`` (every job takes it; :mod:`spark_jobs.common.args`), :func:`emit`
also writes the line to ``PATH`` through the warehouse's FileIO (local, ``s3://`` ...): the
result then reaches the Airflow operator however the driver runs (spark-submit's cluster deploy
mode runs it on the cluster, where its stdout never reaches the submitting task).
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = [
    "EXIT_OK",
    "EXIT_TERMINAL",
    "EXIT_TRANSIENT",
    "EXIT_USAGE",
    "TERMINAL_SQL_STATE_CLASSES",
    "TRANSIENT_SQL_STATE_CLASSES",
    "ErrorCause",
    "ResultFile",
    "configure_logging",
    "emit",
    "emit_error",
    "exit_code_for",
    "is_retryable",
    "root_cause",
    "set_result_file",
]


#: Exit codes of every job (``python -m spark_jobs <job>``); a failed job's code agrees with the
#: ``retryable`` field of its JSON line, so a caller without the line (spark-submit in cluster
#: mode, a shell) can still tell a retry from a fix. 1 stays what Python and spark-submit exit
#: with when a job crashed before reporting (no verdict: retried).
EXIT_OK = 0
#: bad arguments (``retryable: false``)
EXIT_USAGE = 2
#: failed, and the same input fails again: fix the input or the table first (``retryable: false``)
EXIT_TERMINAL = 3
#: failed, and a retry may succeed (``retryable: true``); sysexits.h ``EX_TEMPFAIL``
EXIT_TRANSIENT = 75


def exit_code_for(retryable: bool) -> int:
    """The exit code of a failed job whose JSON line says ``retryable``."""
    return EXIT_TRANSIENT if retryable else EXIT_TERMINAL


def configure_logging() -> None:
    """Job logging on stderr: ``$PAIMON_LOG_LEVEL``, default INFO (WARNING under spark-submit,
    whose Python stderr is merged into stdout, where only the JSON line should be)."""
    import logging

    from spark_jobs.common.session import under_spark_submit

    default = "WARNING" if under_spark_submit() else "INFO"
    level = os.environ.get("PAIMON_LOG_LEVEL", default).upper()
    logging.basicConfig(
        stream=sys.stderr, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)


@dataclass(frozen=True)
class ResultFile:
    """Where :func:`emit` writes the job's result line too (``--result-file``): ``path`` through
    the FileIO of ``warehouse`` (else of ``path`` itself) with the warehouse's storage options."""

    path: str
    warehouse: str | None = None
    storage_options: Mapping[str, str] = field(default_factory=dict)

    def write(self, line: str) -> None:
        """Write ``line`` to the file (replaced whole: a reader never sees half a result)."""
        from paimon_core.io.resolve import load_file_io

        file_io = load_file_io(self.warehouse or self.path, dict(self.storage_options) or None)
        file_io.write_bytes(self.path, line.encode(), overwrite=True)


_RESULT_FILE: ContextVar[ResultFile | None] = ContextVar("spark_jobs_result_file", default=None)


def set_result_file(target: ResultFile | None) -> None:
    """Make the next :func:`emit` (or :func:`emit_error`) also write its line to ``target``."""
    _RESULT_FILE.set(target)


def emit(payload: Mapping[str, Any], *, stream: TextIO | None = None) -> None:
    """Print ``payload`` as one compact JSON line (keys sorted; non-JSON values as strings); with
    a result file set (:func:`set_result_file`), write the line there too, once."""
    line = json.dumps(dict(payload), sort_keys=True, default=str, separators=(",", ":")) + "\n"
    out = stream or sys.stdout
    out.write(line)
    out.flush()
    target = _RESULT_FILE.get()
    if target is None:
        return
    _RESULT_FILE.set(None)  # one result per job run
    try:
        target.write(line)
    except Exception as e:  # noqa: BLE001 - the operator then reports the missing result (retried)
        print(f"error: writing the result file {target.path} failed: {type(e).__name__}: {e}", file=sys.stderr)


#: SQLSTATE classes (the first two characters; SQL standard, Spark's ``error-states.json``) of
#: errors that the same input raises again: feature not supported, cardinality, data exception
#: (CAST_INVALID_INPUT 22018, DIVIDE_BY_ZERO 22012 ...), integrity constraint, invalid schema name,
#: syntax error or access rule violation (analysis: PATH_NOT_FOUND 42K03, TABLE_OR_VIEW_NOT_FOUND
#: 42P01, NOT_NULL_ASSERT_VIOLATION 42000 ...), program limit exceeded, configuration, and Spark's
#: data source errors (malformed records, incompatible data).
TERMINAL_SQL_STATE_CLASSES = frozenset({"07", "0A", "21", "22", "23", "24", "2B", "3F", "42", "46", "54", "F0", "KD"})
#: SQLSTATE classes of errors that may pass: connection exception, transaction rollback (a
#: concurrent update), insufficient resources, operator intervention.
TRANSIENT_SQL_STATE_CLASSES = frozenset({"08", "40", "53", "57"})
#: Conditions whose class says little: decided by the error they wrap (the Python worker's
#: exception, a read failure's cause).
_WRAPPING_CONDITIONS = frozenset({"PYTHON_EXCEPTION", "FAILED_READ_FILE", "TASK_WRITE_FAILED", "FAILED_EXECUTE_UDF"})
#: PySpark's captured JVM exceptions that are deterministic by their class (bad SQL, bad values).
_TERMINAL_SPARK_TYPES = frozenset(
    {
        "AnalysisException",
        "ParseException",
        "IllegalArgumentException",
        "NumberFormatException",
        "ArithmeticException",
        "DateTimeException",
        "ArrayIndexOutOfBoundsException",
        "UnsupportedOperationException",
        "SparkUpgradeException",
        "SparkNoSuchElementException",
    }
)
#: JVM exception classes (in a stack trace's ``Caused by:`` chain) by verdict.
_TERMINAL_JAVA = (
    "java.io.FileNotFoundException",
    "java.nio.file.NoSuchFileException",
    "java.nio.file.AccessDeniedException",
    "org.apache.hadoop.security.AccessControlException",
    "org.apache.spark.sql.AnalysisException",
    "java.lang.IllegalArgumentException",
    "java.lang.NumberFormatException",
    "java.lang.ArithmeticException",
)
_TRANSIENT_JAVA = (
    "java.net.SocketTimeoutException",
    "java.net.ConnectException",
    "java.net.SocketException",
    "java.net.UnknownHostException",
    "java.util.concurrent.TimeoutException",
    "org.apache.spark.rpc.RpcTimeoutException",
    "org.apache.spark.shuffle.FetchFailedException",
    "ExecutorLostFailure",
)
#: Markers of transient errors in the class names of other libraries (botocore, s3fs, gcsfs ...).
_TRANSIENT_NAME_MARKERS = ("timeout", "throttl", "slowdown", "toomanyrequests", "serviceunavailable", "connection")
#: errno values of I/O errors the same call raises again: permission, not found, not a directory...
_TERMINAL_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.EROFS, errno.ENAMETOOLONG}
)

# "Traceback (most recent call last):" ... frames ... "module.Error: message" (Python's format)
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_CONDITION = re.compile(r"^\s*\[(?P<condition>[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\]")
_SQL_STATE = re.compile(r"SQLSTATE:\s*(?P<state>[0-9A-Z]{5})")
_ERRNO = re.compile(r"\[Errno (?P<errno>\d+)\]")
_JAVA_CAUSE = re.compile(r"^Caused by: (?P<name>[\w.$]+)(?::\s?(?P<message>.*))?$", re.M)


@dataclass(frozen=True)
class ErrorCause:
    """The error a job's line reports: the innermost one that says what went wrong.

    For a Spark error raised in a Python worker (``PythonException``) this is the worker's own
    exception (``SchemaMismatchError: Column 'id' is NOT NULL ...``), parsed from the traceback
    Spark carries; for other Spark errors, the first line of Spark's message with its error
    condition (``[CAST_INVALID_INPUT] ...``); for anything else, the error itself.
    """

    type_name: str
    message: str
    #: Spark's error condition (``CAST_INVALID_INPUT``) and SQLSTATE (``22018``), when it has them
    condition: str | None = None
    sql_state: str | None = None
    #: the class of ``type_name`` when this process knows it (a worker's ``SchemaMismatchError``)
    error_class: type[BaseException] | None = None

    def describe(self) -> str:
        """``Type: message`` (the message alone when it already starts with Spark's condition)."""
        return f"{self.type_name}: {self.message}" if self.message else self.type_name

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type_name, "message": self.message, "condition": self.condition, "sql_state": self.sql_state}


def _is_spark_error(error: BaseException) -> bool:
    return any(c.__module__.startswith(("pyspark.errors", "py4j")) for c in type(error).__mro__)


def _spark_attribute(error: BaseException, method: str) -> Any:
    """``getCondition()`` / ``getSqlState()`` / ``getMessageParameters()`` of a captured Spark
    error; None when it has none or the JVM is gone (the session was stopped)."""
    getter = getattr(error, method, None)
    if getter is None:
        return None
    try:
        return getter()
    except Exception:  # noqa: BLE001 - no JVM any more: the message text is parsed instead
        return None


def _spark_text(error: BaseException) -> str:
    """The Spark message without the JVM stack trace PySpark may append."""
    desc = getattr(error, "_desc", None)
    if isinstance(desc, str) and desc:
        text = desc
    else:
        try:
            text = str(error)
        except Exception:  # noqa: BLE001 - a Py4J error asks the JVM for its text; it may be gone
            text = repr(error)
    return text.split("\n\nJVM stacktrace:", 1)[0]


def _resolve_class(name: str) -> type[BaseException] | None:
    """The exception class a traceback names (``paimon_core.exceptions.SchemaMismatchError``,
    ``ValueError``), from the modules this process has loaded (nothing is imported)."""
    module, _, attr = name.rpartition(".")
    found = getattr(sys.modules.get(module or "builtins"), attr, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _worker_exception(text: str) -> ErrorCause | None:
    """The exception a Python traceback in ``text`` ends with (the last one when several are
    chained: the one raised), its message up to the end of its lines."""
    at = text.rfind(_TRACEBACK)
    if at < 0:
        return None
    lines = text[at + len(_TRACEBACK) :].splitlines()
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith((" ", "\t")):
            continue  # frames, source lines, carets
        match = _EXCEPTION_LINE.match(line.rstrip())
        if match is None:
            continue
        rest = []
        for more in lines[i + 1 :]:
            if not more.strip() or more.lstrip().startswith("SQLSTATE:") or more.startswith("\tat "):
                break
            rest.append(more.strip())
        message = " ".join([(match.group("message") or "").strip(), *rest]).strip()
        name = match.group("name")
        return ErrorCause(name.rpartition(".")[2], message, error_class=_resolve_class(name))
    return None


def root_cause(error: BaseException) -> ErrorCause:
    """The :class:`ErrorCause` a job reports for ``error`` (see there)."""
    if not _is_spark_error(error):
        return ErrorCause(type(error).__name__, str(error), error_class=type(error))
    text = _spark_text(error)
    condition = _spark_attribute(error, "getCondition")
    match = _CONDITION.match(text)
    if condition is None and match is not None:
        condition = match.group("condition")
    sql_state = _spark_attribute(error, "getSqlState")
    state = _SQL_STATE.search(text)
    if sql_state is None and state is not None:
        sql_state = state.group("state")
    params = _spark_attribute(error, "getMessageParameters") or {}
    worker = _worker_exception(str(params.get("traceback") or "")) or _worker_exception(text)
    if worker is not None:
        return ErrorCause(worker.type_name, worker.message, condition, sql_state, worker.error_class)
    java = list(_JAVA_CAUSE.finditer(text))
    if java and condition is None:  # a raw JVM error (Py4JJavaError): its innermost cause
        last = java[-1]
        name = last.group("name")
        return ErrorCause(name.rpartition(".")[2], (last.group("message") or "").strip(), None, sql_state)
    first = text.strip().split("\n", 1)[0].strip()
    return ErrorCause(type(error).__name__, first, condition, sql_state, type(error))


def _verdict_of_class(cls: type[BaseException], message: str = "") -> bool | None:
    """True (transient), False (terminal) or None (unknown) from an exception class."""
    from paimon_core.exceptions import TerminalError, TransientError

    if issubclass(cls, TerminalError):
        return False
    if issubclass(cls, TransientError):
        return True
    if issubclass(cls, (TimeoutError, ConnectionError, InterruptedError)):
        return True
    if issubclass(cls, (PermissionError, FileNotFoundError, NotADirectoryError, IsADirectoryError, FileExistsError)):
        return False
    if issubclass(cls, OSError):
        code = _ERRNO.search(message)
        return not (code is not None and int(code.group("errno")) in _TERMINAL_ERRNOS)
    if issubclass(cls, (ValueError, TypeError, LookupError, ArithmeticError, NotImplementedError, AttributeError, NameError)):
        return False
    return None


def _verdict_of_name(name: str) -> bool | None:
    lowered = name.lower()
    return True if any(m in lowered for m in _TRANSIENT_NAME_MARKERS) else None


def _verdict(error: BaseException) -> bool | None:
    if not _is_spark_error(error):
        found = _verdict_of_class(type(error), str(error))
        return found if found is not None else _verdict_of_name(type(error).__name__)
    cause = root_cause(error)
    if cause.error_class is not None and cause.error_class is not type(error):  # the worker's exception
        found = _verdict_of_class(cause.error_class, cause.message)
        if found is not None:
            return found
    if cause.condition not in _WRAPPING_CONDITIONS and cause.sql_state:
        if cause.sql_state[:2] in TERMINAL_SQL_STATE_CLASSES:
            return False
        if cause.sql_state[:2] in TRANSIENT_SQL_STATE_CLASSES:
            return True
    text = _spark_text(error)
    if any(name in text for name in _TRANSIENT_JAVA):
        return True
    if any(name in text for name in _TERMINAL_JAVA):
        return False
    if cause.condition is None and type(error).__name__ in _TERMINAL_SPARK_TYPES:
        return False
    found = _verdict_of_class(type(error), text)  # PySpark's own PySparkValueError, PySparkTypeError ...
    return found if found is not None else _verdict_of_name(cause.type_name)


def is_retryable(error: BaseException | str) -> bool:
    """Whether running the job again may succeed.

    Terminal (False): a usage message; :class:`paimon_core.TerminalError` (bad input, schema,
    missing table, safety refusal, corrupt metadata); ``ValueError``, ``TypeError``,
    ``LookupError`` and other errors of the input or the code; permission and not-found I/O errors
    (``PermissionError``, ``FileNotFoundError``, ``OSError`` with such an errno); Spark errors
    with a deterministic SQLSTATE class (:data:`TERMINAL_SQL_STATE_CLASSES`: analysis, bad
    data, CAST_INVALID_INPUT, PATH_NOT_FOUND ...) or a deterministic class (AnalysisException,
    NumberFormatException ...); an error of a Python worker (``PythonException``) by the worker's
    own exception (a ``SchemaMismatchError`` is terminal).

    Transient (True): :class:`paimon_core.TransientError` (commit conflicts, lock timeouts,
    storage I/O), timeouts, connection errors, throttling, other ``OSError``, Spark's connection
    and resource SQLSTATE classes, lost executors and fetch failures; and anything not known to
    be deterministic (Airflow's retries are bounded; a transient error failed for good would
    need a person), as the operators' contract says: ``retryable: false`` fails the task at
    once, anything else retries. The error's ``__cause__`` chain decides when the error itself
    says nothing.
    """
    if isinstance(error, str):  # a usage message
        return False
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _verdict(current)
        if found is not None:
            return found
        current = current.__cause__
    return True


def emit_error(
    job: str,
    error: BaseException | str,
    *,
    exit_code: int | None = None,
    retryable: bool | None = None,
    stream: TextIO | None = None,
) -> int:
    """Print the error as the job's JSON line, repeat the message on stderr; return the exit code.

    ``error`` is the root cause (:func:`root_cause`): for a Spark error, the Python worker's
    exception (``SchemaMismatchError: Column 'id' is NOT NULL ...``) or Spark's first message
    line with its condition (``[CAST_INVALID_INPUT] ...``), never the JVM stack trace;
    ``error_type`` is the class of the error raised in this process. The line carries
    ``retryable`` (from the error unless given; see :func:`is_retryable`), which Airflow
    operators turn into a retry or an immediate failure; it goes to the result file too, as
    every :func:`emit`. The exit code agrees with ``retryable``: :data:`EXIT_USAGE` when
    ``exit_code`` says bad arguments (and the line is not retryable), else
    :func:`exit_code_for` (:data:`EXIT_TERMINAL` or :data:`EXIT_TRANSIENT`).
    """
    if isinstance(error, BaseException):
        cause = root_cause(error)
        # a Spark error: its root cause (the Python worker's exception, Spark's condition line);
        # anything else: the error's own message
        message = cause.describe() if cause.error_class is not type(error) else cause.message
        error_type = type(error).__name__
    else:
        message, error_type = error, "UsageError"
    verdict = is_retryable(error) if retryable is None else retryable
    emit(
        {
            "job": job,
            "status": "error",
            "error_type": error_type,
            "error": message,
            "retryable": verdict,
        },
        stream=stream,
    )
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE if exit_code == EXIT_USAGE and not verdict else exit_code_for(verdict)
