"""Postpone-bucket tables (``bucket = -2``): the writer of ``bucket-postpone`` (Java's
``org.apache.paimon.postpone``). Their compaction is
:mod:`paimon_core.table.postpone_bucket_compact` (bucket numbers: :mod:`.postpone_utils`)."""
