"""LedgerRecord, its Arrow form and the ledger table's schema."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.ledger.record import (
    LEDGER_SCHEMA,
    LedgerRecord,
    new_record_id,
    records_from_arrow,
    records_to_arrow,
    utc_day,
)

DAY = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def record(**kw: object) -> LedgerRecord:
    base: dict[str, object] = {
        "record_id": new_record_id(),
        "table_name": "db.t",
        "action": "compact",
        "status": "success",
        "start_millis": DAY,
        "end_millis": DAY + 1500,
    }
    return LedgerRecord(**{**base, **kw})  # type: ignore[arg-type]


def test_schema_matches_the_contract() -> None:
    required = {f.name for f in LEDGER_SCHEMA if not f.nullable}
    assert required == {"record_id", "table_name", "action", "status", "start_time", "end_time", "dt"}
    types = {f.name: f.type for f in LEDGER_SCHEMA}
    assert types["start_time"] == pa.timestamp("ms") and types["start_time"].tz is None
    assert types["map_index"] == types["try_number"] == pa.int32()
    assert types["cpu_seconds"] == types["health_score"] == pa.float64()
    assert LEDGER_SCHEMA.names[-1] == "dt" and len(LEDGER_SCHEMA) == 30


def test_round_trip_through_arrow_and_dict() -> None:
    full = record(
        error=None,
        duration_ms=1500,
        snapshot_before=4,
        snapshot_after=5,
        files_read=10,
        bytes_read=10_000,
        files_written=1,
        bytes_written=9_000,
        rows_written=100,
        cpu_seconds=0.25,
        table_files=1,
        table_bytes=9_000,
        health_score=100.0,
        entry_point="airflow",
        dag_id="d",
        run_id="r",
        task_id="t",
        map_index=3,
        try_number=2,
        host="h",
        details=json.dumps({"tasks": 1}),
    )
    sparse = record(status="failed", error="CommitConflictError: lost")
    table = records_to_arrow([full, sparse])
    assert table.schema == LEDGER_SCHEMA
    assert table.column("dt").to_pylist() == ["2023-11-14"] * 2
    assert table.column("start_time").cast(pa.int64()).to_pylist() == [DAY, DAY]
    assert records_from_arrow(table) == [full, sparse]
    assert LedgerRecord.from_dict(json.loads(json.dumps(full.to_dict()))) == full
    assert full.details_dict() == {"tasks": 1} and sparse.details_dict() == {}


def test_dt_is_the_utc_day_of_the_start() -> None:
    assert utc_day(0) == "1970-01-01"
    assert record(start_millis=DAY, end_millis=DAY + 86_400_000).dt == "2023-11-14"


@pytest.mark.parametrize(
    ("kw", "word"),
    [
        ({"status": "ok"}, "status"),
        ({"table_name": ""}, "table_name"),
        ({"action": ""}, "action"),
        ({"end_millis": DAY - 1}, "before it starts"),
    ],
)
def test_bad_records_are_refused_naming_the_problem(kw: dict[str, object], word: str) -> None:
    with pytest.raises(InvalidArgumentError, match=word):
        record(**kw)
