"""Tool sets: the list, add and edit forms (the allow-list as one member per line), and delete."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from toolvet.console.visit import PREFIX, Visit
from toolvet.errors import InvalidInput
from toolvet.services import tool_sets

PAGE = f"{PREFIX}/sets"


def members_text(members: Any) -> str:
    """A set's members as the form shows them: ``server`` (every offered tool) or ``server/tool``."""
    return "\n".join(m.server if m.tool is None else f"{m.server}/{m.tool}" for m in members)


def parse_tool_set_form(visit: Visit) -> dict[str, Any]:
    """The form as a ToolSetPut dict: a server's name alone, or ``server/tool`` (the tool's own name,
    which may hold further slashes), on each line."""
    members: list[dict[str, Any]] = []
    for line in visit.field("members").splitlines():
        entry = line.strip()
        if entry:
            server, _, tool = entry.partition("/")
            members.append({"server": server.strip(), "tool": tool.strip() or None})
    return {"title": visit.field("title").strip() or None, "description": visit.field("description").strip() or None,
            "members": members}


def _values(data: dict[str, Any]) -> dict[str, Any]:
    lines = [m["server"] if m["tool"] is None else f"{m['server']}/{m['tool']}" for m in data["members"]]
    return {**data, "members": "\n".join(lines)}


async def tool_set_list(visit: Visit) -> Response:
    page = await visit.run(tool_sets.list_tool_sets, limit=1000)
    return visit.render("tool_sets.html", title="Tool sets", sets=page.items, members_text=members_text)


async def tool_set_new(visit: Visit) -> Response:
    if visit.request.method == "GET":
        return visit.render("tool_set_form.html", title="Add a tool set", tool_set=None, values={}, error=None)
    name = visit.field("name").strip()
    data = parse_tool_set_form(visit)
    try:
        created = await visit.run(tool_sets.create_tool_set, name, data)
    except InvalidInput as exc:
        return visit.render("tool_set_form.html", 422, title="Add a tool set", tool_set=None,
                            values={**_values(data), "name": name}, error=exc.message)
    return visit.redirect(f"{PAGE}/{created.name}", f"Tool set {created.name} added; served at {created.endpoint}.")


async def tool_set_detail(visit: Visit) -> Response:
    name = visit.request.path_params["name"]
    current = await visit.run(tool_sets.get_tool_set, name)
    values = {"title": current.title, "description": current.description, "members": members_text(current.members)}
    if visit.request.method == "GET":
        return visit.render("tool_set_form.html", title=current.name, tool_set=current, values=values, error=None)
    data = parse_tool_set_form(visit)
    try:
        await visit.run(tool_sets.replace_tool_set, name, data)
    except InvalidInput as exc:
        return visit.render("tool_set_form.html", 422, title=current.name, tool_set=current, values=_values(data),
                            error=exc.message)
    return visit.redirect(f"{PAGE}/{name}", f"Tool set {name} saved.")


async def tool_set_delete(visit: Visit) -> Response:
    name = visit.request.path_params["name"]
    await visit.run(tool_sets.delete_tool_set, name)
    return visit.redirect(PAGE, f"Tool set {name} deleted; {tool_sets.SET_PATH.format(name=name)} is no longer served.")
