"""Primary-key tables: merge engines (merge-on-read, compaction) and the merge-tree writer.

``create_merge_function(key_fields, value_fields, options)`` returns the table's merge
engine (``deduplicate``, ``first-row``, ``partial-update``, ``aggregation``); its
``merge(data, *, drop_retracts=True)`` folds one bucket's key-sorted rows into one row
per surviving key with whole-array Arrow/numpy operations.
"""

from __future__ import annotations

from paimon_core.mergetree.errors import MergeError
from paimon_core.mergetree.merge_function import MergeFunction, create_merge_function

__all__ = ["MergeError", "MergeFunction", "create_merge_function"]
