"""Session (dynamic) options of the ``paimon`` source: Spark confs that set Paimon options.

As Paimon Spark (``spark.paimon.…``) and Paimon Flink (``paimon.…``), both prefixes accepted::

    spark.conf.set("paimon.*.db.t.scan.snapshot-id", "2")        # table db.t in any catalog
    spark.conf.set("spark.paimon.paimon.db.*.read.stream.maxFilesPerTrigger", "10")
    spark.conf.set("spark.paimon.scan.mode", "latest")          # every paimon table of the session

``<prefix><catalog>.<db>.<table>.<key>`` targets one table; each of the three parts may be ``*``.
The catalog is the source's ``catalog`` option (default ``paimon``). Database and table names
match case-insensitively (Spark SQL's default). Keys are lower-cased, as Spark lower-cases
``.option`` keys. Precedence is Paimon's: the reader's/writer's ``.option(...)`` beats a
table-scoped session option, which beats a global one; among table-scoped keys for the same
option the more specific one (fewer ``*``) wins, then ``spark.paimon.`` over ``paimon.``.
A global key that is neither a Paimon table option nor a tuning option of this source
(e.g. Paimon Spark's own ``spark.paimon.requiredSparkConfsCheck.enabled``) is ignored; a key
scoped to another table is ignored. The options are read once, when the DataFrame or the
streaming query is defined (``load()`` / ``save()`` / ``start()``), as Paimon Spark does.

How the source sees the session in PySpark 4.3: ``DataSource.__init__`` (and everything else
the source runs) executes in Python worker processes that have no JVM gateway, so
``SparkSession.getActiveSession()`` is None there, and Spark hands workers only the source's own
options plus a few hand-picked confs. :func:`enable_session_options` therefore starts, in the
driver's Python process, a tiny loopback server (``multiprocessing.connection``, random auth
key) that answers with the session's ``paimon.``/``spark.paimon.`` confs (nothing else), and
puts its address into ``SparkContext.environment`` *before* registering the source, so every
Python worker Spark starts for the source inherits it (Spark passes that environment with the
registered source). Workers ask it when the DataSource is constructed (at ``load()`` time).
Without the server (source registered another way) the options come from the active session
when the DataSource is built in the driver process, else there are none.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Mapping
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidOptionError, TransientError
from paimon_core.options import validate_options
from spark_jobs.datasource.options import (
    CATALOG,
    CATALOG_DEFAULT,
    OWN_KEYS,
    PATH,
    SESSION_SETTABLE_KEYS,
    STORAGE_PREFIX,
    TABLE,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "ENV_VAR",
    "PREFIXES",
    "enable_session_options",
    "session_conf",
    "session_options_for",
    "table_options_from_session",
]

logger = logging.getLogger(__name__)

#: Environment variable (set through ``SparkContext.environment``) with ``host:port:authkey-hex``.
ENV_VAR = "PAIMON_SPARK_SESSION_CONF"
#: Session conf prefixes, in priority order for equally specific keys.
PREFIXES = ("spark.paimon.", "paimon.")
_TIMEOUT_S = 10.0


class _ConfServer:
    """Answers each authenticated connection with the session's paimon confs (driver process)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._key = secrets.token_bytes(32)
        self._listener = Listener(("127.0.0.1", 0), authkey=self._key)
        host, port = self._listener.address
        self.address = f"{host}:{port}:{self._key.hex()}"
        self._thread = threading.Thread(target=self._serve, name="paimon-session-conf", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn = self._listener.accept()
            except (AuthenticationError, EOFError, ConnectionError):  # a bad or vanished peer
                continue
            except OSError:  # the listener is closed
                return
            try:
                conn.recv()  # the request (protocol version); the answer is always the same
                conn.send(_paimon_confs(self.spark))
            except Exception as e:  # noqa: BLE001 - keep serving; the worker reports the failure
                logger.warning("paimon session conf server: %s", e)
            finally:
                conn.close()


_servers: dict[int, _ConfServer] = {}
_lock = threading.Lock()


def _paimon_confs(spark: SparkSession) -> dict[str, str]:
    confs: dict[str, str] = spark.conf.getAll
    return {k: v for k, v in confs.items() if k.startswith(PREFIXES)}


def enable_session_options(spark: SparkSession) -> None:
    """Make session options visible to the ``paimon`` source of ``spark``: start (once per
    session) the conf server and (re-)register the source so its workers can reach it."""
    from spark_jobs.datasource.paimon_source import PaimonDataSource

    with _lock:
        server = _servers.get(id(spark))
        if server is None:
            server = _servers[id(spark)] = _ConfServer(spark)
    spark.sparkContext.environment[ENV_VAR] = server.address
    spark.dataSource.register(PaimonDataSource)


def _fetch(address: str) -> dict[str, str]:
    host, port, key = address.rsplit(":", 2)
    conn: Connection
    try:
        conn = Client((host, int(port)), authkey=bytes.fromhex(key))
    except (OSError, ValueError) as e:
        raise TransientError(
            f"Cannot reach the paimon session-options server of the driver at {host}:{port} ({e}); "
            f"was the session stopped? Call spark_jobs.datasource.dynamic_options.enable_session_options(spark) "
            f"again on the live session.",
        ) from e
    with conn:
        conn.send("v1")
        if not conn.poll(_TIMEOUT_S):
            raise TransientError(f"The paimon session-options server at {host}:{port} did not answer")
        confs: dict[str, str] = conn.recv()
    return confs


def session_conf() -> dict[str, str]:
    """The session's ``paimon.``/``spark.paimon.`` confs, seen from whichever process runs this."""
    address = os.environ.get(ENV_VAR)
    if address:
        return _fetch(address)
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency of this package
        return {}
    spark = SparkSession.getActiveSession()
    return _paimon_confs(spark) if spark is not None else {}


def _matches(part: str, name: str) -> bool:
    return part == "*" or part.lower() == name.lower()


def _settable(key: str) -> bool:
    """Session options never choose what is read or written (warehouse, table, commit user...)."""
    return key in SESSION_SETTABLE_KEYS or not (key in OWN_KEYS or key.startswith(STORAGE_PREFIX))


def _known_global(key: str, value: str) -> bool:
    if key in SESSION_SETTABLE_KEYS:
        return True
    if key in OWN_KEYS or key.startswith(STORAGE_PREFIX):
        return False
    try:
        validate_options({key: value})
    except InvalidOptionError:
        return False
    return True


def table_options_from_session(
    conf: Mapping[str, str], catalog: str, database: str, table: str
) -> dict[str, str]:
    """The options ``conf`` sets for ``catalog.database.table`` (global ones under scoped ones)."""
    global_opts: dict[str, str] = {}
    scoped: dict[str, tuple[int, int, str]] = {}  # key -> (specificity, prefix rank, value)
    for full_key, value in conf.items():
        rank = next((i for i, p in enumerate(PREFIXES) if full_key.startswith(p)), None)
        if rank is None:
            continue
        rest = full_key[len(PREFIXES[rank]) :]
        parts = rest.split(".")
        if len(parts) >= 4:
            c, d, t = parts[:3]
            key = ".".join(parts[3:]).lower()
            if _matches(c, catalog) and _matches(d, database) and _matches(t, table):
                if not _settable(key):
                    logger.warning("Session option %s ignored: '%s' cannot be set per session", full_key, key)
                    continue
                prio = (sum(p != "*" for p in (c, d, t)), -rank)
                current = scoped.get(key)
                if current is None or prio > current[:2]:
                    scoped[key] = (prio[0], prio[1], value)
                continue
            if "*" in (c, d, t) or c.lower() == catalog.lower():
                continue  # scoped to another table
        key = rest.lower()
        if _known_global(key, value):
            if key not in global_opts or rank == 0:
                global_opts[key] = value
        else:
            logger.debug("Session conf %s is not a paimon table option; ignored", full_key)
    return {**global_opts, **{k: v for k, (_, _, v) in scoped.items()}}


def session_options_for(options: Mapping[str, str], conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The session options that apply to the table named by the source ``options``
    (``conf``: the session confs; default: :func:`session_conf`)."""
    opts = {str(k).lower(): str(v) for k, v in options.items() if v is not None}
    name = (opts.get(TABLE) or opts.get(PATH) or "").strip()
    if not name:
        return {}
    db, sep, table = name.rpartition(".")
    confs = session_conf() if conf is None else conf
    if not confs:
        return {}
    found = table_options_from_session(
        confs, opts.get(CATALOG) or CATALOG_DEFAULT, db if sep else "default", table
    )
    if found:
        logger.info("paimon %s: session options %s", name, found)
    return found
