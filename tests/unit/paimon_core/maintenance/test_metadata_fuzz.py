"""Fuzz of the metadata readers (issue 17): snapshot, tag and consumer JSON, manifest lists,
manifests, index manifests and index files mutated at random (seeded), then expiry, orphan
cleanup, rollback, tag deletion and reads run over the result.

Two properties, whatever the mutation: nothing but a :class:`PaimonError` escapes, and no file
outside the table directory is touched. The second is checked twice: sentinel files placed
around the table (content and mtime) and every path the table's FileIO is asked for.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import random
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import pyarrow.fs as pafs
import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from paimon_core.io.file_io import FileStatus, strip_scheme
from paimon_core.io.local_io import LocalFileIO
from paimon_core.manifest.entries import FileKind
from paimon_core.manifest.index_manifest import read_index_manifest, write_index_manifest
from paimon_core.manifest.manifest_file import read_manifest_file, write_manifest_file
from paimon_core.manifest.manifest_list import read_manifest_list, write_manifest_list
from paimon_core.operation.orphan_files_clean import OrphanFilesClean
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

from .expiry_helpers import HOUR, T0, commit, make_table, rows
from .metadata_attacks import outside_state

pytestmark = pytest.mark.slow

SEED = 17
CASES = 100
MUTATIONS_PER_CASE = 3  # 300 mutations in all
SENTINELS = ("sentinel_top", "wh/sentinel_wh", "wh/db.db/sentinel_db", "wh/db.db/t2/sentinel_sibling")


class RecordingFileIO(LocalFileIO):
    """Local I/O that records every path it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.touched: list[tuple[str, str]] = []

    def _rec(self, op: str, path: str) -> str:
        self.touched.append((op, path))
        return path

    def read_bytes(self, path: str) -> bytes:
        return super().read_bytes(self._rec("read", path))

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        super().write_bytes(self._rec("write", path), data, overwrite=overwrite)

    def try_write_atomic(self, path: str, data: bytes) -> bool:
        return super().try_write_atomic(self._rec("write", path), data)

    def exists(self, path: str) -> bool:
        return super().exists(self._rec("exists", path))

    def delete(self, path: str, *, recursive: bool = False) -> bool:
        return super().delete(self._rec("delete", path), recursive=recursive)

    def list_status(self, path: str) -> list[FileStatus]:
        return super().list_status(self._rec("list", path))

    def mkdirs(self, path: str) -> None:
        super().mkdirs(self._rec("mkdirs", path))

    def open_input(self, path: str) -> IO[bytes]:
        return super().open_input(self._rec("read", path))

    def open_output(self, path: str) -> IO[bytes]:
        return super().open_output(self._rec("write", path))

    def get_file_size(self, path: str) -> int:
        return super().get_file_size(self._rec("read", path))

    def arrow_path(self, path: str) -> str:
        return super().arrow_path(self._rec("read", path))

    def arrow_filesystem(self) -> pafs.FileSystem:
        return super().arrow_filesystem()


# --- the template table ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pathlib.Path]:
    """A directory in memory when the machine has one (each commit fsyncs: 300 cases on disk are slow)."""
    shm = pathlib.Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        root = pathlib.Path(tempfile.mkdtemp(prefix="paimon-fuzz-", dir=shm))
        yield root
        shutil.rmtree(root, ignore_errors=True)
    else:
        yield tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def template(scratch: pathlib.Path) -> pathlib.Path:
    """A small real table with every kind of metadata file, and sentinels around it."""
    root = scratch / "template"
    t = make_table(str(root / "wh"), pk=True, partitioned=True, options={"bucket": "-1"})  # hash index files
    commit(t, rows([1, 2], "a", dt="p1"))
    commit(t, rows([3], "b", dt="p2"))
    t.maintenance.create_tag("t1")
    commit(t, rows([1], "c", dt="p1"))
    commit(t, rows([4], "d", dt="p2"), overwrite={"dt": "p2"})
    t.maintenance.create_tag("t2")
    t.maintenance.reset_consumer("c1", 3)
    commit(t, rows([5], "e", dt="p1"))
    for s in SENTINELS:
        (root / s).parent.mkdir(parents=True, exist_ok=True)
        (root / s).write_bytes(b"sentinel")
    return root


# --- mutations -----------------------------------------------------------------------------------


def _attacks(rng: random.Random, table_dir: pathlib.Path) -> object:
    """A value that tries to escape, or is of the wrong type."""
    root = table_dir.parent.parent.parent
    name = rng.choice([s.rsplit("/", 1)[-1] for s in SENTINELS])
    choices: list[object] = [
        "../" * rng.randint(1, 6) + name,
        "x/" + "../" * rng.randint(2, 7) + name,
        str(root / rng.choice(SENTINELS)),
        "file://" + str(root / rng.choice(SENTINELS)),
        "../t2/" + name,
        str(table_dir) + "/../t2/sentinel_sibling",
        "..",
        ".",
        "",
        "/",
        "s3://bucket/key",
        "manifest-list-does-not-exist",
        None,
        -1,
        2**70,
        3.5,
        [],
        {"a": 1},
        True,
    ]
    return rng.choice(choices)


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(8))
    how = rng.randrange(4)
    if how == 0:
        return data[: rng.randrange(len(data))]
    buf = bytearray(data)
    if how == 1:
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        return bytes(buf)
    if how == 2:
        i = rng.randrange(len(buf))
        return bytes(buf[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + buf[i:])
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))


def _mutate_json(rng: random.Random, path: pathlib.Path, table_dir: pathlib.Path) -> str:
    data = path.read_bytes()
    try:
        obj = json.loads(data)
    except ValueError:
        obj = None
    if not isinstance(obj, dict) or not obj or rng.random() < 0.25:
        path.write_bytes(_mutate_bytes(rng, data))
        return f"bytes of {path.name}"
    key = rng.choice(sorted(obj))
    if rng.random() < 0.2:
        del obj[key]
    else:
        obj[key] = _attacks(rng, table_dir)
    path.write_text(json.dumps(obj))
    return f"{path.name}[{key}]"


def _rewrite(path: pathlib.Path, write: Callable[[LocalFileIO, str], object]) -> None:
    new = path.with_name(path.name + ".new")
    write(LocalFileIO(), str(new))
    os.replace(new, path)


def _mutate_avro(rng: random.Random, path: pathlib.Path, table: FileStoreTable) -> str:
    table_dir = pathlib.Path(table.path)
    io, p = LocalFileIO(), str(path)
    if rng.random() < 0.3:
        path.write_bytes(_mutate_bytes(rng, path.read_bytes()))
        return f"bytes of {path.name}"
    try:
        if path.name.startswith("manifest-list-"):
            metas = read_manifest_list(io, p)
            i = rng.randrange(len(metas)) if metas else None
            if i is None:
                return "empty list"
            metas[i] = dataclasses.replace(metas[i], file_name=_attacks(rng, table_dir))  # type: ignore[arg-type]
            _rewrite(path, lambda fio, q: write_manifest_list(fio, q, metas))
            return f"{path.name} file_name"
        if path.name.startswith("index-manifest-"):
            index_entries = read_index_manifest(io, p)
            if not index_entries:
                return "empty index manifest"
            j = rng.randrange(len(index_entries))
            ie = index_entries[j]
            field = rng.choice(["file_name", "external_path"])
            changed: dict[str, Any] = {field: _attacks(rng, table_dir)}
            index_entries[j] = dataclasses.replace(ie, index_file=dataclasses.replace(ie.index_file, **changed))
            _rewrite(path, lambda fio, q: write_index_manifest(fio, q, index_entries))
            return f"{path.name} {field}"
        if path.name.startswith("manifest-"):
            es = read_manifest_file(io, p)
            if not es:
                return "empty manifest"
            j = rng.randrange(len(es))
            e = es[j]
            field = rng.choice(["file_name", "external_path", "extra_files", "kind"])
            value: Any = _attacks(rng, table_dir)
            if field == "kind":
                es[j] = dataclasses.replace(e, kind=FileKind.DELETE if e.kind == FileKind.ADD else FileKind.ADD)
            else:
                file_change: dict[str, Any] = {field: (value,) if field == "extra_files" else value}
                es[j] = dataclasses.replace(e, file=dataclasses.replace(e.file, **file_change))
            stats = table.partition_codec.stats([x.partition for x in es])
            _rewrite(path, lambda fio, q: write_manifest_file(fio, q, es, partition_stats=stats, schema_id=0))
            return f"{path.name} {field}"
    except PaimonError:
        path.write_bytes(_mutate_bytes(rng, path.read_bytes()))
        return f"bytes of {path.name} (not decodable)"
    except (TypeError, ValueError, OverflowError, AttributeError):
        path.write_bytes(_mutate_bytes(rng, path.read_bytes()))  # the writer refused the value
        return f"bytes of {path.name} (writer refused)"
    path.write_bytes(_mutate_bytes(rng, path.read_bytes()))
    return f"bytes of {path.name}"


def _in_order(files: Iterable[pathlib.Path]) -> list[pathlib.Path]:
    """Files by creation (names hold random uuids; the template's mtimes are copied along)."""
    return sorted(files, key=lambda f: (f.stat().st_mtime_ns, f.name))


def _mutate(rng: random.Random, table: FileStoreTable) -> str:
    table_dir = pathlib.Path(table.path)
    kinds = {
        "json": [
            *sorted((table_dir / "snapshot").glob("snapshot-*")),
            *sorted((table_dir / "tag").glob("tag-*")),
            *sorted((table_dir / "consumer").glob("consumer-*")),
            table_dir / "snapshot" / "LATEST",
        ],
        "avro": _in_order((table_dir / "manifest").iterdir()),
        "index": _in_order((table_dir / "index").iterdir()),
    }
    kind = rng.choices(["json", "avro", "index"], weights=[4, 5, 1])[0]
    files = [f for f in kinds[kind] if f.is_file()]
    if not files:
        return f"no {kind} file"
    target = rng.choice(files)
    if kind == "json":
        return _mutate_json(rng, target, table_dir)
    if kind == "index":
        target.write_bytes(_mutate_bytes(rng, target.read_bytes()))
        return f"bytes of {target.name}"
    return _mutate_avro(rng, target, table)


# --- the operations ------------------------------------------------------------------------------


def _operations() -> list[tuple[str, Callable[[FileStoreTable], object]]]:
    def orphans(dry_run: bool) -> Callable[[FileStoreTable], object]:
        return lambda t: OrphanFilesClean(t.store, parallelism=2, vanish_wait_seconds=0).clean(dry_run=dry_run)

    return [
        ("read", lambda t: t.to_arrow()),
        ("read tag", lambda t: t.copy({"scan.tag-name": "t1"}).to_arrow()),
        ("expire (dry run)", lambda t: t.maintenance.expire_snapshots(retain_max=1, retain_min=1, dry_run=True)),
        ("orphan clean (dry run)", orphans(True)),
        ("expire", lambda t: t.maintenance.expire_snapshots(retain_max=2, retain_min=1)),
        ("delete tag", lambda t: t.maintenance.delete_tag("t1", dry_run=False)),
        ("rollback", lambda t: t.maintenance.rollback_to("t2", dry_run=False)),
        ("orphan clean", orphans(False)),
        ("read after", lambda t: t.to_arrow()),
    ]


def _outside_touches(io: RecordingFileIO, table_dir: str) -> list[tuple[str, str]]:
    """Recorded operations on paths neither inside the table nor one of its parent directories."""
    bad = []
    for op, path in io.touched:
        p = os.path.normpath(strip_scheme(path))
        inside = p.startswith(table_dir + os.sep)
        parent = op in ("exists", "list") and table_dir.startswith(p.rstrip(os.sep) + os.sep) or p == table_dir
        # the maintenance ledger's existence check (a fixed path, never one from metadata)
        ledger = op == "list" and p == os.path.join(os.path.dirname(os.path.dirname(table_dir)), "paimon_maintenance.db", "ledger", "schema")
        if not inside and not parent and not ledger:
            bad.append((op, path))
    return bad


def test_mutated_metadata_never_escapes(template: pathlib.Path, scratch: pathlib.Path) -> None:
    rng = random.Random(SEED)
    escaped: list[str] = []
    typed = 0
    for case in range(CASES):
        root = scratch / f"case-{case}"
        shutil.copytree(template, root)
        io = RecordingFileIO()
        catalog = FileSystemCatalog(str(root / "wh"), file_io=io, clock=ManualClock(T0 + 48 * HOUR))
        table = catalog.get_table("db.t")
        table_dir = os.path.normpath(table.path)
        done = [_mutate(rng, table) for _ in range(MUTATIONS_PER_CASE)]
        before = outside_state(root, table.path)
        for name, op in _operations():
            try:
                op(table)
            except PaimonError:
                typed += 1
            except Exception:  # noqa: BLE001 - what this test looks for
                escaped.append(f"case {case} {done} -> {name}:\n{traceback.format_exc(limit=-4)}")
        assert outside_state(root, table.path) == before, f"case {case} {done}: a file outside the table changed"
        assert _outside_touches(io, table_dir) == [], f"case {case} {done}: I/O outside the table"
        assert all((root / s).read_bytes() == b"sentinel" for s in SENTINELS)
        shutil.rmtree(root)
    assert not escaped, f"{len(escaped)} non-Paimon errors, first:\n" + "\n".join(escaped[:3])
    assert typed > CASES  # the mutations did break things, and were reported as PaimonErrors
