"""Prompts, resources and resource templates (a server's *entries*): listing, an operator's
``enabled``, review, the review diff, and what the gateway may offer of them.

They follow the tools' rules (``domain.policy``): available when the entry and its server are enabled;
held, and so not offered, when its contract changed after a review on a server that holds changed
tools, or when it has a ``high`` finding on a server that holds flagged tools and is not reviewed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from toolvet.db.models import Entry, EntryDefinition, EntryReview, EntrySettings, Server, previous_definition
from toolvet.db.types import utcnow
from toolvet.domain.diff import diff_definitions
from toolvet.domain.findings import Severity, severity_rank
from toolvet.domain.policy import ReviewState, held_for_findings, is_available, offered, review_state
from toolvet.errors import NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.entries import EntryDiffOut, EntryKind, EntryOut, EntryPatch
from toolvet.schemas.tools import ChangeOut
from toolvet.services import audit
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.servers import load as load_server
from toolvet.services.servers import validated

#: What ``toolvet prompt ...`` and ``/prompts`` cover, and what ``toolvet resource ...`` and ``/resources`` do.
PROMPTS: Final[tuple[EntryKind, ...]] = ("prompt",)
RESOURCES: Final[tuple[EntryKind, ...]] = ("resource", "template")


def _state(entry: Entry, server: Server) -> tuple[bool, ReviewState, bool, bool]:
    """(available, review state, offered, held) of an entry of ``server``."""
    available = is_available(entry.settings.enabled, server.enabled) and entry.retired_at is None
    state = review_state(entry.review.fingerprint if entry.review else None, entry.fingerprint)
    on_offer = offered(available, state, server.hold_changed_tools,
                       held_for_findings(server.hold_flagged_tools, state, entry.findings or []))
    return available, state, on_offer, available and not on_offer


def to_out(entry: Entry, server: Server) -> EntryOut:
    available, state, on_offer, held = _state(entry, server)
    review = entry.review
    return EntryOut(
        server=server.name, kind=entry.kind, key=entry.key, name=entry.name,  # type: ignore[arg-type]
        title=entry.title, description=entry.description, definition=entry.definition,
        fingerprint=entry.fingerprint, first_seen_at=entry.first_seen_at, last_seen_at=entry.last_seen_at,
        retired_at=entry.retired_at, findings=list(entry.findings or []), enabled=entry.settings.enabled,
        reviewed_fingerprint=review.fingerprint if review else None,
        reviewed_at=review.reviewed_at if review else None, reviewed_by=review.reviewed_by if review else None,
        review_state=state, is_available=available, offered=on_offer, held=held,
    )


def _label(kinds: Sequence[EntryKind]) -> str:
    return "prompt" if tuple(kinds) == PROMPTS else "resource"


def load(session: Session, kinds: Sequence[EntryKind], server_name: str, key: str) -> tuple[Entry, Server]:
    """The entry of one of ``kinds`` named ``key`` on the server (a static resource before a template
    with the same text)."""
    server = load_server(session, server_name)
    found = session.scalars(select(Entry).where(Entry.server_id == server.id, Entry.kind.in_(kinds),
                                                Entry.key == key).order_by(Entry.kind)).first()
    if found is None:
        raise NotFound(f"{_label(kinds)} {server_name}/{key} not found")
    return found, server


def list_entries(
    ctx: Context, principal: Principal, kinds: Sequence[EntryKind], *, server: str | None = None,
    offered_: bool | None = None, state: ReviewState | None = None, held: bool | None = None,
    min_severity: Severity | None = None, limit: int = 100, offset: int = 0,
) -> Page[EntryOut]:
    """Entries of ``kinds`` by server and key, filtered on the derived fields."""
    principal.require(Permission.READ)
    query = select(Entry, Server).join(Server, Entry.server_id == Server.id).where(Entry.kind.in_(kinds))
    with ctx.db.transaction() as session:
        if server is not None:
            load_server(session, server)
            query = query.where(Server.name == server)
        rows = session.execute(query.order_by(Server.name, Entry.kind, Entry.key)).unique().all()
        items = [to_out(entry, srv) for entry, srv in rows]
    if offered_ is not None:
        items = [e for e in items if e.offered == offered_]
    if state is not None:
        items = [e for e in items if e.review_state is state]
    if held is not None:
        items = [e for e in items if e.held == held]
    if min_severity is not None:
        floor = severity_rank(min_severity)
        items = [e for e in items if any(severity_rank(f.get("severity")) >= floor for f in e.findings)]
    return Page(items=items[offset:offset + limit], total=len(items), limit=limit, offset=offset)


def get_entry(ctx: Context, principal: Principal, kinds: Sequence[EntryKind], server: str, key: str) -> EntryOut:
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        return to_out(*load(session, kinds, server, key))


def _object_id(entry: Entry, server: Server) -> str:
    return f"{entry.kind}:{server.name}/{entry.key}"


def update_entry(ctx: Context, principal: Principal, kinds: Sequence[EntryKind], server_name: str, key: str,
                 patch: EntryPatch | dict[str, Any]) -> EntryOut:
    """Set an entry's ``enabled``."""
    patch = validated(EntryPatch, patch)
    principal.require(Permission.MANAGE_TOOLS)
    with ctx.db.transaction() as session:
        entry, server = load(session, kinds, server_name, key)
        before = to_out(entry, server)
        session.execute(update(EntrySettings).where(EntrySettings.entry_id == entry.id).values(enabled=patch.enabled))
        session.refresh(entry.settings)
        after = to_out(entry, server)
        audit.record(session, principal, f"{entry.kind}.update", entry.kind, _object_id(entry, server), before, after)
    return after


def review_entry(ctx: Context, principal: Principal, kinds: Sequence[EntryKind], server_name: str, key: str,
                 note: str | None = None) -> EntryOut:
    """Record that ``principal`` reviewed the entry's current definition (the note goes to the audit log)."""
    principal.require(Permission.REVIEW)
    with ctx.db.transaction() as session:
        entry, server = load(session, kinds, server_name, key)
        before = to_out(entry, server)
        session.merge(EntryReview(entry_id=entry.id, fingerprint=entry.fingerprint, digest=entry.digest,
                                  reviewed_at=utcnow(), reviewed_by=principal.actor))
        session.flush()
        session.refresh(entry)
        after = to_out(entry, server)
        audit.record(session, principal, f"{entry.kind}.review", entry.kind, _object_id(entry, server), before,
                     {**after.model_dump(mode="json"), "note": note})
    return after


def diff_entry(ctx: Context, principal: Principal, kinds: Sequence[EntryKind], server_name: str,
               key: str) -> EntryDiffOut:
    """What changed between the reviewed definition (else the previous one) and the current one."""
    principal.require(Permission.READ)
    with ctx.db.transaction() as session:
        entry, server = load(session, kinds, server_name, key)
        rows = session.scalars(select(EntryDefinition).where(EntryDefinition.entry_id == entry.id)
                               .order_by(EntryDefinition.id)).all()
        review = entry.review
        if review is not None:
            matching = [r for r in rows if r.digest == review.digest] or [
                r for r in rows if r.fingerprint == review.fingerprint]
            before, basis = (matching[-1], "reviewed") if matching else (None, None)
        else:
            previous = previous_definition(rows, entry.digest)
            before, basis = (previous, "previous") if previous is not None else (None, None)
        result = diff_definitions(before.definition if before else None, entry.definition)
        label = "resource template" if entry.kind == "template" else entry.kind
        note = result.note.replace("the tool", f"the {label}") if result.note else None
        return EntryDiffOut(
            server=server.name, kind=entry.kind, key=entry.key,  # type: ignore[arg-type]
            review_state=review_state(review.fingerprint if review else None, entry.fingerprint),
            compared_with=basis,  # type: ignore[arg-type]
            before_fingerprint=before.fingerprint if before else None, after_fingerprint=entry.fingerprint,
            before=before.definition if before else None, after=entry.definition,
            changes=[ChangeOut.model_validate(change, from_attributes=True) for change in result.changes],
            summary=[line.replace("the tool", f"the {label}") for line in result.summary], note=note,
        )


@dataclass(frozen=True, slots=True)
class Listed:
    """One live entry of an enabled server, as the gateway needs it: offered, or why not."""

    server: str
    kind: EntryKind
    key: str
    definition: dict[str, Any]
    refusal: str | None  # None: offered


def _refusal(entry: Entry, server: Server) -> str | None:
    available, state, on_offer, _ = _state(entry, server)
    if on_offer:
        return None
    what = f"{'resource template' if entry.kind == 'template' else entry.kind} {entry.key!r}"
    if not available:
        return f"{what} is disabled by the operator"
    if state is ReviewState.CHANGED:
        return f"{what} is held for review: its definition changed after it was reviewed"
    return f"{what} is held for review: a finding on it must be reviewed first"


def listed_entries(ctx: Context) -> list[Listed]:
    """Every live entry of every enabled server (one query), each offered or with its refusal."""
    query = (select(Entry, Server).join(Server, Entry.server_id == Server.id)
             .where(Server.enabled.is_(True), Entry.retired_at.is_(None))
             .order_by(Server.name, Entry.kind, Entry.key))
    with ctx.db.transaction() as session:
        listed = []
        for entry, server in session.execute(query).unique().all():
            listed.append(Listed(server.name, entry.kind, entry.key, entry.definition,  # type: ignore[arg-type]
                                 _refusal(entry, server)))
        return listed
