"""Airflow's retry-or-fail from Paimon's error classes.

* :class:`paimon_core.TransientError` (commit conflicts, retries exhausted, storage I/O) and
  ``OSError``: re-raised unchanged, so Airflow retries the task as its ``retries`` allow.
* :class:`paimon_core.TerminalError` (bad argument, missing table or tag, safety refusal, corrupt
  metadata): :class:`~airflow.sdk.exceptions.AirflowFailException`, failing the task at once with
  no retries (the same input would fail again).
* A job's JSON error line carries ``retryable``; :func:`raise_for_job_error` maps it the same way.
  The job's exit code agrees with it (:data:`~spark_jobs.common.output.EXIT_TERMINAL` 3 and
  ``EXIT_USAGE`` 2: fail; :data:`~spark_jobs.common.output.EXIT_TRANSIENT` 75: retry) and decides
  for a line without the field; any other code (1: the job crashed before reporting) retries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from airflow.sdk.exceptions import AirflowException, AirflowFailException

# the jobs' own classification: one rule for in-process operators and job error lines
from spark_jobs.common.output import EXIT_TERMINAL, EXIT_USAGE, is_retryable

__all__ = ["PaimonTerminalFailure", "is_retryable", "paimon_errors", "raise_for_job_error"]


class PaimonTerminalFailure(AirflowFailException):
    """A terminal Paimon error: the task fails without retries."""


@contextmanager
def paimon_errors(what: str) -> Iterator[None]:
    """Run a block, turning terminal errors into :class:`PaimonTerminalFailure` (no retry)."""
    try:
        yield
    except AirflowException:
        raise
    except Exception as e:
        if is_retryable(e):
            raise
        raise PaimonTerminalFailure(f"{what} failed ({type(e).__name__}): {e}") from e


def raise_for_job_error(job: str, result: Mapping[str, Any], *, returncode: int) -> None:
    """Raise for a job's error line: terminal (``retryable: false``; without the field, exit code
    3 or 2) fails, anything else retries."""
    message = (
        f"spark_jobs {job} failed (exit {returncode}): {result.get('error_type')}: {result.get('error')}"
    )
    retryable = result.get("retryable")
    if retryable is False or (retryable is None and returncode in (EXIT_TERMINAL, EXIT_USAGE)):
        raise PaimonTerminalFailure(message)
    raise AirflowException(message)
