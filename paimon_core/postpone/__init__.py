"""Postpone-bucket tables (``bucket = -2``): the writer of ``bucket-postpone`` (Java's
``org.apache.paimon.postpone``). Their compaction is
:mod:`paimon_core.operation.compact.postpone_bucket_compact`."""
