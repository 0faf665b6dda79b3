"""Issue 27 item 1: every ``file:`` form is parsed once (paimon_core.io.uri) and that result is both
confined and opened: ``file:/x`` (Hadoop's form, in Java-written tables) and ``file://localhost/x``
are ``/x``; ``file://otherhost/x`` is refused; nothing resolves against the current directory."""

from __future__ import annotations

import os
import pathlib

import pytest

from paimon_core.exceptions import InvalidArgumentError, UnsafePathError
from paimon_core.io.local_io import LocalFileIO
from paimon_core.io.resolve import load_file_io
from paimon_core.io.uri import ForeignHostError, parse_path
from paimon_core.manifest.entries import FileKind

from .hostile import (
    LATER,
    at,
    commit,
    delta_entries,
    diff,
    make_table,
    rows,
    set_delta,
    tree_state,
    with_file,
)


@pytest.mark.parametrize(
    "form", ["file:{p}", "file://{p}", "file://localhost{p}", "FILE://LOCALHOST{p}", "{p}"]
)
def test_local_forms_are_one_path(tmp_path: pathlib.Path, form: str) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    path = form.format(p=str(f))
    assert parse_path(path).path == str(f)
    assert LocalFileIO().read_bytes(path) == b"x"
    assert load_file_io(path).exists(path)


@pytest.mark.parametrize("path", ["file://otherhost/x", "file:relative/x"])
def test_other_hosts_and_relative_uris_are_refused(path: str) -> None:
    with pytest.raises(ForeignHostError):
        parse_path(path)
    with pytest.raises(ForeignHostError):
        LocalFileIO().exists(path)
    with pytest.raises(ForeignHostError, match="otherhost|relative"):
        load_file_io(path)


def test_a_local_io_never_opens_a_remote_path_as_a_relative_one() -> None:
    with pytest.raises(InvalidArgumentError, match="s3://"):
        LocalFileIO().exists("s3://bucket/key")


@pytest.mark.parametrize("form", ["file:{p}", "file://localhost{p}", "file://{p}"])
def test_a_java_style_external_path_is_readable(tmp_path: pathlib.Path, form: str) -> None:
    t = make_table(str(tmp_path / "wh"))
    sid = commit(t, rows([1, 2]))
    e = delta_entries(t, sid)[0]
    path = t.paths.data_file_path("", 0, e.file.file_name)
    set_delta(t, sid, [with_file(e, external_path=form.format(p=path))])
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2]


def test_an_external_path_on_another_host_is_refused(tmp_path: pathlib.Path) -> None:
    t = make_table(str(tmp_path / "wh"))
    sid = commit(t, rows([1]))
    e = delta_entries(t, sid)[0]
    path = t.paths.data_file_path("", 0, e.file.file_name)
    set_delta(t, sid, [with_file(e, external_path=f"file://otherhost{path}")])
    with pytest.raises(UnsafePathError, match="otherhost"):
        t.to_arrow()


def test_expiry_never_resolves_a_file_uri_against_the_current_directory(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Main read ``file:/<table>/...`` as ``./file:/<table>/...``: expiry deleted that file."""
    t = make_table(str(tmp_path / "wh"))
    for i in range(3):
        commit(t, rows([i]))
    e = delta_entries(t, 1)[0]
    inside = t.paths.data_file_path("", 0, e.file.file_name)
    cwd = tmp_path / "cwd"
    victim = pathlib.Path(str(cwd) + "/file:" + inside)
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"not the table's")
    monkeypatch.chdir(cwd)
    # snapshot 2 deletes snapshot 1's file, named the way Hadoop writes it
    set_delta(
        t, 2, [*delta_entries(t, 2), with_file(e, kind=FileKind.DELETE, external_path="file:" + inside)]
    )
    before = tree_state([str(cwd)])
    at(t, LATER).maintenance.expire_snapshots(retain_max=1, retain_min=1)
    assert diff(before, tree_state([str(cwd)])) == []
    assert victim.read_bytes() == b"not the table's"
    assert not os.path.exists(inside)  # the table's own file, which the entry really names
