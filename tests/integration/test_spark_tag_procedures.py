"""Tag procedure jobs: create_tag_from_timestamp, replace_tag, rename_tag, expire_tags,
trigger_tag_automatic_creation (``python -m spark_jobs <job>``, Paimon's argument names and order).

Each: its documented behaviour, its bad inputs (clear error, exit code, table metadata unchanged),
and, once for the family, pypaimon reading the tags afterwards.
"""

from __future__ import annotations

from typing import Any

import pytest

from spark_jobs import create_tag_from_timestamp as from_ts_job
from spark_jobs import expire_tags as expire_tags_job
from spark_jobs import rename_tag as rename_job
from spark_jobs import replace_tag as replace_job
from spark_jobs import trigger_tag_automatic_creation as trigger_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import FUTURE, cli, ids, make_table, metadata_state, reload, run_job


def _tags(wh: str) -> dict[str, int]:
    tm = reload(wh).tag_manager
    return {n: tm.get(n).id for n in tm.list_names()}


# --- create_tag_from_timestamp ----------------------------------------------------------------


def test_create_tag_from_timestamp(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(wh, 4)
    snaps = [t.snapshot_manager.snapshot(i) for i in (1, 2, 3, 4)]
    ts = snaps[1].time_millis
    expected = next(s.id for s in snaps if s.time_millis >= ts)  # the first at or after (ties: the earliest)
    rc, out = run_job(from_ts_job, wh, "t1", str(ts), "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["snapshot_id"] == expected and _tags(wh) == {}
    rc, out = run_job(
        from_ts_job, wh, "--tag", "t1", "--timestamp", str(ts), "--time-retained", "1 d", capsys=capsys
    )
    assert rc == 0 and out["status"] == "ok" and out["job"] == "create_tag_from_timestamp"
    assert out["tag"] == "t1" and out["snapshot_id"] == expected and out["commit_time_millis"] >= ts
    assert out["tag_time_retained"] is not None
    assert _tags(wh) == {"t1": expected}
    # positional (tag, timestamp), an ISO time: before every snapshot -> the first one
    rc, out = run_job(from_ts_job, wh, "t0", "2000-01-01T00:00:00", capsys=capsys)
    assert rc == 0 and out["snapshot_id"] == 1 and _tags(wh) == {"t0": 1, "t1": expected}


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--tag", "x"], EXIT_USAGE, "timestamp"),  # timestamp is required
        (["--tag", "x", "--timestamp", FUTURE], EXIT_FAILURE, "no snapshot"),
        (["--tag", "old", "--timestamp", "0"], EXIT_FAILURE, "old"),  # the tag exists
        (["--tag", "old", "--timestamp", "0", "--dry-run"], EXIT_FAILURE, "old"),
        (["--tag", "x", "--timestamp", "yesterday-ish"], EXIT_FAILURE, "timestamp"),
        (["--tag", "x", "--timestamp", "0", "--time-retained", "soon"], EXIT_FAILURE, "time_retained"),
    ],
)
def test_create_tag_from_timestamp_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, needle: str
) -> None:
    make_table(wh, 2).maintenance.create_tag("old", 1)
    before = metadata_state(wh)
    rc, out = run_job(from_ts_job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before


# --- replace_tag / rename_tag -----------------------------------------------------------------


def test_replace_and_rename_tag_read_by_pypaimon(
    wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    t = make_table(wh, 3)
    t.maintenance.create_tag("v", 1)
    before = metadata_state(wh)
    rc, out = run_job(replace_job, wh, "v", "3", "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["snapshot_id"] == 3 and metadata_state(wh) == before
    rc, out = run_job(rename_job, wh, "v", "w", "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and metadata_state(wh) == before
    rc, out = run_job(
        replace_job, wh, "--tag", "v", "--snapshot", "2", "--time-retained", "7 d", capsys=capsys
    )
    assert (
        rc == 0
        and out["job"] == "replace_tag"
        and out["previous_snapshot_id"] == 1
        and out["snapshot_id"] == 2
    )
    assert _tags(wh) == {"v": 2} and out["tag_time_retained"] is not None
    rc, out = run_job(replace_job, wh, "v", capsys=capsys)  # positional; snapshot defaults to the latest
    assert rc == 0 and out["snapshot_id"] == 3 and _tags(wh) == {"v": 3}
    rc, out = run_job(
        replace_job, wh, "--tag_name", "v", "--snapshot_id", "2", capsys=capsys
    )  # Flink spellings
    assert rc == 0 and _tags(wh) == {"v": 2}

    rc, out = run_job(rename_job, wh, "--tag", "v", "--target-tag", "release", capsys=capsys)
    assert (
        rc == 0 and out["job"] == "rename_tag" and out["target_tag"] == "release" and out["snapshot_id"] == 2
    )
    assert _tags(wh) == {"release": 2}
    rc, out = run_job(rename_job, wh, "release", "release-2", capsys=capsys)  # positional tag, target_tag
    assert rc == 0 and _tags(wh) == {"release-2": 2}

    # pypaimon sees the renamed tag on snapshot 2 and reads the table as of it
    assert pypaimon.list_tags(wh, "db.t") == {"release-2": 2}
    theirs = pypaimon.read(wh, "db.t", options={"scan.tag-name": "release-2"})
    assert sorted(theirs.column("id").to_pylist()) == [0, 1, 2, 10, 11, 12]
    assert sorted(pypaimon.read(wh, "db.t").column("id").to_pylist()) == ids(reload(wh))


@pytest.mark.parametrize(
    ("job", "args", "code", "needle"),
    [
        (replace_job, ["--tag", "nope"], EXIT_FAILURE, "nope"),  # replace needs an existing tag
        (replace_job, ["--tag", "a", "--snapshot", "99"], EXIT_FAILURE, "99"),
        (replace_job, ["--tag", "a", "--snapshot", "two"], EXIT_USAGE, "integer"),
        (replace_job, [], EXIT_USAGE, "tag"),
        (rename_job, ["--tag", "nope", "--target-tag", "c"], EXIT_FAILURE, "nope"),
        (rename_job, ["--tag", "a", "--target-tag", "b"], EXIT_FAILURE, "b"),  # target taken
        (rename_job, ["--tag", "a"], EXIT_USAGE, "target"),
        (rename_job, ["a", "b", "c"], EXIT_USAGE, "too many"),
        (rename_job, ["a", "b", "--dry-run"], EXIT_FAILURE, "b"),  # a dry run checks the same
        (replace_job, ["nope", "--dry-run"], EXIT_FAILURE, "nope"),
    ],
)
def test_replace_and_rename_tag_bad_inputs(
    wh: str, capsys: pytest.CaptureFixture[str], job: Any, args: list[str], code: int, needle: str
) -> None:
    t = make_table(wh, 2)
    t.maintenance.create_tag("a", 1)
    t.maintenance.create_tag("b", 2)
    before = metadata_state(wh)
    rc, out = run_job(job, wh, *args, capsys=capsys)
    assert rc == code and out["status"] == "error" and needle in out["error"]
    assert metadata_state(wh) == before


# --- expire_tags -------------------------------------------------------------------------------


def test_expire_tags(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(wh, 3)
    t.maintenance.create_tag("keep", 3, time_retained="100 d")
    t.maintenance.create_tag("old", 1, time_retained="100 d")
    t.maintenance.create_tag("plain", 2)  # no retention: only older_than expires it
    rc, out = run_job(expire_tags_job, wh, capsys=capsys)  # nothing past its retention
    assert rc == 0 and out["job"] == "expire_tags" and out["expired_tags"] == []
    before = metadata_state(wh)
    rc, out = run_job(expire_tags_job, wh, "--older-than", FUTURE, "--dry-run", capsys=capsys)
    assert rc == 0 and out["dry_run"] is True and out["expired_tags"] == ["keep", "old", "plain"]
    assert metadata_state(wh) == before
    rows = ids(reload(wh))
    rc, out = run_job(expire_tags_job, wh, FUTURE, capsys=capsys)  # positional older_than
    assert rc == 0 and out["expired_tags"] == ["keep", "old", "plain"] and out["older_than_millis"] > 0
    assert _tags(wh) == {} and ids(reload(wh)) == rows  # the table's own data is untouched
    rc, out = run_job(expire_tags_job, wh, "--older-than", "someday", capsys=capsys)
    assert rc == EXIT_FAILURE and "older_than" in out["error"]


# --- trigger_tag_automatic_creation ------------------------------------------------------------


def test_trigger_tag_automatic_creation(wh: str, capsys: pytest.CaptureFixture[str]) -> None:
    # write-only writers leave tag creation to a scheduled job (else each commit tags itself)
    options = {
        "tag.automatic-creation": "batch",
        "tag.batch.customized-name": "nightly",
        "write-only": "true",
    }
    make_table(wh, 3, options=options)
    assert _tags(wh) == {}
    before = metadata_state(wh)
    rc, out = run_job(trigger_job, wh, "--now", "nonsense", capsys=capsys)
    assert rc == EXIT_FAILURE and "now" in out["error"] and metadata_state(wh) == before
    rc, out = cli("trigger_tag_automatic_creation", "--warehouse", wh, "--table", "db.t")
    assert rc == 0 and out["status"] == "ok" and out["mode"] == "batch" and out["created_tags"] == ["nightly"]
    assert _tags(wh) == {"nightly": 3}
    rc, out = run_job(trigger_job, wh, capsys=capsys)  # idempotent
    assert rc == 0 and out["created_tags"] == [] and _tags(wh) == {"nightly": 3}


def test_trigger_tag_automatic_creation_without_the_option_creates_nothing(
    wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make_table(wh, 2)
    rc, out = run_job(trigger_job, wh, capsys=capsys)
    assert rc == 0 and out["mode"] == "none" and out["created_tags"] == [] and _tags(wh) == {}


# --- every job of this family and its siblings: registered, documented, no Spark ----------------

NEW_JOBS = (
    "create_tag_from_timestamp",
    "replace_tag",
    "rename_tag",
    "expire_tags",
    "trigger_tag_automatic_creation",
    "rollback_to_timestamp",
    "rollback_to_as_latest",
    "clear_consumers",
    "expire_changelogs",
    "remove_unexisting_files",
)


@pytest.mark.parametrize("name", NEW_JOBS)
def test_registered_documented_and_spark_free(name: str) -> None:
    import importlib

    from spark_jobs import JOBS

    module = importlib.import_module(JOBS[name])
    assert module.JOB == name and "no Spark" in " ".join((module.__doc__ or "").split())
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0


def test_new_jobs_never_load_spark(wh: str) -> None:
    import subprocess
    import sys

    make_table(wh, 2)
    calls = [
        ["expire_tags", "--dry-run"],
        ["rollback_to_timestamp", FUTURE, "--dry-run"],
        ["clear_consumers", "--dry-run"],
        ["remove_unexisting_files", "--dry-run"],
    ]
    script = (
        "import sys\nfrom spark_jobs.__main__ import main\nrc = 0\n"
        + "".join(f"rc += main({[c[0], '--warehouse', wh, '--table', 'db.t', *c[1:]]!r})\n" for c in calls)
        + "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j'))\n"
        "assert not loaded, loaded\nsys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.splitlines()) == len(calls)
