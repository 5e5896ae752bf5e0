"""What an operator's ``writable`` decision was made on, and whether it still stands (docs/review.md).

An operator decides whether a tool may change things (``writable``) while looking at a definition:
what it claims (``readOnlyHint``), its other annotations (``destructiveHint``...), and which
parameters it requires. The decision stands on the definition last reviewed. When a changed tool is
reviewed again and any of those moved, approving the new definition must not carry the old decision
over silently (a tool reviewed as read-only that now claims to be destructive and requires a ``bcc``
would keep skipping the approval dialog): the review has to choose ``writable`` again.

Pure: definitions in, a :class:`DecisionBasis` and the sentences saying what moved out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolvet.domain.diff import ChangeKind, diff_definitions, read_only_claim

#: The kinds of change that move what a writable decision is made on (besides required parameters,
#: which are compared as sets so added and removed parameters count too).
_BASIS_KINDS = frozenset({ChangeKind.READ_ONLY_CLAIM_CHANGED, ChangeKind.ANNOTATION_CHANGED})


def required_parameters(definition: dict[str, Any]) -> list[str]:
    """The names the definition's ``inputSchema`` lists as required, in its order."""
    schema = definition.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


@dataclass(frozen=True)
class Claims:
    """The parts of one definition a writable decision looks at."""

    read_only: bool | None
    annotations: dict[str, Any]
    required: list[str]

    @classmethod
    def of(cls, definition: dict[str, Any]) -> Claims:
        annotations = definition.get("annotations")
        return cls(read_only=read_only_claim(annotations),
                   annotations=dict(annotations) if isinstance(annotations, dict) else {},
                   required=required_parameters(definition))


@dataclass(frozen=True)
class DecisionBasis:
    """The writable decision in force, the claims it was made on and those of now; ``moved`` says in
    sentences what changed between them (empty: the decision still stands on the same claims)."""

    writable: bool
    decided_on: Claims
    now: Claims
    moved: list[str] = field(default_factory=list)

    @property
    def must_choose(self) -> bool:
        """True when a review of the current definition has to choose ``writable`` again."""
        return bool(self.moved)


def basis(writable: bool, decided_on: dict[str, Any], now: dict[str, Any]) -> DecisionBasis:
    """Compare the definition a writable decision was made on with the current one."""
    before, after = Claims.of(decided_on), Claims.of(now)
    moved = [c.message for c in diff_definitions(decided_on, now).changes if c.kind in _BASIS_KINDS]
    gained = [n for n in after.required if n not in before.required]
    lost = [n for n in before.required if n not in after.required]
    if gained:
        moved.append("now requires " + ", ".join(repr(n) for n in gained))
    if lost:
        moved.append("no longer requires " + ", ".join(repr(n) for n in lost))
    return DecisionBasis(writable=writable, decided_on=before, now=after, moved=moved)


def stale_message(found: DecisionBasis) -> str:
    """Why a review must choose ``writable`` again, for the refusal of one that does not."""
    was = "writable" if found.writable else "read-only"
    return (f"the tool was decided {was} on a definition whose claims have moved since ("
            + "; ".join(found.moved) + "): choose writable again with this review")
