"""What a cross-partition write does with a key that already lives elsewhere (Java's
``ExistingProcessor``: ``DeleteExistingProcessor``, ``UseOldExistingProcessor``,
``SkipNewExistingProcessor``), for a whole batch at once.

Java processes records one by one against its key index. The functions here compute the
same end state with numpy over a batch whose rows are grouped by key (arrival order kept
inside each group):

* **deduplicate** (``DeleteExisting``): the key ends in the partition of its last row. The
  rows of that final run are written there; a key that lived in another partition gets a
  ``-D`` in its old (partition, bucket). Rows of earlier runs in other partitions are dropped:
  Java writes them and retracts them again, which reads back the same.
* **partial-update / aggregation** (``UseOldExisting``): every row of a known key goes to the
  key's old partition and bucket (its partition columns rewritten); a new key is placed by its
  first row and later rows follow it.
* **first-row** (``SkipNewExisting``): rows in another partition than the key's (old, or
  first-seen) partition are skipped.
* **locate** (deletes by key, ``TableWrite.delete_arrow``): rows of known keys go to the key's
  partition and bucket; rows of unknown keys are dropped (there is nothing to delete).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from paimon_core.exceptions import InvalidArgumentError

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
Mode = Literal["delete", "use-old", "skip-new", "locate"]


def mode_for(merge_engine: str) -> Mode:
    """Java's ``ExistingProcessor.create``: the processor of a merge engine."""
    engine = merge_engine.strip().lower()
    if engine == "deduplicate":
        return "delete"
    if engine in ("partial-update", "aggregation"):
        return "use-old"
    if engine == "first-row":
        return "skip-new"
    raise InvalidArgumentError(f"Unsupported merge engine for cross-partition upsert: {merge_engine!r}")


@dataclass(frozen=True)
class KeyGroups:
    """Rows of a batch grouped by primary key.

    ``order`` lists row indices key by key (arrival order inside a key); key ``g`` owns
    ``order[starts[g] : starts[g] + lengths[g]]``.
    """

    order: I64
    starts: I64
    lengths: I64

    @property
    def num_keys(self) -> int:
        return len(self.starts)

    def key_of_position(self) -> I64:
        out: I64 = np.repeat(np.arange(self.num_keys, dtype=np.int64), self.lengths)
        return out


@dataclass(frozen=True)
class Routing:
    """Where the rows of one batch go, before buckets are chosen."""

    #: input rows to write, ascending, and the key of each
    rows: I64
    row_keys: I64
    #: per key: the partition its written rows go to
    target_part: I32
    #: per key: needs a new bucket in ``target_part`` (new key, or moved to another partition)
    needs_bucket: npt.NDArray[np.bool_]
    #: per key: the input row that triggers its assignment (orders new assignments like Java)
    arrival: I64
    #: keys that get a -D in their old (partition, bucket), and the input row used as template
    retract_keys: I64
    retract_rows: I64


def route(mode: Mode, parts: I32, groups: KeyGroups, old_part: I32) -> Routing:
    """Decide, per key, the target partition and which rows are written (see module doc)."""
    n = len(groups.order)
    order, starts, lengths = groups.order, groups.starts, groups.lengths
    key_of_pos = groups.key_of_position()
    pos = np.arange(n, dtype=np.int64)
    pp = parts[order]
    has_old = old_part >= 0
    if mode == "delete":
        last = starts + lengths - 1
        target = pp[last]
        marks = np.where(pp != target[key_of_pos], pos, -1)
        last_moved = np.maximum.reduceat(marks, starts) if n else np.empty(0, np.int64)
        keep = pos > last_moved[key_of_pos]
        needs = target != old_part
        arrival = order[last_moved + 1]
        retract = np.nonzero(has_old & needs)[0].astype(np.int64)
        retract_rows = order[last[retract]]
    elif mode == "locate":
        target = old_part
        needs = np.zeros(len(starts), bool)
        arrival = order[starts]
        keep = has_old[key_of_pos]
        retract = np.empty(0, np.int64)
        retract_rows = np.empty(0, np.int64)
    else:
        first_rows = order[starts]
        target = np.where(has_old, old_part, pp[starts]).astype(np.int32)
        needs = ~has_old
        arrival = first_rows
        keep = np.ones(n, bool) if mode == "use-old" else pp == target[key_of_pos]
        retract = np.empty(0, np.int64)
        retract_rows = np.empty(0, np.int64)
    kept_pos = np.nonzero(keep)[0]
    rows = order[kept_pos]
    row_keys = key_of_pos[kept_pos]
    by_row = np.argsort(rows, kind="stable")
    return Routing(
        rows=rows[by_row],
        row_keys=row_keys[by_row],
        target_part=target.astype(np.int32),
        needs_bucket=needs,
        arrival=arrival.astype(np.int64),
        retract_keys=retract,
        retract_rows=retract_rows.astype(np.int64),
    )
