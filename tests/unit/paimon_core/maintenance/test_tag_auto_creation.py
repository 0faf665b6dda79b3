"""Automatic tags (Java's TagAutoCreation, TagPeriodHandler, TagBatchCreation, TagTimeExpire):
names and periods exactly as Java formats them, delay, completion, retention with every formatter
(Paimon PR #5786), watermark and batch modes, idempotent scheduled runs with an explicit ``now``."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidOptionError
from paimon_core.operation.commit.committer import new_commit_user
from paimon_core.options import CoreOptions
from paimon_core.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_core.table.table import FileStoreTable
from paimon_core.tag.tag_auto_creation import TagAutoCreation, TagCreationResult
from paimon_core.tag.tag_manager import tag_time_retained_ms
from paimon_core.tag.tag_period import TagPeriodHandler
from paimon_core.utils.clock import ManualClock

MIN = 60_000
HOUR = 60 * MIN
DAY = 24 * HOUR


def utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0) -> int:
    return int(dt.datetime(y, mo, d, h, mi, tzinfo=dt.UTC).timestamp() * 1000)


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


class Env:
    """A table whose commits happen at chosen (UTC) times."""

    def __init__(self, warehouse: str, options: dict[str, str]) -> None:
        self.clock = ManualClock(utc(2024, 1, 1))
        cat = FileSystemCatalog(warehouse, clock=self.clock)
        cat.create_database("db", ignore_if_exists=True)
        # write-only: these tests trigger the runs themselves, as a scheduled job does (a writer
        # would otherwise also run them after each commit: see test_commit_maintenance.py)
        opts = {"sink.process-time-zone": "UTC", "write-only": "true", **options}
        self.table: FileStoreTable = cat.create_table("db.t", _rows([]).schema, options=opts)
        self.next_id = 0

    def commit(self, at: int, *, watermark: int | None = None) -> int:
        self.clock.set(at)
        self.next_id += 1
        if watermark is None:
            sid = self.table.write_arrow(_rows([self.next_id])).snapshot_id
        else:
            write = self.table.new_batch_write_builder().new_write()
            write.write_arrow(_rows([self.next_id]))
            commit = self.table.new_file_store_commit(new_commit_user())
            sid = commit.commit(write.prepare_commit(), BATCH_COMMIT_IDENTIFIER, watermark=watermark).snapshot_id
        assert sid is not None
        return sid

    def run(self, now: int) -> TagCreationResult:
        res: TagCreationResult = self.table.maintenance.trigger_tag_automatic_creation(now=now)
        return res

    def tags(self) -> dict[str, int]:
        return {n: s.id for n, s in self.table.tag_manager.tags().items()}


# --- TagPeriodHandler ------------------------------------------------------------------------
T = dt.datetime(2024, 1, 31, 8, 30)


@pytest.mark.parametrize(
    ("options", "name", "previous"),
    [
        ({}, "2024-01-31", dt.datetime(2024, 1, 30)),
        ({"tag.period-formatter": "without_dashes"}, "20240131", dt.datetime(2024, 1, 30)),
        ({"tag.period-formatter": "without_dashes_and_spaces"}, "20240131", dt.datetime(2024, 1, 30)),
        ({"tag.creation-period": "hourly"}, "2024-01-31 08", dt.datetime(2024, 1, 31, 7)),
        ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"}, "20240131 08", dt.datetime(2024, 1, 31, 7)),
        (
            {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"},
            "2024013108",
            dt.datetime(2024, 1, 31, 7),
        ),
        ({"tag.creation-period": "two-hours", "tag.period-formatter": "without_dashes"}, "2024-01-31 08", dt.datetime(2024, 1, 31, 6)),
        ({"tag.creation-period-duration": "30 min"}, "202401310830", dt.datetime(2024, 1, 31, 8)),
    ],
)
def test_period_handler_names_like_java(options: dict[str, str], name: str, previous: dt.datetime) -> None:
    h = TagPeriodHandler.create(CoreOptions(options))
    start = h.next_tag_time(h.normalize_to_previous_tag(T))  # the period T falls in
    assert h.time_to_tag(start) == name and h.tag_to_time(name) == start
    assert h.normalize_to_previous_tag(T) == previous
    assert h.tag_to_time(h.time_to_tag(previous)) == previous
    assert h.is_auto_tag(h.time_to_tag(previous))
    assert h.next_tag_time(previous) - previous == dt.timedelta(milliseconds=h.period_ms)
    assert not h.is_auto_tag("manual") and not h.is_auto_tag("2024-02-30") and not h.is_auto_tag("")


def test_daily_handler_parses_like_java() -> None:
    daily = TagPeriodHandler.create(CoreOptions({}))
    # Java's DailyTagPeriodHandler parses the part before a space: hourly names count as daily tags.
    assert daily.tag_to_time("2024-01-31 08") == dt.datetime(2024, 1, 31)
    assert not daily.is_auto_tag("20240131")
    assert not TagPeriodHandler.create(CoreOptions({"tag.period-formatter": "without_dashes"})).is_auto_tag("2024-01-31")


def test_invalid_configuration() -> None:
    with pytest.raises(InvalidOptionError, match="tag.creation-delay"):
        TagPeriodHandler.create(CoreOptions({"tag.creation-period": "hourly"})).validate_delay(HOUR)
    with pytest.raises(InvalidOptionError):
        TagPeriodHandler.create(CoreOptions({"tag.creation-period": "weekly"}))


# --- process-time ----------------------------------------------------------------------------
def test_process_time_daily_across_day_boundaries(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time"})
    s1 = env.commit(utc(2024, 1, 1, 10))
    s2 = env.commit(utc(2024, 1, 1, 20))
    s3 = env.commit(utc(2024, 1, 2, 1))
    res = env.run(utc(2024, 1, 2, 1, 30))
    # Java: the first snapshot gets the previous period's tag; the first one past midnight
    # closes Jan 1. Nothing else until Jan 3 00:00.
    assert res.created_tags == ("2023-12-31", "2024-01-01")
    assert env.tags() == {"2023-12-31": s1, "2024-01-01": s3}
    assert s2 not in env.tags().values()
    # Idempotent: the same run again (or any time before Jan 3) creates nothing.
    assert env.run(utc(2024, 1, 2, 1, 30)).created_tags == ()
    assert env.run(utc(2024, 1, 2, 23, 59)).created_tags == ()
    # Jan 3 00:00 with no commit on Jan 2 after s3: Java's writer forces an empty snapshot.
    res = env.run(utc(2024, 1, 3))
    assert res.created_tags == ("2024-01-02",) and res.created_snapshot_ids == (s3 + 1,)
    assert env.tags()["2024-01-02"] == s3 + 1
    assert sorted(env.table.copy({"scan.tag-name": "2024-01-02"}).to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert env.run(utc(2024, 1, 3)).created_tags == ()


def test_scheduled_backfill_tags_state_as_of_now(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time"})
    env.commit(utc(2024, 1, 1, 10))
    b = env.commit(utc(2024, 1, 1, 20))
    c = env.commit(utc(2024, 1, 2, 9))
    d = env.commit(utc(2024, 1, 2, 23))
    env.commit(utc(2024, 1, 3, 6))
    # The daily job runs late (all commits exist) with now = each interval's end, in order.
    assert env.run(utc(2024, 1, 2)).created_tags == ("2023-12-31", "2024-01-01")
    assert env.tags()["2024-01-01"] == b  # the state at Jan 2 00:00, not the later commits
    assert env.run(utc(2024, 1, 3)).created_tags == ("2024-01-02",)
    assert env.tags()["2024-01-02"] == d and c not in env.tags().values()
    # Re-running an older interval is a no-op.
    assert env.run(utc(2024, 1, 2)).created_tags == ()
    assert env.run(utc(2024, 1, 3)).created_snapshot_ids == ()


def test_creation_delay(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time", "tag.creation-delay": "10 min"})
    env.commit(utc(2024, 1, 1, 10))
    env.run(utc(2024, 1, 1, 11))  # bootstrap tag 2023-12-31
    late = env.commit(utc(2024, 1, 2, 0, 5))  # late data for Jan 1
    assert env.run(utc(2024, 1, 2, 0, 5)).created_tags == ()  # 00:05 - 10 min < Jan 2
    assert env.run(utc(2024, 1, 2, 0, 10)).created_tags == ("2024-01-01",)
    assert env.tags()["2024-01-01"] == late


def test_delay_must_be_shorter_than_period(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time", "tag.creation-period": "hourly", "tag.creation-delay": "1 h"})
    with pytest.raises(InvalidOptionError):
        TagAutoCreation(env.table.store)


@pytest.mark.parametrize(
    ("options", "step", "names"),
    [
        ({"tag.creation-period": "hourly"}, HOUR, ["2024-01-01 10", "2024-01-01 11"]),
        ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"}, HOUR, ["20240101 10", "20240101 11"]),
        (
            {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"},
            HOUR,
            ["2024010110", "2024010111"],
        ),
        ({"tag.creation-period": "two-hours"}, 2 * HOUR, ["2024-01-01 10", "2024-01-01 12"]),
        ({"tag.period-formatter": "without_dashes"}, DAY, ["20240101", "20240102"]),
        ({"tag.creation-period-duration": "15 min"}, 15 * MIN, ["202401011000", "202401011015"]),
    ],
)
def test_process_time_periods_and_formatters(warehouse: str, options: dict[str, str], step: int, names: list[str]) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time", **options})
    start = utc(2024, 1, 1, 10) if step < DAY else utc(2024, 1, 1)
    env.commit(start + step // 2)
    env.run(start + step // 2)  # bootstrap: tags the previous period
    created: list[str] = []
    for k in range(1, 3):
        env.commit(start + k * step + step // 2)
        created += env.run(start + k * step + step // 2).created_tags
    assert created == names


def test_process_time_zone(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time", "sink.process-time-zone": "Asia/Shanghai"})
    env.commit(utc(2024, 1, 1, 10))  # Jan 1 18:00 in Shanghai
    env.run(utc(2024, 1, 1, 10))
    s = env.commit(utc(2024, 1, 1, 17))  # Jan 2 01:00 in Shanghai: closes Shanghai's Jan 1
    assert env.run(utc(2024, 1, 1, 17)).created_tags == ("2024-01-01",)
    assert env.tags()["2024-01-01"] == s


def test_automatic_completion(warehouse: str) -> None:
    for completion, want in (("true", ["2024-01-02", "2024-01-03", "2024-01-04"]), ("false", ["2024-01-02", "2024-01-04"])):
        env = Env(f"{warehouse}/{completion}", {"tag.automatic-creation": "process-time", "tag.automatic-completion": completion})
        env.commit(utc(2024, 1, 1, 10))
        env.run(utc(2024, 1, 2))  # bootstrap + 2024-01-01
        assert set(env.tags()) == {"2023-12-31", "2024-01-01"}
        env.commit(utc(2024, 1, 3, 12))
        res = env.run(utc(2024, 1, 5))
        assert list(res.created_tags) == want, completion
        # One auto tag per snapshot: completion needs two empty snapshots to carry Jan 3 and 4.
        assert len(res.created_snapshot_ids) == (2 if completion == "true" else 1)
        assert len(set(env.tags().values())) == len(env.tags())


def test_num_retained_max_only_counts_auto_tags(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time", "tag.num-retained-max": "2"})
    first = env.commit(utc(2024, 1, 1, 10))
    env.table.maintenance.create_tag("manual-old", first)
    env.table.maintenance.create_tag("20230101x", first)  # not an auto-tag name
    expired: list[str] = []
    for day in range(1, 6):
        env.commit(utc(2024, 1, day, 12))
        expired += env.run(utc(2024, 1, day + 1)).expired_tags
    assert sorted(env.tags()) == ["20230101x", "2024-01-04", "2024-01-05", "manual-old"]
    assert expired == ["2023-12-31", "2024-01-01", "2024-01-02", "2024-01-03"]


@pytest.mark.parametrize(
    "options",
    [
        {"tag.period-formatter": "with_dashes"},
        {"tag.period-formatter": "without_dashes"},
        {"tag.period-formatter": "without_dashes_and_spaces"},
        {"tag.creation-period": "hourly", "tag.period-formatter": "with_dashes"},
        {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"},
        {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"},
        {"tag.creation-period": "two-hours"},
        {"tag.creation-period-duration": "3 h"},
    ],
)
def test_retention_works_with_every_formatter(warehouse: str, options: dict[str, str]) -> None:
    """Paimon PR #5786: auto tags without dashes never expired."""
    env = Env(warehouse, {"tag.automatic-creation": "process-time", "tag.num-retained-max": "3", **options})
    step = TagPeriodHandler.create(env.table.options).period_ms
    start = utc(2024, 1, 1)
    for k in range(8):
        env.commit(start + k * step + 1000)
        env.run(start + k * step + 2000)
    auto = sorted(env.tags())
    assert len(auto) == 3
    h = TagPeriodHandler.create(env.table.options)
    assert [h.tag_to_time(n) for n in auto] == [h.tag_to_time(n) for n in sorted(auto, key=h.tag_to_time)]
    assert max(h.tag_to_time(n) for n in auto) == dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=6 * step)


def test_time_retained_expiry_in_runs(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "process-time", "tag.default-time-retained": "36 h"})
    expired: dict[int, tuple[str, ...]] = {}
    for day in range(1, 5):
        env.commit(utc(2024, 1, day, 12))
        env.clock.set(utc(2024, 1, day + 1))  # tags are created "now" on the clock
        res = env.run(utc(2024, 1, day + 1))
        expired[day + 1] = res.expired_tags
        assert all(tag_time_retained_ms(s) == 36 * HOUR for s in env.table.tag_manager.tags().values())
    # Created Jan 2 00:00 -> expire after Jan 3 12:00, i.e. in the Jan 4 run; and so on.
    assert expired == {2: (), 3: (), 4: ("2023-12-31", "2024-01-01"), 5: ("2024-01-02",)}
    env.clock.set(utc(2024, 1, 5, 12))
    assert env.run(utc(2024, 1, 5, 12)).expired_tags == ()  # not strictly after yet
    env.clock.set(utc(2024, 1, 5, 12) + 1)
    assert env.run(utc(2024, 1, 5, 12) + 1).expired_tags == ("2024-01-03",)
    assert sorted(env.tags()) == ["2024-01-04"]


def test_time_expire_can_be_disabled(warehouse: str) -> None:
    env = Env(warehouse, {"tag.time-expire-enabled": "false"})
    env.commit(utc(2024, 1, 1))
    env.table.maintenance.create_tag("short", time_retained="1 min")
    env.clock.set(utc(2024, 1, 2))
    assert env.run(utc(2024, 1, 2)).expired_tags == ()
    assert env.table.maintenance.expire_tags().expired_tags == ("short",)  # the procedure always expires (Java)


# --- watermark -------------------------------------------------------------------------------
def test_watermark_mode(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "watermark", "tag.creation-period": "hourly"})
    env.commit(utc(2024, 1, 1, 10))  # no watermark: never tagged
    a = env.commit(utc(2024, 3, 1), watermark=utc(2024, 1, 1, 10, 30))
    env.commit(utc(2024, 3, 1, 1), watermark=utc(2024, 1, 1, 10, 59))
    c = env.commit(utc(2024, 3, 1, 2), watermark=utc(2024, 1, 1, 11, 0))
    res = env.run(utc(2024, 3, 2))
    # Commit times are irrelevant: the watermark closes hours; no forced tag without one.
    assert res.created_tags == ("2024-01-01 09", "2024-01-01 10") and res.created_snapshot_ids == ()
    assert env.tags() == {"2024-01-01 09": a, "2024-01-01 10": c}
    assert env.run(utc(2024, 3, 5)).created_tags == ()


# --- batch -----------------------------------------------------------------------------------
def test_batch_mode(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "batch", "tag.num-retained-max": "2"})
    s1 = env.commit(utc(2024, 1, 1, 10))
    assert env.run(utc(2024, 1, 1, 11)).created_tags == ("batch-write-2024-01-01",)
    assert env.run(utc(2024, 1, 1, 11)).created_tags == ()  # idempotent
    s2 = env.commit(utc(2024, 1, 1, 12))  # same day: the tag moves to the newer snapshot
    assert env.run(utc(2024, 1, 1, 13)).created_tags == ("batch-write-2024-01-01",)
    assert env.tags() == {"batch-write-2024-01-01": s2} and s1 != s2
    env.table.maintenance.create_tag("manual", s1)
    for day in (2, 3):
        env.commit(utc(2024, 1, day, 10))
        env.run(utc(2024, 1, day, 11))
    assert sorted(env.tags()) == ["batch-write-2024-01-02", "batch-write-2024-01-03", "manual"]


def test_batch_customized_name(warehouse: str) -> None:
    env = Env(warehouse, {"tag.automatic-creation": "batch", "tag.batch.customized-name": "nightly"})
    env.commit(utc(2024, 1, 1, 10))
    assert env.run(utc(2024, 1, 2)).created_tags == ("nightly",)
    assert env.run(utc(2024, 1, 1, 9)).created_tags == ()  # nothing committed yet as of then
    assert env.tags() == {"nightly": 1}


def test_none_mode_creates_nothing(warehouse: str) -> None:
    env = Env(warehouse, {})
    env.commit(utc(2024, 1, 1))
    res = env.run(utc(2024, 1, 5))
    assert res.created_tags == () and res.mode == "none" and res.to_dict()["created_tags"] == []
