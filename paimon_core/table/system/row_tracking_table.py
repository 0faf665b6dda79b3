"""``$row_tracking``: the rows of a row-tracking table with their ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` (Java's ``RowTrackingTable``).

Unlike the metadata system tables, its columns are the table's: every column, then ``_ROW_ID``
and ``_SEQUENCE_NUMBER`` (BIGINT NOT NULL; Java ``SpecialFields.rowTypeWithRowTracking``). It reads
what the handle's scan reads (the latest snapshot, or ``scan.snapshot-id`` / ``scan.tag-name`` /
``scan.timestamp-millis`` set with ``table.copy(...)``), deletion vectors applied; the ids are
computed as :mod:`paimon_core.append.row_tracking` describes. A data-evolution table
(``data-evolution.enabled``) is read merged by row-id range, each column, ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` from the newest file that wrote it (:mod:`paimon_core.table.data_evolution_read`,
Java ``DataEvolutionSplitRead``). A table without ``row-tracking.enabled`` is refused with Java's
message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.append.row_tracking import (
    data_evolution_enabled,
    read_with_row_tracking,
    row_tracking_arrow_schema,
    row_tracking_enabled,
    row_tracking_fields,
)
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.table.table_scan import TableScan

if TYPE_CHECKING:
    from paimon_core.table.table import FileStoreTable

__all__ = ["read"]


def read(table: FileStoreTable) -> pa.Table:
    """Every row the handle's scan reads, with ``_ROW_ID`` and ``_SEQUENCE_NUMBER``.

    Raises:
        InvalidArgumentError: the table does not have ``row-tracking.enabled``.
    """
    options = {**table.schema.options, **table.dynamic_options}
    if not row_tracking_enabled(options):
        raise InvalidArgumentError(
            f"Table {table.name} does not support row tracking, please enable 'row-tracking.enabled' option to use "
            "'with_metadata' table.",
            argument="name",
        )
    schema = row_tracking_arrow_schema(table.store)
    plan = TableScan(table, options=table.dynamic_options).plan()
    parts: list[pa.Table] = []
    if data_evolution_enabled(options):
        from paimon_core.io.data_file_reader import partition_scalars
        from paimon_core.table.data_evolution_read import DataEvolutionSplitRead

        reader = DataEvolutionSplitRead(table)
        fields = row_tracking_fields(list(table.schema.fields))
        part_fields = table.schema.partition_fields
        for split in plan.splits:
            values = partition_scalars(part_fields, table.partition_codec.decode(split.partition)) if part_fields else None
            for batch in reader.read(split, fields, partition_values=values):
                parts.append(pa.Table.from_arrays(batch.columns, schema=schema))
        return pa.concat_tables(parts) if parts else schema.empty_table()
    for split in plan.splits:
        for i, f in enumerate(split.files):
            deletion = split.deletion_files[i] if split.deletion_files else None
            parts.extend(read_with_row_tracking(table.store, split.partition, split.bucket_path, f, deletion=deletion))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)
