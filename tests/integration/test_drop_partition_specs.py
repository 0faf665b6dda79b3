"""``drop_partition`` with several partition specs, in both of Paimon's forms: Flink's variadic
``CALL sys.drop_partition('db.t', 'dt=1', 'dt=2')`` (several positional arguments; a list in the
core call) and the named ``partitions => 'dt=1;dt=2'`` (``--partitions``; one string in the core
call), and both mixed. Each form: a dry run lists the partitions and changes no file, the run
drops all of them in ONE OVERWRITE snapshot, and pypaimon 2.1.0 reads the rows left (and the
dropped ones at the previous snapshot). Bad specs (a key that is not a partition key, an empty
spec, a spec that matches nothing, a key named twice) fail with a message naming the problem and
change no file, even when the other specs are good.
"""

from __future__ import annotations

from typing import Any

import pytest

from paimon_core.exceptions import InvalidArgumentError
from paimon_core.operation.partition_drop import parse_partition_specs
from spark_jobs import drop_partition as drop_job
from spark_jobs.common.args import EXIT_FAILURE, EXIT_USAGE

from .procedure_helpers import cli, ids, make_table, reload, run_job, table_files

#: each form of "drop d0 and d2" on the command line
JOB_FORMS: dict[str, tuple[str, ...]] = {
    "variadic": ("dt=d0", "dt=d2"),
    "named": ("--partitions", "dt=d0;dt=d2"),
    "named-repeated": ("--partitions", "dt=d0", "--partition", "dt=d2"),
    "mixed": ("--partitions", "dt=d0", "dt=d2"),
    "variadic-with-semicolons": ("dt=d0;dt=d2", "dt=d2"),  # a spec named twice is dropped once
}
#: each form of the same in the core call
CORE_FORMS: dict[str, Any] = {
    "list": ["dt=d0", "dt=d2"],
    "string": "dt=d0;dt=d2",
    "dicts": [{"dt": "d0"}, {"dt": "d2"}],
    "mixed": ["dt=d0;dt=d2", {"dt": "d2"}],
}
LEFT = [10, 11, 12, 30, 31, 32]  # make_table(4): partition d<i> holds ids i*10..i*10+2


def _pypaimon_ids(pypaimon: Any, wh: str, **options: str) -> list[int]:
    return sorted(pypaimon.read(wh, "db.t", options=options or None).column("id").to_pylist())


def _one_overwrite(wh: str, before_latest: int) -> None:
    t = reload(wh)
    assert t.snapshot_manager.list_snapshot_ids()[-1] == before_latest + 1  # exactly one new snapshot
    latest = t.latest_snapshot()
    assert latest is not None and latest.commit_kind == "OVERWRITE"


@pytest.mark.parametrize("form", sorted(JOB_FORMS))
def test_job_drops_several_specs_in_one_snapshot(
    form: str, wh: str, capsys: pytest.CaptureFixture[str], pypaimon: Any
) -> None:
    make_table(wh, 4)
    before = table_files(wh)
    for dry in ((), ("--dry-run",), ("--dry-run", "true")):  # a plan unless told: --dry-run false
        rc, out = run_job(drop_job, wh, "--no-ledger", *JOB_FORMS[form], *dry, capsys=capsys)
        assert rc == 0 and out["dry_run"] is True and out["snapshot_id"] is None, out
        listed = [(p["partition"], p["record_count"]) for p in out["partitions"]]
        assert listed == [("dt=d0", 3), ("dt=d2", 3)], out
        assert table_files(wh) == before, f"the dry run {dry} changed the table"
    rc, out = run_job(drop_job, wh, "--no-ledger", *JOB_FORMS[form], "--dry-run", "false", capsys=capsys)
    assert rc == 0 and (out["commit_kind"], out["deleted_files"], out["deleted_rows"]) == (
        "OVERWRITE",
        2,
        6,
    ), out
    assert out["snapshot_id"] == 5 and [p["partition"] for p in out["partitions"]] == ["dt=d0", "dt=d2"]
    _one_overwrite(wh, 4)
    assert ids(reload(wh)) == _pypaimon_ids(pypaimon, wh) == LEFT
    assert _pypaimon_ids(pypaimon, wh, **{"scan.snapshot-id": "4"}) == sorted(
        i * 10 + j for i in range(4) for j in range(3)
    )


@pytest.mark.parametrize("form", sorted(CORE_FORMS))
def test_core_call_drops_several_specs_in_one_snapshot(form: str, wh: str) -> None:
    t = make_table(wh, 4)
    before = table_files(wh)
    plan = t.maintenance.drop_partition(CORE_FORMS[form], dry_run=True)
    assert [p.partition for p in plan.partitions] == ["dt=d0", "dt=d2"] and plan.snapshot_id is None
    assert table_files(wh) == before
    result = reload(wh).maintenance.drop_partition(CORE_FORMS[form], dry_run=False)
    assert (result.snapshot_id, result.commit_kind, result.deleted_rows) == (5, "OVERWRITE", 6)
    assert result.to_dict()["partitions"][1]["partition"] == "dt=d2"
    _one_overwrite(wh, 4)
    assert ids(reload(wh)) == LEFT


def test_variadic_through_python_m_spark_jobs(wh: str, pypaimon: Any) -> None:
    """The real entry point (a fresh ``python -m spark_jobs`` process) takes the variadic form."""
    make_table(wh, 4)
    rc, out = cli(
        "drop_partition",
        "--warehouse",
        wh,
        "--table",
        "db.t",
        "--no-ledger",
        "dt=d0",
        "dt=d2",
        "--dry-run",
        "false",
    )
    assert rc == 0 and out["status"] == "ok" and out["deleted_rows"] == 6, out
    assert _pypaimon_ids(pypaimon, wh) == LEFT


@pytest.mark.parametrize(
    ("args", "rc", "message"),
    [
        (("dt=d0", "nope=1"), EXIT_FAILURE, "names ['nope'], which are not partition keys"),
        (("--partitions", "dt=d0;id=1"), EXIT_FAILURE, "not partition keys"),
        (("dt=d0", "dt=zz"), EXIT_FAILURE, "Partition 'dt=zz' does not exist"),
        (("--partitions", "dt=d0;dt=zz"), EXIT_FAILURE, "Partition 'dt=zz' does not exist"),
        (("dt=d0", ""), EXIT_USAGE, "a partition spec is empty"),
        (("dt=d0", "  "), EXIT_USAGE, "a partition spec is empty"),
        (("--partitions", "dt=d0;;dt=d1"), EXIT_USAGE, "Partition spec 2 of 'dt=d0;;dt=d1' is empty"),
        (("--partitions", "dt=d0;"), EXIT_USAGE, "is empty"),
        (("dt=d0", ";;"), EXIT_USAGE, "names no partition"),
        (("dt=d0", "dt=d1,dt=d2"), EXIT_USAGE, "names ['dt'] more than once"),
        (("dt=d0", "d1"), EXIT_USAGE, "must be 'key=value"),
        (("--dry-run",), EXIT_USAGE, "missing required argument --partitions"),
        (
            ("dt=d0", "--partition", "dt=d1", "dt=d2"),
            EXIT_USAGE,
            "unrecognized arguments: dt=d2",
        ),  # specs apart
    ],
    ids=lambda v: repr(v) if isinstance(v, tuple) else None,
)
def test_bad_specs_change_nothing(
    args: tuple[str, ...], rc: int, message: str, wh: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make_table(wh, 2)
    for dry in ((), ("--dry-run", "false")):
        before = table_files(wh)
        code, out = run_job(drop_job, wh, "--no-ledger", *args, *dry, capsys=capsys)
        assert code == rc and out["status"] == "error" and out["retryable"] is False, out
        assert message in out["error"], out
        assert "nothing was dropped" in out["error"] or rc == EXIT_USAGE, out
        assert table_files(wh) == before, f"{args} changed the table"


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([], "must specify partitions"),
        ("", "Partition spec 1 of '' is empty"),
        (["dt=d0", ""], "Partition spec 1 of '' is empty"),
        (["dt=d0", {}], "A partition spec is empty"),
        ([{"dt": "d0"}, "dt=d0;;"], "Partition spec 2 of 'dt=d0;;' is empty"),
        (["dt=d0,dt=d1"], "names ['dt'] more than once"),
        (["dt=d0", 7], "must be 'k=v[,k2=v2]' or a dict"),
    ],
)
def test_core_refuses_bad_specs(specs: Any, message: str, wh: str) -> None:
    t = make_table(wh, 2)
    before = table_files(wh)
    for dry_run in (True, False):
        with pytest.raises(InvalidArgumentError) as info:
            t.maintenance.drop_partition(specs, dry_run=dry_run)
        assert message in str(info.value)
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        t.maintenance.drop_partition(["dt=d0", "dt=zz"], dry_run=False)
    with pytest.raises(InvalidArgumentError, match="not partition keys"):
        t.maintenance.drop_partition([{"dt": "d0"}, {"id": "1"}], dry_run=False)
    assert table_files(wh) == before


def test_parse_partition_specs_forms() -> None:
    assert parse_partition_specs("dt=a,hh=1;dt=b") == [{"dt": "a", "hh": "1"}, {"dt": "b"}]
    assert parse_partition_specs(["dt=a,hh=1", " dt = b "]) == [{"dt": "a", "hh": "1"}, {"dt": "b"}]
    assert parse_partition_specs({"dt": "a"}) == [{"dt": "a"}]
    assert parse_partition_specs(["dt=a;dt=b", {"dt": "c"}]) == [{"dt": "a"}, {"dt": "b"}, {"dt": "c"}]
