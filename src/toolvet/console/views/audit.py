"""The audit log, newest first, filtered by actor and object."""

from __future__ import annotations

from starlette.responses import Response

from toolvet.console.visit import Visit
from toolvet.schemas.common import MAX_OFFSET
from toolvet.services import audit

PAGE = 100


async def audit_list(visit: Visit) -> Response:
    actor, object_id = visit.field("actor").strip(), visit.field("object").strip()
    try:
        offset = min(max(int(visit.field("offset") or 0), 0), MAX_OFFSET)
    except ValueError:
        offset = 0
    page = await visit.run(
        audit.list_entries, actor=actor or None, object_id=object_id or None, limit=PAGE, offset=offset
    )
    return visit.render(
        "audit.html",
        title="Audit log",
        entries=page.items,
        total=page.total,
        offset=offset,
        page_size=PAGE,
        actor=actor,
        object_id=object_id,
    )
