"""Create field aggregators by Java identifier, with Java's type checks and options."""

from __future__ import annotations

from collections.abc import Mapping

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.aggregators import (
    BoolAndAggregator,
    BoolOrAggregator,
    FieldAggregator,
    FirstNonNullValueAggregator,
    FirstValueAggregator,
    LastNonNullValueAggregator,
    LastValueAggregator,
    MaxAggregator,
    MinAggregator,
)
from paimon_core.mergetree.collection_aggregators import (
    CollectAggregator,
    ListaggAggregator,
    MergeMapAggregator,
)
from paimon_core.mergetree.merge_options import (
    AGGREGATE_FUNCTION,
    AGGREGATION_REMOVE_RECORD_ON_DELETE,
    DISTINCT,
    FIELDS_DEFAULT_AGG_FUNC,
    IGNORE_RETRACT,
    LIST_AGG_DELIMITER,
    field_option,
    get_bool,
)
from paimon_core.mergetree.numeric_aggregators import ProductAggregator, SumAggregator
from paimon_core.schema.data_types import (
    ArrayType,
    BooleanType,
    DataField,
    MapType,
    RowType,
    VarCharType,
    is_numeric,
)

__all__ = ["SUPPORTED_FUNCTIONS", "UNSUPPORTED_FUNCTIONS", "agg_option_key", "create_field_aggregator"]

_SIMPLE: dict[str, type[FieldAggregator]] = {
    "sum": SumAggregator,
    "product": ProductAggregator,
    "max": MaxAggregator,
    "min": MinAggregator,
    "last_value": LastValueAggregator,
    "last_non_null_value": LastNonNullValueAggregator,
    "first_value": FirstValueAggregator,
    "first_non_null_value": FirstNonNullValueAggregator,
    "first_not_null_value": FirstNonNullValueAggregator,  # Java's legacy name
    "bool_and": BoolAndAggregator,
    "bool_or": BoolOrAggregator,
    "merge_map": MergeMapAggregator,
}
#: Aggregate functions paimon_core implements.
SUPPORTED_FUNCTIONS = frozenset({*_SIMPLE, "listagg", "collect"})
#: Valid in Java but not implemented here yet (bitmaps, sketches, nested tables).
UNSUPPORTED_FUNCTIONS = frozenset(
    {
        "rbm32",
        "rbm64",
        "hll_sketch",
        "theta_sketch",
        "nested_update",
        "nested_partial_update",
        "merge_map_with_keytime",
    }
)


def agg_option_key(options: Mapping[str, str], field: str) -> str:
    """The option that sets ``field``'s function: its own, else the table default."""
    own = f"fields.{field}.{AGGREGATE_FUNCTION}"
    return own if own in options else FIELDS_DEFAULT_AGG_FUNC


def _check_type(field: DataField, function: str, key: str) -> None:
    t = field.type
    ok = True
    expected = ""
    if function in ("sum", "product"):
        ok, expected = is_numeric(t), "a numeric type (TINYINT..BIGINT, FLOAT, DOUBLE, DECIMAL)"
    elif function in ("max", "min"):
        ok, expected = not isinstance(t, (ArrayType, MapType, RowType)), "a comparable type"
    elif function in ("bool_and", "bool_or"):
        ok, expected = isinstance(t, BooleanType), "BOOLEAN"
    elif function == "listagg":
        ok, expected = (
            isinstance(t, VarCharType) and t.length == VarCharType.MAX_LENGTH,
            "STRING (unbounded VARCHAR)",
        )
    elif function == "collect":
        ok, expected = isinstance(t, ArrayType), "ARRAY"
    elif function == "merge_map":
        ok, expected = isinstance(t, MapType), "MAP"
    if not ok:
        raise InvalidOptionError(
            f"Aggregate function '{function}' on field '{field.name}' needs {expected}, but the field is {t} "
            f"(option '{key}')",
            key=key,
        )


def create_field_aggregator(
    field: DataField, function: str, options: Mapping[str, str], *, option_key: str | None = None
) -> FieldAggregator:
    """The aggregator ``function`` for ``field`` (Java's ``FieldAggregatorFactory.create``).

    Reads ``fields.<f>.ignore-retract``, ``fields.<f>.list-agg-delimiter`` (default ``,``)
    and ``fields.<f>.distinct``. Unknown functions, wrong field types and
    ``ignore-retract`` together with ``aggregation.remove-record-on-delete`` raise
    :class:`InvalidOptionError` naming the option.
    """
    key = option_key or agg_option_key(options, field.name)
    name = function.strip().lower()
    if name in UNSUPPORTED_FUNCTIONS:
        raise InvalidOptionError(
            f"Aggregate function '{function}' (option '{key}') is not supported by paimon_core yet", key=key
        )
    if name not in SUPPORTED_FUNCTIONS:
        raise InvalidOptionError(
            f"Use unsupported aggregation: '{function}' or spell aggregate function incorrectly (option '{key}'); "
            f"supported: {', '.join(sorted(SUPPORTED_FUNCTIONS))}",
            key=key,
        )
    _check_type(field, name, key)
    retract_key = f"fields.{field.name}.{IGNORE_RETRACT}"
    ignore_retract = get_bool(options, retract_key)
    if ignore_retract and get_bool(options, AGGREGATION_REMOVE_RECORD_ON_DELETE):
        raise InvalidOptionError(
            f"{AGGREGATION_REMOVE_RECORD_ON_DELETE} and {retract_key} have conflicting behavior so should not be "
            "enabled at the same time.",
            key=retract_key,
        )
    distinct = get_bool(options, f"fields.{field.name}.{DISTINCT}")
    if name == "listagg":
        delimiter = field_option(options, field.name, LIST_AGG_DELIMITER)
        return ListaggAggregator(
            field,
            ignore_retract=ignore_retract,
            delimiter="," if delimiter is None else delimiter,
            distinct=distinct,
        )
    if name == "collect":
        return CollectAggregator(field, ignore_retract=ignore_retract, distinct=distinct)
    return _SIMPLE[name](field, ignore_retract=ignore_retract)
