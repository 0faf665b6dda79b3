"""Thin root conftest: fixtures live in tests/fixtures/."""

from __future__ import annotations

pytest_plugins = ["tests.fixtures.tables"]
