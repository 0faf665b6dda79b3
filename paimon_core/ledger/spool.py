"""The local spool of ledger records whose write failed.

A record that could not be written to a warehouse's ledger (after the bounded retries of
:meth:`~paimon_core.ledger.ledger.Ledger.append`) is kept as one JSON-lines file here, under a
directory per warehouse, and written with the next successful ledger write to that warehouse
(:func:`paimon_core.ledger.recorder.write_records`). The spool directory is ``$PAIMON_LEDGER_SPOOL``,
else ``<user cache dir>/paimon-py/ledger-spool`` (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows).

Several processes share a spool: a flush first claims each file by renaming it (one rename
wins), and gives it back when its write fails; a claim older than :data:`STALE_CLAIM_SECONDS`
(its process died) can be taken again. No credentials are stored: only the warehouse URL.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from paimon_core.ledger.record import LedgerRecord

__all__ = ["SPOOL_ENV", "STALE_CLAIM_SECONDS", "Spool", "SpoolClaim", "default_spool_dir"]

logger = logging.getLogger(__name__)

SPOOL_ENV = "PAIMON_LEDGER_SPOOL"
STALE_CLAIM_SECONDS = 600
_SUFFIX = ".jsonl"
_CLAIM = ".claim-"


def default_spool_dir() -> Path:
    """``$PAIMON_LEDGER_SPOOL``, else the user's cache directory's ``paimon-py/ledger-spool``."""
    given = os.environ.get(SPOOL_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "paimon-py" / "ledger-spool"


@dataclass(frozen=True)
class SpoolClaim:
    """Spooled files this process took for one write; :meth:`Spool.done` or :meth:`Spool.release` them."""

    paths: tuple[Path, ...]
    records: tuple[LedgerRecord, ...]


class Spool:
    """The spooled records of one warehouse."""

    def __init__(self, warehouse: str, *, root: Path | None = None) -> None:
        self.warehouse = warehouse
        self.root = root if root is not None else default_spool_dir()
        key = hashlib.sha256(warehouse.encode()).hexdigest()[:16]
        self.dir = self.root / key

    def add(self, records: Sequence[LedgerRecord]) -> Path | None:
        """Spool ``records`` (one file, written whole then renamed into place); None if even
        that fails (logged: the records are then lost, the action itself is not affected)."""
        if not records:
            return None
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            name = f"{int(time.time() * 1000)}-{uuid.uuid4().hex}"
            tmp = self.dir / f".{name}.tmp"
            lines = [
                json.dumps({"warehouse": self.warehouse, "record": r.to_dict()}, default=str) for r in records
            ]
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            final = self.dir / f"{name}{_SUFFIX}"
            os.replace(tmp, final)
        except OSError as e:
            logger.error("Could not spool %d ledger record(s) of %s: %s", len(records), self.warehouse, e)
            return None
        logger.warning("Spooled %d ledger record(s) of %s to %s", len(records), self.warehouse, final)
        return final

    def pending(self) -> list[Path]:
        """Spooled files not claimed by a live flush, oldest first."""
        try:
            entries = list(self.dir.iterdir())
        except OSError:
            return []
        now = time.time()
        out = []
        for p in entries:
            if p.name.endswith(_SUFFIX):
                out.append(p)
            elif _CLAIM in p.name:
                try:
                    if now - p.stat().st_mtime > STALE_CLAIM_SECONDS:
                        out.append(p)
                except OSError:
                    continue
        return sorted(out, key=lambda p: p.name)

    def claim(self, *, limit: int = 1000) -> SpoolClaim:
        """Take pending files (up to ``limit`` records) for a write; files another process took
        first are left out."""
        paths: list[Path] = []
        records: list[LedgerRecord] = []
        for p in self.pending():
            if len(records) >= limit:
                break
            base = p.name.split(_CLAIM, 1)[0]
            claimed = p.with_name(f"{base}{_CLAIM}{os.getpid()}-{uuid.uuid4().hex[:8]}")
            try:
                os.rename(p, claimed)
                os.utime(claimed)
            except OSError:
                continue  # another process took it
            try:
                records.extend(_read(claimed, self.warehouse))
            except (OSError, ValueError) as e:
                logger.error("Unreadable ledger spool file %s (kept, not retried): %s", claimed, e)
                try:
                    os.rename(claimed, claimed.with_name(f"{base}.bad"))
                except OSError:
                    pass
                continue
            paths.append(claimed)
        return SpoolClaim(tuple(paths), tuple(records))

    def done(self, claim: SpoolClaim) -> None:
        """The claimed records are in the ledger: delete their files."""
        for p in claim.paths:
            try:
                p.unlink()
            except OSError as e:
                logger.warning("Could not delete flushed ledger spool file %s: %s", p, e)

    def release(self, claim: SpoolClaim) -> None:
        """The write failed: give the claimed files back for a later flush."""
        for p in claim.paths:
            base = p.name.split(_CLAIM, 1)[0]
            try:
                os.rename(p, p.with_name(base))
            except OSError as e:
                logger.warning("Could not release ledger spool file %s: %s", p, e)


def _read(path: Path, warehouse: str) -> list[LedgerRecord]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        if raw.get("warehouse") != warehouse:
            raise ValueError(f"{path} holds records of warehouse {raw.get('warehouse')!r}, not {warehouse!r}")
        out.append(LedgerRecord.from_dict(raw["record"]))
    return out
