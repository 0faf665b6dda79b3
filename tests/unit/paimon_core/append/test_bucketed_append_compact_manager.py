"""Fixed-bucket append compaction picking: Java's ``BucketedAppendCompactManagerTest`` ported
(same files, same expected picks and leftovers), plus the full-compaction rules."""

from __future__ import annotations

import pytest

from paimon_core.append import FULL_COMPACT_MIN_FILE, pick_compact_before, pick_full_compaction
from paimon_core.manifest.entries import DataFileMeta

MIN_FILE_NUM = 4
TARGET = 1024


def f(min_seq: int, max_seq: int) -> DataFileMeta:
    """Java ``DataFileTestUtils.newFile(minSeq, maxSeq)``: size = maxSeq - minSeq + 1."""
    size = max_seq - min_seq + 1
    return DataFileMeta.new_level0(
        f"data-{min_seq}-{max_seq}.parquet",
        size,
        size,
        value_stats=None,
        min_sequence_number=min_seq,
        max_sequence_number=max_seq,
        schema_id=0,
    ).copy(creation_time=100)  # Java: Timestamp.fromEpochMillis(100); equal inputs, equal metas


# (files before the pick, expected pick or None, files still waiting afterwards)
JAVA_CASES = [
    # testPickEmptyAndNotRelease: 1~50 is small enough, so hold it
    ([(1, 50)], None, [(1, 50)]),
    # testPickEmptyAndRelease: a large file is released
    ([(1, 2048)], None, []),
    # small file at last: release previous
    ([(1, 2048), (2049, 2100)], None, [(2049, 2100)]),
    ([(1, 2048), (2049, 2100), (2101, 2110)], None, [(2049, 2100), (2101, 2110)]),
    ([(1, 2048), (2049, 4096), (4097, 5000)], None, [(4097, 5000)]),
    (
        [(1, 1024), (1025, 2049), (2050, 2500), (2501, 4096), (4097, 6000), (6001, 7000), (7001, 7600)],
        None,
        [(6001, 7000), (7001, 7600)],
    ),
    # ignore single small file (in the middle)
    ([(1, 2048), (2049, 4096), (4097, 4100), (4101, 6150)], None, [(4101, 6150)]),
    ([(1, 2048), (2049, 4096), (4097, 5000), (5001, 6144), (6145, 7048)], None, [(6145, 7048)]),
    # wait for more files
    ([(1, 500), (501, 1000)], None, [(1, 500), (501, 1000)]),
    ([(1, 500), (501, 1000), (1001, 2048)], None, [(501, 1000), (1001, 2048)]),
    ([(1, 2050), (2051, 2100), (2101, 2110)], None, [(2051, 2100), (2101, 2110)]),
    # (not in Java's test) enough small files: the first min.file-num are picked, the rest waits
    ([(1, 10), (11, 20), (21, 30), (31, 40), (41, 50)], [(1, 10), (11, 20), (21, 30), (31, 40)], [(41, 50)]),
    # (not in Java's test) a big one slides out, then four small ones fill the unit
    ([(1, 2048), (2049, 2060), (2061, 2070), (2071, 2080), (2081, 2090)], [(2049, 2060), (2061, 2070), (2071, 2080), (2081, 2090)], []),
]


@pytest.mark.parametrize(("before", "picked", "after"), JAVA_CASES)
def test_java_pick_compact_before(
    before: list[tuple[int, int]], picked: list[tuple[int, int]] | None, after: list[tuple[int, int]]
) -> None:
    result = pick_compact_before([f(*r) for r in before], min_file_num=MIN_FILE_NUM, target_file_size=TARGET)
    assert result.picked == (None if picked is None else tuple(f(*r) for r in picked))
    assert result.remaining == tuple(f(*r) for r in after)


def test_pick_orders_by_min_sequence_number() -> None:
    files = [f(31, 40), f(1, 10), f(21, 30), f(11, 20)]
    result = pick_compact_before(files, min_file_num=MIN_FILE_NUM, target_file_size=TARGET)
    assert result.picked == (f(1, 10), f(11, 20), f(21, 30), f(31, 40))


SMALL = TARGET // 10 * 7  # Java test: compactionFileSize = target / 10 * 7


@pytest.mark.parametrize(
    ("files", "kwargs", "expected"),
    [
        # below FULL_COMPACT_MIN_FILE without deletion vectors: nothing
        ([(1, 10), (11, 20)], {}, []),
        ([], {"deletion_vectors_enabled": True}, []),
        # leading big files stay; small ones outnumber the big ones left
        ([(1, 1024), (1025, 1030), (1031, 1040), (1041, 1050)], {}, [(1025, 1030), (1031, 1040), (1041, 1050)]),
        # big files are not only leading: small (2) do not outnumber big (2) -> nothing
        ([(1, 10), (11, 2000), (2001, 3000), (3001, 3010)], {}, []),
        ([(1, 10), (11, 2000), (2001, 2010), (2011, 2020)], {}, [(1, 10), (11, 2000), (2001, 2010), (2011, 2020)]),
        # fewer than three left after dropping leading big files -> nothing
        ([(1, 1024), (1025, 2048), (2049, 2050), (2051, 2060)], {}, []),
        # deletion vectors enabled: whatever is left after leading big files, even one file
        ([(1, 1024), (1025, 1030)], {"deletion_vectors_enabled": True}, [(1025, 1030)]),
        # a big file with a deletion vector stops the skipping
        (
            [(1, 1024), (1025, 2048)],
            {"deletion_vectors_enabled": True, "with_deletion_vector": {"data-1-1024.parquet"}},
            [(1, 1024), (1025, 2048)],
        ),
        # force-rewrite-all-files: everything, even a single big file
        ([(1, 1024)], {"force_rewrite_all_files": True}, [(1, 1024)]),
    ],
)
def test_pick_full_compaction(files: list[tuple[int, int]], kwargs: dict[str, object], expected: list[tuple[int, int]]) -> None:
    got = pick_full_compaction([f(*r) for r in files], compaction_file_size=SMALL, **kwargs)  # type: ignore[arg-type]
    assert got == tuple(f(*r) for r in expected)
    assert FULL_COMPACT_MIN_FILE == 3
