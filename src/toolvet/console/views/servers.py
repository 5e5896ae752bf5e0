"""Servers: the list with each one's last discovery, add and edit forms, and "discover now"."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from toolvet.console.paging import pager, paging
from toolvet.console.visit import PREFIX, Visit, safe_next
from toolvet.errors import InvalidInput
from toolvet.services import discovery, servers, tool_search

BOOLEANS = ("enabled", "trust_annotations", "new_tools_enabled", "hold_changed_tools", "hold_flagged_tools",
            "remove_stale")
NEW_SERVER_DEFAULTS = {
    "transport": "streamable-http",
    "discovery": "auto",
    "enabled": True,
    "new_tools_enabled": True,
    "hold_changed_tools": True,
}


def _pairs(text: str, sep: str, field: str) -> dict[str, str]:
    """``Name: value`` (headers) or ``NAME=value`` (env) lines as a mapping."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, found, value = line.partition(sep)
        if not found or not name.strip():
            raise InvalidInput(f"each line must look like NAME{sep}value", field)
        out[name.strip()] = value.strip()
    return out


def parse_server_form(visit: Visit, *, new: bool) -> dict[str, Any]:
    """The form as a ServerCreate/ServerPatch dict. Empty secret boxes leave secrets as they are."""
    data: dict[str, Any] = {key: visit.field(key) == "on" for key in BOOLEANS}
    if new:
        data["name"] = visit.field("name").strip()
    data["transport"] = visit.field("transport") or "streamable-http"
    data["discovery"] = visit.field("discovery") or "auto"
    if floor := visit.field("approval"):  # absent: left as it is (a form without it lowers nothing)
        data["approval"] = floor
    for key in ("title", "url", "command", "cwd", "software"):
        data[key] = visit.field(key).strip() or None
    data["args"] = [line.strip() for line in visit.field("args").splitlines() if line.strip()]
    data["auth"] = visit.field("auth") or "none"
    if data["auth"] == "oauth2":
        data["oauth"] = {"grant": visit.field("oauth_grant") or "authorization_code",
                         "client_id": visit.field("oauth_client_id").strip() or None,
                         "client_secret": visit.field("oauth_client_secret").strip() or None,
                         "scope": visit.field("oauth_scope").strip() or None}
    headers, env = visit.field("headers"), visit.field("env")
    if headers.strip() or visit.field("clear_headers") == "on":
        data["headers"] = _pairs(headers, ":", "headers")
    if env.strip() or visit.field("clear_env") == "on":
        data["env"] = _pairs(env, "=", "env")
    return data


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    """Form values to fill back in after an error: never the secrets."""
    shown = {k: v for k, v in data.items() if k not in ("headers", "env", "oauth")}
    if isinstance(data.get("oauth"), dict):
        shown["oauth"] = {k: v for k, v in data["oauth"].items() if k != "client_secret"}
    return shown


async def server_list(visit: Visit) -> Response:
    """Servers a page at a time, each with its last run and how many of its tools are held."""
    asked = paging(visit, tuple(servers.SERVER_SORTS), "name")
    page = await visit.run(servers.list_servers, **asked.service_args())
    names = [s.name for s in page.items]
    last_run = await visit.run(discovery.last_runs, names)
    held = await visit.run(tool_search.held_by_server)
    return visit.render("servers.html", servers=page.items, last_run=last_run, held=held, title="Servers",
                        total=page.total, q=asked.q, pg=pager(visit, page, asked))


async def run_list(visit: Visit) -> Response:
    """Discovery runs, newest first, by server and status."""
    server, status = visit.field("server").strip(), visit.field("status").strip()
    asked = paging(visit, tuple(discovery.RUN_SORTS), "started", descending=True)
    page = await visit.run(discovery.list_runs, server=server or None, status=status or None,
                           **asked.service_args())
    return visit.render("runs.html", title="Discovery runs", runs=page.items, total=page.total, server=server,
                        run_status=status, q=asked.q, pg=pager(visit, page, asked))


async def server_new(visit: Visit) -> Response:
    if visit.request.method == "GET":
        return visit.render(
            "server_form.html", title="Add a server", server=None, values=NEW_SERVER_DEFAULTS, error=None
        )
    data = parse_server_form(visit, new=True)
    try:
        created = await visit.run(servers.create_server, data)
    except InvalidInput as exc:
        return visit.render(
            "server_form.html", 422, title="Add a server", server=None, values=_shown(data), error=exc.message
        )
    return visit.redirect(f"{PREFIX}/servers/{created.name}", f"Server {created.name} added.")


async def server_detail(visit: Visit) -> Response:
    name = visit.request.path_params["name"]
    server = await visit.run(servers.get_server, name)
    if visit.request.method == "GET":
        runs = await visit.run(discovery.list_runs, server=name, limit=10)
        return visit.render(
            "server.html",
            title=server.name,
            server=server,
            values=server.model_dump(mode="json"),
            runs=runs.items,
            error=None,
        )
    data = parse_server_form(visit, new=False)
    try:
        await visit.run(servers.update_server, name, data)
    except InvalidInput as exc:
        runs = await visit.run(discovery.list_runs, server=name, limit=10)
        return visit.render(
            "server.html",
            422,
            title=server.name,
            server=server,
            values={**server.model_dump(mode="json"), **_shown(data)},
            runs=runs.items,
            error=exc.message,
        )
    return visit.redirect(f"{PREFIX}/servers/{name}", f"Server {name} saved.")


async def discover_now(visit: Visit) -> Response:
    name = visit.request.path_params["name"]
    [run] = await discovery.discover(visit.ctx, visit.principal, [name])
    counts = (
        f"{run.added} added, {run.changed} changed, {run.unchanged} unchanged, {run.retired} retired, "
        f"{run.rejected} rejected"
    )
    message = f"Discovered {name}: {run.status}; {counts}." + (f" {run.error}" if run.error else "")
    back = visit.field("next") or f"{PREFIX}/servers"
    return visit.redirect(
        safe_next(back, f"{PREFIX}/servers"), message, "ok" if run.status == "ok" else "error"
    )
