"""The jobs' JSON error line carries ``retryable``, which the operators turn into retry or fail."""

from __future__ import annotations

import io
import json

import pytest

from paimon_core import CommitConflictError, TableNotFoundError
from paimon_core.exceptions import FileIOError, OrphanCleanAbortedError
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE, UsageError
from spark_jobs.common.output import EXIT_TERMINAL, EXIT_TRANSIENT, emit_error, exit_code_for


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (CommitConflictError("conflict"), True),
        (FileIOError("io"), True),
        (OSError("disk"), True),
        (RuntimeError("executor lost"), True),
        (TableNotFoundError("no table"), False),
        (OrphanCleanAbortedError("refused"), False),
        (UsageError("--x"), False),
        ("unknown job", False),
    ],
)
def test_emit_error_retryable(error: BaseException | str, retryable: bool) -> None:
    out = io.StringIO()
    code = emit_error("job", error, exit_code=EXIT_FAILURE, stream=out)
    assert code == (EXIT_TRANSIENT if retryable else EXIT_TERMINAL) == exit_code_for(retryable)
    line = json.loads(out.getvalue())
    assert line["status"] == "error" and line["retryable"] is retryable
    assert set(line) == {"job", "status", "error_type", "error", "retryable"}


def test_emit_error_explicit_retryable_and_the_exit_code_agrees() -> None:
    out = io.StringIO()
    assert (
        emit_error("job", RuntimeError("x"), exit_code=EXIT_USAGE, retryable=False, stream=out) == EXIT_USAGE
    )
    assert json.loads(out.getvalue())["retryable"] is False
    out = io.StringIO()  # a retryable error is never reported as a usage error
    assert emit_error("job", RuntimeError("x"), exit_code=EXIT_USAGE, retryable=True, stream=out) == EXIT_TRANSIENT
    assert json.loads(out.getvalue())["retryable"] is True


def test_operator_maps_the_line() -> None:
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    from paimon_airflow.utils.errors import raise_for_job_error

    with pytest.raises(AirflowFailException):
        raise_for_job_error("j", {"status": "error", "retryable": False}, returncode=1)
    with pytest.raises(AirflowException) as info:
        raise_for_job_error("j", {"status": "error", "retryable": True}, returncode=1)
    assert not isinstance(info.value, AirflowFailException)
    with pytest.raises(AirflowException) as info:  # an old job without the field: retry
        raise_for_job_error("j", {"status": "error"}, returncode=1)
    assert not isinstance(info.value, AirflowFailException)
    # without the field, the exit code decides: terminal (3) and usage (2) fail, 75 and a crash's 1 retry
    for code, fails in ((EXIT_TERMINAL, True), (EXIT_USAGE, True), (EXIT_TRANSIENT, False), (1, False)):
        with pytest.raises(AirflowException) as info:
            raise_for_job_error("j", {"status": "error"}, returncode=code)
        assert isinstance(info.value, AirflowFailException) is fails, code
