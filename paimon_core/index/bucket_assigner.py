"""Dynamic bucket assignment (Paimon's ``PartitionIndex`` / ``HashBucketAssigner``), vectorized.

A key hash already in the partition's index keeps its bucket. New hashes, in order of
arrival, fill the buckets holding fewer than ``dynamic-bucket.target-row-num`` keys
(ascending bucket id), then open new buckets (the smallest free ids). Once
``dynamic-bucket.max-buckets`` is reached, new keys go to a random existing bucket, as in
Java. Work is per bucket, never per row.

``dynamic-bucket.initial-buckets`` = K models Java's K parallel assigners
(``BucketAssigner.computeAssigner`` with K channels): a key goes to assigner
``(abs(partitionHash % K) + abs(keyHash % K)) % K`` and that assigner only fills and opens
the buckets ``b`` with ``b % K == assigner`` (``BucketAssigner.isMyBucket``). A partition
therefore starts with up to K buckets, exactly as a Java job with K assigners would lay it
out, and any later writer (Java, pypaimon) keeps every key where the HASH index says it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from paimon_core.exceptions import InvalidArgumentError, InvalidOptionError

SHORT_MAX = 32767
#: ``dynamic-bucket.max-buckets`` upper bound: bucket ids are Java shorts.
MAX_DYNAMIC_BUCKETS = SHORT_MAX + 1

TARGET_ROW_NUM = "dynamic-bucket.target-row-num"
TARGET_ROW_NUM_DEFAULT = 2_000_000
INITIAL_BUCKETS = "dynamic-bucket.initial-buckets"
MAX_BUCKETS = "dynamic-bucket.max-buckets"

I32 = npt.NDArray[np.int32]


@dataclass(frozen=True)
class DynamicBucketConfig:
    """The validated ``dynamic-bucket.*`` options of one table."""

    target_row_num: int = TARGET_ROW_NUM_DEFAULT
    max_buckets: int = -1
    #: Number of modelled Java assigners (``initial-buckets``; 1 when unset).
    num_assigners: int = 1

    @staticmethod
    def from_options(options: Mapping[str, str]) -> DynamicBucketConfig:
        """Parse and check the options; InvalidOptionError names the bad one and the fix."""

        from paimon_core.options_validation import parse_int_option

        def _int(key: str, default: int) -> int:
            raw = options.get(key)
            return default if raw is None else parse_int_option(key, raw)  # Java range, minimum

        target = _int(TARGET_ROW_NUM, TARGET_ROW_NUM_DEFAULT)  # >= 1
        max_buckets = _int(MAX_BUCKETS, -1)
        if max_buckets != -1 and not 1 <= max_buckets <= MAX_DYNAMIC_BUCKETS:
            raise InvalidOptionError(
                f"Option '{MAX_BUCKETS}' must be -1 (unlimited) or between 1 and {MAX_DYNAMIC_BUCKETS}, "
                f"got {max_buckets}",
                key=MAX_BUCKETS,
            )
        initial = _int(INITIAL_BUCKETS, 1)
        if not 1 <= initial <= MAX_DYNAMIC_BUCKETS:
            raise InvalidOptionError(
                f"Option '{INITIAL_BUCKETS}' must be between 1 and {MAX_DYNAMIC_BUCKETS}, got {initial}",
                key=INITIAL_BUCKETS,
            )
        if max_buckets != -1 and initial > max_buckets:
            # Java's assigners above max-buckets own no bucket and fail at their first key.
            raise InvalidOptionError(
                f"Option '{INITIAL_BUCKETS}' ({initial}) exceeds '{MAX_BUCKETS}' ({max_buckets}): "
                f"lower '{INITIAL_BUCKETS}' or raise '{MAX_BUCKETS}'",
                key=INITIAL_BUCKETS,
            )
        return DynamicBucketConfig(target, max_buckets, initial)


def java_abs_mod(values: npt.NDArray[np.integer], n: int) -> npt.NDArray[np.int64]:
    """``Math.abs(v % n)`` with Java's truncating ``%`` (equals ``abs(v) mod n``)."""
    return np.abs(np.asarray(values, dtype=np.int64)) % n


def assigner_ids(partition_hash: int, key_hashes: I32, num_assigners: int) -> npt.NDArray[np.int64]:
    """Java's ``computeAssigner(partitionHash, keyHash, K, K)`` for every key hash."""
    if num_assigners == 1:
        return np.zeros(len(key_hashes), dtype=np.int64)
    start = abs(partition_hash) % num_assigners
    return (start + java_abs_mod(key_hashes, num_assigners)) % num_assigners


def group_indices(codes: npt.NDArray[np.integer]) -> list[tuple[int, npt.NDArray[np.int64]]]:
    """(code, row indices in input order) for every distinct code, codes ascending."""
    codes = np.asarray(codes)
    if len(codes) == 0:
        return []
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    uniq, starts = np.unique(sorted_codes, return_index=True)
    bounds = [*starts.tolist(), len(order)]
    return [(int(u), order[bounds[i] : bounds[i + 1]].astype(np.int64)) for i, u in enumerate(uniq)]


def fill_buckets(
    counts: dict[int, int],
    n: int,
    *,
    target: int,
    num_assigners: int = 1,
    assign_id: int = 0,
    max_buckets: int = -1,
    rng: np.random.Generator | None = None,
) -> I32:
    """Buckets of ``n`` new keys of one assigner, in arrival order; updates ``counts``.

    Mirrors ``PartitionIndex.assign`` steps 2-4 (and the cross-partition ``BucketAssigner``
    when ``max_buckets`` is -1): own buckets with room, ascending; then the smallest free
    own ids; past ``max_buckets`` a random own bucket.
    """
    parts: list[I32] = []
    remaining = n
    own = sorted(b for b in counts if b % num_assigners == assign_id)
    for b in own:
        room = target - counts[b]
        if room <= 0:
            continue
        take = min(room, remaining)
        parts.append(np.full(take, b, dtype=np.int32))
        counts[b] += take
        remaining -= take
        if remaining == 0:
            return np.concatenate(parts)
    limit = MAX_DYNAMIC_BUCKETS - 1 if max_buckets == -1 else max_buckets  # ids < limit
    candidate = assign_id
    while remaining > 0:
        while candidate in counts:
            candidate += num_assigners
        if candidate >= limit:
            if max_buckets == -1:
                raise InvalidArgumentError(
                    f"Too many dynamic buckets ({limit}): increase '{TARGET_ROW_NUM}' ({target})"
                )
            choices = np.array(sorted(b for b in counts if b % num_assigners == assign_id), dtype=np.int32)
            if len(choices) == 0:  # guarded by DynamicBucketConfig (initial-buckets <= max-buckets)
                raise InvalidArgumentError(f"Assigner {assign_id} owns no bucket below '{MAX_BUCKETS}' ({max_buckets})")
            picks = (rng or np.random.default_rng()).choice(choices, size=remaining).astype(np.int32)
            for b, c in zip(*np.unique(picks, return_counts=True), strict=True):
                counts[int(b)] += int(c)
            parts.append(picks)
            break
        take = min(target, remaining)
        parts.append(np.full(take, candidate, dtype=np.int32))
        counts[candidate] = take
        remaining -= take
    return np.concatenate(parts) if parts else np.empty(0, np.int32)


@dataclass
class PartitionIndex:
    """Known key hashes of one partition and the key count of each bucket."""

    hashes: I32  # sorted
    buckets: I32  # aligned with hashes
    counts: dict[int, int] = field(default_factory=dict)
    #: hashes added per bucket since loading (what the index files must gain)
    added: dict[int, list[I32]] = field(default_factory=dict)

    @staticmethod
    def load(per_bucket: Mapping[int, I32]) -> PartitionIndex:
        if per_bucket:
            hs = np.concatenate(list(per_bucket.values())).astype(np.int32)
            bs = np.concatenate([np.full(len(h), b, dtype=np.int32) for b, h in per_bucket.items()])
            order = np.argsort(hs, kind="stable")
            hs, bs = hs[order], bs[order]
        else:
            hs = np.empty(0, np.int32)
            bs = np.empty(0, np.int32)
        return PartitionIndex(hs, bs, {b: int(len(h)) for b, h in per_bucket.items()})

    def bucket_hashes(self, bucket: int) -> I32:
        """Every key hash of ``bucket`` (what its HASH index file holds)."""
        out: I32 = self.hashes[self.buckets == bucket]
        return out


class DynamicBucketAssigner:
    """Assigns buckets to key hashes, partition by partition (no IO)."""

    def __init__(
        self,
        *,
        target_row_num: int,
        max_buckets: int = -1,
        num_assigners: int = 1,
        seed: int | None = None,
    ) -> None:
        if target_row_num <= 0:
            raise InvalidArgumentError(f"{TARGET_ROW_NUM} must be > 0, got {target_row_num}")
        if num_assigners <= 0:
            raise InvalidArgumentError(f"{INITIAL_BUCKETS} must be > 0, got {num_assigners}")
        self.target = target_row_num
        self.max_buckets = max_buckets
        self.num_assigners = num_assigners
        self.rng = np.random.default_rng(seed)

    @staticmethod
    def from_config(config: DynamicBucketConfig, *, seed: int | None = None) -> DynamicBucketAssigner:
        return DynamicBucketAssigner(
            target_row_num=config.target_row_num,
            max_buckets=config.max_buckets,
            num_assigners=config.num_assigners,
            seed=seed,
        )

    def assign(self, index: PartitionIndex, hashes: I32, *, partition_hash: int = 0) -> I32:
        """Bucket of every hash (int32 array), updating ``index``."""
        hashes = np.asarray(hashes, dtype=np.int32)
        uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        out = np.empty(len(uniq), dtype=np.int32)
        if len(index.hashes):
            pos = np.searchsorted(index.hashes, uniq)
            safe = np.minimum(pos, len(index.hashes) - 1)
            found = (pos < len(index.hashes)) & (index.hashes[safe] == uniq)
            out[found] = index.buckets[safe[found]]
        else:
            found = np.zeros(len(uniq), bool)
        new_idx = np.nonzero(~found)[0]
        if len(new_idx):
            new_idx = new_idx[np.argsort(first[new_idx], kind="stable")]  # arrival order
            new_hashes = uniq[new_idx]
            assigned = np.empty(len(new_idx), dtype=np.int32)
            owners = assigner_ids(partition_hash, new_hashes, self.num_assigners)
            for owner, rows in group_indices(owners):
                assigned[rows] = fill_buckets(
                    index.counts,
                    len(rows),
                    target=self.target,
                    num_assigners=self.num_assigners,
                    assign_id=owner,
                    max_buckets=self.max_buckets,
                    rng=self.rng,
                )
            out[new_idx] = assigned
            for b in np.unique(assigned):
                index.added.setdefault(int(b), []).append(new_hashes[assigned == b])
            merged_h = np.concatenate([index.hashes, new_hashes])
            merged_b = np.concatenate([index.buckets, assigned])
            order = np.argsort(merged_h, kind="stable")
            index.hashes, index.buckets = merged_h[order], merged_b[order]
        result: I32 = out[inverse]
        return result
