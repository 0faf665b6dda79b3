"""Thin root conftest: fixtures live in tests/fixtures/.

Hypothesis runs derandomized (a fixed example sequence) unless ``HYPOTHESIS_PROFILE=explore``:
CI must not land or refuse a change on the luck of the draw. Run the explore profile
locally to search further; a failure it finds becomes an ``@example`` in the test.

Test order is random (pytest-randomly: modules, then the tests in each, shuffled; ``random``
reseeded before every test), so a test that passes only after some other test fails here. The
summary prints the seed that replays the order (``scripts/test.sh -p randomly --randomly-seed=N``;
``-p no:randomly`` for the file order) and the time spent in each layer of ``tests/``.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=500, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

pytest_plugins = ["tests.fixtures.tables", "tests.fixtures.peers", "tests.fixtures.manifests"]

_TESTS = Path(__file__).resolve().parent
_layer_seconds: dict[str, float] = defaultdict(float)
_layer_tests: dict[str, int] = defaultdict(int)


def _layer(nodeid: str) -> str:
    parts = Path(nodeid.split("::", 1)[0]).parts
    return parts[1] if len(parts) > 2 and parts[0] == _TESTS.name else "(root)"


_collected: dict[str, int] = {}


def pytest_itemcollected(item: pytest.Item) -> None:
    _collected.setdefault(item.nodeid, len(_collected))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the file order inside a module marked ``scenario``: its tests are the steps of one
    story on one expensive live server (Airflow's API server, scheduler and triggerer), each step
    starting from what the one before left. Such a module still runs at a random place. (Runs
    after every ``pytest_collection_modifyitems``, pytest-randomly's shuffle included.)"""
    items = session.items
    slots: dict[str, list[int]] = defaultdict(list)
    for pos, item in enumerate(items):
        if item.get_closest_marker("scenario") is not None:
            slots[item.nodeid.split("::", 1)[0]].append(pos)
    for positions in slots.values():
        in_order = sorted((items[p] for p in positions), key=lambda it: _collected.get(it.nodeid, 0))
        for p, item in zip(positions, in_order, strict=True):
            items[p] = item


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    layer = _layer(report.nodeid)
    _layer_seconds[layer] += report.duration
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _layer_tests[layer] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    seed = getattr(config.option, "randomly_seed", None)
    order = f"random, --randomly-seed={seed}" if seed is not None and config.pluginmanager.has_plugin("randomly") else "file order"
    terminalreporter.write_sep("-", f"test order: {order}")
    for layer in sorted(_layer_seconds, key=lambda k: -_layer_seconds[k]):
        terminalreporter.write_line(
            f"layer {layer:<12} {_layer_seconds[layer]:8.1f} s  {_layer_tests[layer]:5d} tests"
        )
