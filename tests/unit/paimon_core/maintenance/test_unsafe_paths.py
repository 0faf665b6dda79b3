"""Metadata never reaches outside the table (issue 17): every name a snapshot, tag, manifest
list, manifest or index manifest holds is confined to the table directory (or its
``data-file.external-paths``) before anything reads or deletes through it."""

from __future__ import annotations

import json
import pathlib

import pytest

from paimon_core import FileSystemCatalog
from paimon_core.exceptions import (
    CorruptFileError,
    InvalidArgumentError,
    OrphanCleanAbortedError,
    PaimonError,
    UnsafePathError,
)
from paimon_core.manifest.entries import FileKind
from paimon_core.path_confinement import check_file_name, confine
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.clock import ManualClock

from .expiry_helpers import HOUR, SCHEMA, commit, make_table, rows
from .metadata_attacks import (
    add_to_delta,
    crafted_entry,
    manifest_list_of,
    outside_state,
    rel_to,
    rewrite_snapshot,
    table_state,
    with_index_file,
)


@pytest.fixture
def victim(tmp_path: pathlib.Path) -> pathlib.Path:
    v = tmp_path / "victim"
    v.write_bytes(b"not yours")
    return v


def _table(tmp_path: pathlib.Path, *, options: dict[str, str] | None = None) -> FileStoreTable:
    t = make_table(str(tmp_path / "wh"), options=options)
    for i in range(4):
        commit(t, rows([i]))
    return t


def _expire(t: FileStoreTable) -> object:
    assert isinstance(t.clock, ManualClock)
    t.clock.advance(10 * HOUR)
    return t.maintenance.expire_snapshots(retain_max=1, retain_min=1)


def _assert_refused_untouched(
    t: FileStoreTable, tmp_path: pathlib.Path, run: object, *, snapshot_id: int | None
) -> UnsafePathError:
    """``run()`` raises UnsafePathError naming the snapshot; nothing inside or outside changed."""
    before_out, before_table = outside_state(tmp_path, t.path), table_state(t)
    raised: UnsafePathError | None = None
    try:
        run()  # type: ignore[operator]
    except UnsafePathError as e:
        raised = e
    assert outside_state(tmp_path, t.path) == before_out, "a file outside the table was changed"
    assert table_state(t) == before_table, "the table changed"
    assert raised is not None, "no UnsafePathError"
    if snapshot_id is not None:
        assert raised.snapshot_id == snapshot_id  # type: ignore[attr-defined]
        assert f"{snapshot_id}" in str(raised)
    return raised


# --- the confinement itself ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../x", "..", ".", "", "a/b", "/etc/passwd", "s3://b/k", "a\\b", "x\x00"])
def test_bare_names_refuse_anything_that_is_not_one(name: str) -> None:
    with pytest.raises(UnsafePathError):
        check_file_name(name, kind="manifest")


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("/wh/t/bucket-0/f", "/wh/t/bucket-0/f"),
        ("file:/wh/t/bucket-0/f", "/wh/t/bucket-0/f"),  # one normalised form (issue 27)
        ("file:///wh/t/a/../bucket-0/f", "/wh/t/bucket-0/f"),
        ("file://localhost/wh/t/bucket-0/f", "/wh/t/bucket-0/f"),
        ("/ext/p/bucket-0/f", "/ext/p/bucket-0/f"),
        ("/wh/t/../u/f", None),
        ("/wh/tt/f", None),
        ("/wh/t", None),
        ("relative/f", None),
        ("s3://b/wh/t/f", None),
        ("file://otherhost/wh/t/f", None),
    ],
)
def test_confine_resolves_then_keeps_paths_inside_the_roots(path: str, ok: str | None) -> None:
    roots = ("/wh/t", "file:///ext/p")
    if ok is None:
        with pytest.raises(UnsafePathError):
            confine(path, roots, kind="data file")
    else:
        assert confine(path, roots, kind="data file") == ok


# --- expiry ------------------------------------------------------------------------------------


def test_expiry_refuses_a_base_manifest_list_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    rewrite_snapshot(t, 2, base_manifest_list=rel_to(victim, t.paths.manifest_dir))
    err = _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=2)
    assert "base manifest list" in str(err)


def test_expiry_refuses_delete_entries_with_dot_dot_names(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    bucket_dir = t.bucket_path(crafted_entry(t, 1, FileKind.ADD, file_name="x").partition, 0)
    add_to_delta(t, 3, crafted_entry(t, 3, FileKind.DELETE, file_name=rel_to(victim, bucket_dir)))
    _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=3)


def test_expiry_refuses_an_external_path_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    add_to_delta(t, 2, crafted_entry(t, 2, FileKind.DELETE, file_name="data-x.parquet", external_path=str(victim)))
    _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=2)


def test_expiry_deletes_under_the_configured_external_paths(tmp_path: pathlib.Path) -> None:
    ext = tmp_path / "ext"
    (ext / "bucket-0").mkdir(parents=True)
    inside = ext / "bucket-0" / "data-ext.parquet"
    inside.write_bytes(b"old")
    t = _table(tmp_path, options={"data-file.external-paths": f"file://{ext}"})
    add_to_delta(t, 2, crafted_entry(t, 2, FileKind.DELETE, file_name=inside.name, external_path=f"file://{inside}"))
    with pytest.raises(UnsafePathError, match="did not write it there"):
        _expire(t)
    # Java allows the external data paths, but only for files the table wrote there (an ADD entry
    # of the snapshot's base names the path; issue 27): see tests/unit/paimon_core/security
    assert inside.exists()


def test_expiry_refuses_an_index_file_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    with_index_file(t, 1, file_name=rel_to(victim, t.paths.index_dir))
    _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=1)
    with_index_file(t, 1, file_name="index-x", external_path=f"file://{victim}")
    _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=1)


def test_expiry_refuses_statistics_and_changelog_lists_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    rewrite_snapshot(t, 1, statistics=rel_to(victim, t.paths.statistics_dir))
    _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=1)
    rewrite_snapshot(t, 1, statistics=None, changelog_manifest_list=str(victim))
    _assert_refused_untouched(t, tmp_path, lambda: _expire(t), snapshot_id=1)


# --- tags, consumers, rollback, orphan cleanup, reads ---------------------------------------------


def test_tag_deletion_refuses_a_tag_naming_files_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    t.maintenance.create_tag("t1", 1)
    t.maintenance.create_tag("t2", 2)
    _expire(t)  # tags t1, t2 now own their files
    tag = t.tag_manager.get("t1")
    bucket_dir = t.bucket_path(crafted_entry(t, 4, FileKind.ADD, file_name="x").partition, 0)
    name, size = manifest_list_of(t, [crafted_entry(t, 4, FileKind.ADD, file_name=rel_to(victim, bucket_dir))])
    poisoned = tag.copy(base_manifest_list=name, base_manifest_list_size=size)
    t.file_io.write_bytes(t.tag_manager.tag_path("t1"), poisoned.to_json().encode(), overwrite=True)
    err = _assert_refused_untouched(t, tmp_path, lambda: t.maintenance.delete_tag("t1", dry_run=False), snapshot_id=None)
    assert "t1" in str(err) and err.snapshot_id == 1  # type: ignore[attr-defined]
    poisoned = tag.copy(base_manifest_list=rel_to(victim, t.paths.manifest_dir))
    t.file_io.write_bytes(t.tag_manager.tag_path("t2"), poisoned.to_json().encode(), overwrite=True)
    _assert_refused_untouched(t, tmp_path, lambda: t.maintenance.delete_tag(["t1", "t2"], dry_run=False), snapshot_id=None)


@pytest.mark.parametrize("name", ["../../../victim", "a/b", "x\\y"])
def test_tag_and_consumer_names_never_become_paths(tmp_path: pathlib.Path, victim: pathlib.Path, name: str) -> None:
    t = _table(tmp_path)
    before = outside_state(tmp_path, t.path)
    for call in (
        lambda: t.maintenance.create_tag(name, 1),
        lambda: t.maintenance.delete_tag(name, dry_run=False),
        lambda: t.maintenance.rollback_to(name, dry_run=False),
        lambda: t.maintenance.reset_consumer(name, 1),
        lambda: t.consumer_manager.delete_consumer(name),
    ):
        with pytest.raises(PaimonError):
            call()
    with pytest.raises(UnsafePathError):
        t.paths.tag_path(name)
    with pytest.raises(UnsafePathError):
        t.paths.consumer_path(name)
    assert outside_state(tmp_path, t.path) == before


def test_rollback_refuses_a_target_naming_files_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    rewrite_snapshot(t, 2, index_manifest=rel_to(victim, t.paths.manifest_dir))
    _assert_refused_untouched(t, tmp_path, lambda: t.maintenance.rollback_to(2, dry_run=False), snapshot_id=2)
    _assert_refused_untouched(t, tmp_path, lambda: t.maintenance.rollback_to_as_latest(2), snapshot_id=2)


def test_orphan_clean_aborts_on_a_manifest_name_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    rewrite_snapshot(t, 1, base_manifest_list=rel_to(victim, t.paths.manifest_dir))
    before = outside_state(tmp_path, t.path), table_state(t)
    assert isinstance(t.clock, ManualClock)
    t.clock.advance(48 * HOUR)
    for dry_run in (True, False):
        with pytest.raises(OrphanCleanAbortedError) as err:
            t.maintenance.remove_orphan_files(dry_run=dry_run)
        assert isinstance(err.value.__cause__, UnsafePathError)
    assert (outside_state(tmp_path, t.path), table_state(t)) == before


def test_reads_refuse_data_files_outside(tmp_path: pathlib.Path, victim: pathlib.Path) -> None:
    t = _table(tmp_path)
    add_to_delta(t, 4, crafted_entry(t, 4, FileKind.ADD, file_name="data-x.parquet", external_path=str(victim)))
    with pytest.raises(UnsafePathError):
        t.to_arrow()
    rewrite_snapshot(t, 4, delta_manifest_list=rel_to(victim, t.paths.manifest_dir))
    with pytest.raises(UnsafePathError):
        t.to_arrow()


# --- system table names ---------------------------------------------------------------------------


def test_a_table_named_like_a_system_table_is_refused(tmp_path: pathlib.Path) -> None:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    for name in ("t$snapshots", "t$x", "$"):
        with pytest.raises(InvalidArgumentError, match="system table"):
            catalog.create_table(f"db.{name}", SCHEMA)
        assert not catalog.table_exists(f"db.{name}")
    t = catalog.create_table("db.t", SCHEMA)
    t.write_arrow(rows([1]))
    assert t.inspect.system_table("snapshots").num_rows == 1  # t$snapshots still reads as a system table


# --- found by the metadata fuzz ---------------------------------------------------------------------


def test_a_manifest_whose_writer_schema_lacks_a_field_is_a_corrupt_file(tmp_path: pathlib.Path) -> None:
    t = _table(tmp_path)
    for f in (pathlib.Path(t.path) / "manifest").glob("manifest-*"):
        if not f.name.startswith("manifest-list-"):
            f.write_bytes(f.read_bytes().replace(b"_MIN_VALUES", b"_MIN_VALUEX"))  # same length: framing intact
    with pytest.raises(CorruptFileError, match="manifest-"):
        t.to_arrow()


def test_undecodable_hints_consumers_and_snapshot_fields_are_typed_errors(tmp_path: pathlib.Path) -> None:
    t = _table(tmp_path)
    latest = pathlib.Path(t.snapshot_manager.snapshot_path(4)).parent / "LATEST"
    latest.write_bytes(b"\xdd\xff")
    assert t.snapshot_manager.latest_snapshot_id() == 4  # a garbage hint is ignored, as Java does
    t.maintenance.reset_consumer("c1", 2)
    pathlib.Path(t.consumer_manager.consumer_path("c1")).write_bytes(b"\x83\x00{")
    with pytest.raises(CorruptFileError, match="consumer-c1"):
        t.maintenance.expire_snapshots(retain_max=1, retain_min=1)
    t.consumer_manager.delete_consumer("c1")
    snap = json.loads(pathlib.Path(t.snapshot_manager.snapshot_path(2)).read_bytes())
    for key, value in (("deltaManifestListSize", "12"), ("baseManifestList", 7), ("indexManifest", [])):
        pathlib.Path(t.snapshot_manager.snapshot_path(2)).write_text(json.dumps({**snap, key: value}))
        with pytest.raises(CorruptFileError, match="snapshot-2"):
            t.snapshot_manager.snapshot(2)
