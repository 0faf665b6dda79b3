"""The bloom-filter file index (Java's ``org.apache.paimon.fileindex.bloomfilter``)."""
