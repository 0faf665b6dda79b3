"""mark_partition_done: Java's ``_SUCCESS`` file (SuccessFile JSON) per partition directory;
done-partition and the other metastore/HTTP actions are refused clearly, writing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError
from paimon_core.partition.mark_done import SuccessFile
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

T0 = 1_704_067_200_000
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hh", pa.int32())])


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


def table(local_warehouse: str, clock: ManualClock, options: dict[str, str] | None = None) -> FileStoreTable:
    cat = FileSystemCatalog(local_warehouse, clock=clock)
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA, partition_keys=["dt", "hh"], options=options or {})
    t.write_arrow(pa.table({"id": [1, 2], "dt": ["2024-01-01", "2024-01-02"], "hh": [0, 5]}, schema=SCHEMA))
    return t


def success_files(t: FileStoreTable) -> list[str]:
    root = Path(t.path)
    return sorted(str(p.relative_to(root)) for p in root.rglob("_SUCCESS"))


def test_success_file_per_partition_in_javas_format(local_warehouse: str, clock: ManualClock) -> None:
    t = table(local_warehouse, clock)
    r = t.maintenance.mark_partition_done("dt=2024-01-01,hh=0;hh=5,dt=2024-01-02")
    assert r.actions == ("success-file",)
    assert r.partitions == ("dt=2024-01-01/hh=0", "dt=2024-01-02/hh=5")  # partition-key order
    assert success_files(t) == ["dt=2024-01-01/hh=0/_SUCCESS", "dt=2024-01-02/hh=5/_SUCCESS"]
    text = Path(t.path, "dt=2024-01-01/hh=0/_SUCCESS").read_text()
    assert text == '{\n  "creationTime" : 1704067200000,\n  "modificationTime" : 1704067200000\n}'
    assert json.loads(text) == {"creationTime": T0, "modificationTime": T0}
    # marking again keeps the creation time and moves the modification time (Java's SuccessFile)
    clock.advance(5000)
    t.maintenance.mark_partition_done([{"dt": "2024-01-01", "hh": "0"}])
    again = SuccessFile.from_json(Path(t.path, "dt=2024-01-01/hh=0/_SUCCESS").read_text(), path="x")
    assert again == SuccessFile(T0, T0 + 5000)
    # the data is untouched and still read
    assert t.latest_snapshot().id == 1 and t.to_arrow().num_rows == 2  # type: ignore[union-attr]


def test_a_leading_partition_key_marks_the_parent_directory(local_warehouse: str, clock: ManualClock) -> None:
    t = table(local_warehouse, clock)
    assert t.maintenance.mark_partition_done("dt=2024-01-01").partitions == ("dt=2024-01-01",)
    assert success_files(t) == ["dt=2024-01-01/_SUCCESS"]


@pytest.mark.parametrize(
    ("partitions", "message"),
    [
        ("dt=2024-01-01;region=eu", "non-partition column"),
        ("hh=0", "leading partition keys"),
        ("dt", "must be 'key=value"),
        ("dt=,hh=1", "empty value"),
        ("", "must specify partitions"),
    ],
)
def test_bad_partition_specs_write_nothing(
    local_warehouse: str, clock: ManualClock, partitions: str, message: str
) -> None:
    t = table(local_warehouse, clock)
    with pytest.raises(InvalidArgumentError, match=message):
        t.maintenance.mark_partition_done(partitions)
    assert success_files(t) == []


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("done-partition", "without metastore"),
        ("success-file,done-partition", "without metastore"),
        ("mark-event", "without metastore"),
        ("http-report", "not supported by paimon_core"),
        ("flag-file", "unknown action"),
    ],
)
def test_actions_needing_a_metastore_are_refused(
    local_warehouse: str, clock: ManualClock, action: str, message: str
) -> None:
    t = table(local_warehouse, clock, {"partition.mark-done-action": action})
    with pytest.raises(InvalidOptionError, match=message):
        t.maintenance.mark_partition_done("dt=2024-01-01,hh=0")
    assert success_files(t) == []


def test_unpartitioned_table_is_refused(local_warehouse: str, clock: ManualClock) -> None:
    cat = FileSystemCatalog(local_warehouse, clock=clock)
    cat.create_database("db")
    t = cat.create_table("db.u", SCHEMA)
    with pytest.raises(InvalidArgumentError, match="not partitioned"):
        t.maintenance.mark_partition_done("dt=2024-01-01")
