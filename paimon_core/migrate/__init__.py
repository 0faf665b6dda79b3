"""Migration of existing data into Paimon tables (Java's ``org.apache.paimon.migrate``)."""

from paimon_core.migrate.file_migrator import MigrateResult, migrate_directory

__all__ = ["MigrateResult", "migrate_directory"]
