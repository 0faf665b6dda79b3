"""The one JSON result line every job prints on stdout (parsed by Airflow operators)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

__all__ = ["configure_logging", "emit", "emit_error"]


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


def emit_error(job: str, error: BaseException | str, *, exit_code: int, stream: TextIO | None = None) -> int:
    """Print the error as the job's JSON line, repeat the message on stderr; return ``exit_code``."""
    message = str(error)
    error_type = type(error).__name__ if isinstance(error, BaseException) else "UsageError"
    emit({"job": job, "status": "error", "error_type": error_type, "error": message}, stream=stream)
    print(f"error: {message}", file=sys.stderr)
    return exit_code
