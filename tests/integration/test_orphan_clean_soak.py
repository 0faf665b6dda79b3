"""Soak (issue 27, item 4): a forced orphan clean in a loop beside slow writers loses no row of a
commit that returned success.

Writers (threads) write a batch through ``paimon_core``'s batch write, wait longer than the
clean's cutoff (``older_than = now - 1 s``) as a slow write does, then commit. A cleaner calls
``remove_orphan_files(older_than=now - 1 s, force=True)`` in a loop, so every file a writer wrote
is an old-enough candidate while its commit is in flight: a clean that read the references just
before the commit published and deleted just after used to delete the commit's files (5 of 101
commits lost their rows in the issue's probe). Afterwards every row of every commit that
returned success must read back, and the table's latest snapshot must be fully readable.

``PAIMON_ORPHAN_SOAK_SECONDS`` (default 40) scales it; the number of commits, clean rounds and
files a clean moved back (a commit landed between its reference read and its move: the race
that used to lose rows) is printed. The distributed clean's protocol is tested with the exact
interleaving in ``test_spark_remove_orphan_files.py`` (a Spark round takes seconds: too few rounds
for a soak of CI size).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from paimon_core.table.table import FileStoreTable

SOAK_SECONDS = float(os.environ.get("PAIMON_ORPHAN_SOAK_SECONDS", "40"))
CUTOFF_MS = 1000  # older_than = now - 1 s, force=True
ROWS = 5
WRITERS = 3
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False)])


def _writer(table: FileStoreTable, worker: int, stop: float, out: dict[str, Any]) -> None:
    """Write, stall past the cutoff (a slow write), commit; record the ids of each success."""
    rnd = random.Random(worker)
    n = 0
    while time.monotonic() < stop:
        ids = [worker * 10_000_000 + n * ROWS + i for i in range(ROWS)]
        n += 1
        builder = table.new_batch_write_builder()
        write = builder.new_write()
        try:
            write.write_arrow(pa.table({"id": ids, "dt": [f"p{i % 2}" for i in ids]}, schema=SCHEMA))
            messages = write.prepare_commit()
            # the write took about as long as the cutoff: its first files turn old enough around the commit
            time.sleep(CUTOFF_MS / 1000 + rnd.uniform(-0.2, 0.1))
            builder.new_commit().commit(messages)
        except PaimonError as e:  # a failed commit is fine (the caller retries): it reported failure
            out["failed"][type(e).__name__] += 1
            continue
        except Exception as e:  # noqa: BLE001 - reported
            out["bad"].append(f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            continue
        finally:
            write.close()
        out["landed"].extend(ids)
        out["commits"] += 1


def _cleaner(table: FileStoreTable, stop: float, out: dict[str, Any], clean: Any) -> None:
    while time.monotonic() < stop:
        try:
            out["deleted"] += clean(table, int(time.time() * 1000) - CUTOFF_MS)
        except PaimonError as e:
            out["clean_errors"][type(e).__name__] += 1
        except Exception as e:  # noqa: BLE001 - reported
            out["bad"].append(f"clean: {type(e).__name__}: {e}\n{traceback.format_exc()}")
        out["rounds"] += 1


def _local_clean(table: FileStoreTable, older_than: int) -> int:
    return table.maintenance.remove_orphan_files(older_than=older_than, force=True, dry_run=False).deleted_file_count


class _MovedBack(logging.Handler):
    """Counts the files orphan clean moved back (its warning names how many)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.files = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "moved back" in record.getMessage() and isinstance(record.args, tuple) and len(record.args) > 1:
            self.files += int(str(record.args[1]))


def run_soak(warehouse: str, seconds: float, clean: Any = _local_clean) -> dict[str, Any]:
    """The loop; returns the counts and the ids of committed rows that do not read back."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options={"bucket": "-1"})
    table = catalog.get_table("db.t")
    out: dict[str, Any] = {
        "landed": [], "commits": 0, "failed": Counter(), "rounds": 0, "deleted": 0,
        "clean_errors": Counter(), "bad": [],
    }  # fmt: skip
    stop = time.monotonic() + seconds
    threads = [threading.Thread(target=_writer, args=(table, w, stop, out)) for w in range(WRITERS)]
    threads.append(threading.Thread(target=_cleaner, args=(table, stop + 1.5, out, clean)))
    started = time.monotonic()
    moved_back = _MovedBack()
    log = logging.getLogger("paimon_core.operation.orphan_files_clean")
    log.addHandler(moved_back)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        log.removeHandler(moved_back)
    out["moved_back"] = moved_back.files
    out["seconds"] = round(time.monotonic() - started, 1)
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    try:
        fresh.to_arrow(columns=["id"])
        out["read_error"] = None
    except Exception as e:  # noqa: BLE001 - the latest snapshot names a deleted file
        out["read_error"] = f"{type(e).__name__}: {e}"[:300]
        fresh.maintenance.remove_unexisting_files(dry_run=False)  # drop the missing files (as a user must) to count what is left
    present = set(FileSystemCatalog(warehouse).get_table("db.t").to_arrow(columns=["id"]).column("id").to_pylist())
    landed = out["landed"]
    out["lost_rows"] = sorted(set(landed) - present)
    out["lost_commits"] = len({i // ROWS for i in out["lost_rows"]})
    return out


def _report(out: dict[str, Any]) -> str:
    return (
        f"{out['seconds']}s: {out['commits']} commits returned success ({len(out['landed'])} rows), "
        f"{sum(out['failed'].values())} failed {dict(out['failed'])}; {out['rounds']} clean rounds deleted "
        f"{out['deleted']} files and moved {out['moved_back']} back, clean errors {dict(out['clean_errors'])}; lost: {out['lost_commits']} commits, "
        f"{len(out['lost_rows'])} rows; read error: {out['read_error']}"
    )


def test_forced_orphan_clean_beside_slow_writers_loses_no_committed_row(tmp_path: Path) -> None:
    out = run_soak(str(tmp_path / "wh"), SOAK_SECONDS)
    print("orphan clean soak (local):", _report(out))
    assert not out["bad"], out["bad"][0]
    assert out["commits"] >= 10, _report(out)
    assert out["rounds"] >= 10, _report(out)
    assert out["read_error"] is None and not out["lost_rows"], _report(out)
    assert not list((tmp_path / "wh" / "db.db" / "t" / "_orphan_trash").glob("*/**/*.parquet")), "trash left"
