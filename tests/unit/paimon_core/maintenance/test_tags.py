"""Manual tags: create / create from timestamp / replace / rename / expire (Java's TagManager,
Tag, TagTimeExpire and the tag procedures), tag files as Java writes them, read by pypaimon."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog, InvalidArgumentError, SnapshotNotFoundError, TagNotFoundError
from paimon_core.exceptions import TagAlreadyExistsError
from paimon_core.operation.tag_deletion import DeleteTagResult
from paimon_core.table.table import FileStoreTable
from paimon_core.tag.tag_manager import (
    duration_json,
    local_date_time_array,
    tag_create_time_millis,
    tag_time_retained_ms,
)
from paimon_core.tag.tag_time_expire import ExpireTagsResult
from paimon_core.utils.clock import ManualClock

HOUR = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([f"v{i}" for i in ids], pa.string())})


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


def _table(warehouse: str, clock: ManualClock, n: int = 4, options: dict[str, str] | None = None) -> FileStoreTable:
    """A table with ``n`` snapshots committed one second apart (snapshot k holds ids < 2k)."""
    cat = FileSystemCatalog(warehouse, clock=clock)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table("db.t", _rows([]).schema, options=options or {})
    for k in range(n):
        clock.advance(1000)
        t.write_arrow(_rows([2 * k, 2 * k + 1]))
    return t


def _ids(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


def _tag_files(t: FileStoreTable) -> dict[str, bytes]:
    return {n: t.file_io.read_bytes(t.tag_manager.tag_path(n)) for n in t.tag_manager.list_names()}


# --- create ---------------------------------------------------------------------------------
def test_create_tag_latest_by_default_plain_snapshot_json(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    tag = t.maintenance.create_tag("v1")
    assert tag.snapshot_id == 4 and tag.tag == "v1" and tag.to_dict()["snapshot_id"] == 4
    text = t.file_io.read_text(t.tag_manager.tag_path("v1"))
    # Java: without a retention the tag file is the snapshot JSON, no tag keys (readers <= 0.7).
    assert "tagCreateTime" not in text and "tagTimeRetained" not in text
    assert json.loads(text) == json.loads(t.file_io.read_text(t.snapshot_manager.snapshot_path(4))) | {
        "uuid": json.loads(text)["uuid"]
    }
    assert _ids(t.copy({"scan.tag-name": "v1"}).to_arrow()) == list(range(8))


def test_create_tag_with_retention_writes_java_tag_keys(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    clock.set(T0 + 5 * HOUR + 61_500)  # seconds and millis set: both array parts appear
    t.maintenance.create_tag("ttl", 2, time_retained="1 d")
    text = t.file_io.read_text(t.tag_manager.tag_path("ttl"))
    assert re.search(r'"tagTimeRetained" : 86400\.000000000\n}$', text), text
    obj = json.loads(text)
    assert obj["id"] == 2 and obj["tagTimeRetained"] == 86400.0
    assert obj["tagCreateTime"] == local_date_time_array(T0 + 5 * HOUR + 61_500)
    assert len(obj["tagCreateTime"]) == 7 and obj["tagCreateTime"][-1] == 500_000_000
    tag = t.tag_manager.get("ttl")
    assert tag_create_time_millis(tag) == T0 + 5 * HOUR + 61_500 and tag_time_retained_ms(tag) == 86_400_000


def test_java_local_date_time_and_duration_shapes() -> None:
    # Jackson drops zero seconds/nanos at the end of a LocalDateTime array.
    arr = local_date_time_array(T0)
    assert len(arr) == 5
    assert duration_json(0) == "0.0" and duration_json(1500) == "1.500000000" and duration_json(3_600_000) == "3600.000000000"


def test_default_time_retained_option(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock, options={"tag.default-time-retained": "2 h"})
    t.maintenance.create_tag("a")
    t.maintenance.create_tag("b", 1, time_retained=0)
    assert tag_time_retained_ms(t.tag_manager.get("a")) == 2 * HOUR
    assert tag_time_retained_ms(t.tag_manager.get("b")) == 0
    assert '"tagTimeRetained" : 0.0' in t.file_io.read_text(t.tag_manager.tag_path("b"))


@pytest.mark.parametrize("name", ["20240101", "2024-01-01 10", "2024010110", "tag with spaces", "ü-1"])
def test_java_valid_names(warehouse: str, clock: ManualClock, name: str) -> None:
    t = _table(warehouse, clock, n=1)
    t.maintenance.create_tag(name)  # numeric and spaced names are valid in Java (auto tags use them)
    assert t.tag_manager.list_names() == [name]


@pytest.mark.parametrize("name", ["", "   ", "a/b", "..", "a\\b", "x\ny"])
def test_invalid_names_change_nothing(warehouse: str, clock: ManualClock, name: str) -> None:
    t = _table(warehouse, clock, n=1)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.create_tag(name)
    assert t.tag_manager.list_names() == []


def test_create_errors_leave_tags_unchanged(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("v1", 1)
    before = _tag_files(t)
    with pytest.raises(TagAlreadyExistsError):
        t.maintenance.create_tag("v1", 3)
    with pytest.raises(SnapshotNotFoundError):
        t.maintenance.create_tag("v2", 99)
    with pytest.raises(InvalidArgumentError):
        t.maintenance.create_tag("v2", "3")  # type: ignore[arg-type]
    assert _tag_files(t) == before


def test_create_on_empty_table(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock, n=0)
    with pytest.raises(SnapshotNotFoundError):
        t.maintenance.create_tag("v1")
    assert t.tag_manager.list_names() == []


def test_create_tag_of_expired_snapshot_held_by_a_tag(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("keep", 1, time_retained="1 h")
    t.file_io.delete(t.snapshot_manager.snapshot_path(1))  # expired by hand
    snap = t.maintenance.create_tag("again", 1)  # Java's findSnapshot falls back to tags
    assert snap.snapshot_id == 1 and snap.tag_create_time is None
    assert "tagCreateTime" not in t.file_io.read_text(t.tag_manager.tag_path("again"))
    assert _ids(t.copy({"scan.tag-name": "again"}).to_arrow()) == [0, 1]


def test_auto_tag_names_cannot_double_tag_a_snapshot(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock, options={"tag.automatic-creation": "process-time", "write-only": "true"})
    t.maintenance.create_tag("2024-01-01", 1)
    with pytest.raises(InvalidArgumentError, match="already auto-tagged"):
        t.maintenance.create_tag("2024-01-02", 1)
    t.maintenance.create_tag("manual", 1)  # not an auto-tag name: fine
    t.maintenance.create_tag("2024-01-02", 2)
    assert t.tag_manager.list_names() == ["2024-01-01", "2024-01-02", "manual"]


# --- create from timestamp ----------------------------------------------------------------------
def test_create_tag_from_timestamp(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)  # snapshots k at T0 + k s
    assert t.maintenance.create_tag_from_timestamp("exact", T0 + 2000).snapshot_id == 2
    assert t.maintenance.create_tag_from_timestamp("after", T0 + 2001).snapshot_id == 3
    assert t.maintenance.create_tag_from_timestamp("first", 0).snapshot_id == 1
    with pytest.raises(SnapshotNotFoundError):
        t.maintenance.create_tag_from_timestamp("none", T0 + 4001)
    assert "none" not in t.tag_manager.list_names()
    assert t.maintenance.create_tag_from_timestamp("iso", "2024-01-01T00:00:03.500", time_retained="1 h").snapshot_id == 4


def test_create_tag_from_timestamp_prefers_earlier_tagged_snapshot(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("old", 1)
    t.file_io.delete(t.snapshot_manager.snapshot_path(1))
    # Earliest live snapshot is 2 (T0+2s); the tag holds snapshot 1 (T0+1s), which qualifies first.
    assert t.maintenance.create_tag_from_timestamp("from-ts", T0 + 500).snapshot_id == 1


# --- replace / rename ---------------------------------------------------------------------------
def test_replace_tag(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock, options={"tag.default-time-retained": "1 d"})
    with pytest.raises(TagNotFoundError):
        t.maintenance.replace_tag("missing", 1)
    assert t.tag_manager.list_names() == []
    t.maintenance.create_tag("v", 1)
    assert tag_time_retained_ms(t.tag_manager.get("v")) == 86_400_000
    t.maintenance.replace_tag("v", 3)
    tag = t.tag_manager.get("v")
    # Java's replaceTag writes exactly the retention given: none here.
    assert tag.id == 3 and tag.tag_time_retained is None
    assert _ids(t.copy({"scan.tag-name": "v"}).to_arrow()) == list(range(6))
    t.maintenance.replace_tag("v", time_retained="3 h")
    assert t.tag_manager.get("v").id == 4 and tag_time_retained_ms(t.tag_manager.get("v")) == 3 * HOUR
    before = _tag_files(t)
    with pytest.raises(SnapshotNotFoundError):
        t.maintenance.replace_tag("v", 42)
    assert _tag_files(t) == before


def test_rename_tag_keeps_bytes(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("a", 2, time_retained="1 h")
    t.maintenance.create_tag("b", 3)
    data = t.file_io.read_bytes(t.tag_manager.tag_path("a"))
    snap = t.maintenance.rename_tag("a", "c")
    assert (snap.snapshot_id, snap.tag, snap.renamed_from) == (2, "c", "a")
    assert t.tag_manager.list_names() == ["b", "c"]
    assert t.file_io.read_bytes(t.tag_manager.tag_path("c")) == data
    before = _tag_files(t)
    with pytest.raises(TagAlreadyExistsError):
        t.maintenance.rename_tag("c", "b")
    with pytest.raises(TagAlreadyExistsError):
        t.maintenance.rename_tag("c", "c")
    with pytest.raises(TagNotFoundError):
        t.maintenance.rename_tag("a", "d")
    with pytest.raises(InvalidArgumentError):
        t.maintenance.rename_tag("c", " ")
    assert _tag_files(t) == before


# --- expire ---------------------------------------------------------------------------------------
def test_expire_tags_by_time_retained(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    t.maintenance.create_tag("short", 1, time_retained="1 h")
    t.maintenance.create_tag("long", 2, time_retained="1 d")
    t.maintenance.create_tag("forever", 3)
    created = clock.now_millis()
    clock.set(created + HOUR)  # not after create + retained yet (Java: strictly after)
    assert t.maintenance.expire_tags().expired_tags == ()
    clock.set(created + HOUR + 1)
    dry = t.maintenance.expire_tags(dry_run=True)
    assert isinstance(dry, ExpireTagsResult) and dry.expired_tags == ("short",) and dry.dry_run
    assert t.tag_manager.list_names() == ["forever", "long", "short"]
    res = t.maintenance.expire_tags()
    assert res.expired_tags == ("short",) and isinstance(res.deletion, DeleteTagResult)
    assert t.tag_manager.list_names() == ["forever", "long"]
    assert res.to_dict()["deletion"]["deleted_tags"] == ["short"]
    clock.set(created + 2 * 86_400_000)
    assert t.maintenance.expire_tags().expired_tags == ("long",)
    assert t.tag_manager.list_names() == ["forever"]  # no retention: never by time


def test_expire_tags_older_than(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock)
    clock.set(T0 + 10 * HOUR)
    t.maintenance.create_tag("ttl-old", 1, time_retained="30 d")
    clock.set(T0 + 20 * HOUR)
    t.maintenance.create_tag("ttl-new", 2, time_retained="30 d")
    t.maintenance.create_tag("plain", 3)  # no create time recorded: aged by its file's modification time
    real_now = int(time.time() * 1000)
    if not warehouse.startswith("memory://"):
        mtime = real_now - 5 * 86_400_000
        os.utime(t.tag_manager.tag_path("plain"), (mtime / 1000, mtime / 1000))
    res = t.maintenance.expire_tags(older_than=T0 + 15 * HOUR)
    assert res.expired_tags == ("ttl-old",) and res.older_than_millis == T0 + 15 * HOUR
    # A cutoff after the plain tag's file time expires it too; ttl-new was created after T0+15h.
    res = t.maintenance.expire_tags(older_than=real_now + 86_400_000)
    assert res.expired_tags == ("plain", "ttl-new")
    assert t.tag_manager.list_names() == []


def test_expire_tags_nothing_to_do(warehouse: str, clock: ManualClock) -> None:
    t = _table(warehouse, clock, n=1)
    res = t.maintenance.expire_tags(older_than=T0)
    assert res.expired_tags == () and res.deletion is None
    assert res.to_dict()["expired_tags"] == []


# --- interop: pypaimon reads our tag files -------------------------------------------------------


@pytest.mark.interop
def test_pypaimon_reads_our_tags(tmp_path: Path, clock: ManualClock, pypaimon: object) -> None:
    wh = str(tmp_path / "wh")
    t = _table(wh, clock)
    t.maintenance.create_tag("plain", 2)
    t.maintenance.create_tag("ttl", 3, time_retained="1 d")
    t.maintenance.create_tag("20240101", 1, time_retained="90 min")
    t.maintenance.rename_tag("20240101", "renamed")
    peer = pypaimon
    assert peer.list_tags(wh, "db.t") == {"plain": 2, "ttl": 3, "renamed": 1}  # type: ignore[attr-defined]
    for name, want in (("plain", 4), ("ttl", 6), ("renamed", 2)):
        got = peer.read(wh, "db.t", options={"scan.tag-name": name})  # type: ignore[attr-defined]
        ours = t.copy({"scan.tag-name": name}).to_arrow()
        assert _ids(got) == _ids(ours) == list(range(want))
    script = (
        "import sys\n"
        "from pypaimon.common.json_util import JSON\n"
        "from pypaimon.tag.tag import Tag\n"
        "t = JSON.from_json(open(sys.argv[1]).read(), Tag)\n"
        "print(t.id, t.tag_time_retained.total_seconds(), t.tag_create_time.isoformat())\n"
    )
    from tests.peer_python import run_peer_script

    out = run_peer_script(script, t.tag_manager.tag_path("ttl")).split()
    assert out[0] == "3" and float(out[1]) == 86400.0
