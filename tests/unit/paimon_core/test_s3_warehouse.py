"""``s3://`` warehouses end to end against a real S3 HTTP API (moto's server, in-process).

Nothing of ours is mocked: s3fs talks HTTP to moto. What is proven here:

* s3fs sends ``If-None-Match: *`` on an exclusive create (``mode="xb"``), moto answers 412
  when the key exists, and ``FsspecFileIO.try_write_atomic`` turns that into "taken";
  without the header the same PUT overwrites (so the header is what protects snapshots);
* racing publishers of one ``snapshot-N``: exactly one wins;
* committers racing on one table through the catalog: the losers take the conflict path
  (412) and land on N+1, and no row is lost;
* catalog, writes, reads, time travel, tags, overwrite, expire_snapshots,
  remove_orphan_files and the CLI on ``s3://``; a reader sees another process's commits
  (s3fs' listing cache is off by default).

moto checks ``If-None-Match`` and stores the object in two steps without a lock between
them; real S3 does both atomically. The fixture serialises write requests so the fake has
S3's documented semantics for the racing tests (reads stay concurrent).
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

# s3fs (the s3 extra) and moto are in requirements-lock.txt: a missing one fails collection here.
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import DataFileNotFoundError, StorageDriverMissingError
from paimon_core.io import FsspecFileIO, load_file_io
from paimon_core.options import SCAN_SNAPSHOT_ID
from paimon_core.utils.clock import ManualClock

BUCKET = "paimon-test"
ROOT = Path(__file__).resolve().parents[3]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _SerialWrites:
    """WSGI wrapper: one write request at a time (S3 evaluates a conditional put atomically)."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE"):
            with self.lock:
                return list(self.app(environ, start_response))
        return self.app(environ, start_response)


class _S3Server(ThreadedMotoServer):
    """moto's ThreadedMotoServer with :class:`_SerialWrites` around its WSGI app."""

    def _server_entry(self) -> None:
        app = _SerialWrites(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


@pytest.fixture(scope="module")
def s3_options() -> Iterator[dict[str, Any]]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = _S3Server(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options: dict[str, Any] = {
        "endpoint_url": f"http://{host}:{port}",
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"region_name": "eu-west-1"},
    }
    FsspecFileIO("s3", options).fs.mkdir(BUCKET)
    try:
        yield options
    finally:
        server.stop()


@pytest.fixture
def wh(s3_options: dict[str, Any]) -> str:
    return f"s3://{BUCKET}/wh-{uuid.uuid4().hex[:8]}"


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"d{i % 2}" for i in ids]})


def _ids(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


# --- the publish primitive ----------------------------------------------------------------


def test_exclusive_create_sends_if_none_match_and_moto_refuses_the_second(s3_options: dict[str, Any]) -> None:
    fio = FsspecFileIO("s3", {**s3_options, "skip_instance_cache": True})
    assert fio.atomic_publish_is_safe
    fs = fio.fs
    fs.connect()
    sent: list[dict[str, str]] = []

    def capture(request: Any, **_: Any) -> None:
        sent.append({k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()})

    fs.s3.meta.events.register("before-send.s3.PutObject", capture)
    path = f"s3://{BUCKET}/publish-{uuid.uuid4().hex}/snapshot-1"
    assert fio.try_write_atomic(path, b"first") is True
    assert fio.try_write_atomic(path, b"second") is False  # 412 Precondition Failed
    assert fio.read_bytes(path) == b"first"
    assert [h.get("if-none-match") for h in sent] == ["*", "*"]
    with pytest.raises(FileExistsError):
        fio.write_bytes(path, b"third")
    # control: the same PUT without the header overwrites, so the header is what protects it
    fs.pipe_file(path.split("://", 1)[1], b"overwritten")
    assert fio.read_bytes(path) == b"overwritten"
    assert sent[-1].get("if-none-match") is None


def test_conditional_request_conflict_counts_as_taken() -> None:
    """Real S3 answers 409 ConditionalRequestConflict while another conditional upload of the key
    is in flight (moto never does): the exception s3fs raises for it is recognised."""
    from botocore.exceptions import ClientError  # type: ignore[import-untyped]
    from s3fs.errors import translate_boto_error  # type: ignore[import-untyped]

    from paimon_core.io.fsspec_io import _is_conditional_conflict

    def s3fs_error(code: str, status: int) -> BaseException:
        meta = {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
        return translate_boto_error(ClientError(meta, "PutObject"))

    assert _is_conditional_conflict(s3fs_error("ConditionalRequestConflict", 409))
    assert not _is_conditional_conflict(s3fs_error("InternalError", 500))
    assert not _is_conditional_conflict(OSError("disk"))


def _race(path: str, racers: int, options: dict[str, Any]) -> list[int]:
    """``racers`` threads publish ``path`` at once; the ones whose publish returned True."""
    barrier = threading.Barrier(racers)
    won: list[int] = []

    def publish(i: int) -> None:
        fio = FsspecFileIO("s3", options)
        barrier.wait()
        if fio.try_write_atomic(path, f"writer-{i}".encode()):
            won.append(i)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


def test_racing_publishers_of_one_snapshot_exactly_one_wins(s3_options: dict[str, Any]) -> None:
    for _ in range(3):
        path = f"s3://{BUCKET}/race-{uuid.uuid4().hex}/snapshot-7"
        won = _race(path, 6, s3_options)
        assert len(won) == 1
        assert FsspecFileIO("s3", s3_options).read_bytes(path) == f"writer-{won[0]}".encode()


def test_committers_racing_on_one_table_lose_nothing(wh: str, s3_options: dict[str, Any]) -> None:
    FileSystemCatalog(wh, storage_options=s3_options).create_database("db")
    FileSystemCatalog(wh, storage_options=s3_options).create_table(
        "db.t", _rows(0, 1).schema, options={"commit.min-retry-wait": "5 ms", "commit.max-retries": "30"}
    )
    writers, rounds, per = 4, 3, 25
    barrier = threading.Barrier(writers)
    results: list[Any] = []
    errors: list[BaseException] = []

    def run(w: int) -> None:
        table = FileSystemCatalog(wh, storage_options=s3_options).get_table("db.t")
        try:
            for r in range(rounds):
                builder = table.new_batch_write_builder()
                write = builder.new_write()
                write.write_arrow(_rows((w * rounds + r) * per, per))
                messages = write.prepare_commit()
                barrier.wait()  # everyone commits on top of the same latest snapshot
                results.append(builder.new_commit().commit(messages))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    table = FileSystemCatalog(wh, storage_options=s3_options).get_table("db.t")
    assert _ids(table.to_arrow()) == list(range(writers * rounds * per))
    assert sorted(r.snapshot_id for r in results) == list(range(1, writers * rounds + 1))
    assert [s.id for s in table.snapshot_manager.snapshots()] == list(range(1, writers * rounds + 1))
    # the conflict path ran: commits that lost snapshot-N to a 412 retried and landed later
    assert sum(r.attempts for r in results) > len(results)


# --- the catalog and tables ----------------------------------------------------------------


def test_catalog_tables_time_travel_overwrite_and_maintenance(wh: str, s3_options: dict[str, Any]) -> None:
    clock = ManualClock(int(time.time() * 1000))
    catalog = FileSystemCatalog(wh, storage_options=s3_options, clock=clock)
    catalog.create_database("db")
    assert catalog.list_databases() == ["db"]  # an empty database exists (a `db.db/` marker)
    table = catalog.create_table("db.t", _rows(0, 1).schema, partition_keys=["dt"])
    assert catalog.list_tables("db") == ["t"]
    for k in range(3):
        clock.advance(1000)
        assert table.write_arrow(_rows(k * 10, 10)).snapshot_id == k + 1
    table.maintenance.create_tag("v2", 2)
    assert _ids(table.to_arrow()) == list(range(30))
    assert _ids(table.copy({SCAN_SNAPSHOT_ID: "1"}).to_arrow()) == list(range(10))
    assert _ids(table.copy({"scan.tag-name": "v2"}).to_arrow()) == list(range(20))
    clock.advance(1000)
    result = table.write_arrow(pa.table({"id": pa.array([100], pa.int64()), "dt": ["d0"]}), overwrite={"dt": "d0"})
    assert result.commit_kind == "OVERWRITE"
    assert _ids(table.to_arrow()) == [*range(1, 30, 2), 100]

    expired = table.maintenance.expire_snapshots(retain_max=2, retain_min=1)
    assert expired.expired_snapshot_ids == (1, 2)
    assert [s.id for s in table.snapshot_manager.snapshots()] == [3, 4]
    assert _ids(catalog.get_table("db.t").to_arrow()) == [*range(1, 30, 2), 100]
    assert _ids(table.copy({"scan.tag-name": "v2"}).to_arrow()) == list(range(20))  # the tag keeps its files

    bucket_dir = f"{table.path}/dt=d1/bucket-0"
    orphan = f"{bucket_dir}/data-{uuid.uuid4()}-0.parquet"
    table.file_io.write_bytes(orphan, b"not referenced")
    clock.advance(2 * 86_400_000)  # S3 stamps real mtimes; move our clock past the 1-day cutoff
    cleaned = table.maintenance.remove_orphan_files(dry_run=False)
    assert cleaned.deleted_paths == (orphan,)
    assert not table.file_io.exists(orphan)
    assert _ids(table.to_arrow()) == [*range(1, 30, 2), 100]

    catalog.drop_table("db.t")
    catalog.drop_database("db")
    assert catalog.list_databases() == []
    assert not table.file_io.exists(f"{wh}/db.db")


def test_orphan_clean_moves_a_landed_commits_files_back_on_s3(
    wh: str, s3_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27 item 4 where a rename is a copy and a delete: a commit lands between the clean's
    reference read and its move; the clean copies the files aside, sees the commit on its second
    read and copies them back; the real orphan goes, and the trash with it."""
    from paimon_core.operation.orphan_files_clean import OrphanFilesClean

    clock = ManualClock(int(time.time() * 1000))
    catalog = FileSystemCatalog(wh, storage_options=s3_options, clock=clock)
    catalog.create_database("db")
    table = catalog.create_table("db.t", _rows(0, 1).schema, partition_keys=["dt"])
    table.write_arrow(_rows(0, 4))
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(_rows(100, 4))
    messages = write.prepare_commit()
    orphan = f"{table.path}/dt=d0/bucket-0/data-{uuid.uuid4()}-0.parquet"
    table.file_io.write_bytes(orphan, b"not referenced")
    clock.advance(2 * 86_400_000)  # S3 stamps real mtimes: every file is older than the cutoff
    real = OrphanFilesClean.referenced_names
    landed: list[int | None] = []

    def read_then_commit(self: OrphanFilesClean, *args: Any, **kwargs: Any) -> set[str]:
        out = real(self, *args, **kwargs)
        if not landed:
            landed.append(builder.new_commit().commit(messages).snapshot_id)
        return out

    monkeypatch.setattr(OrphanFilesClean, "referenced_names", read_then_commit)
    cleaned = table.maintenance.remove_orphan_files(dry_run=False)
    assert landed == [2] and cleaned.deleted_paths == (orphan,)
    assert _ids(table.to_arrow()) == [0, 1, 2, 3, 100, 101, 102, 103]
    assert not table.file_io.fs.find(f"{table.path}/_orphan_trash".split("://", 1)[1])  # type: ignore[attr-defined]


def test_reader_sees_commits_of_another_process(wh: str, s3_options: dict[str, Any]) -> None:
    reader_catalog = FileSystemCatalog(wh, storage_options=s3_options)
    reader_catalog.create_database("db")
    reader = reader_catalog.create_table("db.t", _rows(0, 1).schema)
    reader.write_arrow(_rows(0, 5))
    assert [s.id for s in reader.snapshot_manager.snapshots()] == [1]  # lists (and could cache) the dir
    # another process: its own S3 client and caches
    other = FileSystemCatalog(wh, storage_options={**s3_options, "skip_instance_cache": True}).get_table("db.t")
    other.write_arrow(_rows(5, 5))
    assert [s.id for s in reader.snapshot_manager.snapshots()] == [1, 2]
    assert _ids(reader.to_arrow()) == list(range(10))


def test_missing_data_file_on_s3_is_a_paimon_error(wh: str, s3_options: dict[str, Any]) -> None:
    catalog = FileSystemCatalog(wh, storage_options=s3_options)
    catalog.create_database("db")
    table = catalog.create_table("db.t", _rows(0, 1).schema)
    table.write_arrow(_rows(0, 10))
    entry = table.new_file_store_scan().live_entries(table.latest_snapshot())[0]
    path = f"{table.bucket_path(entry.partition, entry.bucket)}/{entry.file.file_name}"
    assert table.file_io.delete(path)
    with pytest.raises(DataFileNotFoundError, match="snapshot 1") as info:
        table.to_arrow()
    assert info.value.path == path  # type: ignore[attr-defined]


def test_file_io_pickles_for_executors(wh: str, s3_options: dict[str, Any]) -> None:
    fio = load_file_io(wh, s3_options)
    fio.write_bytes(f"{wh}/x", b"payload")
    clone = pickle.loads(pickle.dumps(fio))
    assert isinstance(clone, FsspecFileIO) and clone.atomic_publish_is_safe
    assert clone.read_bytes(f"{wh}/x") == b"payload"


def test_unknown_scheme_is_a_clear_error() -> None:
    with pytest.raises(StorageDriverMissingError, match="nosuchfs://"):
        FileSystemCatalog("nosuchfs://bucket/wh")


def test_cli_on_an_s3_warehouse(wh: str, s3_options: dict[str, Any], tmp_path: Path) -> None:
    src = tmp_path / "rows.parquet"
    pq.write_table(_rows(0, 50), src)
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": s3_options["endpoint_url"],
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
    }
    script = (
        "import sys; from paimon_core.cli import main\n"
        "for argv in sys.argv[1:]:\n"
        "    rc = main(argv.split('|'))\n"
        "    if rc: sys.exit(rc)\n"
    )
    out = tmp_path / "out.parquet"
    commands = [
        f"create-table|{wh}|db.t|--schema-from|{src}|--partition-by|dt",
        f"write|{wh}|db.t|{src}",
        f"read|{wh}|db.t|--output|{out}",
    ]
    proc = subprocess.run(
        [sys.executable, "-c", script, *commands], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert '"snapshot_id": 1' in proc.stdout
    assert _ids(pq.read_table(out)) == list(range(50))
