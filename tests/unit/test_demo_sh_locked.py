"""``scripts/demo.sh`` (README command 1) tries a REST call again when SQLite was locked.

Stop 31's CI failed because the check for Airflow's HTTP 500 "Database error" stripped the spaces
out of the text it matched, so it never matched and the demo gave up on the first locked write.
The check is taken out of the script as it is and run on the answers Airflow gave.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DEMO = Path(__file__).resolve().parents[2] / "scripts" / "demo.sh"

#: What the api-server answered to ``PATCH /api/v2/dags/paimon_ingest`` in that CI run.
LOCKED_500 = (
    '{"detail":{"reason":"Database error","statement":"hidden","orig_error":"hidden","message":"Serious error '
    'when handling your request. Check logs for more details - you will find it in api server when you look '
    'for ID 6GWaMb6w"}}'
)


def _locked() -> Any:
    text = DEMO.read_text(encoding="utf-8")
    match = re.search(r"^def locked\(code, text\):\n(?:(?:    .*)?\n)+", text, flags=re.MULTILINE)
    assert match, "scripts/demo.sh has no locked(code, text)"
    scope: dict[str, Any] = {"json": json}
    exec(match.group(0), scope)  # noqa: S102 - the script's own function, from this repository
    return scope["locked"]


def test_a_locked_sqlite_is_tried_again() -> None:
    locked = _locked()
    assert locked(500, LOCKED_500)
    assert locked(500, json.dumps(json.loads(LOCKED_500), indent=2))  # however it is spaced
    assert locked(503, "Service Unavailable")


def test_other_errors_are_not() -> None:
    locked = _locked()
    assert not locked(500, '{"detail": "Internal Server Error"}')
    assert not locked(500, "<html>proxy error</html>")
    assert not locked(500, '["Database error"]')
    assert not locked(404, LOCKED_500)
    assert not locked(409, '{"detail": {"reason": "Database error"}}')
