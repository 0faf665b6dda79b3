"""The bitmap file index (Java's ``org.apache.paimon.fileindex.bitmap``)."""
