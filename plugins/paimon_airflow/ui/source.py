"""Which tables the page shows: the registry's tables of the registry's warehouse connection.

The registry is ``paimon_tables.yaml`` in the DAGs folder (``dags/_paimon_registry.py`` reads
it; it is loaded here from that folder by path, because the api-server does not put the DAGs
folder on ``sys.path``). Without a registry: connection ``paimon_default``, every table.
The warehouse is listed on each request (tables come and go; listing is a few directory reads).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paimon_core import FileStoreTable, FileSystemCatalog

__all__ = ["MAINTENANCE_DAGS", "TableNotListedError", "TableSource", "registry_source"]

#: The DAGs of ``dags/`` that act on every registry table, in the order ``paimon_maintenance`` runs them.
MAINTENANCE_DAGS = (
    "paimon_maintenance",
    "paimon_tags",
    "paimon_expire_snapshots",
    "paimon_remove_orphan_files",
)


class TableNotListedError(LookupError):
    """The table is not in the warehouse or not selected by the registry."""


@dataclass(frozen=True)
class TableSource:
    """Tables of one warehouse connection, filtered by full-match ``include``/``exclude`` regexes."""

    paimon_conn_id: str = "paimon_default"
    include: str = ".*"
    exclude: str = ""
    ingest_tables: tuple[str, ...] = ()

    def catalog(self) -> FileSystemCatalog:
        from paimon_airflow.hooks.paimon import PaimonHook

        return PaimonHook(paimon_conn_id=self.paimon_conn_id).get_catalog()

    def list_tables(self) -> list[str]:
        """The selected ``db.table`` names, sorted."""
        from paimon_airflow.hooks.paimon import PaimonHook
        from paimon_airflow.utils.selection import select_tables

        return select_tables(PaimonHook(paimon_conn_id=self.paimon_conn_id).list_tables(), self.include, self.exclude)

    def get_table(self, identifier: str) -> FileStoreTable:
        """The table ``identifier``; :class:`TableNotListedError` if not listed."""
        if identifier not in self.list_tables():
            raise TableNotListedError(identifier)
        return self.catalog().get_table(identifier)

    def dags_of(self, identifier: str) -> list[str]:
        """The DAG ids that maintain (or ingest) ``identifier``."""
        dags = list(MAINTENANCE_DAGS)
        if identifier in self.ingest_tables:
            dags.insert(0, "paimon_ingest")
        return dags


def _load_registry_module(path: Path) -> Any:
    name = "_paimon_registry_ui"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def registry_source(dags_folder: str | None = None) -> TableSource:
    """The :class:`TableSource` of the registry in ``dags_folder`` (default: Airflow's DAGs folder)."""
    if dags_folder is None:
        from airflow.configuration import conf

        dags_folder = conf.get("core", "dags_folder")
    path = Path(dags_folder) / "_paimon_registry.py"
    if not path.is_file():
        return TableSource()
    registry = _load_registry_module(path).load()
    return TableSource(
        paimon_conn_id=str(registry.paimon_conn_id),
        include=str(registry.include),
        exclude=str(registry.exclude),
        ingest_tables=tuple(str(e.table) for e in registry.ingest),
    )
