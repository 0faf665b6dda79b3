"""Table indexes: HASH indexes of dynamic-bucket tables (deletion vectors live in deletionvectors/)."""

from __future__ import annotations
