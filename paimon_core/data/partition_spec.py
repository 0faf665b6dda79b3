"""Values of a static partition spec (``{"dt": "2024-01-01", "q": "2"}``) as internal values.

A spec reaches the write builder from Python (typed values) or as text: the CLI's
``--overwrite-partition q=2``, a Spark job's arguments, an Airflow ``Param``, the datasource's
``overwrite-partition`` option. Text is parsed by the partition column's type, as Java's
``TypeUtils.castFromString`` parses a partition path value (INT ``2``, BOOLEAN ``true``, DATE
``2024-01-01``, TIMESTAMP ``2024-01-01 10:00:00``, DECIMAL ``1.50`` ...); the table's
``partition.default-name`` stands for null, as in a partition path.
"""

from __future__ import annotations

from paimon_core.data.internal import partition_string_to_value, to_internal
from paimon_core.exceptions import InvalidArgumentError
from paimon_core.schema.data_types import CharType, DataType, VarCharType

__all__ = ["partition_spec_value"]


def partition_spec_value(value: object, t: DataType, *, column: str, default_partition_name: str) -> object:
    """The internal value of partition column ``column`` (type ``t``) given as ``value``:
    InvalidArgumentError naming the column, the value and the type when it does not parse."""
    if value is None or value == default_partition_name:
        return None
    try:
        if isinstance(value, str) and not isinstance(t, (CharType, VarCharType)):
            return partition_string_to_value(value.strip(), t)
        return to_internal(value, t)
    except InvalidArgumentError as e:
        raise InvalidArgumentError(
            f"Partition value {column}={value!r} does not fit the partition column's type {t}: {e}",
            column=column,
            value=repr(value),
            type=str(t),
        ) from None
