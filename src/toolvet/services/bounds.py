"""What toolvet keeps of a JSON value too big to store whole: a visibly marked prefix of its text.

Sizes are of the compact JSON text (UTF-8 bytes) a JSON column stores. A kept value is itself JSON
small enough for its limit, and says what it was cut from under the ``toolvet/truncated`` key; a
truncated call result stays a valid MCP ``CallToolResult`` (one text block), so whatever reads it
back as a result still can.
"""

from __future__ import annotations

from typing import Any, Final

from toolvet.jsontext import compact

MARKER: Final = "toolvet/truncated"
#: Rounds of halving the kept prefix until the whole marked value fits (escaping may grow a prefix).
_ROUNDS: Final = 12


def json_size(value: Any) -> int:
    """Bytes of the compact JSON text of ``value``."""
    return len(compact(value).encode("utf-8"))


def _prefix(text: bytes, size: int) -> str:
    return text[:size].decode("utf-8", "ignore")  # never half a character


def _fitted(text: bytes, limit: int, build: Any) -> Any:
    budget = limit
    for _ in range(_ROUNDS):
        kept = build(_prefix(text, budget), budget)
        if json_size(kept) <= limit:
            return kept
        budget //= 2
    return build("", 0)


def bounded_value(value: Any, limit: int) -> Any:
    """``value`` itself when its JSON fits in ``limit`` bytes, else a marker holding a prefix of its text."""
    text = compact(value).encode("utf-8")
    if len(text) <= limit:
        return value
    return _fitted(text, limit, lambda prefix, kept: {
        MARKER: {"bytes": len(text), "limit": limit, "kept": len(prefix.encode("utf-8"))}, "prefix": prefix})


def bounded_result(result: dict[str, Any] | None, limit: int) -> dict[str, Any] | None:
    """A call result as stored: itself when it fits, else a ``CallToolResult`` with one text block that
    says it was truncated and holds the start of the original's JSON text."""
    if result is None:
        return None
    text = compact(result).encode("utf-8")
    if len(text) <= limit:
        return result
    is_error = bool(result.get("isError"))

    def build(prefix: str, _budget: int) -> dict[str, Any]:
        kept = len(prefix.encode("utf-8"))
        note = f"[toolvet stored only the first {kept} of this result's {len(text)} bytes of JSON]\n"
        return {"content": [{"type": "text", "text": note + prefix}], "isError": is_error,
                "_meta": {MARKER: {"bytes": len(text), "limit": limit, "kept": kept}}}

    kept: dict[str, Any] = _fitted(text, limit, build)
    return kept
