"""Tools: the paged, searched and sorted list with its bulk actions, the operator's
``enabled``/``writable`` switches, and the review page."""

from __future__ import annotations

import re
from typing import Any

from starlette.responses import Response

from toolvet.console.paging import pager, paging
from toolvet.console.visit import PREFIX, Visit, safe_next, url_part
from toolvet.domain.policy import ReviewState
from toolvet.errors import InvalidInput
from toolvet.services import review, servers, tool_bulk, tool_search, tools

SWITCHES = ("enabled", "writable")


def _tri(value: str, field: str) -> bool | None:
    """A yes/no/any filter."""
    if value in ("", "any"):
        return None
    if value in ("yes", "no"):
        return value == "yes"
    raise InvalidInput("must be yes, no or any", field)


_SEVERITY_RANK = {"info": 0, "warning": 1, "high": 2}
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
CONTEXT_CHARS = 60


def _string_at(definition: Any, path: str) -> str | None:
    """The string a finding's path names (a property name when the path ends at a key), or None."""
    node, last_key = definition, None
    for m in _PATH_PART.finditer("." + path):
        key, index = m.group(1), m.group(2)
        if index is not None:
            if not isinstance(node, list) or int(index) >= len(node):
                return None
            node, last_key = node[int(index)], None
        elif isinstance(node, dict) and key in node:
            node, last_key = node[key], key
        else:
            return None
    if isinstance(node, str):
        return node
    return last_key


def finding_view(definition: Any, finding: dict[str, Any]) -> dict[str, Any]:
    """A finding with the text around its span: ``before``, ``match`` (highlighted) and ``after``."""
    view = {"severity": finding.get("severity", "info"), "code": finding.get("code") or finding.get("kind"),
            **finding, "before": "", "match": None, "after": ""}
    text, span = _string_at(definition, finding.get("path", "")), finding.get("span")
    if text is not None and span and 0 <= span[0] <= span[1] <= len(text):
        a, b = span
        before = ("…" if a > CONTEXT_CHARS else "") + text[max(0, a - CONTEXT_CHARS):a]
        after = text[b:b + CONTEXT_CHARS] + ("…" if len(text) - b > CONTEXT_CHARS else "")
        view |= {"before": before, "match": text[a:b], "after": after}
    elif "evidence" in finding:
        view["match"] = finding["evidence"]
    return view


def tool_path(server: str, name: str) -> str:
    return f"{PREFIX}/tools/{url_part(server)}/{url_part(name)}"


TOOL_SORTS = tuple(tool_search.SORTS)


async def tool_list(visit: Visit) -> Response:
    """The tools that match, a page at a time (filtered, searched and sorted in the database)."""
    filters = {key: visit.field(key) for key in ("q", "server", "offered", "held", "review_state", "findings")}
    state = filters["review_state"]
    if state and state not in {s.value for s in ReviewState}:
        raise InvalidInput("must be unreviewed, reviewed or changed", "review_state")
    findings = filters["findings"]
    if findings not in ("", "any", "yes", "no", "warning", "high"):
        raise InvalidInput("must be any, yes, no, warning or high", "findings")
    asked = paging(visit, TOOL_SORTS, "name")
    page = await visit.run(
        tool_search.find_tools,
        server=filters["server"] or None,
        offered=_tri(filters["offered"], "offered"),
        held=_tri(filters["held"], "held"),
        state=ReviewState(state) if state else None,
        findings=None if findings in ("", "any") else findings,
        **asked.service_args(),
    )
    names = [s.name for s in (await visit.run(servers.list_servers, limit=1000)).items]
    return visit.render(
        "tools.html", title="Tools", tools=page.items, total=page.total, filters=filters, server_names=names,
        pg=pager(visit, page, asked), bulk_actions=tool_bulk.ACTIONS,
    )


def _choice(visit: Visit, key: str) -> bool | None:
    """A true/false form field; None when it was not sent."""
    value = visit.field(key)
    if not value:
        return None
    if value not in ("true", "false"):
        raise InvalidInput("must be true or false", key)
    return value == "true"


async def tool_bulk_action(visit: Visit) -> Response:
    """POST: enable, disable or review every selected tool (each its own change and audit entry)."""
    assert visit.form is not None
    selected = [v for v in visit.form.getlist("tool") if isinstance(v, str)]
    outcome = await visit.run(tool_bulk.apply, visit.field("action"), selected, visit.field("note").strip() or None)
    back = safe_next(visit.field("next"), f"{PREFIX}/tools")
    verb = {"enable": "Enabled", "disable": "Disabled", "review": "Reviewed"}[outcome.action]
    message = f"{verb} {len(outcome.done)} tool(s)."
    if outcome.failed:
        shown = "; ".join(f"{address}: {why}" for address, why in outcome.failed[:5])
        more = f" and {len(outcome.failed) - 5} more" if len(outcome.failed) > 5 else ""
        message += f" Not changed, {len(outcome.failed)}: {shown}{more}."
    return visit.redirect(back, message, "error" if outcome.failed else "ok")


def _switches(visit: Visit) -> dict[str, Any]:
    return {key: value for key in SWITCHES if (value := _choice(visit, key)) is not None}


async def tool_detail(visit: Visit) -> Response:
    """GET: the review page. POST: ``action=review`` records a review; otherwise switch flags."""
    server, name = visit.request.path_params["server"], visit.request.path_params["tool"]
    if visit.request.method == "POST":
        back = safe_next(visit.field("next"), tool_path(server, name))
        if visit.field("action") == "review":
            # ``writable`` comes with the review when the form asked to decide it again (the claims moved).
            writable = _choice(visit, "writable")
            out = await visit.run(review.review_tool, server, name, visit.field("note").strip() or None, writable)
            decided = "" if writable is None else f" It is {'writable' if out.writable else 'read-only'}."
            return visit.redirect(
                back, f"Reviewed {server}/{name}: its current definition is the approved one.{decided}"
            )
        patch: dict[str, Any] = _switches(visit)
        if floor := visit.field("approval"):
            patch["approval"] = floor  # checked by the service (ToolPatch)
        if not patch:
            raise InvalidInput("nothing to change", "action")
        out = await visit.run(tools.update_tool, server, name, patch)
        said = ", ".join(f"approval floor {out.approval.value}" if k == "approval" else f"{k} {'on' if v else 'off'}"
                         for k, v in patch.items())
        return visit.redirect(back, f"{out.server}/{out.name}: {said}.")
    tool = await visit.run(tools.get_tool, server, name)
    findings = [finding_view(tool.definition, f) for f in
                sorted(tool.findings, key=lambda f: -_SEVERITY_RANK.get(f.get("severity", ""), -1))]
    history = (await visit.run(review.history, server, name, limit=1000)).items
    diff = await visit.run(review.diff, server, name) if tool.review_state == ReviewState.CHANGED else None
    return visit.render(
        "tool.html",
        title=f"{server}/{name}",
        tool=tool,
        findings=findings,
        history=history,
        diff=diff,
        self_path=tool_path(server, name),
    )
