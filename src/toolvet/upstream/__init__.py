"""Everything toolvet says to an MCP server, for discovery and for forwarded requests alike.

- ``target``: where a server is (:class:`Target`).
- ``protocol``: the client protocol over any pipe: era negotiation, per-era stamping, the hooks a
  request's server-sent messages go to.
- ``http``: streamable HTTP on httpx2 (the one HTTP stack), ``streams``: stdio and legacy HTTP+SSE
  over the SDK's transports, both speaking raw JSON-RPC.
- ``direct`` and ``connections``: the connection pools under every upstream HTTP request (one per
  origin), their connections on asyncio's own transports, each checked by the SSRF ``guard``.
- ``pool``: the long-lived sessions forwarded requests use, per (server, caller).
- ``params``: the ``Mcp-Param-*`` headers a 2026-07-28 ``tools/call`` mirrors from its arguments.
- ``oauth``: OAuth 2.1 to upstreams on the SDK's client auth: obtaining, refreshing and handing out
  an OAuth-protected server's token (:class:`~toolvet.upstream.oauth.TokenSource`).
- ``standing``: what those sessions hear outside any request, and who it goes to.
- ``errors``: the failures, and the one table that turns any transport failure into a sentence.

Nothing outside this package imports the SDK's client side or httpx2 for talking to a server.
"""

from toolvet.upstream.errors import ChannelError, NeedsReconnect, ProtocolError, RpcError, SessionExpired, describe
from toolvet.upstream.protocol import NO_HOOKS, Hooks, Session, negotiate
from toolvet.upstream.target import Target

__all__ = [
    "NO_HOOKS",
    "ChannelError",
    "Hooks",
    "NeedsReconnect",
    "ProtocolError",
    "RpcError",
    "Session",
    "SessionExpired",
    "Target",
    "describe",
    "negotiate",
]
