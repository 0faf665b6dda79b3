"""JSON as Paimon's Java side writes it (Jackson's default pretty printer).

Java writes ``"key" : value`` with 2-space indentation, arrays inline as
``[ a, b ]``, empty containers as ``[ ]`` / ``{ }``. Readers do not care, but
byte-similar files make diffs against Java-written tables easy to read.
"""

from __future__ import annotations

import json
from typing import Any

from paimon_core.exceptions import CorruptFileError


def dumps_java(value: Any) -> str:
    """Serialize like Jackson's ``writerWithDefaultPrettyPrinter()``."""
    return _dump(value, 0)


def _dump(v: Any, level: int) -> str:
    if isinstance(v, dict):
        if not v:
            return "{ }"
        pad = "  " * (level + 1)
        items = [f"{pad}{json.dumps(str(k), ensure_ascii=False)} : {_dump(x, level + 1)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[ ]"
        return "[ " + ", ".join(_dump(x, level) for x in v) + " ]"
    return json.dumps(v, ensure_ascii=False)


def loads_checked(text: str | bytes, *, path: str, what: str) -> dict[str, Any]:
    """Parse a JSON object, raising CorruptFileError naming the file on failure."""
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise CorruptFileError(f"Corrupt {what} file {path}: {e}", path=path) from e
    if not isinstance(obj, dict):
        raise CorruptFileError(f"Corrupt {what} file {path}: expected a JSON object", path=path)
    return obj
