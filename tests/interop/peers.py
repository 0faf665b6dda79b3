"""Typed client for the official Paimon peers (pypaimon, pypaimon-rust), run in their own venv.

Runs in OUR venv and imports only the standard library and pyarrow. The peers live in a separate
virtualenv (built by ``scripts/setup_peers.sh``) because pypaimon pins ``pyarrow<20`` and pulls
polars/pandas. Each :class:`Peer` owns one long-lived ``peer_driver.py --serve`` process (started on
first use) and talks JSON lines to it; table data always travels through temporary Parquet files,
never through JSON, so Arrow types survive exactly.

    peer = Peer("pypaimon")            # or Peer("rust")
    peer.create_table(wh, "db.t", schema, primary_keys=["id"], options={"bucket": "2"})
    sid = peer.write(wh, "db.t", table)
    out = peer.read(wh, "db.t", options={"scan.snapshot-id": "1"}, projection=["id"],
                    filter={"op": ">=", "field": "id", "value": 10})
    peer.close()

Filters are JSON-like dicts: ``{"op": "=", "field": "id", "value": 3}``; ops ``= != < <= > >=
in not_in (with "values") between (with "values": [lo, hi]) is_null is_not_null startswith
endswith contains like``; ``{"op": "and"|"or", "children": [...]}``. Values may be Python
``date``/``datetime``/``Decimal``/``bytes``; they are tagged for the driver.

Failures raise :class:`PeerError` (with the peer's traceback and stderr); when the peer cannot do
something at all (a known gap, see the driver) the error is a :class:`PeerUnsupported`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import hashlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "ENGINES",
    "DRIVER",
    "REPO_ROOT",
    "REQUIREMENTS",
    "Peer",
    "PeerError",
    "PeerUnsupported",
    "peer_venv_python",
    "peer_venv_problem",
    "requirements_hash",
]

ENGINES = ("pypaimon", "rust")
HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
DRIVER = HERE / "peer_driver.py"
REQUIREMENTS = HERE / "requirements-peers.txt"
DEFAULT_VENV = REPO_ROOT / ".cache" / "peers-venv"
STAMP_NAME = ".requirements.sha256"  # written by scripts/setup_peers.sh
DEFAULT_TIMEOUT = float(os.environ.get("PAIMON_PEERS_TIMEOUT", "300"))


class PeerError(RuntimeError):
    """A peer command failed. ``peer_traceback`` and ``stderr`` hold what the peer said."""

    def __init__(self, message: str, *, engine: str = "", cmd: str = "", error_type: str = "",
                 peer_traceback: str = "", stderr: str = "") -> None:
        parts = [f"[{engine or '?'} {cmd or '?'}] {message}"]
        if peer_traceback.strip():
            parts.append("--- peer traceback ---\n" + peer_traceback.rstrip())
        if stderr.strip():
            parts.append("--- peer stderr ---\n" + stderr.rstrip())
        super().__init__("\n".join(parts))
        self.engine = engine
        self.cmd = cmd
        self.error_type = error_type
        self.peer_message = message
        self.peer_traceback = peer_traceback
        self.stderr = stderr


class PeerUnsupported(PeerError):
    """The peer cannot do this at all (known gap), as opposed to failing while doing it."""


def _venv_dir() -> Path:
    return Path(os.environ.get("PAIMON_PEERS_VENV") or DEFAULT_VENV)


def peer_venv_python() -> str | None:
    """Python of the peer venv: $PAIMON_PEERS_PYTHON, else <venv>/bin/python; None if missing.

    <venv> is $PAIMON_PEERS_VENV or <repo>/.cache/peers-venv (as in scripts/setup_peers.sh).
    """
    explicit = os.environ.get("PAIMON_PEERS_PYTHON")
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    python = _venv_dir() / "bin" / "python"
    return str(python) if python.is_file() and os.access(python, os.X_OK) else None


def requirements_hash() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()


def peer_venv_problem() -> str | None:
    """Why the peer venv cannot be used (missing / built from other requirements), or None."""
    python = peer_venv_python()
    if python is None:
        where = os.environ.get("PAIMON_PEERS_PYTHON") or str(_venv_dir() / "bin" / "python")
        return f"peer venv not found ({where})"
    if os.environ.get("PAIMON_PEERS_PYTHON"):
        return None  # explicitly chosen interpreter: trust it
    stamp = _venv_dir() / STAMP_NAME
    try:
        recorded = stamp.read_text().split()[0]
    except (OSError, IndexError):
        return f"peer venv {_venv_dir()} is incomplete (no {STAMP_NAME})"
    if recorded != requirements_hash():
        return f"peer venv {_venv_dir()} was built from another {REQUIREMENTS.name}"
    return None


# ---------------------------------------------------------------------------------------------
# JSON encoding of filter literals and alter-table types
# ---------------------------------------------------------------------------------------------

def _encode_literal(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, _dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, decimal.Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, pa.Scalar):
        return _encode_literal(value.as_py())
    if isinstance(value, (list, tuple)):
        return [_encode_literal(v) for v in value]
    return value


def _encode_filter(node: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("children", "args"):
            out["children"] = [_encode_filter(c) for c in value]
        elif key in ("value", "values"):
            out[key] = _encode_literal(value)
        else:
            out[key] = value
    return out


def _encode_arrow_type(data_type: pa.DataType | pa.Field) -> str:
    field = data_type if isinstance(data_type, pa.Field) else pa.field("f", data_type)
    return base64.b64encode(pa.schema([field]).serialize().to_pybytes()).decode("ascii")


def _encode_change(change: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(change)
    t = out.get("type")
    if isinstance(t, (pa.DataType, pa.Field)):
        out.pop("type")
        out["arrow_type"] = _encode_arrow_type(t)
    return out


# ---------------------------------------------------------------------------------------------
# the driver process
# ---------------------------------------------------------------------------------------------

def _peer_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"):
        env.pop(var, None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


class _DriverProcess:
    """One ``peer_driver.py --serve`` process: JSON line out, JSON line back, with a deadline."""

    def __init__(self, python: str, label: str) -> None:
        self.python = python
        self.label = label
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._buf = b""
        self._next_id = 0
        self.started_at: float | None = None
        self.start_seconds: float | None = None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile(prefix=f"paimon-peer-{self.label}-", suffix=".stderr")
        t0 = time.perf_counter()
        self._proc = subprocess.Popen(
            [self.python, str(DRIVER), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env=_peer_env(), cwd=str(REPO_ROOT), close_fds=True,
        )
        self._buf = b""
        self.started_at = t0

    def stderr_since(self, offset: int, limit: int = 20000) -> str:
        if self._stderr is None:
            return ""
        self._stderr.flush()
        self._stderr.seek(offset)
        data = self._stderr.read()
        self._stderr.seek(0, os.SEEK_END)
        text = data.decode("utf-8", "replace")
        return text if len(text) <= limit else "...(truncated)...\n" + text[-limit:]

    def _stderr_offset(self) -> int:
        if self._stderr is None:
            return 0
        self._stderr.seek(0, os.SEEK_END)
        return self._stderr.tell()

    def _read_line(self, deadline: float) -> bytes | None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                if not sel.select(remaining):
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None  # EOF: the process died
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def request(self, cmd: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not self.alive:
            self.close()
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        rid = self._next_id
        offset = self._stderr_offset()
        payload = (json.dumps(dict(cmd, id=rid)) + "\n").encode("utf-8")
        name = str(cmd.get("cmd"))
        try:
            self._proc.stdin.write(payload)
            self._proc.stdin.flush()
            line = self._read_line(time.monotonic() + timeout)
        except TimeoutError:
            stderr = self.stderr_since(offset)
            self.close(kill=True)
            raise PeerError(f"no answer within {timeout:.0f}s; peer process killed",
                            engine=self.label, cmd=name, stderr=stderr) from None
        except (BrokenPipeError, ConnectionResetError):
            line = None
        if line is None:
            assert self._proc is not None
            try:
                code = self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                code = None
            stderr = self.stderr_since(offset)
            self.close(kill=True)
            raise PeerError(f"peer process died (exit code {code})", engine=self.label, cmd=name,
                            stderr=stderr)
        try:
            answer = json.loads(line)
        except ValueError:
            stderr = self.stderr_since(offset)
            self.close(kill=True)
            raise PeerError(f"garbled answer: {line[:500]!r}", engine=self.label, cmd=name,
                            stderr=stderr) from None
        if answer.get("id") != rid:
            self.close(kill=True)
            raise PeerError(f"answer id {answer.get('id')} does not match request id {rid}",
                            engine=self.label, cmd=name)
        if not answer.get("ok"):
            cls = PeerUnsupported if answer.get("unsupported") else PeerError
            raise cls(f"{answer.get('error_type')}: {answer.get('error')}", engine=self.label, cmd=name,
                      error_type=str(answer.get("error_type")),
                      peer_traceback=str(answer.get("traceback") or ""), stderr=self.stderr_since(offset))
        return answer

    def close(self, kill: bool = False) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.poll() is None and not kill:
                    try:
                        assert proc.stdin is not None
                        proc.stdin.write(b'{"cmd": "shutdown"}\n')
                        proc.stdin.flush()
                    except OSError:
                        pass
                for stream in (proc.stdin, proc.stdout):
                    if stream is not None:
                        try:
                            stream.close()
                        except OSError:
                            pass
                try:
                    proc.wait(timeout=0 if kill else 10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _run_oneshot(python: str, label: str, cmd: dict[str, Any], timeout: float) -> dict[str, Any]:
    name = str(cmd.get("cmd"))
    try:
        res = subprocess.run([python, str(DRIVER), json.dumps(cmd)], capture_output=True,
                             env=_peer_env(), cwd=str(REPO_ROOT), timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise PeerError(f"no answer within {timeout:.0f}s", engine=label, cmd=name,
                        stderr=(exc.stderr or b"").decode("utf-8", "replace")) from None
    stderr = res.stderr.decode("utf-8", "replace")
    lines = res.stdout.decode("utf-8", "replace").splitlines()
    if len(lines) != 1:
        raise PeerError(f"expected one JSON line on stdout, got {len(lines)} (exit {res.returncode})",
                        engine=label, cmd=name, stderr=stderr)
    answer = json.loads(lines[0])
    if not answer.get("ok"):
        cls = PeerUnsupported if answer.get("unsupported") else PeerError
        raise cls(f"{answer.get('error_type')}: {answer.get('error')}", engine=label, cmd=name,
                  error_type=str(answer.get("error_type")), peer_traceback=str(answer.get("traceback") or ""),
                  stderr=stderr)
    return answer


# ---------------------------------------------------------------------------------------------
# public client
# ---------------------------------------------------------------------------------------------

def _cleanup(proc: _DriverProcess, tmpdir: str) -> None:
    proc.close()
    shutil.rmtree(tmpdir, ignore_errors=True)


def _abs(warehouse: str | os.PathLike[str]) -> str:
    # pypaimon-rust needs absolute warehouse paths.
    return os.path.abspath(os.fspath(warehouse))


class Peer:
    """One peer engine ("pypaimon" or "rust") behind a long-lived driver process.

    ``persistent=False`` starts a fresh driver per call (slow: ~1 s of imports each; for debugging).
    Thread-safe (calls are serialized). Use as a context manager or call :meth:`close`.
    """

    def __init__(self, engine: str, *, python: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 persistent: bool = True) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        python = python or peer_venv_python()
        if python is None:
            raise PeerError(f"{peer_venv_problem()}; run scripts/setup_peers.sh", engine=engine, cmd="init")
        self.engine = engine
        self.python = python
        self.timeout = timeout
        self.persistent = persistent
        self._proc = _DriverProcess(python, engine)
        self._lock = threading.Lock()
        self._tmpdir = tempfile.mkdtemp(prefix=f"paimon-peer-{engine}-")
        # Stop the process and remove the temp dir even if close() is never called.
        self._finalizer = weakref.finalize(self, _cleanup, self._proc, self._tmpdir)
        self.calls = 0
        self.call_seconds = 0.0

    def __repr__(self) -> str:
        return f"Peer({self.engine!r}, python={self.python!r})"

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the driver process and remove temp files (a later call starts a new process)."""
        with self._lock:
            _cleanup(self._proc, self._tmpdir)

    # -- plumbing ---------------------------------------------------------------------------
    def _call(self, cmd: str, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        request = {"cmd": cmd, "engine": self.engine, **fields}
        t0 = time.perf_counter()
        with self._lock:
            try:
                if self.persistent:
                    return self._proc.request(request, timeout or self.timeout)
                return _run_oneshot(self.python, self.engine, request, timeout or self.timeout)
            finally:
                self.calls += 1
                self.call_seconds += time.perf_counter() - t0

    def _tmp(self, suffix: str) -> str:
        os.makedirs(self._tmpdir, exist_ok=True)
        return os.path.join(self._tmpdir, f"{uuid.uuid4().hex}{suffix}")

    def _to_parquet(self, data: pa.Table | pa.RecordBatch) -> str:
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        path = self._tmp(".parquet")
        pq.write_table(data, path)
        return path

    @staticmethod
    def _unlink(*paths: str) -> None:
        for p in paths:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass

    # -- commands ---------------------------------------------------------------------------
    def ping(self, preload: bool = True) -> dict[str, Any]:
        """Start the driver (importing this engine when ``preload``); returns versions and import_ms."""
        return self._call("ping", preload=[self.engine] if preload else [])

    def create_table(self, warehouse: str | os.PathLike[str], table: str,
                     schema: pa.Schema | Sequence[Mapping[str, Any]], *,
                     primary_keys: Iterable[str] = (), partition_keys: Iterable[str] = (),
                     options: Mapping[str, Any] | None = None, ignore_if_exists: bool = False) -> None:
        """Create ``table`` ("db.t"; the database is created if needed).

        ``schema`` is a pyarrow schema (mapped to Paimon types by pypaimon's Arrow mapping) or a
        list of Paimon fields as in schema files (``{"name", "type"}``, type a string or JSON).
        """
        fields: dict[str, Any] = {
            "warehouse": _abs(warehouse), "table": table, "primary_keys": list(primary_keys),
            "partition_keys": list(partition_keys),
            "options": {str(k): str(v) for k, v in (options or {}).items()},
            "ignore_if_exists": ignore_if_exists,
        }
        if isinstance(schema, pa.Schema):
            path = self._to_parquet(schema.empty_table())
            try:
                self._call("create_table", schema_parquet=path, **fields)
            finally:
                self._unlink(path)
        else:
            self._call("create_table", schema_json={"fields": [dict(f) for f in schema]}, **fields)

    def write(self, warehouse: str | os.PathLike[str], table: str, data: pa.Table | pa.RecordBatch, *,
              overwrite: bool = False, overwrite_partition: Mapping[str, Any] | None = None) -> int | None:
        """Write and commit ``data`` in one batch commit; returns the latest snapshot id."""
        path = self._to_parquet(data)
        try:
            res = self._call("write", warehouse=_abs(warehouse), table=table, parquet=path,
                             overwrite=bool(overwrite or overwrite_partition),
                             overwrite_partition=dict(overwrite_partition) if overwrite_partition else None)
        finally:
            self._unlink(path)
        return res["snapshot_id"]

    def delete(self, warehouse: str | os.PathLike[str], table: str, keys: pa.Table | pa.RecordBatch) -> int | None:
        """Retract rows of a PK table that has ``rowkind.field``: one '-D' row per row of ``keys``
        (which must hold the primary-key columns; other columns may be absent)."""
        path = self._to_parquet(keys)
        try:
            res = self._call("delete", warehouse=_abs(warehouse), table=table, parquet=path)
        finally:
            self._unlink(path)
        return res["snapshot_id"]

    def delete_where(self, warehouse: str | os.PathLike[str], table: str, filter: Mapping[str, Any]) -> int | None:
        """Delete the rows matching ``filter`` (same JSON form as :meth:`read`); returns the latest
        snapshot id. On data-evolution tables (``row-tracking.enabled``, ``data-evolution.enabled``)
        with ``deletion-vectors.enabled`` both peers write deletion vectors instead of rewriting
        files: pypaimon through ``new_update().delete_by_predicate``, rust through SQL ``DELETE``."""
        res = self._call("delete_where", warehouse=_abs(warehouse), table=table, filter=_encode_filter(filter))
        return res["snapshot_id"]

    def read(self, warehouse: str | os.PathLike[str], table: str, *, options: Mapping[str, Any] | None = None,
             projection: Sequence[str] | None = None, filter: Mapping[str, Any] | None = None) -> pa.Table:
        """Batch read. ``options``: scan.snapshot-id / scan.tag-name / scan.timestamp-millis /
        incremental-between-timestamp (pypaimon) / incremental-between "s,e" (rust) ...

        Rows come back in the peer's order: sort before comparing.
        """
        out = self._tmp(".parquet")
        try:
            self._call("read", warehouse=_abs(warehouse), table=table, output=out,
                       options={str(k): str(v) for k, v in (options or {}).items()},
                       projection=list(projection) if projection is not None else None,
                       filter=_encode_filter(filter) if filter is not None else None)
            result = pq.read_table(out)
        finally:
            self._unlink(out)
        return result.replace_schema_metadata(None)

    def create_tag(self, warehouse: str | os.PathLike[str], table: str, tag: str,
                   snapshot_id: int | None = None) -> None:
        self._call("create_tag", warehouse=_abs(warehouse), table=table, tag=tag, snapshot_id=snapshot_id)

    def delete_tag(self, warehouse: str | os.PathLike[str], table: str, tag: str) -> None:
        self._call("delete_tag", warehouse=_abs(warehouse), table=table, tag=tag)

    def rollback_to(self, warehouse: str | os.PathLike[str], table: str, *, snapshot_id: int | None = None,
                    tag: str | None = None, timestamp_millis: int | None = None) -> None:
        if sum(x is not None for x in (snapshot_id, tag, timestamp_millis)) != 1:
            raise ValueError("give exactly one of snapshot_id, tag, timestamp_millis")
        self._call("rollback_to", warehouse=_abs(warehouse), table=table, snapshot_id=snapshot_id, tag=tag,
                   timestamp_millis=timestamp_millis)

    def list_snapshots(self, warehouse: str | os.PathLike[str], table: str) -> list[dict[str, Any]]:
        """[{id, commit_kind, time_millis, total_record_count, delta_record_count}], ascending id."""
        return list(self._call("list_snapshots", warehouse=_abs(warehouse), table=table)["snapshots"])

    def list_tags(self, warehouse: str | os.PathLike[str], table: str) -> dict[str, int]:
        """{tag name: snapshot id}."""
        tags = self._call("list_tags", warehouse=_abs(warehouse), table=table)["tags"]
        return {t["name"]: t["snapshot_id"] for t in tags}

    def alter_table(self, warehouse: str | os.PathLike[str], table: str,
                    changes: Sequence[Mapping[str, Any]]) -> None:
        """Schema changes, applied in order. Each is a dict with ``action``:
        ``add_column`` (name, type[, comment]), ``rename_column`` (name, new_name), ``drop_column``
        (name), ``update_column_type`` (name, type), ``set_option`` (key, value), ``remove_option``
        (key). ``type`` is a pyarrow DataType/Field or a Paimon type (string or schema-file JSON).
        """
        self._call("alter_table", warehouse=_abs(warehouse), table=table,
                   changes=[_encode_change(c) for c in changes])

    def table_schema(self, warehouse: str | os.PathLike[str], table: str) -> dict[str, Any]:
        """{fields, partition_keys, primary_keys, options} as the peer sees the latest schema
        (pypaimon: schema-file JSON types; rust: SQL-like type strings)."""
        res = self._call("table_schema", warehouse=_abs(warehouse), table=table)
        return {k: res[k] for k in ("fields", "partition_keys", "primary_keys", "options")}


if __name__ == "__main__":  # tiny smoke check: python tests/interop/peers.py
    py = peer_venv_python()
    if py is None:
        sys.exit(f"{peer_venv_problem()}; run scripts/setup_peers.sh")
    for eng in ENGINES:
        with Peer(eng) as p:
            print(eng, p.ping())
