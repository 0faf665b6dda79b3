"""Thin root conftest: fixtures live in tests/fixtures/.

Hypothesis runs derandomized (a fixed example sequence) unless ``HYPOTHESIS_PROFILE=explore``:
CI must not land or refuse a change on the luck of the draw. Run the explore profile
locally to search further; a failure it finds becomes an ``@example`` in the test.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=500, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

pytest_plugins = ["tests.fixtures.tables", "tests.fixtures.peers", "tests.fixtures.manifests"]
