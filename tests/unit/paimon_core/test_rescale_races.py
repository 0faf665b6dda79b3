"""``rescale`` racing batch writers, for real: a writer process commits new keys into a partition
while another process rescales that partition again and again (``bucket_num`` 4, 3, 5, 2 ...),
on a fixed-bucket table and on a postpone-bucket table (``bucket = -2``, whose batch writes go
into the real buckets: ``postpone.batch-write-fixed-bucket``).

Whoever loses a race fails with a clear error and changes nothing: the rescale with
:class:`CommitConflictError` naming ``commit.strict-mode.last-safe-snapshot`` (a writer landed on
the partition after the snapshot it read), the writer with :class:`CommitConflictError`
"Total buckets ..." (its files were placed with the count a rescale just replaced) or, once
the rescale's ``ALTER`` is in, with the write-time refusal naming the partition to rescale. No
other error is allowed. Afterwards the partition holds exactly the initial rows plus the rows of
every writer commit that landed (counted, no key twice, every value as written), in one bucket
count, the last landed rescale's; no data file a loser wrote is left behind; pypaimon 2.1.0 reads the same rows, and the table takes writes.
The run must show the race: rescales that lost to a writer, and rescales that landed.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import re
import time
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitConflictError, PaimonError
from paimon_core.table.rescale import rescale
from paimon_core.table.table import FileStoreTable

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("v", pa.int64()),
    ]
)
KINDS = {
    "fixed-bucket": {"bucket": "2"},
    "postpone-bucket": {"bucket": "-2", "postpone.default-bucket-num": "2"},
}
INITIAL = 400  # rows of dt=a before the race (ids 0..399); dt=b is never touched
RESCALE_COUNTS = (4, 3, 5, 2)
#: both sides go on until the race has gone both ways this often (or DEADLINE seconds passed)
ENOUGH = {"writes_landed": 4, "rescales_landed": 3, "rescales_lost": 2}
DEADLINE = 90.0
Outcome = tuple[str, int | None, list[int], str]  # (ok | lost | raw, snapshot id, ids | [buckets], error)

#: the clear errors a loser may fail with: a writer placed its rows with the count a rescale
#: replaced (the conflict check, or the strict postpone fixed-bucket commit), or wrote after the
#: rescale's ALTER into a partition not rescaled yet; a rescale saw a writer land after its read
WRITER_LOSES = re.compile(
    r"^(CommitConflictError: (Total buckets of a partition changed|Snapshot \d+ \(OVERWRITE\) by commit user "
    r".* giving up committing snapshot \d+ as commit\.strict-mode\.last-safe-snapshot is set)"
    r"|InvalidArgumentError: Partition dt=a of db\.t was written with \d+ buckets, the table now has \d+: "
    r"rescale the partition first)",
    re.S,
)
RESCALE_LOSES = re.compile(
    r"^CommitConflictError: Snapshot \d+ \(APPEND\) by commit user .* after snapshot \d+, which this commit was "
    r"planned on; giving up committing snapshot \d+ as commit\.strict-mode\.last-safe-snapshot is set",
    re.S,
)


def _enough(progress: Any) -> bool:
    return all(progress.get(k, 0) >= n for k, n in ENOUGH.items())


def _count(progress: Any, lock: Any, key: str) -> None:
    with lock:
        progress[key] = progress.get(key, 0) + 1


def _rows(ids: list[int], dt: str, v: int) -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids), "v": [i * 10 + v for i in ids]}, schema=SCHEMA)


def _open(warehouse: str) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table("db.t")


def _writer(warehouse: str, progress: Any, lock: Any) -> list[Outcome]:
    """Commits batches of 10 new keys into dt=a, each through a freshly opened table (it sees the
    rescales' ALTERs), with short random pauses (seeded; without them a postpone table's writer,
    never refused, can starve the rescale: each one sees a write land after its read), until the
    race went both ways often enough; every outcome, in order."""
    out: list[Outcome] = []
    stop = time.monotonic() + DEADLINE
    pauses = random.Random(26)
    i = 0
    while not _enough(progress) and time.monotonic() < stop:
        ids = list(range(10_000 + 10 * i, 10_000 + 10 * i + 10))
        i += 1
        try:
            result = _open(warehouse).write_arrow(_rows(ids, "a", 1))  # a lost commit deletes its files
            out.append(("ok", result.snapshot_id, ids, ""))
            _count(progress, lock, "writes_landed")
        except PaimonError as e:
            out.append(("lost", None, ids, f"{type(e).__name__}: {e}"))
        except Exception as e:  # noqa: BLE001 - the test reports every raw error
            out.append(("raw", None, ids, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
            break
        time.sleep(pauses.uniform(0, 0.15))
    with lock:
        progress["writer_done"] = 1
    return out


def _rescaler(warehouse: str, progress: Any, lock: Any) -> list[Outcome]:
    """Rescales dt=a through RESCALE_COUNTS, round and round (a lost rescale retries its count),
    with short random pauses (seeded) that let writers in, until the writer stops."""
    out: list[Outcome] = []
    pauses = random.Random(25)
    n = 0
    while not progress.get("writer_done"):
        buckets = RESCALE_COUNTS[n % len(RESCALE_COUNTS)]
        try:
            result = rescale(_open(warehouse), bucket_num=buckets, partition={"dt": "a"})
            out.append(("ok", result.snapshot_id, [buckets], ""))
            _count(progress, lock, "rescales_landed")
            n += 1
        except PaimonError as e:
            out.append(("lost", None, [buckets], f"{type(e).__name__}: {e}"))
            if isinstance(e, CommitConflictError):
                _count(progress, lock, "rescales_lost")
        except Exception as e:  # noqa: BLE001
            out.append(("raw", None, [buckets], f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
            break
        time.sleep(pauses.uniform(0, 0.08))
    return out


def _content(table: FileStoreTable) -> list[tuple[int, str, int]]:
    t = table.to_arrow()
    return sorted(
        zip(t.column("id").to_pylist(), t.column("dt").to_pylist(), t.column("v").to_pylist(), strict=True)
    )


def _unreferenced_data_files(table: FileStoreTable) -> set[str]:
    """Data files on disk that no snapshot references (nothing expires here: every file a landed
    commit wrote is in some snapshot); what a loser wrote must be gone."""
    referenced: set[str] = set()
    for sid in table.snapshot_manager.list_snapshot_ids():
        snapshot = table.snapshot_manager.snapshot(sid)
        referenced |= {e.file.file_name for e in table.new_file_store_scan().live_entries(snapshot)}
    return {p.name for p in Path(table.path).rglob("data-*")} - referenced


def _layout(table: FileStoreTable, dt: str) -> tuple[set[int], int]:
    """The total-buckets values of the partition's real-bucket files; its bucket-postpone files."""
    entries = table.new_file_store_scan().live_entries(table.latest_snapshot())
    mine = [e for e in entries if table.partition_path(e.partition) == f"dt={dt}"]
    return {e.total_buckets for e in mine if e.bucket >= 0}, sum(e.bucket == -2 for e in mine)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_rescale_racing_a_batch_writer_loses_nothing(kind: str, tmp_path: Path, pypaimon: Any) -> None:
    warehouse = str(tmp_path / "wh")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        primary_keys=["id", "dt"],
        partition_keys=["dt"],
        options={**KINDS[kind], "write-only": "true"},
    )
    table.write_arrow(pa.concat_tables([_rows(list(range(INITIAL)), "a", 0), _rows(list(range(50)), "b", 0)]))
    if kind == "postpone-bucket":  # the first batch write of a new partition: into 2 real buckets
        assert _layout(_open(warehouse), "a") == ({2}, 0)
    initial = _content(_open(warehouse))

    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(2) as pool:
        progress, lock = manager.dict(), manager.Lock()
        rescales = pool.apply_async(_rescaler, (warehouse, progress, lock))
        writes = pool.apply_async(_writer, (warehouse, progress, lock))
        written: list[Outcome] = writes.get(timeout=DEADLINE + 120)
        rescaled: list[Outcome] = rescales.get(timeout=DEADLINE + 120)
        seen = dict(progress)

    # every loser failed with one of the clear errors; nothing raw
    raw = [o for o in written + rescaled if o[0] == "raw"]
    assert not raw, raw[:2]
    assert all(WRITER_LOSES.match(o[3]) for o in written if o[0] == "lost"), [
        o[3] for o in written if o[0] == "lost"
    ]
    assert all(RESCALE_LOSES.match(o[3]) for o in rescaled if o[0] == "lost"), [
        o[3] for o in rescaled if o[0] == "lost"
    ]
    assert _enough(seen), seen  # the race went both ways: writes and rescales landed, rescales lost
    landed_writes = [o for o in written if o[0] == "ok"]

    # a last rescale with nobody racing it lands, and fixes the partition's count
    final = rescale(_open(warehouse), bucket_num=3, partition={"dt": "a"})
    assert final.snapshot_id is not None

    # exactly the initial rows plus every landed write, nothing twice, in one bucket count
    table = _open(warehouse)
    expected = sorted(initial + [(i, "a", i * 10 + 1) for o in landed_writes for i in o[2]])
    got = _content(table)
    assert len(got) == len(expected) == len(initial) + 10 * len(landed_writes)
    assert got == expected
    assert _layout(table, "a") == ({3}, 0)
    assert _unreferenced_data_files(table) == set()  # the losers deleted what they wrote
    assert table.options.bucket == (3 if kind == "fixed-bucket" else -2)
    peer = pypaimon.read(warehouse, "db.t")
    peer_rows = zip(
        peer.column("id").to_pylist(),
        peer.column("dt").to_pylist(),
        peer.column("v").to_pylist(),
        strict=True,
    )
    assert sorted(peer_rows) == expected

    # the table keeps taking writes (into the partition's new count)
    table.write_arrow(_rows([0, 99_999], "a", 7))
    after = _content(_open(warehouse))
    assert (0, "a", 7) in after and (99_999, "a", 999_997) in after and len(after) == len(expected) + 1
    assert _layout(_open(warehouse), "a")[0] == {3}
