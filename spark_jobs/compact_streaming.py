"""``compact --streaming``: the job side of :class:`~paimon_core.operation.compact.streaming_compact.StreamingCompaction`.

Signals: the first SIGTERM or SIGINT sets the stop event (the current round finishes and commits,
then the job prints its JSON line and exits 0); a second one raises ``KeyboardInterrupt``, which
abandons the round in progress (its files are deleted unless its commit landed). The previous
handlers are restored when the run ends. Handlers can only be installed from the main thread; a
run on another thread (tests) is stopped through its stop event.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import FrameType
from typing import Any

from paimon_core.operation.compact.compact_planner import CompactRequest
from paimon_core.operation.compact.streaming_compact import DEFAULT_DISCOVERY_INTERVAL_MS, StreamingCompaction
from paimon_core.operation.compact.table_compact import TaskExecutor
from paimon_core.table.table import FileStoreTable
from paimon_core.utils.time_util import to_duration_millis
from spark_jobs.common.procedure import ProcedureArgs, result_dict

__all__ = ["discovery_interval_ms", "run_streaming", "stop_on_signals"]

logger = logging.getLogger(__name__)

#: Flink's source option for how often a streaming source looks for new snapshots.
DISCOVERY_INTERVAL_OPTION = "continuous.discovery-interval"


def discovery_interval_ms(table: FileStoreTable, given: str | None) -> int:
    """``--discovery_interval``, else the table's ``continuous.discovery-interval``, else 10 s."""
    if given is not None:
        return to_duration_millis(given, name="discovery_interval")
    option = table.options.get(DISCOVERY_INTERVAL_OPTION)
    if option is not None:
        return to_duration_millis(option, name=DISCOVERY_INTERVAL_OPTION)
    return DEFAULT_DISCOVERY_INTERVAL_MS


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """While inside: SIGTERM/SIGINT set ``stop``; a second one raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if stop.is_set():
            logger.warning("%s again: abandoning the current round", name)
            raise KeyboardInterrupt(name)
        logger.warning("%s: stopping after the current round", name)
        stop.set()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def run_streaming(
    table: FileStoreTable, args: ProcedureArgs, request: CompactRequest, executor: TaskExecutor
) -> Mapping[str, Any]:
    idle = args.get("idle_timeout")
    stop = threading.Event()
    job = StreamingCompaction(
        table.store,
        request=request,
        commit_user=args.get("commit_user"),
        executor=executor,
        discovery_interval_ms=discovery_interval_ms(table, args.get("discovery_interval")),
        max_rounds=args.get("max_rounds"),
        idle_timeout_ms=None if idle is None else to_duration_millis(idle, name="idle_timeout"),
        stop_event=stop,
    )
    logger.info(
        "Streaming compaction of %s as %s every %d ms", table.name, job.commit_user, job.discovery_interval_ms
    )
    with stop_on_signals(stop):
        result = job.run()
    return {**result_dict(result), "streaming": True}
