"""Procedure jobs rollback_to_timestamp, rollback_to_as_latest, clear_consumers, expire_changelogs
(``python -m spark_jobs <job>``, Paimon's argument names and order).

Each: its documented behaviour, its bad inputs (clear error, exit code, table metadata unchanged);
pypaimon reads the table after a rollback.
"""

from __future__ import annotations

from typing import Any

import pytest

from paimon_core.consumer.consumer_manager import Consumer
from paimon_core.snapshot.changelog_manager import ChangelogManager
from spark_jobs import clear_consumers as clear_job
from spark_jobs import expire_changelogs as changelogs_job
from spark_jobs import rollback_to_as_latest as as_latest_job
from spark_jobs import rollback_to_timestamp as to_ts_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import FUTURE, cli, ids, make_table, metadata_state, reload, run_job

# --- rollback_to_timestamp ---------------------------------------------------------------------


def test_rollback_to_timestamp(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(wh, 4)
    t.maintenance.create_tag("late", 4)
    snaps = [t.snapshot_manager.snapshot(i) for i in (1, 2, 3, 4)]
    ts = snaps[1].time_millis
    target = max(s.id for s in snaps if s.time_millis <= ts)  # the newest at or before
    before = metadata_state(wh)
    rc, out = run_job(to_ts_job, wh, "--timestamp", str(ts), "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["target_snapshot_id"] == target
    assert out["deleted_snapshot_ids"] == list(range(target + 1, 5)) and metadata_state(wh) == before
    rc, out = run_job(to_ts_job, wh, str(ts), "--dry-run", "false", capsys=capsys)  # positional timestamp
    assert rc == 0 and out["job"] == "rollback_to_timestamp" and out["previous_snapshot_id"] == 4
    assert out["target_snapshot_id"] == target and out["deleted_tags"] == ["late"]
    t = reload(wh)
    assert t.latest_snapshot().id == target and t.tag_manager.list_names() == []
    assert ids(t) == [i * 10 + j for i in range(target) for j in range(3)]


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        ([], EXIT_USAGE, "timestamp"),
        (["0"], EXIT_FAILURE, "no snapshot"),  # before the first snapshot
        (["--timestamp", "noon"], EXIT_FAILURE, "timestamp"),
        (["1", "2"], EXIT_USAGE, "too many"),
    ],
)
def test_rollback_to_timestamp_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    make_table(wh, 2)
    before = metadata_state(wh)
    rc, out = run_job(to_ts_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before


# --- rollback_to_as_latest ---------------------------------------------------------------------


def test_rollback_to_as_latest_keeps_history_and_pypaimon_reads_it(
    wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    t = make_table(wh, 4)
    t.maintenance.create_tag("v2", 2)
    before = metadata_state(wh)
    rc, out = run_job(as_latest_job, wh, "--tag", "v2", "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["current_snapshot_id"] == 5
    assert metadata_state(wh) == before
    rc, out = cli("rollback_to_as_latest", "--warehouse", wh, "--table", "db.t", "v2")  # positional tag
    assert rc == 0 and out["status"] == "ok" and out["previous_snapshot_id"] == 4
    assert out["rolled_back_snapshot_id"] == 2 and out["current_snapshot_id"] == 5
    t = reload(wh)
    assert t.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4, 5]  # nothing deleted
    assert t.latest_snapshot().commit_kind.value == "OVERWRITE"
    assert ids(t) == [0, 1, 2, 10, 11, 12]
    # and back to snapshot 4 by id: a protection tag is created on it, as Java does
    rc, out = run_job(as_latest_job, wh, "--snapshot-id", "4", capsys=capsys)
    assert (
        rc == 0
        and out["current_snapshot_id"] == 6
        and out["created_tag"].startswith("rollback-to-as-latest-4-")
    )
    assert ids(reload(wh)) == [i * 10 + j for i in range(4) for j in range(3)]
    theirs = pypaimon.read(wh, "db.t")
    assert sorted(theirs.column("id").to_pylist()) == ids(reload(wh))
    old = pypaimon.read(wh, "db.t", options={"scan.snapshot-id": "5"})
    assert sorted(old.column("id").to_pylist()) == [0, 1, 2, 10, 11, 12]


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        ([], EXIT_USAGE, "exactly one"),
        (["--tag", "v2", "--snapshot-id", "1"], EXIT_USAGE, "exactly one"),
        (["--tag", "nope"], EXIT_FAILURE, "nope"),
        (["--snapshot-id", "99"], EXIT_FAILURE, "99"),
        (["--snapshot-id", "x"], EXIT_USAGE, "integer"),
    ],
)
def test_rollback_to_as_latest_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    make_table(wh, 2).maintenance.create_tag("v2", 2)
    before = metadata_state(wh)
    rc, out = run_job(as_latest_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before


# --- clear_consumers ---------------------------------------------------------------------------


def _consumers(wh: str) -> dict[str, int]:
    return dict(reload(wh).consumer_manager.consumers())


def test_clear_consumers(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(wh, 3)
    for cid in ("job_a", "job_b", "keep", "job_keep"):
        t.consumer_manager.reset_consumer(cid, Consumer(2))
    rc, out = run_job(clear_job, wh, "--dry-run", capsys=capsys)
    assert (
        rc == 0
        and out["dry_run"] is True
        and sorted(out["cleared_consumers"]) == ["job_a", "job_b", "job_keep", "keep"]
    )
    assert len(_consumers(wh)) == 4
    rc, out = run_job(clear_job, wh, "job_.*", "job_keep", "--dry-run", "false", capsys=capsys)  # including, excluding
    assert (
        rc == 0 and out["job"] == "clear_consumers" and sorted(out["cleared_consumers"]) == ["job_a", "job_b"]
    )
    assert _consumers(wh) == {"keep": 2, "job_keep": 2}
    rc, out = run_job(clear_job, wh, "--includingConsumers", "kee", "--dry-run", "false", capsys=capsys)  # full match only
    assert rc == 0 and out["cleared_consumers"] == [] and len(_consumers(wh)) == 2
    rc, out = cli("clear_consumers", "--warehouse", wh, "--table", "db.t", "--dry-run", "false")
    assert rc == 0 and sorted(out["cleared_consumers"]) == ["job_keep", "keep"] and _consumers(wh) == {}


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["("], EXIT_FAILURE, "pattern"),
        (["--excluding-consumers", "[a"], EXIT_FAILURE, "pattern"),
        ([".*", "x", "y"], EXIT_USAGE, "too many"),
    ],
)
def test_clear_consumers_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    make_table(wh, 2).consumer_manager.reset_consumer("c1", Consumer(2))
    before = metadata_state(wh)
    rc, out = run_job(clear_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before


# --- expire_changelogs -------------------------------------------------------------------------

DECOUPLED = {"changelog.num-retained.max": "100", "changelog.time-retained": "10 d"}


def _changelogs(wh: str) -> list[int]:
    t = reload(wh)
    return ChangelogManager(t.file_io, t.paths).list_ids()


def test_expire_changelogs(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(wh, 5, options=DECOUPLED)
    t.maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than=FUTURE)  # snapshots 1-4 become changelogs
    assert _changelogs(wh) == [1, 2, 3, 4]
    rows = ids(t)
    rc, out = run_job(changelogs_job, wh, capsys=capsys)  # the table's 10 d: all too young
    assert rc == 0 and out["job"] == "expire_changelogs" and out["expired_changelog_ids"] == []
    before = metadata_state(wh)
    # positional retain_max, retain_min, older_than
    rc, out = run_job(changelogs_job, wh, "3", "1", FUTURE, "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["expired_changelog_ids"] == [1, 2, 3]
    assert metadata_state(wh) == before
    rc, out = run_job(
        changelogs_job, wh, "--retain-max", "3", "--retain-min", "1", "--older-than", FUTURE, capsys=capsys
    )
    assert rc == 0 and out["expired_changelog_ids"] == [1, 2, 3] and out["earliest_changelog_id"] == 4
    assert _changelogs(wh) == [4]
    rc, out = cli("expire_changelogs", "--warehouse", wh, "--table", "db.t", "", "", "", "", "true")
    assert rc == EXIT_USAGE and "integer" in out["error"] and _changelogs(wh) == [4]  # '' is not a placeholder
    rc, out = run_job(changelogs_job, wh, "--delete-all", capsys=capsys)
    assert rc == 0 and out["expired_changelog_ids"] == [4] and _changelogs(wh) == []
    assert ids(reload(wh)) == rows  # the live table never changes


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--retain-max", "1", "--retain-min", "3"], EXIT_FAILURE, "retain_min"),
        (["--retain-max", "0"], EXIT_FAILURE, "retain_max"),
        (["--older-than", "later"], EXIT_FAILURE, "older_than"),
        (["--delete-all", "maybe"], EXIT_USAGE, "true or false"),
        (["--max-deletes", "many"], EXIT_USAGE, "integer"),
    ],
)
def test_expire_changelogs_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    make_table(wh, 3, options=DECOUPLED).maintenance.expire_snapshots(retain_max=1, retain_min=1, older_than=FUTURE)
    before = metadata_state(wh)
    rc, out = run_job(changelogs_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before
