"""Test tools: table kinds for the compatibility matrix, and the README table generator."""
