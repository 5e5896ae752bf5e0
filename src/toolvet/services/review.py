"""A person's review of a tool's current definition, the definitions a tool has had, and what changed
between them (docs/review.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Literal

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from toolvet.db.models import (
    Review,
    Tool,
    ToolDefinition,
    ToolReview,
    ToolSettings,
    history_definition,
    previous_definition,
)
from toolvet.db.types import utcnow
from toolvet.domain.decision_basis import DecisionBasis, basis, stale_message
from toolvet.domain.diff import diff_definitions
from toolvet.domain.policy import review_state
from toolvet.errors import InvalidInput
from toolvet.schemas.common import Page
from toolvet.schemas.tools import (
    ChangeOut,
    ClaimsOut,
    DecisionOut,
    DefinitionOut,
    DiffOut,
    ReviewRecordOut,
    ToolOut,
)
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.tools import load, to_out


def review_tool(
    ctx: Context, principal: Principal, server_name: str, name: str, note: str | None = None,
    writable: bool | None = None,
) -> ToolOut:
    """Record that ``principal`` reviewed the tool's current definition. ``enabled`` is not touched.

    ``writable`` sets the operator's decision in the same action. It must be given when the tool
    changed since its last review in what that decision was made on (its read-only claim, its
    annotations, its required parameters: :mod:`toolvet.domain.decision_basis`): InvalidInput naming
    ``writable`` otherwise, and nothing is recorded.
    """
    principal.require(Permission.REVIEW)
    if writable is not None:
        principal.require(Permission.MANAGE_TOOLS)
    now = utcnow()
    with ctx.db.transaction() as session:
        tool, server = load(session, server_name, name)
        before = to_out(tool, server)
        found = decision_basis(session, tool)
        if found is not None and found.must_choose and writable is None:
            raise InvalidInput(stale_message(found), "writable")
        if writable is not None:
            session.execute(update(ToolSettings).where(ToolSettings.tool_id == tool.id).values(writable=writable))
        # The history row (with its note) and the tool's current review, written together.
        session.add(Review(tool_id=tool.id, fingerprint=tool.definition_fingerprint,
                           digest=tool.definition_digest, reviewed_by=principal.actor, reviewed_at=now,
                           note=note))
        session.merge(ToolReview(tool_id=tool.id, fingerprint=tool.definition_fingerprint,
                                 digest=tool.definition_digest, reviewed_at=now, reviewed_by=principal.actor))
        session.flush()
        session.refresh(tool)
        session.refresh(tool.settings)
        after = to_out(tool, server)
        moved = {"writable_was": found.writable, "moved": found.moved} if found is not None and found.moved else {}
        audit.record(session, principal, "tool.review", "tool", f"tool:{server_name}/{name}", before,
                     {**after.model_dump(mode="json"), "note": note, **moved})
    return after


def decision_basis(session: Session, tool: Tool) -> DecisionBasis | None:
    """The tool's writable decision beside the definition it stands on (the one last reviewed) and
    the current one; None for a tool never reviewed, reviewed as it is now, or whose reviewed
    definition is no longer in its history."""
    review = tool.review
    if review is None or review.digest == tool.definition_digest:
        return None
    rows = session.scalars(select(ToolDefinition).where(ToolDefinition.tool_id == tool.id)
                           .order_by(ToolDefinition.id)).all()
    reviewed = _reviewed(rows, review)
    if reviewed is None:
        return None
    return basis(tool.settings.writable, history_definition(reviewed, tool), tool.definition)


def _reviewed(rows: Sequence[ToolDefinition], review: ToolReview) -> ToolDefinition | None:
    """The definition a review covered: by digest, else (a definition kept only by fingerprint) the
    newest one with its fingerprint."""
    found = [r for r in rows if r.digest == review.digest] or [r for r in rows if r.fingerprint == review.fingerprint]
    return found[-1] if found else None


def _definition_out(row: ToolDefinition, tool: Tool, reviews: Sequence[Review]) -> DefinitionOut:
    return DefinitionOut(fingerprint=row.fingerprint, digest=row.digest, definition=history_definition(row, tool),
                         first_seen_at=row.first_seen_at, current=row.digest == tool.definition_digest,
                         reviewed=tool.review is not None and row.digest == tool.review.digest,
                         reviews=[ReviewRecordOut(reviewed_by=r.reviewed_by, reviewed_at=r.reviewed_at, note=r.note)
                                  for r in reviews if r.digest == row.digest])


def history(
    ctx: Context, principal: Principal, server_name: str, name: str, *, limit: int = 100, offset: int = 0
) -> Page[DefinitionOut]:
    """Every distinct definition the tool has had, oldest first, a page at a time."""
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        tool, _ = load(session, server_name, name)
        of_tool = ToolDefinition.tool_id == tool.id
        total = session.scalar(select(func.count()).select_from(ToolDefinition).where(of_tool)) or 0
        rows = session.scalars(
            select(ToolDefinition).where(of_tool).order_by(ToolDefinition.id).limit(limit).offset(offset)
        ).all()
        on_page = Review.digest.in_([r.digest for r in rows])
        reviews = session.scalars(select(Review).where(Review.tool_id == tool.id, on_page)
                                  .order_by(Review.reviewed_at, Review.id)).all()
        items = [_definition_out(row, tool, reviews) for row in rows]
    return Page(items=items, total=total, limit=limit, offset=offset)


Basis = Literal["reviewed", "previous", "against"]
# Shortest prefix (after "sha256:") accepted for ``against``: what a person copies from a table.
_MIN_PREFIX = 6


def _find(rows: Sequence[ToolDefinition], against: str) -> ToolDefinition:
    """The definition named by a digest or fingerprint, or by an unambiguous prefix of one; of several
    definitions sharing a fingerprint, the newest."""
    exact = [r for r in rows if r.digest == against] or [r for r in rows if r.fingerprint == against]
    if exact:
        return exact[-1]
    if len(against.removeprefix("sha256:")) >= _MIN_PREFIX:
        matches = [r for r in rows if r.digest.startswith(against) or r.fingerprint.startswith(against)]
        if len({r.fingerprint for r in matches}) == 1:
            return matches[-1]
        if matches:
            raise InvalidInput(f"{against!r} matches {len(matches)} definitions; give more of it", "against")
    raise InvalidInput(f"no definition in the tool's history has the digest or fingerprint {against!r}",
                       "against")


def _before(
    rows: Sequence[ToolDefinition], tool: Tool, against: str | None
) -> tuple[ToolDefinition | None, Basis | None]:
    if against is not None:
        return _find(rows, against), "against"
    if tool.review is not None:
        reviewed = _reviewed(rows, tool.review)
        return (reviewed, "reviewed") if reviewed is not None else (None, None)
    previous = previous_definition(rows, tool.definition_digest)
    return (previous, "previous") if previous is not None else (None, None)


def diff(
    ctx: Context, principal: Principal, server_name: str, name: str, *, against: str | None = None
) -> DiffOut:
    """What changed between an earlier definition of the tool and its current one.

    The earlier one is, by default, the definition a person reviewed; for a tool never reviewed, the
    one it had before the current one (the newest other definition in its history), and when it has
    had only one, nothing: the diff is then empty and its ``note`` says why. ``against`` names any
    definition from the history instead, by digest or fingerprint (or an unambiguous prefix of one).
    """
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        tool, server = load(session, server_name, name)
        rows = session.scalars(
            select(ToolDefinition).where(ToolDefinition.tool_id == tool.id).order_by(ToolDefinition.id)
        ).all()
        before, basis = _before(rows, tool, against)
        earlier = history_definition(before, tool) if before else None
        result = diff_definitions(earlier, tool.definition)
        return DiffOut(
            server=server.name, tool=tool.name,
            review_state=review_state(tool.review.fingerprint if tool.review else None, tool.definition_fingerprint),
            compared_with=basis,
            before_fingerprint=before.fingerprint if before else None,
            after_fingerprint=tool.definition_fingerprint,
            before_digest=before.digest if before else None, after_digest=tool.definition_digest,
            before=earlier, after=tool.definition,
            changes=[ChangeOut.model_validate(change, from_attributes=True) for change in result.changes],
            summary=result.summary, note=result.note, decision=_decision_out(decision_basis(session, tool)),
        )


def _decision_out(found: DecisionBasis | None) -> DecisionOut | None:
    if found is None:
        return None
    return DecisionOut(writable=found.writable, decided_on=ClaimsOut(**asdict(found.decided_on)),
                       now=ClaimsOut(**asdict(found.now)), moved=found.moved, must_choose=found.must_choose)
