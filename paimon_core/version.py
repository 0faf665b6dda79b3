"""Package version, and the writer version stamped into snapshots."""

from __future__ import annotations

__version__ = "0.1.0"
WRITER_VERSION = f"paimon-py-{__version__}"
