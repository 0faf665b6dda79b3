"""Concurrency soak (issue 17's proof): writers of every bucket mode and a maintenance loop, each
in its own process, on one warehouse.

* ``fixed``: primary key, ``bucket = 2``, two writers (their inline compactions race);
* ``dynamic``: primary key, ``bucket = -1``, two writers, each on its own partitions (one writer
  per dynamic-bucket partition, as Java requires);
* ``append``: no primary key, unaware bucket (``bucket = -1``), two writers;
* maintenance: snapshot expiry keeping one or two snapshots and orphan clean (``force``, a cutoff
  of ``ORPHAN_AGE_S`` seconds: far above a write's duration) over the three tables, in a loop;
  the append writers also "die" now and then before committing, leaving orphans to clean.

Each writer records the keys of every commit that landed and every error. Afterwards: every
landed key is in its table exactly once; every failed commit raised a :class:`TransientError`
(the caller retries it), never a raw exception; maintenance raised nothing untyped; no data
file is left that no snapshot references, except those of the writers that "died".

``PAIMON_SOAK_SECONDS`` (default 20) scales it: CI runs the trimmed size, a few minutes is the
full soak (``PAIMON_SOAK_SECONDS=300``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import CommitStateUnknownError, PaimonError, TransientError

SOAK_SECONDS = float(os.environ.get("PAIMON_SOAK_SECONDS", "20"))
ORPHAN_AGE_S = 15
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False), ("v", pa.int64())]
)
TABLES: dict[str, tuple[list[str], dict[str, str]]] = {
    "fixed": (["id", "dt"], {"bucket": "2", "num-sorted-run.compaction-trigger": "3"}),
    "dynamic": (["id", "dt"], {"bucket": "-1", "dynamic-bucket.target-row-num": "40"}),
    "append": ([], {"bucket": "-1"}),
}
WRITERS_PER_TABLE = 2
ROWS_PER_COMMIT = 12

Outcome = dict[str, Any]


def _writer(warehouse: str, table_name: str, worker: int, seconds: float) -> Outcome:
    """Commit batches of fresh keys until time is up; record what landed and what failed."""
    table = FileSystemCatalog(warehouse).get_table(f"db.{table_name}")
    landed: list[int] = []
    unknown: list[int] = []  # CommitStateUnknownError: the rows may or may not be there
    transient: Counter[str] = Counter()
    bad: list[str] = []
    leaked: list[str] = []
    stop = time.monotonic() + seconds
    n = 0
    while time.monotonic() < stop:
        base = (worker * 1_000_000) + n * ROWS_PER_COMMIT
        ids = list(range(base, base + ROWS_PER_COMMIT))
        # dynamic-bucket writers keep to their own partitions; the others share theirs
        parts = [f"w{worker}-{i % 2}" if table_name == "dynamic" else f"p{i % 3}" for i in ids]
        n += 1
        rows = pa.table({"id": ids, "dt": parts, "v": ids}, schema=SCHEMA)
        if table_name == "append" and n % 5 == 0:  # a writer that dies before committing: orphans
            write = table.new_batch_write_builder().new_write()
            write.write_arrow(rows)
            leaked += [f.file_name for m in write.prepare_commit() for f in m.new_files]
            continue
        try:
            table.write_arrow(rows)
            landed += ids
        except CommitStateUnknownError:
            unknown += ids
        except TransientError as e:
            transient[type(e).__name__] += 1
        except PaimonError as e:
            bad.append(f"{type(e).__name__} (not retryable): {e}")
        except Exception as e:  # noqa: BLE001 - the soak reports every raw error
            bad.append(f"RAW {type(e).__name__}: {e}\n{traceback.format_exc()}")
    return {
        "table": table_name,
        "commits": n,
        "landed": landed,
        "unknown": unknown,
        "transient": dict(transient),
        "bad": bad,
        "leaked": leaked,
    }


def _maintenance(warehouse: str, seconds: float) -> Outcome:
    """Expire hard and clean orphans over every table until the writers are done."""
    catalog = FileSystemCatalog(warehouse)
    tables = [catalog.get_table(f"db.{name}") for name in TABLES]
    rounds = 0
    deleted = 0
    typed: Counter[str] = Counter()
    bad: list[str] = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        for table in tables:
            now = int(time.time() * 1000)
            try:
                table.maintenance.expire_snapshots(retain_min=1, retain_max=1 + rounds % 2, older_than=now)
                deleted += table.maintenance.remove_orphan_files(older_than=now - ORPHAN_AGE_S * 1000, force=True, dry_run=False).deleted_file_count
            except PaimonError as e:
                typed[type(e).__name__] += 1
            except Exception as e:  # noqa: BLE001
                bad.append(f"RAW {type(e).__name__}: {e}\n{traceback.format_exc()}")
        rounds += 1
    return {"rounds": rounds, "orphans_deleted": deleted, "typed": dict(typed), "bad": bad}


def _unreferenced_data_files(warehouse: str, name: str) -> set[str]:
    """Data files on disk that no snapshot's manifests name."""
    from paimon_core.manifest.manifest_file import read_manifest_file
    from paimon_core.manifest.manifest_list import read_manifest_list

    table = FileSystemCatalog(warehouse).get_table(f"db.{name}")
    used: set[str] = set()
    for snap in table.snapshot_manager.snapshots():
        for lst in (snap.base_manifest_list, snap.delta_manifest_list):
            for meta in read_manifest_list(table.file_io, table.paths.manifest_path(lst)):
                path = table.paths.manifest_path(meta.file_name)
                used |= {e.file.file_name for e in read_manifest_file(table.file_io, path)}
    return {p.name for p in Path(table.path).glob("*/bucket-*/*") if p.is_file()} - used


@pytest.mark.slow
def test_writers_of_every_bucket_mode_beside_expiry_and_orphan_clean(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "wh")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    for name, (pk, options) in TABLES.items():
        catalog.create_table(f"db.{name}", SCHEMA, primary_keys=pk, partition_keys=["dt"], options=options)
    ctx = mp.get_context("spawn")
    jobs = [(name, w) for name in TABLES for w in range(WRITERS_PER_TABLE)]
    with ctx.Pool(len(jobs) + 1) as pool:
        maintenance = pool.apply_async(_maintenance, (warehouse, SOAK_SECONDS + 2))
        writers = [pool.apply_async(_writer, (warehouse, name, w, SOAK_SECONDS)) for name, w in jobs]
        outcomes: list[Outcome] = [w.get(timeout=SOAK_SECONDS * 10 + 300) for w in writers]
        upkeep: Outcome = maintenance.get(timeout=SOAK_SECONDS * 10 + 300)

    summary = {(o["table"], i): (o["commits"], len(o["landed"]) // ROWS_PER_COMMIT, o["transient"]) for i, o in enumerate(outcomes)}
    bad = [b for o in outcomes for b in o["bad"]] + upkeep["bad"]
    assert not bad, f"{len(bad)} untyped or non-retryable errors; first: {bad[0]}\nsummary: {summary}"
    for name in TABLES:
        mine = [o for o in outcomes if o["table"] == name]
        landed = sorted(i for o in mine for i in o["landed"])
        unknown = {i for o in mine for i in o["unknown"]}
        assert landed, f"no commit to {name} landed: {summary}"
        ids = FileSystemCatalog(warehouse).get_table(f"db.{name}").to_arrow().column("id").to_pylist()
        counts = Counter(ids)
        assert not [i for i, c in counts.items() if c > 1], f"{name}: keys read twice"
        present = sorted(i for i in counts if i not in unknown)
        assert present == landed, f"{name}: {len(set(landed) - set(present))} landed keys missing, {len(set(present) - set(landed))} unexpected"
    # Failed commits deleted their files: only the files of writers that "died" (and orphan clean
    # did not reach yet) or of commits in an unknown state are left unreferenced.
    leaked = {f for o in outcomes for f in o["leaked"]}
    leftovers = {name: _unreferenced_data_files(warehouse, name) for name in TABLES}
    if not any(o["unknown"] for o in outcomes):
        stray = {name: sorted(files - leaked)[:3] for name, files in leftovers.items() if files - leaked}
        assert not stray, f"unreferenced data files left behind: {stray}"
    print(
        f"soak {SOAK_SECONDS:.0f}s: writers {summary}; maintenance {upkeep}; "
        f"unreferenced data files { {n: len(f) for n, f in leftovers.items()} } ({len(leaked)} leaked on purpose)"
    )
