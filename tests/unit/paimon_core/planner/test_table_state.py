"""``collect_table_state`` on real tables written with paimon_core, checked against Paimon's own
operations (the compaction planner's dry run, expiry dry runs), and the one-read reuse of an
unchanged table's state, counted at the file IO."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.io.local_io import LocalFileIO
from paimon_core.maintenance.planner import plan_table
from paimon_core.maintenance.settings import MaintenanceSettings
from paimon_core.maintenance.table_state import TableState, collect_table_state
from paimon_core.schema.schema_change import SetOption
from paimon_core.table.table import FileStoreTable

from .helpers import TABLE_KINDS, kind_table, new_table, wall_now, write_commits

DAYS = ("2026-11-01", "2026-11-02")


def collect(table: FileStoreTable, previous: TableState | None = None) -> TableState:
    s = collect_table_state(table, now_millis=wall_now(), previous=previous)
    assert TableState.from_dict(json.loads(json.dumps(s.to_dict()))) == s  # JSON round trip
    return s


@pytest.mark.parametrize("kind", sorted(TABLE_KINDS))
@pytest.mark.parametrize("commits", [3, 6])
def test_planned_compaction_is_what_paimon_would_compact(
    catalog: FileSystemCatalog, kind: str, commits: int
) -> None:
    table = kind_table(catalog, kind)
    write_commits(table, commits, days=DAYS)
    table = catalog.get_table(table.name)
    s = collect(table)
    assert s.source == "scan" and s.snapshot_id == commits and s.snapshot_count == commits
    assert [p.partition for p in s.partitions] == ["dt=2026-11-01", "dt=2026-11-02"]
    a = plan_table(s, MaintenanceSettings(), now_millis=wall_now(), last_success={}).action("compact")
    dry = table.maintenance.compact(compact_strategy="minor", dry_run=True)
    if a is None:
        assert dry.plan == ()
    else:
        assert a.bytes_to_read == sum(t["input_bytes"] for t in dry.plan)
        assert a.reason.startswith(f"{len(dry.plan)} ")
        assert a.args["partitions"] is None  # both partitions need it


def test_pk_buckets_keep_their_sorted_runs(catalog: FileSystemCatalog) -> None:
    table = new_table(catalog, "pk", pk=True, bucket="1")
    write_commits(table, 4, days=DAYS[:1])
    s = collect(catalog.get_table("db.pk"))
    (b,) = s.buckets
    assert b.label == "dt=2026-11-01/0" and b.sorted_runs == 4 and b.level0_file_count == 4
    assert all(level == 0 for level, _, _ in b.runs)
    assert s.compaction_debt == pytest.approx(4 / 8)
    table.maintenance.compact(compact_strategy="full")
    after = collect(catalog.get_table("db.pk"))
    assert (
        after.buckets == ()
        and after.compact_bucket_count == 1
        and after.compaction_debt == pytest.approx(1 / 8)
    )


def test_expiry_figures_match_the_expiry_dry_runs(catalog: FileSystemCatalog) -> None:
    table = new_table(catalog, "t", pk=False, bucket="-1", **{"snapshot.time-retained": "1 ms"})
    write_commits(table, 15, days=DAYS[:1], size=5)
    table = catalog.get_table("db.t")
    s = collect(table)
    a = plan_table(s, MaintenanceSettings(), now_millis=wall_now(), last_success={}).action(
        "expire_snapshots"
    )
    dry = table.maintenance.expire_snapshots(dry_run=True)
    assert (
        a is not None and a.gain == len(dry.expired_snapshot_ids) == 5
    )  # keeps snapshot.num-retained.min 10
    capped = plan_table(
        s, MaintenanceSettings(snapshot_retain_min=12), now_millis=wall_now(), last_success={}
    )
    assert (capped.action("expire_snapshots") or a).gain == len(
        table.maintenance.expire_snapshots(retain_min=12, dry_run=True).expired_snapshot_ids
    )


def test_partition_and_tag_expiry_match_the_dry_runs(catalog: FileSystemCatalog) -> None:
    table = new_table(
        catalog,
        "p",
        pk=False,
        bucket="-1",
        **{"partition.expiration-time": "30 d", "partition.timestamp-formatter": "yyyy-MM-dd"},
    )
    write_commits(table, 1, days=("2020-01-01", "2020-01-02", "2999-01-01"), size=3)
    table.maintenance.create_tag("old", time_retained="1 ms")
    table.maintenance.create_tag("kept")
    table = catalog.get_table("db.p")
    time.sleep(0.01)
    s = collect(table)
    p = plan_table(s, MaintenanceSettings(), now_millis=wall_now(), last_success={})
    partitions = p.action("expire_partitions")
    assert partitions is not None
    assert partitions.gain == len(table.maintenance.expire_partitions(dry_run=True).expired_partitions) == 2
    tags = p.action("expire_tags")
    assert tags is not None and tags.reason == "1 tag(s) past their time-retained: old"
    assert list(table.maintenance.expire_tags(dry_run=True).expired_tags) == ["old"]


# --- the one-read reuse of an unchanged table --------------------------------------------------------
class CountingIO(LocalFileIO):
    """Counts the reads (file contents and listings) and existence checks it serves."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.listings: list[str] = []
        self.exists_checks = 0

    def read_bytes(self, path: str) -> bytes:
        self.reads.append(path)
        return super().read_bytes(path)

    def open_input(self, path: str) -> IO[bytes]:
        self.reads.append(path)
        return super().open_input(path)

    def list_status(self, path: str):  # type: ignore[no-untyped-def]
        self.listings.append(path)
        return super().list_status(path)

    def exists(self, path: str) -> bool:
        self.exists_checks += 1
        return super().exists(path)


def counted(table: FileStoreTable) -> tuple[FileStoreTable, CountingIO]:
    io = CountingIO()
    return FileStoreTable(io, table.path, table.schema, name=table.name), io


@pytest.mark.parametrize("kind", sorted(TABLE_KINDS))
def test_an_unchanged_table_costs_one_metadata_read(catalog: FileSystemCatalog, kind: str) -> None:
    table = kind_table(catalog, kind)
    write_commits(table, 6, days=DAYS)
    table.maintenance.create_tag("t1")
    first = collect(catalog.get_table(table.name))

    watched, io = counted(catalog.get_table(table.name))
    again = collect(watched, previous=first)
    assert again.source == "unchanged" and again.checked_at_millis >= first.collected_at_millis
    assert again == first.__class__(
        **{**first.__dict__, "checked_at_millis": again.checked_at_millis, "source": "unchanged"}
    )
    assert [Path(p).name for p in io.reads] == ["LATEST"] and io.listings == []
    assert io.exists_checks <= 4  # latest, latest + 1, the next schema, the earliest snapshot

    # a scan without a previous state reads the manifests (what the reuse saves)
    cold, cold_io = counted(catalog.get_table(table.name))
    collect(cold)
    assert len(cold_io.reads) > 5


def test_a_changed_table_is_scanned_again(catalog: FileSystemCatalog) -> None:
    table = new_table(catalog, "t", pk=True, bucket="1")
    write_commits(table, 3, days=DAYS[:1])
    first = collect(catalog.get_table("db.t"))
    write_commits(table, 1, days=DAYS[:1])
    newer = collect(catalog.get_table("db.t"), previous=first)
    assert newer.source == "scan" and newer.snapshot_id == 4 and newer.buckets[0].sorted_runs == 4
    # an options change is a new schema: scanned again (the table's rules may have changed)
    catalog.alter_table("db.t", [SetOption("num-sorted-run.compaction-trigger", "3")])
    altered = collect(catalog.get_table("db.t"), previous=newer)
    assert altered.source == "scan" and altered.options["num-sorted-run.compaction-trigger"] == "3"
    # a handle loaded before the change sees the newer schema file and scans too
    stale = FileStoreTable(table.file_io, table.path, table.schema, name=table.name)
    assert collect(stale, previous=newer).source == "scan"


def test_an_expiry_since_the_previous_state_refreshes_the_retention(catalog: FileSystemCatalog) -> None:
    table = new_table(catalog, "t", pk=False, bucket="-1")
    write_commits(table, 6, days=DAYS[:1], size=3)
    first = collect(catalog.get_table("db.t"))
    assert (first.earliest_snapshot_id, first.snapshot_count) == (1, 6)
    table.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    refreshed = collect(catalog.get_table("db.t"), previous=first)
    assert refreshed.source == "earliest-refresh"
    assert (refreshed.earliest_snapshot_id, refreshed.snapshot_count, refreshed.snapshot_id) == (5, 2, 6)
    assert refreshed.buckets == first.buckets  # the files did not change
