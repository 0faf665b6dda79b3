"""Paimon's data-file index (Java's ``org.apache.paimon.fileindex``): per-file indexes over
chosen columns, written with each data file and used to skip files a predicate cannot match.

* :mod:`.file_index_options`: the ``file-index.*`` options (Java's ``FileIndexOptions``) and
  their validation (``SchemaValidation.validateFileIndex``);
* :mod:`.java_compat`: Java's ``HashMap`` order, ``String.hashCode`` and modified UTF-8, which
  the bytes depend on;
* :mod:`.file_index_format`: the container of a file's indexes (``FileIndexFormat``);
* :mod:`.bloomfilter`: the bloom-filter index (``BloomFilterFileIndex``, ``FastHash``,
  ``BloomFilter64``), byte for byte as Java writes it;
* :mod:`.bitmap`: the bitmap index (``BitmapFileIndex``, its V1/V2 metas, ``RoaringBitmap32``'s
  serialization), byte for byte as Java writes it;
* :mod:`.data_file_index_writer`: a data file's index, embedded in the manifest or in a
  ``.index`` file next to it (``DataFileIndexWriter``);
* :mod:`.file_index_predicate` / :mod:`.file_index_evaluator`: testing a predicate on a file's
  index (``FileIndexPredicate``, ``FileIndexEvaluator``);
* :mod:`.file_index_processor`: rebuilding the index of an existing file (``FileIndexProcessor``,
  used by ``rewrite_file_index``).
"""

from __future__ import annotations

from paimon_core.fileindex.data_file_index_writer import (
    INDEX_PATH_SUFFIX,
    DataFileIndexResult,
    DataFileIndexWriter,
    file_index_options_of,
)
from paimon_core.fileindex.file_index_evaluator import FileIndexEvaluator, file_index_read_enabled
from paimon_core.fileindex.file_index_options import FileIndexColumn, FileIndexOptions, check_file_index
from paimon_core.fileindex.file_index_result import REMAIN, SKIP, FileIndexResult

__all__ = [
    "INDEX_PATH_SUFFIX",
    "REMAIN",
    "SKIP",
    "DataFileIndexResult",
    "DataFileIndexWriter",
    "FileIndexColumn",
    "FileIndexEvaluator",
    "FileIndexOptions",
    "FileIndexResult",
    "check_file_index",
    "file_index_options_of",
    "file_index_read_enabled",
]
