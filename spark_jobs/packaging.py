"""The jobs' Python code as one archive for a Spark cluster's executors (``--py-files``).

Executors on other machines cannot import the project from the driver's working directory. Ship
``paimon_core``, ``spark_jobs`` and ``pyspark_paimon.py`` (the ``paimon`` format's auto-registered
module) as a zip with the conf of :func:`submit_conf` (``spark.submit.pyFiles`` plus
``spark.executorEnv.PYTHONPATH=paimon-jobs.zip``; with spark-submit: ``--py-files`` and that
``--conf``): Spark copies it into every executor's work directory and puts it on its Python
workers' path. A Spark image with the package installed needs no archive.

The zip holds the sources with fixed timestamps and, unless ``bytecode=False``, each module's
bytecode next to it (``x.pyc`` beside ``x.py``, unchecked-hash pycs of the building interpreter):
zipimport never writes bytecode, so without it every executor's Python daemon compiles the whole
project on start (measured: preloading took 2.5 s from sources, 0.7 s with bytecode). An executor
on another Python version ignores the bytecode (its magic number differs) and compiles the
sources. Third-party dependencies (pyarrow, fsspec, ...) must be installed on the executors'
Python; they are not bundled.

CLI: ``python -m spark_jobs.packaging [--output dist/paimon-jobs.zip]`` prints the archive path.
"""

from __future__ import annotations

import argparse
import os
import py_compile
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["ARCHIVE_NAME", "PACKAGES", "build_pyfiles_archive", "main", "project_root", "submit_conf"]

#: Default file name; executors see the archive under this name in their work directory.
ARCHIVE_NAME = "paimon-jobs.zip"
#: Top-level packages and modules shipped to executors.
PACKAGES: tuple[str, ...] = ("paimon_core", "spark_jobs", "pyspark_paimon.py")
_DATA_FILES = frozenset({"py.typed"})
_EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest timestamp: reproducible archives


def project_root() -> Path:
    """The directory holding ``paimon_core/`` and ``spark_jobs/`` (an install's site-packages,
    or the source tree)."""
    import paimon_core

    return Path(paimon_core.__file__).resolve().parent.parent


def _members(root: Path) -> Iterator[tuple[Path, str]]:
    for name in PACKAGES:
        top = root / name
        if top.is_file():
            yield top, name
            continue
        if not (top / "__init__.py").is_file():
            raise FileNotFoundError(f"{top} is not a Python package (expected {name}/__init__.py)")
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for f in sorted(filenames):
                if f.endswith(".py") or f in _DATA_FILES:
                    path = Path(dirpath) / f
                    yield path, path.relative_to(root).as_posix()


def _bytecode(path: Path, arcname: str, scratch: str) -> bytes:
    cfile = os.path.join(scratch, "m.pyc")
    py_compile.compile(
        str(path),
        cfile=cfile,
        dfile=arcname,
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    return Path(cfile).read_bytes()


def build_pyfiles_archive(
    output: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    bytecode: bool = True,
) -> Path:
    """Write the executors' archive to ``output`` (a file, or a directory to put
    :data:`ARCHIVE_NAME` in); return its path. Written under a temporary name, then renamed."""
    src = Path(root) if root is not None else project_root()
    out = Path(output)
    if out.is_dir():
        out = out / ARCHIVE_NAME
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with (
            zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf,
            tempfile.TemporaryDirectory() as scratch,
        ):
            for path, arcname in _members(src):
                _add(zf, arcname, path.read_bytes())
                if bytecode and arcname.endswith(".py"):
                    _add(zf, arcname + "c", _bytecode(path, arcname, scratch))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def _add(zf: zipfile.ZipFile, arcname: str, data: bytes) -> None:
    info = zipfile.ZipInfo(arcname, date_time=_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def submit_conf(archive: str | os.PathLike[str]) -> dict[str, str]:
    """Spark conf that ships ``archive`` to executors and makes it importable by their Python
    worker daemon too.

    ``spark.submit.pyFiles`` alone is not enough: Spark puts shipped files on a *worker's* path
    only after the daemon forked it, but the jobs' daemon (``spark.python.daemon.module =
    spark_jobs.daemon``) is itself in the archive. Executors fetch the archive into their
    working directory, which is the daemon's, so its bare file name on ``PYTHONPATH`` finds it.
    """
    path = Path(archive).resolve()
    return {"spark.submit.pyFiles": str(path), "spark.executorEnv.PYTHONPATH": path.name}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m spark_jobs.packaging", description=__doc__.split("\n")[0])
    p.add_argument("--output", default=f"dist/{ARCHIVE_NAME}", help="archive file or directory")
    p.add_argument("--no-bytecode", action="store_true", help="sources only (no .pyc beside them)")
    p.add_argument(
        "--root", help="directory holding the packages (default: where paimon_core is imported from)"
    )
    ns = p.parse_args(argv)
    print(build_pyfiles_archive(ns.output, root=ns.root, bytecode=not ns.no_bytecode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
