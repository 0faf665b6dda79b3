"""Triggers."""
