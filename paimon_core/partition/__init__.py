"""Partitions: time extraction, expiry strategies and mark-done actions (Java's ``org.apache.paimon.partition``)."""

from __future__ import annotations
