"""A farm of virtual MCP servers for the discovery benchmark: one uvicorn process, N servers, M tools each.

Every server lives at ``/s/{i}/mcp`` and speaks the stateless 2026-07-28 streamable-HTTP wire exactly as
``tests.upstreams.raw_pages_app(era="modern")`` does: it answers ``server/discover`` and ``tools/list``
(paginated by an opaque cursor) with ``application/json`` bodies. Tool definitions are realistic and
deterministic (a function of the server and tool index only), so a second discovery pass sees no change.

Every response is serialised once, at start-up, before the port opens; a request only parses its small
JSON-RPC envelope and splices its ``id`` into ready bytes, so the farm is not what a benchmark measures.

Run: ``python bench/farm.py --port 8765 --servers 1000 --tools 50 --page-size 50``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any, Final

from starlette.types import Receive, Scope, Send

PROTOCOL_VERSION: Final = "2026-07-28"
JSON_HEADERS: Final = [(b"content-type", b"application/json")]
# uvicorn closes idle keep-alive connections after 5 s by default; a client that reuses one just as it
# closes gets a ReadError. A CPU-bound pass leaves pooled connections idle that long, and that race is
# not what the benchmark measures, so the farm keeps connections open for the whole run.
KEEP_ALIVE_SECONDS: Final = 600

_VERBS: Final = ("list", "get", "search", "create", "update", "delete", "archive", "export", "sync", "count")
_NOUNS: Final = (
    "issues", "pull_requests", "comments", "files", "branches", "releases", "users", "teams", "projects",
    "invoices", "customers", "orders", "tickets", "documents", "events", "alerts", "metrics", "deployments",
    "secrets", "webhooks",
)
_DOMAINS: Final = ("engineering", "billing", "support", "analytics", "operations", "marketing", "security")
_READ_ONLY_VERBS: Final = frozenset({"list", "get", "search", "export", "count"})
_DESTRUCTIVE_VERBS: Final = frozenset({"delete", "archive"})


# ------------------------------------------------------------------------------------ definitions


def tool_name(server: int, index: int) -> str:
    """The name of tool ``index`` of ``server``: a verb_noun pair, rotated per server, unique per server.

    The farm is a fleet: its 200 pairs are shared by every server, so each name is borne by about a
    quarter of the servers, and a tool nearly copies those of its name in the same workspace (one
    vendor's server deployed many times)."""
    combos = len(_VERBS) * len(_NOUNS)
    slot = (index + server * 7) % combos
    name = f"{_VERBS[slot % len(_VERBS)]}_{_NOUNS[slot // len(_VERBS)]}"
    return name if index < combos else f"{name}_{index // combos}"


def tool_definition(server: int, index: int, *, distinct: bool = False) -> dict[str, Any]:
    """A realistic tool object: title, a 100-200 character description, a 3-4 property input schema with
    ``required``, and annotations. Deterministic in (server, index). ``distinct``: the server's number
    appended to the name twice (``_s12x12``), so no name is shared (servers of different software) and no
    two are within one edit of each other, which the cross-server checks would read as a copy renamed by
    a letter (``_s12`` and ``_s13``); the rest is the same."""
    base = tool_name(server, index)
    name = f"{base}_s{server}x{server}" if distinct else base
    verb, _, noun = base.partition("_")
    noun = noun.rstrip("_0123456789").replace("_", " ")
    domain = _DOMAINS[(server + index) % len(_DOMAINS)]
    properties: dict[str, Any] = {
        # The server and tool numbers make every inputSchema distinct across the farm, so no cache
        # keyed by schema content (validation, serialisation) could flatter the benchmark.
        "query": {"type": "string", "minLength": 1, "maxLength": 512,
                  "description": f"Full-text filter applied to the {noun}' titles and bodies "
                                 f"(server {server}, tool {index})."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                  "description": "Most results to return in one page."},
        "sort": {"type": "string", "enum": ["created", "updated", "relevance"], "default": "relevance",
                 "description": "Order of the results."},
    }
    if index % 2:
        properties["include_archived"] = {"type": "boolean", "default": False,
                                          "description": "Also return archived items."}
    return {
        "name": name,
        "title": f"{verb.capitalize()} {noun} ({domain})",
        "description": (
            f"{verb.capitalize()} {noun} in the {domain} workspace of server {server}. "
            f"Returns at most `limit` results ordered by `sort`; `query` filters by text. Tool {index}."
        ),
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": ["query"] if index % 3 else ["query", "limit"],
            "additionalProperties": False,
        },
        "annotations": {
            "title": f"{verb.capitalize()} {noun}",
            "readOnlyHint": verb in _READ_ONLY_VERBS,
            "destructiveHint": verb in _DESTRUCTIVE_VERBS,
            "idempotentHint": verb in _READ_ONLY_VERBS or verb == "update",
            "openWorldHint": False,
        },
    }


def discover_result(server: int) -> dict[str, Any]:
    """What ``server/discover`` answers, as ``raw_pages_app`` does."""
    return {
        "supportedVersions": [PROTOCOL_VERSION],
        "capabilities": {"tools": {}},
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": f"farm-{server}", "version": "1.0.0"}},
    }


def page_results(server: int, tools: int, page_size: int, *,
                 distinct: bool = False) -> dict[str | None, dict[str, Any]]:
    """The ``tools/list`` results of ``server`` keyed by the cursor that asks for them (None: first page)."""
    definitions = [tool_definition(server, j, distinct=distinct) for j in range(tools)]
    starts = list(range(0, max(tools, 1), page_size))
    pages: dict[str | None, dict[str, Any]] = {}
    for number, start in enumerate(starts):
        result: dict[str, Any] = {"tools": definitions[start : start + page_size]}
        if number + 1 < len(starts):
            result["nextCursor"] = f"page-{number + 1}"
        pages[None if number == 0 else f"page-{number}"] = result
    return pages


# --------------------------------------------------------------------------------------- serving


@dataclass(frozen=True)
class FarmServer:
    """One virtual server's pre-serialised JSON-RPC ``result`` members."""

    discover: bytes
    pages: dict[str | None, bytes]


def build_servers(servers: int, tools: int, page_size: int, *, distinct: bool = False) -> list[FarmServer]:
    """Serialise every server's answers once."""
    return [
        FarmServer(
            discover=_dumps(discover_result(i)),
            pages={cursor: _dumps(result)
                   for cursor, result in page_results(i, tools, page_size, distinct=distinct).items()},
        )
        for i in range(servers)
    ]


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _envelope(request_id: Any, member: bytes, body: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + _dumps(request_id) + b',"' + member + b'":' + body + b"}"


def _error(code: int, message: str) -> bytes:
    return _dumps({"code": code, "message": message})


async def _send(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    raw = [*(headers if headers is not None else JSON_HEADERS), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        event = await receive()
        if event["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif event["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _server_index(path: str, count: int) -> int | None:
    """``i`` of ``/s/{i}/mcp`` when it names a farm server, else None."""
    parts = path.split("/")
    if len(parts) != 4 or parts[0] or parts[1] != "s" or parts[3] != "mcp" or not parts[2].isdigit():
        return None
    index = int(parts[2])
    return index if index < count else None


def _answer(server: FarmServer, request: dict[str, Any]) -> bytes:
    """The JSON-RPC response body to one request."""
    method, request_id = request.get("method"), request.get("id")
    if method == "server/discover":
        return _envelope(request_id, b"result", server.discover)
    if method != "tools/list":
        return _envelope(request_id, b"error", _error(-32601, f"Method not found: {method}"))
    params = request.get("params") or {}
    cursor = params.get("cursor")
    page = server.pages.get(cursor)
    if page is None:
        return _envelope(request_id, b"error", _error(-32602, f"Invalid cursor: {cursor!r}"))
    return _envelope(request_id, b"result", page)


def farm_app(servers: list[FarmServer]) -> Any:
    """The raw ASGI app serving ``servers`` at ``/s/{i}/mcp``."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        index = _server_index(scope["path"], len(servers))
        if index is None:
            await _send(send, 404, b"", [])
            return
        if scope["method"] != "POST":
            await _send(send, 405, b"", [])
            return
        request = json.loads(await _read_body(receive))
        if not isinstance(request, dict) or request.get("id") is None:  # a notification or batch: no answer
            await _send(send, 202, b"", [])
            return
        await _send(send, 200, _answer(servers[index], request))

    return app


def main() -> None:
    """Build the farm and serve it until terminated."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--servers", type=int, default=1000)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--distinct-names", action="store_true", help="no tool name shared by two servers")
    args = parser.parse_args()
    app = farm_app(build_servers(args.servers, args.tools, args.page_size, distinct=args.distinct_names))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False,
                lifespan="on", http="h11", ws="none", backlog=4096, timeout_keep_alive=KEEP_ALIVE_SECONDS)


if __name__ == "__main__":
    main()
