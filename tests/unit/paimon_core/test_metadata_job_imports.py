"""A driver-only metadata job on a local table imports neither Spark nor the heavy optional stacks.

An Airflow task pays the whole process: ``python -m spark_jobs expire_snapshots`` must not load
pyspark/py4j, pandas (pulled in by pyarrow's first conversion of Python objects and by
``pyarrow.dataset``) or fsspec (remote storage only). The import time itself is measured in
``bench/`` (``expire_process_1000_snapshots``), not asserted here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from paimon_core import FileSystemCatalog
from tests.fixtures.tables import sample_rows

REPO = Path(__file__).resolve().parents[3]


def test_expire_job_process_stays_light(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    catalog = FileSystemCatalog(wh)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.t", sample_rows(1).schema)
    for k in range(3):
        table.write_arrow(sample_rows(2, start=2 * k))
    script = (
        "import sys\n"
        "from spark_jobs.__main__ import main\n"
        f"rc = main(['expire_snapshots', '--warehouse', {wh!r}, '--table', 'db.t', '--retain-max', '1',"
        " '--retain-min', '1', '--older-than', '4102444800000'])\n"
        "heavy = ('pyspark', 'py4j', 'pandas', 'fsspec', 'pyarrow.dataset')\n"
        "loaded = sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy[:4])\n"
        "assert not loaded, loaded\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"status":"ok"' in proc.stdout.replace(" ", "")
    assert FileSystemCatalog(wh).get_table("db.t").snapshot_manager.earliest_snapshot_id() == 3
