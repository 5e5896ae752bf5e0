"""SPEC §4.2 as data in, data out: what one listing means for the stored tools of a server."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolvet.domain.definitions import DefinitionError, ToolClaim, read_claim
from toolvet.domain.findings import change_findings, static_findings
from toolvet.domain.fingerprint import definition_digest


@dataclass(frozen=True)
class StoredTool:
    """What reconcile needs to know of a tool already in the registry."""

    id: int
    name: str
    digest: str
    input_schema: Any
    advertised_read_only: bool | None
    retired: bool


@dataclass(frozen=True)
class Rejection:
    """A tool of the listing that was not stored, and why."""

    index: int
    name: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "reason": self.reason}


@dataclass(frozen=True)
class Upsert:
    """A claim to write, with the findings it earned. ``tool_id`` is None for a new tool."""

    tool_id: int | None
    claim: ToolClaim
    findings: list[dict[str, Any]]
    revived: bool = False


@dataclass
class ChangeSet:
    """Everything one pass changes. Applying it touches only discovery-owned columns, except that
    ``retire`` also clears ``enabled`` (the one operator field discovery may clear, SPEC §4.2)."""

    added: list[Upsert] = field(default_factory=list)
    changed: list[Upsert] = field(default_factory=list)
    unchanged_ids: list[int] = field(default_factory=list)
    retire_ids: list[int] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "changed": len(self.changed),
            "unchanged": len(self.unchanged_ids),
            "retired": len(self.retire_ids),
            "rejected": len(self.rejected),
        }


def _raw_name(raw: Any) -> str | None:
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        return str(raw["name"])
    return None


def _same_definition(raw: Any, digest: str) -> bool:
    try:
        return definition_digest(raw) == digest
    except ValueError:
        return False


def reconcile(
    stored: list[StoredTool], listing: list[Any], *, complete: bool, max_definition_bytes: int
) -> ChangeSet:
    """Compare a server's advertised listing with its stored tools.

    ``complete`` is False for an incomplete pass; such a pass may add and update what it saw but
    retires nothing. (A failed pass is never reconciled at all.)
    """
    changes = ChangeSet()
    by_name = {tool.name: tool for tool in stored}
    seen: set[str] = set()
    name_counts = Counter(n for n in map(_raw_name, listing) if n is not None)
    claims: list[ToolClaim] = []
    for index, raw in enumerate(listing):
        name = _raw_name(raw)
        if name is not None and name_counts[name] > 1:
            changes.rejected.append(Rejection(index, name, f"name {name!r} is advertised {name_counts[name]} times"))
            continue
        known = by_name.get(name) if name is not None else None
        if known is not None and not known.retired and _same_definition(raw, known.digest):
            # The exact object already stored and validated: nothing to check or write but last_seen_at.
            seen.add(known.name)
            changes.unchanged_ids.append(known.id)
            continue
        try:
            claims.append(read_claim(raw, max_definition_bytes))
        except DefinitionError as exc:
            changes.rejected.append(Rejection(index, name, str(exc)))

    for claim in claims:
        seen.add(claim.name)
        known = by_name.get(claim.name)
        if known is None:
            changes.added.append(Upsert(None, claim, static_findings(claim.definition)))
        elif known.digest != claim.digest or known.retired:
            findings = static_findings(claim.definition) + change_findings(
                known.input_schema, known.advertised_read_only, claim.definition, claim.advertised_read_only
            )
            changes.changed.append(Upsert(known.id, claim, findings, revived=known.retired))
        else:
            changes.unchanged_ids.append(known.id)

    # A stored tool whose new definition was rejected is retired too: the server no longer advertises
    # the contract that was stored (and perhaps reviewed), so it must not stay on offer under it.
    if complete:
        changes.retire_ids = [tool.id for tool in stored if not tool.retired and tool.name not in seen]
    return changes
