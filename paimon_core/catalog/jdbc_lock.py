"""A commit lock in a small SQL table (Paimon's ``JdbcCatalogLock``), for stores without
conditional put.

Where the object store cannot create ``snapshot-N`` exclusively (an S3-compatible store that
ignores ``If-None-Match``), committers publish under a lock shared by every committer of the
table (:class:`~paimon_core.snapshot.snapshot_commit.LockedSnapshotCommit`). This one is a
row in ``paimon_distributed_locks``, the table and columns of Paimon's JDBC catalog lock, so
Python and Java committers sharing a database exclude each other: acquiring inserts the row
``(lock_id, expire_time_seconds)`` (the primary key makes the insert fail while another
committer holds it), releasing deletes it, and a row older than its expiry (a crashed holder)
is removed by the next one who wants the lock. Works on any database SQLAlchemy reaches
(SQLite, PostgreSQL, MySQL); the expiry is judged by the database's clock.

Catalog options, as Paimon's ``CatalogOptions``: ``lock.enabled`` = true, ``lock.type`` =
``jdbc``, ``uri`` (a SQLAlchemy URL, e.g. ``postgresql+psycopg2://...`` or
``sqlite:////path/locks.db``), ``catalog-key`` (default ``jdbc``), ``lock-acquire-timeout``
(default 8 min; also the lease) and ``lock-check-max-sleep`` (default 8 s).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from paimon_core.exceptions import InvalidOptionError, LockAcquireTimeoutError
from paimon_core.options import parse_duration_ms

__all__ = [
    "CATALOG_KEY",
    "LOCK_ACQUIRE_TIMEOUT",
    "LOCK_CHECK_MAX_SLEEP",
    "LOCK_ENABLED",
    "LOCK_TYPE",
    "URI",
    "JdbcCatalogLock",
    "commit_lock_from_options",
]

logger = logging.getLogger(__name__)

LOCK_ENABLED = "lock.enabled"
LOCK_TYPE = "lock.type"
URI = "uri"
CATALOG_KEY = "catalog-key"
CATALOG_KEY_DEFAULT = "jdbc"
LOCK_ACQUIRE_TIMEOUT = "lock-acquire-timeout"
LOCK_ACQUIRE_TIMEOUT_DEFAULT = "8 min"
LOCK_CHECK_MAX_SLEEP = "lock-check-max-sleep"
LOCK_CHECK_MAX_SLEEP_DEFAULT = "8 s"

TABLE_NAME = "paimon_distributed_locks"
_metadata = sa.MetaData()
_locks = sa.Table(
    TABLE_NAME,
    _metadata,
    sa.Column("lock_id", sa.String(255), primary_key=True),
    sa.Column("acquired_at", sa.DateTime, nullable=False, server_default=sa.func.current_timestamp()),
    sa.Column("expire_time_seconds", sa.BigInteger, nullable=False, server_default="0"),
)
_engines: dict[str, sa.Engine] = {}
_engines_lock = threading.Lock()


def _expired(dialect: str) -> sa.TextClause:
    """The database-side condition "this row's lease ran out" (Paimon's dialects)."""
    if dialect == "sqlite":
        return sa.text("strftime('%s', 'now') - strftime('%s', acquired_at) > expire_time_seconds")
    if dialect == "postgresql":
        return sa.text("EXTRACT(EPOCH FROM (NOW() - acquired_at)) > expire_time_seconds")
    if dialect in ("mysql", "mariadb"):
        return sa.text("TIMESTAMPDIFF(SECOND, acquired_at, NOW()) > expire_time_seconds")
    raise InvalidOptionError(f"lock.type=jdbc: unsupported database {dialect!r}", key=URI)


def _engine(uri: str) -> sa.Engine:
    with _engines_lock:
        engine = _engines.get(uri)
        if engine is None:
            connect_args = {"timeout": 30} if uri.startswith("sqlite") else {}
            engine = sa.create_engine(uri, pool_pre_ping=True, connect_args=connect_args)
            try:
                _metadata.create_all(engine, checkfirst=True)
            except (OperationalError, ProgrammingError):  # another process created it meanwhile
                if not sa.inspect(engine).has_table(TABLE_NAME):
                    raise
            _engines[uri] = engine
    return engine


class JdbcCatalogLock:
    """A mutual-exclusion lock held as a row of ``paimon_distributed_locks``.

    Picklable (the URL and names only; each process opens its own engine), so a table
    carrying it can be shipped to executors. Not re-entrant.
    """

    def __init__(
        self,
        uri: str,
        *,
        lock_id: str = CATALOG_KEY_DEFAULT,
        acquire_timeout_ms: int = 8 * 60_000,
        check_max_sleep_ms: int = 8_000,
    ) -> None:
        if not uri:
            raise InvalidOptionError("lock.type=jdbc needs 'uri' (a SQLAlchemy database URL)", key=URI)
        self.uri = uri
        self.lock_id = lock_id
        self.acquire_timeout_ms = acquire_timeout_ms
        self.check_max_sleep_ms = check_max_sleep_ms

    @property
    def lease_seconds(self) -> int:
        """How long a held lock counts as live: the acquire timeout (as Java), at least 1 s."""
        return max(1, -(-self.acquire_timeout_ms // 1000))

    def for_table(self, identifier: str) -> JdbcCatalogLock:
        """The lock of one table: ``<catalog-key>.<database>.<table>`` (Java's lock name)."""
        return JdbcCatalogLock(
            self.uri,
            lock_id=f"{self.lock_id}.{identifier}",
            acquire_timeout_ms=self.acquire_timeout_ms,
            check_max_sleep_ms=self.check_max_sleep_ms,
        )

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def try_acquire(self) -> bool:
        """One attempt: clear an expired lease of this lock, then insert the row."""
        engine = _engine(self.uri)
        try:
            with engine.begin() as conn:
                conn.execute(
                    sa.delete(_locks).where(_locks.c.lock_id == self.lock_id).where(_expired(engine.dialect.name))
                )
            with engine.begin() as conn:
                conn.execute(
                    sa.insert(_locks).values(lock_id=self.lock_id, expire_time_seconds=self.lease_seconds)
                )
        except IntegrityError:
            return False
        except OperationalError as e:  # SQLite: "database is locked" under contention
            if "locked" in str(e).lower():
                return False
            raise
        return True

    def release(self) -> None:
        with _engine(self.uri).begin() as conn:
            conn.execute(sa.delete(_locks).where(_locks.c.lock_id == self.lock_id))

    def __enter__(self) -> JdbcCatalogLock:
        start = time.monotonic()
        sleep_ms = 50
        while not self.try_acquire():
            waited_ms = (time.monotonic() - start) * 1000
            if waited_ms > self.acquire_timeout_ms:
                raise LockAcquireTimeoutError(
                    f"Could not acquire commit lock {self.lock_id!r} in {int(waited_ms)} ms",
                    lock_id=self.lock_id,
                )
            sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)
            time.sleep(sleep_ms / 1000)
        logger.debug("Acquired commit lock %s", self.lock_id)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"JdbcCatalogLock({self.lock_id!r}, uri={sa.make_url(self.uri).render_as_string(hide_password=True)!r})"


def commit_lock_from_options(options: Mapping[str, str]) -> JdbcCatalogLock | None:
    """The commit lock catalog ``options`` ask for (``lock.enabled``/``lock.type``), or None."""
    enabled = options.get(LOCK_ENABLED, "false").strip().lower()
    if enabled not in ("true", "false"):
        raise InvalidOptionError(f"Option '{LOCK_ENABLED}' must be true or false, got {enabled!r}", key=LOCK_ENABLED)
    if enabled == "false":
        return None
    lock_type = options.get(LOCK_TYPE, "jdbc").strip().lower()
    if lock_type != "jdbc":
        raise InvalidOptionError(
            f"Unsupported '{LOCK_TYPE}' {lock_type!r}: only 'jdbc' (a SQL table) is available", key=LOCK_TYPE
        )
    return JdbcCatalogLock(
        options.get(URI, ""),
        lock_id=options.get(CATALOG_KEY, CATALOG_KEY_DEFAULT),
        acquire_timeout_ms=parse_duration_ms(
            options.get(LOCK_ACQUIRE_TIMEOUT, LOCK_ACQUIRE_TIMEOUT_DEFAULT), key=LOCK_ACQUIRE_TIMEOUT
        ),
        check_max_sleep_ms=parse_duration_ms(
            options.get(LOCK_CHECK_MAX_SLEEP, LOCK_CHECK_MAX_SLEEP_DEFAULT), key=LOCK_CHECK_MAX_SLEEP
        ),
    )
