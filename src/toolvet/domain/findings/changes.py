"""Findings a definition earns by how it differs from the one seen before it."""

from __future__ import annotations

from typing import Any

from toolvet.domain.findings.finding import finding


def _required(schema: Any) -> set[str]:
    if isinstance(schema, dict) and isinstance(schema.get("required"), list):
        return {r for r in schema["required"] if isinstance(r, str)}
    return set()


def change_findings(
    before_input_schema: Any, before_read_only: bool | None, after: dict[str, Any], after_read_only: bool | None
) -> list[dict[str, Any]]:
    """A newly required input parameter (``warning``: callers that omit it break) and a changed read-only
    claim (``warning``: approval may lean on it)."""
    found: list[dict[str, Any]] = []
    for param in sorted(_required(after.get("inputSchema")) - _required(before_input_schema)):
        found.append(finding("new-required-parameter", "warning", f"input parameter {param!r} is newly required",
                             f"inputSchema.required.{param}"))
    if before_read_only != after_read_only:
        found.append(finding("read-only-claim-changed", "warning",
                             f"readOnlyHint changed from {before_read_only!r} to {after_read_only!r}",
                             "annotations.readOnlyHint"))
    return found
