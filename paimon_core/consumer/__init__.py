"""Consumers: per-reader progress files that fence snapshot expiry."""
