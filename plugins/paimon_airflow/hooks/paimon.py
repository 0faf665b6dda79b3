"""``PaimonHook``: a Paimon warehouse from an Airflow connection (conn type ``paimon``).

The connection holds everything about the warehouse, so DAG code names only a connection id:

* the warehouse URL: the ``warehouse`` extra, else Host (``/data/wh``, ``file:///data/wh``,
  ``s3://bucket/wh``, ``memory://wh``);
* the fsspec storage options: the ``storage_options`` extra (a dict or a JSON string), plus
  ``endpoint_url`` from the extra and, for object stores, Login/Password as ``key``/``secret``
  (unless the storage options set them);
* the ``ledger`` extra (default true): the Paimon operators record what they do in the
  warehouse's maintenance ledger (``paimon_maintenance.ledger``, created when missing; see
  :mod:`paimon_core.ledger`); ``false``: they record nothing and create nothing.

Environment form (as in the tests)::

    AIRFLOW_CONN_PAIMON_DEFAULT='{"conn_type": "paimon", "extra": {"warehouse": "s3://lake/wh",
        "endpoint_url": "http://127.0.0.1:9000"}, "login": "KEY", "password": "SECRET"}'

The connection form (``conn-fields``/``ui-field-behaviour``) is declared in
:func:`paimon_airflow.get_provider_info`, as Airflow >= 3.2 providers do; the hook's
:meth:`PaimonHook.get_ui_field_behaviour` returns the same for callers that still ask the hook.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

if TYPE_CHECKING:
    from paimon_core import FileStoreTable, FileSystemCatalog

__all__ = ["PaimonHook"]

#: URL schemes served by the local file system (no credentials are passed for them).
_LOCAL_SCHEMES = ("", "file", "local", "memory")


class PaimonHook(BaseHook):
    """A Paimon warehouse (a :class:`paimon_core.FileSystemCatalog`) from connection ``paimon_conn_id``.

    Stateless apart from a cached catalog; build it in ``execute``, never at DAG parse time.
    """

    conn_name_attr = "paimon_conn_id"
    default_conn_name = "paimon_default"
    conn_type = "paimon"
    hook_name = "Apache Paimon"

    def __init__(self, paimon_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.paimon_conn_id = paimon_conn_id

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """The connection form's relabelled/hidden fields (the provider info's ``ui-field-behaviour``)."""
        from paimon_airflow import get_provider_info

        behaviour: dict[str, Any] = get_provider_info()["connection-types"][0]["ui-field-behaviour"]
        return {
            "hidden_fields": list(behaviour["hidden-fields"]),
            "relabeling": dict(behaviour["relabeling"]),
            "placeholders": dict(behaviour["placeholders"]),
        }

    # --- connection --------------------------------------------------------------------
    @cached_property
    def _extra(self) -> dict[str, Any]:
        conn = self.get_connection(self.paimon_conn_id)
        extra = conn.extra_dejson
        return dict(extra) if isinstance(extra, Mapping) else {}

    @cached_property
    def warehouse(self) -> str:
        """The warehouse URL or path (``warehouse`` extra, else Host)."""
        conn = self.get_connection(self.paimon_conn_id)
        value = str(self._extra.get("warehouse") or conn.host or "").strip()
        if not value:
            raise ValueError(
                f"Connection {self.paimon_conn_id!r} names no warehouse: set Host or the 'warehouse' extra"
            )
        return value

    @cached_property
    def storage_options(self) -> dict[str, Any]:
        """fsspec options of the warehouse (credentials from Login/Password for object stores)."""
        conn = self.get_connection(self.paimon_conn_id)
        raw = self._extra.get("storage_options") or {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as e:
                raise ValueError(
                    f"Connection {self.paimon_conn_id!r}: storage_options is not JSON: {e}"
                ) from e
        if not isinstance(raw, Mapping):
            raise ValueError(f"Connection {self.paimon_conn_id!r}: storage_options must be a JSON object")
        options: dict[str, Any] = dict(raw)
        if self._extra.get("endpoint_url"):
            options.setdefault("endpoint_url", str(self._extra["endpoint_url"]))
        scheme = self.warehouse.split("://", 1)[0] if "://" in self.warehouse else ""
        if scheme not in _LOCAL_SCHEMES:
            if conn.login:
                options.setdefault("key", conn.login)
            if conn.password:
                options.setdefault("secret", conn.password)
        return options

    @cached_property
    def ledger_enabled(self) -> bool:
        """The ``ledger`` extra: record maintenance in the warehouse's ledger (default true)."""
        value = self._extra.get("ledger", True)
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on", ""):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"Connection {self.paimon_conn_id!r}: the 'ledger' extra must be true or false, got {value!r}")

    def ensure_ledger(self) -> bool:
        """Create the warehouse's maintenance ledger when it is missing (``ledger`` extra on).
        Never raises (a ledger problem never fails a task); returns whether it exists."""
        if not self.ledger_enabled:
            return False
        from paimon_core.ledger import Ledger

        try:
            ledger = Ledger(self.get_catalog())
            if not ledger.exists():
                ledger.ensure()
            return True
        except Exception as e:  # noqa: BLE001 - the ledger never fails a task
            self.log.warning("Maintenance ledger of %s unavailable: %s: %s", self.warehouse, type(e).__name__, e)
            return False

    # --- paimon ------------------------------------------------------------------------
    def get_conn(self) -> FileSystemCatalog:
        """The catalog (Airflow's generic hook accessor)."""
        return self.get_catalog()

    def get_catalog(self) -> FileSystemCatalog:
        """A :class:`paimon_core.FileSystemCatalog` over the connection's warehouse (cached)."""
        return self._catalog

    @cached_property
    def _catalog(self) -> FileSystemCatalog:
        from paimon_core import FileSystemCatalog

        return FileSystemCatalog(self.warehouse, storage_options=self.storage_options or None)

    def get_table(self, identifier: str, *, for_write: bool = False) -> FileStoreTable:
        """Load ``db.table`` (``TableNotFoundError`` if it does not exist).

        Hook lineage: the table is recorded as the task's input (``for_write``: output) asset
        ``paimon://<conn id>/<db.table>``, which OpenLineage reports as dataset ``db.table`` in
        the warehouse's namespace for a task whose operator reports no lineage of its own (a
        ``@task`` using this hook); see :mod:`paimon_airflow.utils.lineage`.
        """
        table = self.get_catalog().get_table(identifier)
        self._add_lineage(str(identifier).strip(), output=for_write)
        return table

    def _add_lineage(self, identifier: str, *, output: bool) -> None:
        """Record the table in Airflow's hook lineage collector (a no-op unless a reader, such as
        the OpenLineage provider, is on); lineage never fails the caller."""
        from paimon_airflow.utils.lineage import table_asset_uri

        try:
            from airflow.sdk.lineage import get_hook_lineage_collector

            collector = get_hook_lineage_collector()
            uri = table_asset_uri(self.paimon_conn_id, identifier)
            if output:
                collector.add_output_asset(context=self, uri=uri)
            else:
                collector.add_input_asset(context=self, uri=uri)
        except Exception:  # noqa: BLE001 - lineage is best effort
            self.log.warning("Could not record hook lineage of %s", identifier, exc_info=True)

    def list_tables(self) -> list[str]:
        """Every ``db.table`` of the warehouse, sorted."""
        catalog = self.get_catalog()
        return sorted(f"{db}.{t}" for db in catalog.list_databases() for t in catalog.list_tables(db))

    def test_connection(self) -> tuple[bool, str]:
        """List the warehouse's databases: ``(True, message)`` if that works, else ``(False, error)``."""
        try:
            catalog = self.get_catalog()
            if not catalog.file_io.exists(catalog.warehouse):
                return False, f"Warehouse {catalog.warehouse} does not exist"
            databases = catalog.list_databases()
        except Exception as e:  # noqa: BLE001 - the UI shows any failure as the test result
            return False, f"{type(e).__name__}: {e}"
        return True, f"Warehouse {self.warehouse}: {len(databases)} database(s) {databases}"
