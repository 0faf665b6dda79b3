"""The one JSON result line every job prints on stdout (parsed by Airflow operators)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

__all__ = ["configure_logging", "emit", "emit_error", "is_retryable"]


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


def emit(payload: Mapping[str, Any], *, stream: TextIO | None = None) -> None:
    """Print ``payload`` as one compact JSON line (keys sorted; non-JSON values as strings)."""
    out = stream or sys.stdout
    out.write(json.dumps(dict(payload), sort_keys=True, default=str, separators=(",", ":")) + "\n")
    out.flush()


def is_retryable(error: BaseException | str) -> bool:
    """Whether running the job again may succeed: False for terminal errors (a bad argument, a
    missing table, a safety refusal: :class:`paimon_core.TerminalError`, ``ValueError`` such as
    :class:`~spark_jobs.common.args.UsageError`), True for transient ones (commit conflicts, I/O:
    :class:`paimon_core.TransientError`, ``OSError``) and for anything unexpected."""
    if isinstance(error, str):  # a usage message
        return False
    from paimon_core.exceptions import TerminalError, TransientError

    if isinstance(error, TerminalError):
        return False
    if isinstance(error, (TransientError, OSError)):
        return True
    return not isinstance(error, (ValueError, TypeError, LookupError))


def emit_error(
    job: str,
    error: BaseException | str,
    *,
    exit_code: int,
    retryable: bool | None = None,
    stream: TextIO | None = None,
) -> int:
    """Print the error as the job's JSON line, repeat the message on stderr; return ``exit_code``.

    The line carries ``retryable`` (from the error's class unless given; see :func:`is_retryable`),
    which Airflow operators turn into a retry or an immediate failure. Exit codes are unchanged
    (1 failed, 2 bad arguments).
    """
    message = str(error)
    error_type = type(error).__name__ if isinstance(error, BaseException) else "UsageError"
    emit(
        {
            "job": job,
            "status": "error",
            "error_type": error_type,
            "error": message,
            "retryable": is_retryable(error) if retryable is None else retryable,
        },
        stream=stream,
    )
    print(f"error: {message}", file=sys.stderr)
    return exit_code
