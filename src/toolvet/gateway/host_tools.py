"""The host tools (``services.host_tools``) as the call service runs them: each handler's answer
becomes an MCP ``CallToolResult`` (``structuredContent`` and its JSON text, or an ``isError`` result
with the sentence or the error's message)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from toolvet.errors import ToolvetError
from toolvet.services.auth import Principal
from toolvet.services.calls import CallService, HostTool, error_result
from toolvet.services.context import Context
from toolvet.services.host_tools import Handler, definitions


def _wrap(ctx: Context, handler: Handler) -> Callable[[Principal, dict[str, Any]], Awaitable[dict[str, Any]]]:
    async def run(principal: Principal, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            out = await handler(ctx, principal, arguments)
        except ToolvetError as exc:
            return error_result(exc.message)
        if isinstance(out, str):
            return error_result(out)
        structured = out.model_dump(mode="json")
        return {
            "content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}],
            "structuredContent": structured,
        }

    return run


def host_tools(ctx: Context) -> dict[str, HostTool]:
    """Every host tool, keyed by its name under serverType ``toolvet``."""
    return {
        name: HostTool(host.definition, _wrap(ctx, host.handler), host.require_approval, host.fingerprint)
        for name, host in definitions().items()
    }


def register_host_tools(service: CallService) -> None:
    """Put the host tools into the running call service (at startup)."""
    service.host_tools.update(host_tools(service.ctx))
    service.forget()
