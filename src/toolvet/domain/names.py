"""Name rules for servers, tools, tool sets and the software servers run."""

from __future__ import annotations

import re

SERVER_NAME_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$"
TOOL_NAME_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
#: The serverType of toolvet's own host tools; no registered server may take it.
HOST_SERVER = "toolvet"
RESERVED_SERVER_NAMES = frozenset({HOST_SERVER})

_SERVER_NAME = re.compile(SERVER_NAME_PATTERN)
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)


def _pattern_problem(name: str) -> str | None:
    """Why ``name`` does not follow the server-name pattern, or None when it does."""
    if not _SERVER_NAME.fullmatch(name):
        return f"{name!r} does not match {SERVER_NAME_PATTERN} (lowercase letters, digits and '-', 1-32 long)"
    return None


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a server, or None when it can."""
    if (problem := _pattern_problem(name)) is not None:
        return problem
    if name in RESERVED_SERVER_NAMES:
        return f"{name!r} is reserved for toolvet's own host tools"
    return None


def is_conventional_tool_name(name: str) -> bool:
    """True when a tool name follows the MCP naming rule (1-128 of ``[A-Za-z0-9._-]``)."""
    return _TOOL_NAME.fullmatch(name) is not None


def tool_set_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a tool set, or None when it can: the server-name rule, since a set's
    name is a path segment (``/mcp/sets/{name}``) and an audit object id, as a server's is."""
    return _pattern_problem(name)


def software_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name the software a server runs, or None when it can: the
    server-name rule, so it reads like the servers that run it (``crm`` for ``crm-sales``, ``crm-eu``)."""
    return _pattern_problem(name)
