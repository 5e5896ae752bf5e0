"""Reconcile as data in, data out: what one listing means for the stored tools of a server (docs/discovery.md)."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from toolvet.domain import findings as checks
from toolvet.domain.definitions import DefinitionError, ToolClaim, read_claim
from toolvet.domain.fingerprint import definition_digest_and_size


class _Unloaded(enum.Enum):
    UNLOADED = "unloaded"


#: A stored ``input_schema`` not read from the database (yet). Only a changed tool's is ever needed
#: (for ``change_findings``), so a pass reads them for those tools alone instead of decoding every
#: tool's schema on every pass. A sentinel, not None: None is a value a schema column could hold.
UNLOADED: Final = _Unloaded.UNLOADED

#: Reads the stored input schemas of the given tool ids (every id must be in the answer).
SchemaLoader = Callable[[Sequence[int]], Mapping[int, Any]]


@dataclass(frozen=True)
class StoredTool:
    """What reconcile needs to know of a tool already in the registry.

    ``input_schema`` may be left ``UNLOADED``; :func:`reconcile` then asks its ``load_input_schemas``
    for it, once per call and only for tools whose definition changed.
    """

    id: int
    name: str
    digest: str
    advertised_read_only: bool | None
    retired: bool
    input_schema: Any = UNLOADED


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
    ``retire`` also clears ``enabled`` (the one operator field discovery may clear)."""

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


def _same_definition(raw: Any, digest: str, max_definition_bytes: int) -> bool:
    """True when ``raw`` is the stored object and still within the size limit.

    The size comes free with the digest (one serialisation); checking it here means a lowered
    ``max_definition_bytes`` rejects a stored, unchanged tool too, instead of only new definitions:
    a definition over the limit then takes ``read_claim`` and is rejected (and so retired).
    """
    try:
        same, size = definition_digest_and_size(raw)
    except ValueError:
        return False
    return same == digest and size <= max_definition_bytes


def reconcile(
    stored: list[StoredTool], listing: list[Any], *, complete: bool, max_definition_bytes: int,
    load_input_schemas: SchemaLoader | None = None,
) -> ChangeSet:
    """Compare a server's advertised listing (its tools as a JSON decoder made them) with its stored tools.

    ``complete`` is False for an incomplete pass; such a pass may add and update what it saw but
    retires nothing. (A failed pass is never reconciled at all.) ``load_input_schemas`` supplies the
    stored input schemas left ``UNLOADED``; it is called at most once, with the ids of the changed
    tools that need one, and not at all when nothing changed.
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
        if (known is not None and not known.retired
                and _same_definition(raw, known.digest, max_definition_bytes)):
            # The exact object already stored and validated: nothing to check or write but last_seen_at.
            seen.add(known.name)
            changes.unchanged_ids.append(known.id)
            continue
        try:
            claims.append(read_claim(raw, max_definition_bytes))
        except DefinitionError as exc:
            changes.rejected.append(Rejection(index, name, str(exc)))

    changed: list[tuple[StoredTool, ToolClaim]] = []
    for claim in claims:
        seen.add(claim.name)
        known = by_name.get(claim.name)
        if known is None:
            changes.added.append(Upsert(None, claim, checks.static_findings(claim.definition, claim.text)))
        elif known.digest != claim.digest or known.retired:
            changed.append((known, claim))
        else:
            changes.unchanged_ids.append(known.id)

    before = _input_schemas([known for known, _ in changed], load_input_schemas)
    for known, claim in changed:
        findings = checks.static_findings(claim.definition, claim.text) + checks.change_findings(
            before[known.id], known.advertised_read_only, claim.definition, claim.advertised_read_only
        )
        changes.changed.append(Upsert(known.id, claim, findings, revived=known.retired))

    # A stored tool whose new definition was rejected is retired too: the server no longer advertises
    # the contract that was stored (and perhaps reviewed), so it must not stay on offer under it.
    if complete:
        changes.retire_ids = [tool.id for tool in stored if not tool.retired and tool.name not in seen]
    return changes


def _input_schemas(tools: list[StoredTool], load: SchemaLoader | None) -> dict[int, Any]:
    """The stored input schema of each of ``tools``, loading the ``UNLOADED`` ones in one call."""
    schemas = {tool.id: tool.input_schema for tool in tools if tool.input_schema is not UNLOADED}
    missing = [tool.id for tool in tools if tool.input_schema is UNLOADED]
    if missing:
        if load is None:
            raise ValueError("stored input schemas were left unloaded and no loader was given")
        loaded = load(missing)
        schemas |= {tool_id: loaded[tool_id] for tool_id in missing}
    return schemas
