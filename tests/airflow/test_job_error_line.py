"""The jobs' JSON error line carries ``retryable``, which the operators turn into retry or fail."""

from __future__ import annotations

import io
import json

import pytest

from paimon_core import CommitConflictError, TableNotFoundError
from paimon_core.exceptions import FileIOError, OrphanCleanAbortedError
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE, UsageError
from spark_jobs.common.output import emit_error


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
    assert emit_error("job", error, exit_code=EXIT_FAILURE, stream=out) == EXIT_FAILURE
    line = json.loads(out.getvalue())
    assert line["status"] == "error" and line["retryable"] is retryable
    assert set(line) == {"job", "status", "error_type", "error", "retryable"}


def test_emit_error_explicit_retryable_and_exit_codes_unchanged() -> None:
    out = io.StringIO()
    assert (
        emit_error("job", RuntimeError("x"), exit_code=EXIT_USAGE, retryable=False, stream=out) == EXIT_USAGE
    )
    assert json.loads(out.getvalue())["retryable"] is False


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
