"""Where an upstream MCP server is and how to reach it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from toolvet.upstream.oauth import TokenSource

__all__ = ["Target"]


@dataclass(frozen=True)
class Target:
    """Where an upstream server is and how to reach it."""

    transport: Literal["streamable-http", "sse", "stdio"]
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # sent on http transports (e.g. Authorization)
    command: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    #: Where an OAuth-protected server's ``Authorization`` comes from (one per server and process).
    auth: TokenSource | None = None
