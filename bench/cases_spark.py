"""Spark ingest cases: the ``paimon`` Spark data source against ``df.write.parquet`` (the floor).

``spark_ingest_append_10m`` / ``spark_ingest_pk_10m``: 10M generated rows (``bench.spark_ops``)
through ``spark_jobs.ingest`` into a new append table / primary-key table (``id``, 4 buckets),
against Spark's own Parquet writer on the same DataFrame. The plain cases use ingest's default
writer (``auto``: Spark's own Parquet writer + a driver commit, see
``spark_jobs/datasource/native_write.py``); the ``*_datasource`` cases force the ``paimon``
Python data source (every row crosses from the JVM to a Python worker). Each run is a fresh process with its
own local Spark session (``local[2]``), warmed up in-process by a smaller write first; only the
write is timed. Full size only (or by name); needs pyspark and a Java runtime, else SKIPPED.

``spark_ingest_pk_10m_vs_layout`` runs the same primary-key ingest against a second floor:
Spark's writer on the physical layout of a primary-key file (routed by bucket, key and system
columns, sorted by key; ``bench.spark_ops._pk_layout``). The first floor measures the cost of
the format (a shuffle, a sort, seven columns instead of four); this one, the cost of our layer
on top of it (Paimon's bucket function, stats, the commit).

The written rows are checked neutrally: the table's data files (or the floor's part files)
read with plain pyarrow, primary-key files merged by sequence number.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any, ClassVar

from bench import fixtures
from bench.cases import FLOOR, OURS, PYPAIMON, RUST, Case, Context, Verdict, check_snapshot
from bench.cases_pk import check_buckets
from bench.sidekit import compare_checksums, table_checksum

BUCKETS = 4
#: Targets of the Spark layer: ours / floor at most this (wall time of the write).
TARGETS = {"append": 1.3, "pk": 2.0}


def spark_problem() -> str | None:
    """Why a local Spark session cannot start here (None: it can)."""
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install -e '.[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    if not (shutil.which("java") or (java_home and Path(java_home, "bin", "java").exists())):
        return "no Java runtime (java on PATH or JAVA_HOME)"
    return None


class SparkIngest(Case):
    """Ingest N rows with Spark into a new append or primary-key table."""

    sides = (OURS, FLOOR)
    full_only = True
    not_applicable: ClassVar[dict[str, str]] = {
        PYPAIMON: "no Spark data source in the peer venv (Paimon's own is the Java connector)",
        RUST: "no Spark data source in the peer venv",
    }

    def __init__(self, name: str, *, primary_key: bool, writer: str = "auto", floor: str = "plain") -> None:
        super().__init__()
        self.name = name
        self.mode = "pk" if primary_key else "append"
        self.writer = writer
        self.floor = floor  # "plain": df.write.parquet; "pk_layout": the same on a PK file's layout

    def unavailable(self, ctx: Context) -> str | None:
        return spark_problem()

    def setup(self, ctx: Context) -> None:
        from bench.spark_ops import source_checksum

        self.rows = ctx.p["rows_10m"]
        self.warmup_rows = min(200_000, max(1_000, self.rows // 10))
        self.expected = source_checksum(self.rows)
        kind = f"a primary-key table (id, {BUCKETS} buckets; rows routed by bucket)" if self.mode == "pk" \
            else "an append table"
        self.params = {"rows": self.rows, "mode": self.mode, "master": "local[2]", "source_partitions": 2, "writer": self.writer,
                       "in_process_warmup_rows": self.warmup_rows,
                       "target_ours_over_floor": TARGETS[self.mode] if self.floor == "plain" else None}
        how = "the paimon data source" if self.writer == "datasource" else "Spark's Parquet writer + driver commit"
        if self.floor == "pk_layout":
            floor = ("df.write.parquet of the same DataFrame laid out as a primary-key file (repartitionById "
                     f"to {BUCKETS} tasks by Spark's hash, _KEY_id/_SEQUENCE_NUMBER/_VALUE_KIND + values, sorted by key, "
                     "zstd): the physical work of the format, without Paimon's bucket function, stats or commit")
            target = "no target (how far ours is from Spark doing the format's work)"
        else:
            floor = "df.write.parquet of the same DataFrame"
            target = f"Target: ours/floor <= {TARGETS[self.mode]}x"
        self.params["floor"] = self.floor
        self.description = (f"Spark (local[2]): ingest {self.rows} generated rows with spark_jobs.ingest "
                            f"(--writer {self.writer}: {how}) into {kind}; floor: {floor}. "
                            f"{target}. Peak RSS: driver + JVM + Python workers")

    def prepare(self, side: str, run_dir: Path) -> dict[str, Any]:
        run_dir.mkdir(parents=True)
        floor = "floor_pk_layout" if self.floor == "pk_layout" else "floor"
        return {"module": "bench.spark_ops", "op": "ingest", "mode": floor if side == FLOOR else self.mode,
                "rows": self.rows, "bucket": BUCKETS, "partitions": 2, "out": str(run_dir), "writer": self.writer,
                "warmup_rows": self.warmup_rows}

    def verify(self, side: str, run_dir: Path, result: dict[str, Any]) -> Verdict:
        problems: list[str] = []
        if side == FLOOR:
            files = sorted((run_dir / "floor").glob("*.parquet"))
            got = table_checksum(fixtures.read_files(files))
        else:
            tdir = fixtures.table_dir(str(run_dir / "wh"))
            files = fixtures.data_files(tdir)
            problems += check_snapshot(fixtures.snapshots(tdir), 1, self.rows, self.rows)
            if self.mode == "pk":
                problems += check_buckets(files, self.rows)
                got = table_checksum(fixtures.read_pk_files(files))
            else:
                got = table_checksum(fixtures.read_files(files))
        problems += compare_checksums(self.expected, got)
        return Verdict(got, problems, {"files_written": len(files), "bytes_written": fixtures.dir_bytes(files),
                                       "spark_tree_hwm_mb": result.get("spark_tree_hwm_mb"),
                                       "driver_peak_rss_mb": result.get("driver_peak_rss_mb")})
