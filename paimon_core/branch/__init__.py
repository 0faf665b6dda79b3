"""Branches of a table (Java's ``BranchManager`` / ``FileSystemBranchManager``)."""
