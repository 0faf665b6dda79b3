"""``python -m spark_jobs <job> --warehouse W --table DB.T [args]`` (also ``spark-submit .../__main__.py <job> ...``).

Dispatches to ``spark_jobs.<job>.main(argv)``; see :data:`spark_jobs.JOBS`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from spark_jobs import JOBS
from spark_jobs.common.args import EXIT_USAGE, use_result_file
from spark_jobs.common.output import emit_error

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the job named by the first argument; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(
            f"usage: python -m spark_jobs <job> --warehouse W --table DB.T [args]\njobs: {', '.join(sorted(JOBS))}"
        )
        return 0 if args else EXIT_USAGE
    job, rest = args[0], args[1:]
    use_result_file(rest)  # also the error line of an unknown job reaches ``--result-file``
    module_name = JOBS.get(job)
    if module_name is None:
        return emit_error(job, f"unknown job {job!r}; jobs: {', '.join(sorted(JOBS))}", exit_code=EXIT_USAGE)
    module = importlib.import_module(module_name)
    return int(module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
