"""The audit log, newest first, filtered by actor, object, action and time range, searched, paged."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.responses import Response

from toolvet.console.paging import pager, paging
from toolvet.console.visit import Visit
from toolvet.errors import InvalidInput
from toolvet.services import audit

SORTS = ("at",)


def _moment(visit: Visit, name: str) -> datetime | None:
    """A ``datetime-local`` field (``2026-12-01T03:00``), read as UTC."""
    text = visit.field(name).strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput("must be a date and time such as 2026-12-01T03:00 (UTC)", name) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


async def audit_list(visit: Visit) -> Response:
    filters = {key: visit.field(key).strip() for key in ("q", "actor", "object", "action", "since", "until")}
    since, until = _moment(visit, "since"), _moment(visit, "until")
    asked = paging(visit, SORTS, "at", descending=True)
    page = await visit.run(
        audit.list_entries, actor=filters["actor"] or None, object_id=filters["object"] or None,
        action=filters["action"] or None, since=since, until=until, q=asked.q, descending=asked.descending,
        limit=asked.limit, offset=asked.offset,
    )
    return visit.render(
        "audit.html", title="Audit log", entries=page.items, total=page.total, filters=filters,
        actions=await visit.run(audit.known_actions), pg=pager(visit, page, asked),
    )
