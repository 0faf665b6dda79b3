"""Benchmark suite: paimon_core against pypaimon, pypaimon-rust and a plain-pyarrow floor.

Run ``python -m bench.run --help``. Layout:

* :mod:`bench.run` - the command line: selects cases, prints the table, writes JSON/Markdown.
* :mod:`bench.cases` - what each case measures, its sizes and its expected answer
  (:mod:`bench.cases_pk` primary-key, :mod:`bench.cases_maint` expiry / orphan clean,
  :mod:`bench.cases_spark` Spark ingest).
* :mod:`bench.fixtures` - input Parquet files and pre-built tables (made once, cached).
* :mod:`bench.runner` - one fresh subprocess per side and measurement; medians; verification.
* :mod:`bench.report` - machine info, the text/Markdown table, the JSON document.
* :mod:`bench.sidekit` - stdlib + pyarrow helpers shared by every side (timer, RSS, checksum).
* :mod:`bench.ours_ops`, :mod:`bench.floor_ops`, ``bench/peer_ops.py``, :mod:`bench.spark_ops` -
  the operations of each side; ``peer_ops.py`` runs inside the peer virtualenv (pyarrow 19,
  pypaimon), ``spark_ops`` starts a local Spark session.
"""

from __future__ import annotations
