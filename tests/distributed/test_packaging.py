"""``spark_jobs.packaging``: the executors' archive (no cluster needed)."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from spark_jobs.packaging import ARCHIVE_NAME, build_pyfiles_archive, submit_conf
from tests.distributed.spark_cluster import write_executor_python

REPO = Path(__file__).resolve().parent.parent.parent


def test_archive_holds_the_project_with_bytecode_and_is_reproducible(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = build_pyfiles_archive(tmp_path / "a")
    b = build_pyfiles_archive(tmp_path / "b")
    assert a.name == ARCHIVE_NAME and a.read_bytes() == b.read_bytes()
    names = set(zipfile.ZipFile(a).namelist())
    for module in ("paimon_core/__init__.py", "spark_jobs/daemon.py", "spark_jobs/datasource/__init__.py"):
        assert {module, module + "c"} <= names
    assert {"pyspark_paimon.py", "paimon_core/py.typed"} <= names
    assert not any("__pycache__" in n or n.startswith(("tests/", "plugins/", "dags/")) for n in names)
    assert not any(Path(n).suffix not in (".py", ".pyc", ".typed") for n in names)
    sources_only = set(zipfile.ZipFile(build_pyfiles_archive(tmp_path / "s.zip", bytecode=False)).namelist())
    assert sources_only == {n for n in names if not n.endswith(".pyc")}


def test_archive_imports_without_the_source_tree(tmp_path: Path) -> None:
    archive = build_pyfiles_archive(tmp_path)
    code = (
        f"import sys; sys.path[:0] = [{str(archive)!r}]; "
        "import spark_jobs.daemon, pyspark_paimon, paimon_core; print(paimon_core.__file__)"
    )
    # the executors' interpreter: dependencies, but no site (no editable .pth to the repo); cwd
    # outside the repo; the project only from the archive
    python = write_executor_python(tmp_path / "python")
    run = subprocess.run([python, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    out = run.stdout.strip()
    bare = subprocess.run([python, "-c", "import paimon_core"], cwd=tmp_path, capture_output=True, text=True)
    assert bare.returncode != 0 and "No module named 'paimon_core'" in bare.stderr  # only the archive has it
    assert run.returncode == 0, run.stderr
    assert out == f"{archive}/paimon_core/__init__.pyc"


def test_submit_conf_names_the_archive_for_the_daemon(tmp_path: Path) -> None:
    conf = submit_conf(tmp_path / "x" / "jobs.zip")
    assert conf == {
        "spark.submit.pyFiles": str((tmp_path / "x" / "jobs.zip").resolve()),
        "spark.executorEnv.PYTHONPATH": "jobs.zip",
    }


def test_a_missing_package_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="paimon_core"):
        build_pyfiles_archive(tmp_path / "out.zip", root=tmp_path)
