"""The maintenance ledger: one row per maintenance action, kept as the Paimon table
``paimon_maintenance.ledger`` of the warehouse (see README "The maintenance ledger").

* :mod:`~paimon_core.ledger.record`: :class:`LedgerRecord` and the table's schema and options;
* :mod:`~paimon_core.ledger.ledger`: :class:`Ledger` (exists / ensure / append / read);
* :mod:`~paimon_core.ledger.recorder`: :func:`record_action`, :func:`ledger_context`;
* :mod:`~paimon_core.ledger.metrics`: a row's status and metrics from an action's result;
* :mod:`~paimon_core.ledger.spool`: records whose write failed, kept locally until the next write.
"""

from __future__ import annotations

from paimon_core.ledger.ledger import Ledger, LedgerWriteError
from paimon_core.ledger.record import (
    ACTIONS,
    COMPACTION_ACTIONS,
    ENTRY_POINTS,
    LEDGER_DATABASE,
    LEDGER_OPTIONS,
    LEDGER_SCHEMA,
    LEDGER_TABLE,
    STATUSES,
    LedgerRecord,
)
from paimon_core.ledger.recorder import (
    ActionRecording,
    current_recording,
    deferred_ledger,
    ledger_context,
    ledger_disabled,
    record_action,
)

__all__ = [
    "ACTIONS",
    "COMPACTION_ACTIONS",
    "ENTRY_POINTS",
    "LEDGER_DATABASE",
    "LEDGER_OPTIONS",
    "LEDGER_SCHEMA",
    "LEDGER_TABLE",
    "STATUSES",
    "ActionRecording",
    "Ledger",
    "LedgerRecord",
    "LedgerWriteError",
    "current_recording",
    "deferred_ledger",
    "ledger_context",
    "ledger_disabled",
    "record_action",
]
