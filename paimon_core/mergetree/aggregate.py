"""The ``aggregation`` engine (Java's ``AggregateMergeFunction``), vectorized.

Each value field folds the key's rows with its aggregate function:
``fields.<f>.aggregate-function``, else ``fields.default-aggregate-function``, else
``last_non_null_value``; ``sequence.field`` fields use ``last_value`` and key fields keep
the key. Inserts (+I/+U) ``agg``, retractions (-U/-D) ``retract`` (an error for
functions that cannot retract unless ``fields.<f>.ignore-retract``). With
``aggregation.remove-record-on-delete`` a ``-D`` replaces the accumulator with the
delete row's values and marks the key deleted until a later row arrives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidOptionError
from paimon_core.mergetree.agg_factory import agg_option_key, create_field_aggregator
from paimon_core.mergetree.aggregators import OP_AGG, OP_RETRACT, OP_SKIP, FieldAggregator
from paimon_core.mergetree.base import DELETE, INSERT, Int8Array, KeyedMergeFunction, RunResult, is_retract
from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_options import (
    AGGREGATE_FUNCTION,
    AGGREGATION_REMOVE_RECORD_ON_DELETE,
    FIELDS_DEFAULT_AGG_FUNC,
    IGNORE_RETRACT,
    field_option,
    get_bool,
)
from paimon_core.mergetree.segments import Segments, to_array
from paimon_core.schema.data_types import DataField

__all__ = ["AggregateMergeFunction"]


class AggregateMergeFunction(KeyedMergeFunction):
    """Java's ``AggregateMergeFunction`` over Arrow (see the module docstring)."""

    #: ``agg(null, v)`` is not always ``v`` (blank listagg strings, distinct collect), so a lone
    #: insert is passed through untouched like Java's ``ReducerMergeFunctionWrapper`` does.
    single_insert_is_identity = False

    def __init__(
        self,
        key_fields: Sequence[DataField],
        value_fields: Sequence[DataField],
        options: Mapping[str, str],
        *,
        sequence_fields: Sequence[str] = (),
    ) -> None:
        super().__init__(key_fields, value_fields)
        self.remove_on_delete = get_bool(options, AGGREGATION_REMOVE_RECORD_ON_DELETE)
        self.aggregators: dict[str, FieldAggregator] = {}
        for f in value_fields:
            retract_key = f"fields.{f.name}.{IGNORE_RETRACT}"
            if f.name in self.key_names:
                if self.remove_on_delete and get_bool(options, retract_key):
                    raise InvalidOptionError(
                        f"{AGGREGATION_REMOVE_RECORD_ON_DELETE} and {retract_key} have conflicting behavior so "
                        "should not be enabled at the same time.",
                        key=retract_key,
                    )
                continue
            if f.name in sequence_fields:
                function, key = "last_value", f"fields.{f.name}.{AGGREGATE_FUNCTION}"
            else:
                function = (
                    field_option(options, f.name, AGGREGATE_FUNCTION)
                    or options.get(FIELDS_DEFAULT_AGG_FUNC)
                    or "last_non_null_value"
                )
                key = agg_option_key(options, f.name)
            self.aggregators[f.name] = create_field_aggregator(f, function, options, option_key=key)
        self.not_null = [f.name for f in value_fields if not f.type.nullable and f.name not in self.key_names]

    def _merge_runs(self, data: pa.Table, seg: Segments, kinds: Int8Array) -> RunResult:
        retract = is_retract(kinds)
        if self.remove_on_delete:
            reset = np.asarray(kinds == DELETE, dtype=np.bool_)
            for name in self.not_null:
                col = to_array(data.column(name))
                if (
                    col.null_count
                    and (reset & np.asarray(pc.is_null(col).to_numpy(zero_copy_only=False))).any()
                ):
                    raise MergeError(f"Field {name} can not be null", field=name)
        else:
            reset = np.zeros(seg.n, dtype=np.bool_)
        ops = np.where(reset, OP_SKIP, np.where(retract, OP_RETRACT, OP_AGG)).astype(np.int8)
        columns = {
            name: aggregator.fold(to_array(data.column(name)), seg, ops, reset)
            for name, aggregator in self.aggregators.items()
            if name in data.column_names
        }
        out_kinds = np.where(reset[seg.ends - 1], DELETE, INSERT).astype(np.int8)
        return RunResult(kinds=out_kinds, keep=np.ones(seg.count, np.bool_), columns=columns)
