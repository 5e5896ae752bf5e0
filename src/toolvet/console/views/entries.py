"""Prompts, resources and resource templates: one page listing them with their review and hold
state and findings (a held one with what changed), and the operator's enable/disable and review."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from toolvet.console.views.tools import finding_view
from toolvet.console.visit import PREFIX, Visit, safe_next
from toolvet.domain.policy import ReviewState
from toolvet.errors import InvalidInput
from toolvet.schemas.entries import EntryKind
from toolvet.services import entries

PATH = f"{PREFIX}/entries"
_GROUPS: dict[str, tuple[EntryKind, ...]] = {"prompt": entries.PROMPTS, "resource": entries.RESOURCES,
                                             "template": entries.RESOURCES}


async def entry_list(visit: Visit) -> Response:
    """Every entry, prompts first; a changed one shows its diff summary against the reviewed one."""
    groups = []
    for label, kinds in (("Prompts", entries.PROMPTS), ("Resources and templates", entries.RESOURCES)):
        items = (await visit.run(entries.list_entries, kinds, limit=1000)).items
        rows = []
        for item in items:
            diff = (await visit.run(entries.diff_entry, kinds, item.server, item.key)
                    if item.review_state == ReviewState.CHANGED else None)
            rows.append({"entry": item, "diff": diff,
                         "findings": [finding_view(item.definition, f) for f in item.findings]})
        groups.append((label, rows))
    return visit.render("entries.html", title="Prompts and resources", groups=groups,
                        total=sum(len(rows) for _, rows in groups))


async def entry_action(visit: Visit) -> Response:
    """POST: ``action=review`` records a review; ``enabled=true|false`` switches the entry."""
    params = visit.request.path_params
    kinds = _GROUPS.get(params["kind"])
    if kinds is None:
        raise InvalidInput("must be prompt, resource or template", "kind")
    server, key = params["server"], params["key"]
    back = safe_next(visit.field("next"), PATH)
    if visit.field("action") == "review":
        await visit.run(entries.review_entry, kinds, server, key, visit.field("note").strip() or None)
        return visit.redirect(back, f"Reviewed {server}/{key}: its current definition is the approved one.")
    enabled = visit.field("enabled")
    if enabled not in ("true", "false"):
        raise InvalidInput("must be true or false", "enabled")
    patch: dict[str, Any] = {"enabled": enabled == "true"}
    out = await visit.run(entries.update_entry, kinds, server, key, patch)
    return visit.redirect(back, f"{out.server}/{out.key}: {'enabled' if out.enabled else 'disabled'}.")
