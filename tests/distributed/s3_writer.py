"""One writer process of the concurrent-commit tests: ``commits`` commits of ``rows`` rows each.

Run as ``python s3_writer.py WAREHOUSE TABLE WRITER COMMITS ROWS [CATALOG_OPTIONS_JSON]``. The S3
endpoint and credentials come from the environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``...),
as a deployed job's would. Writer ``w`` writes ids ``[(w * commits + c) * rows, ... + rows)`` in
commit ``c`` (identifier ``c + 1``, commit user ``writer-w``) and prints one JSON line: the
snapshot id of each commit and the attempts they took.

A seventh argument ``batch`` makes each commit a one-shot ``table.write_arrow`` (a fresh commit user
per call, the batch path that deletes its files when a commit fails) and keeps going on errors: the
JSON line then also lists the ids of calls that raised (``uncertain``: they may or may not have
landed) and the error types seen, for the flaky-store test.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa

from paimon_core import FileSystemCatalog, PaimonError
from paimon_core.table.table import FileStoreTable


def main(argv: list[str]) -> int:
    warehouse, identifier, writer, commits, rows = argv[0], argv[1], int(argv[2]), int(argv[3]), int(argv[4])
    options = json.loads(argv[5]) if len(argv) > 5 and argv[5] else {}
    if len(argv) > 6 and argv[6] == "batch":
        return _batch(_open_retrying(warehouse, identifier, options), writer, commits, rows)
    table = FileSystemCatalog(warehouse, options=options).get_table(identifier)
    builder = table.new_stream_write_builder(f"writer-{writer}")
    write, commit = builder.new_write(), builder.new_commit()
    snapshots, attempts = [], 0
    for c in range(commits):
        start = (writer * commits + c) * rows
        ids = pa.array(range(start, start + rows), pa.int64())
        write.write_arrow(pa.table({"id": ids, "writer": pa.array([writer] * rows, pa.int32())}))
        result = commit.commit(write.prepare_commit(), c + 1)
        snapshots.append(result.snapshot_id)
        attempts += result.attempts
    print(json.dumps({"writer": writer, "snapshots": snapshots, "attempts": attempts}), flush=True)
    return 0


def _open_retrying(warehouse: str, identifier: str, options: dict[str, str]) -> FileStoreTable:
    """The table, opened again when the flaky store fails a read (the writers' SDK does not retry)."""
    for attempt in range(50):
        try:
            return FileSystemCatalog(warehouse, options=options).get_table(identifier)
        except (OSError, PaimonError):
            if attempt == 49:
                raise
    raise AssertionError("unreachable")


def _batch(table: FileStoreTable, writer: int, commits: int, rows: int) -> int:
    landed: list[int] = []
    uncertain: list[int] = []
    errors: dict[str, int] = {}
    for c in range(commits):
        start = (writer * commits + c) * rows
        ids = list(range(start, start + rows))
        data = pa.table({"id": pa.array(ids, pa.int64()), "writer": pa.array([writer] * rows, pa.int32())})
        try:
            table.write_arrow(data)
        except Exception as e:  # noqa: BLE001 - the point: any failure, then carry on
            uncertain += ids
            errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
        else:
            landed += ids
    print(json.dumps({"writer": writer, "landed": landed, "uncertain": uncertain, "errors": errors}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
