"""Shared plumbing of the Spark jobs: argument parsing, the Spark session, the JSON result line."""
