"""An S3 API server on loopback (moto's server mode in its own process) as a warehouse.

``S3Server().start()`` runs this file as a separate Python process (as an object store is
for Spark's JVMs, executors and concurrent writer processes), waits for it to listen on
127.0.0.1, creates the bucket and hands out the endpoint, credentials as environment
variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL``...) and
fsspec storage options.

moto checks ``If-None-Match: *`` and then stores the object in a second step without a lock
between them; real S3 does both atomically. The server therefore serialises write requests
(reads stay concurrent), so the fake has S3's documented semantics for racing commits.
``conditional_put=False`` makes a store that ignores the header (an S3-compatible store
without conditional writes): an exclusive create then silently overwrites, which is what a
commit lock is for.

``faults=P`` makes a flaky store: with probability P a write is carried out and then answered
with a 500 (the client cannot tell it landed, as after a dropped connection), and a read is
answered 503 SlowDown before it is looked at. Seeded, so a failing run can be replayed.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

BUCKET = "paimon"
ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "eu-west-1"
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _S3Semantics:
    """WSGI wrapper: one write request at a time; optionally drop ``If-None-Match``."""

    def __init__(self, app: WSGIApp, *, conditional_put: bool, faults: float = 0.0, seed: int = 0) -> None:
        self.app = app
        self.conditional_put = conditional_put
        self.faults = faults
        self.random = random.Random(seed)
        self.lock = threading.Lock()

    def _fault(self) -> bool:
        with self.lock:
            return self.faults > 0 and self.random.random() < self.faults

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        flaky = str(environ.get("PATH_INFO", "")).strip("/").count("/") > 0  # objects, not the bucket
        if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE"):
            if not self.conditional_put:
                environ.pop("HTTP_IF_NONE_MATCH", None)
            with self.lock:
                if flaky and self.faults > 0 and self.random.random() < self.faults:
                    list(self.app(environ, lambda *a, **k: None))  # it lands ...
                    return _error(start_response, "500 Internal Server Error", "InternalError")  # ... unseen
                return list(self.app(environ, start_response))
        if flaky and self._fault():
            return _error(start_response, "503 Slow Down", "SlowDown")
        return self.app(environ, start_response)


def _error(start_response: Callable[..., Any], status: str, code: str) -> list[bytes]:
    body = f"<?xml version='1.0'?><Error><Code>{code}</Code><Message>injected</Message></Error>".encode()
    start_response(status, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
    return [body]


def _serve(port: int, *, conditional_put: bool, faults: float = 0.0, seed: int = 0) -> None:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = _S3Semantics(
        DomainDispatcherApplication(create_backend_app), conditional_put=conditional_put, faults=faults, seed=seed
    )
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    print(f"PORT {server.server_port}", flush=True)

    def exit_with_parent() -> None:  # stdin is the parent's pipe: EOF when the parent is gone
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=exit_with_parent, daemon=True).start()
    server.serve_forever()


class S3Server:
    """moto's S3 API in a child process on 127.0.0.1 (a random free port), with one bucket."""

    def __init__(self, *, bucket: str = BUCKET, conditional_put: bool = True, faults: float = 0.0, seed: int = 0) -> None:
        self.bucket = bucket
        self.conditional_put = conditional_put
        self.faults = faults
        self.seed = seed
        self.endpoint = ""
        self._proc: subprocess.Popen[str] | None = None

    def start(self, *, timeout: float = 60.0) -> S3Server:
        argv = [sys.executable, os.path.abspath(__file__), "--port", "0"]
        if not self.conditional_put:
            argv.append("--no-conditional-put")
        argv += ["--faults", str(self.faults), "--seed", str(self.seed)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + timeout
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()  # blocks until the server listens (or dies)
        if not line.startswith("PORT ") or time.monotonic() > deadline:
            self.stop()
            raise RuntimeError(f"moto S3 server did not start (got {line!r})")
        self.endpoint = f"http://127.0.0.1:{int(line.split()[1])}"
        import fsspec

        fsspec.filesystem("s3", skip_instance_cache=True, **self.storage_options()).mkdir(self.bucket)
        return self

    @property
    def pid(self) -> int | None:
        """The server process (None before :meth:`start`)."""
        return None if self._proc is None else self._proc.pid

    def boto_kwargs(self) -> dict[str, str]:
        return {
            "endpoint_url": self.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "region_name": REGION,
        }

    def storage_options(self) -> dict[str, Any]:
        """fsspec/s3fs options (``--storage-option``/``storage_options=``)."""
        return {
            "endpoint_url": self.endpoint,
            "key": ACCESS_KEY,
            "secret": SECRET_KEY,
            "client_kwargs": {"region_name": REGION},
        }

    def env(self) -> dict[str, str]:
        """Credentials and endpoint as the AWS SDKs (and s3fs) read them from the environment."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
        }

    def url(self, path: str = "") -> str:
        return f"s3://{self.bucket}/{path.lstrip('/')}"

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-conditional-put", action="store_true")
    parser.add_argument("--faults", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    _serve(args.port, conditional_put=not args.no_conditional_put, faults=args.faults, seed=args.seed)
