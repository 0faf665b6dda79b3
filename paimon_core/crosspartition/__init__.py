"""Cross-partition upsert: primary keys that do not contain every partition key (bucket = -1).

Mirrors Java's ``org.apache.paimon.crosspartition``: :mod:`.index_bootstrap` reads the key ->
(partition, bucket) index from the table, :mod:`.existing_processor` decides what happens to a
key that already lives in another partition, and :mod:`.global_index_assigner` routes whole
Arrow batches with joins (no per-row Python).
"""

from __future__ import annotations
