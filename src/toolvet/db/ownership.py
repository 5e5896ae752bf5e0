"""Who owns which tool column (SPEC §3). Writers build their statements from these sets only, so
discovery cannot write an operator's decision and an operator's edit cannot clobber a claim."""

from __future__ import annotations

from typing import Any

OPERATOR_COLUMNS = frozenset({"enabled", "writable"})
DISCOVERY_COLUMNS = frozenset({
    "title", "description", "input_schema", "output_schema", "annotations", "icons", "meta",
    "definition", "advertised_read_only", "definition_fingerprint", "definition_digest",
    "last_seen_at", "retired_at", "findings",
})
REVIEW_COLUMNS = frozenset({"reviewed_fingerprint", "reviewed_digest", "reviewed_at", "reviewed_by"})

assert not (OPERATOR_COLUMNS & DISCOVERY_COLUMNS) and not (REVIEW_COLUMNS & DISCOVERY_COLUMNS)


def only(columns: frozenset[str], values: dict[str, Any], owner: str) -> dict[str, Any]:
    """``values`` unchanged, after checking that every key belongs to ``owner``'s columns."""
    stray = set(values) - columns
    if stray:
        raise AssertionError(f"{owner} may not write {sorted(stray)}")
    return values
