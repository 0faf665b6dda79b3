"""Dynamic bucket assignment (Paimon's PartitionIndex / HashBucketAssigner), vectorized.

A key hash already in the partition's index keeps its bucket. New hashes, in order
of arrival, fill the existing buckets that hold fewer than
``dynamic-bucket.target-row-num`` keys (ascending bucket id), then open new buckets
(the smallest free ids). Once ``dynamic-bucket.max-buckets`` is reached, new keys go
to a random existing bucket, as in Java. Work is per bucket, never per row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from paimon_core.exceptions import InvalidArgumentError

SHORT_MAX = 32767


@dataclass
class PartitionIndex:
    """Known key hashes of one partition and the key count of each bucket."""

    hashes: np.ndarray  # int32, sorted
    buckets: np.ndarray  # int32, aligned with hashes
    counts: dict[int, int] = field(default_factory=dict)
    #: hashes added per bucket since loading (what the index files must gain)
    added: dict[int, list[np.ndarray]] = field(default_factory=dict)

    @staticmethod
    def load(per_bucket: dict[int, np.ndarray]) -> PartitionIndex:
        if per_bucket:
            hs = np.concatenate(list(per_bucket.values())).astype(np.int32)
            bs = np.concatenate([np.full(len(h), b, dtype=np.int32) for b, h in per_bucket.items()])
            order = np.argsort(hs, kind="stable")
            hs, bs = hs[order], bs[order]
        else:
            hs = np.empty(0, np.int32)
            bs = np.empty(0, np.int32)
        return PartitionIndex(hs, bs, {b: int(len(h)) for b, h in per_bucket.items()})


class DynamicBucketAssigner:
    """Assigns buckets to key hashes, partition by partition."""

    def __init__(self, *, target_row_num: int, max_buckets: int = -1, seed: int | None = None) -> None:
        if target_row_num <= 0:
            raise InvalidArgumentError(f"dynamic-bucket.target-row-num must be > 0, got {target_row_num}")
        self.target = target_row_num
        self.max_buckets = max_buckets
        self.rng = np.random.default_rng(seed)

    def assign(self, index: PartitionIndex, hashes: np.ndarray) -> np.ndarray:
        """Bucket of every hash (int32 array), updating ``index``."""
        hashes = np.asarray(hashes, dtype=np.int32)
        uniq, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        out = np.empty(len(uniq), dtype=np.int32)
        pos = np.searchsorted(index.hashes, uniq)
        safe = np.minimum(pos, max(len(index.hashes) - 1, 0))
        found = (pos < len(index.hashes)) & (index.hashes[safe] == uniq) if len(index.hashes) else np.zeros(len(uniq), bool)
        out[found] = index.buckets[safe[found]]
        new_idx = np.nonzero(~found)[0]
        if len(new_idx):
            new_idx = new_idx[np.argsort(first[new_idx], kind="stable")]  # arrival order
            assigned = self._assign_new(index, len(new_idx))
            out[new_idx] = assigned
            new_hashes = uniq[new_idx]
            for b in np.unique(assigned):
                index.added.setdefault(int(b), []).append(new_hashes[assigned == b])
            merged_h = np.concatenate([index.hashes, new_hashes])
            merged_b = np.concatenate([index.buckets, assigned])
            order = np.argsort(merged_h, kind="stable")
            index.hashes, index.buckets = merged_h[order], merged_b[order]
        return out[inverse]

    def _assign_new(self, index: PartitionIndex, n: int) -> np.ndarray:
        parts: list[np.ndarray] = []
        remaining = n
        for b in sorted(index.counts):
            room = self.target - index.counts[b]
            if room <= 0:
                continue
            take = min(room, remaining)
            parts.append(np.full(take, b, dtype=np.int32))
            index.counts[b] += take
            remaining -= take
            if remaining == 0:
                return np.concatenate(parts)
        limit = SHORT_MAX if self.max_buckets == -1 else self.max_buckets
        next_id = 0
        while remaining > 0:
            while next_id in index.counts:
                next_id += 1
            if next_id >= limit:
                if self.max_buckets == -1:
                    raise InvalidArgumentError(
                        f"Too many buckets ({limit}); increase dynamic-bucket.target-row-num ({self.target})"
                    )
                existing = np.array(sorted(index.counts), dtype=np.int32)
                picks = self.rng.choice(existing, size=remaining)
                for b, c in zip(*np.unique(picks, return_counts=True), strict=True):
                    index.counts[int(b)] += int(c)
                parts.append(picks.astype(np.int32))
                break
            take = min(self.target, remaining)
            parts.append(np.full(take, next_id, dtype=np.int32))
            index.counts[next_id] = take
            remaining -= take
        return np.concatenate(parts) if parts else np.empty(0, np.int32)
