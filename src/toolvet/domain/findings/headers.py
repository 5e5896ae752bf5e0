"""Arguments mirrored into HTTP headers (``x-mcp-header``, the 2026-07-28 streamable HTTP wire).

A tool's ``inputSchema`` may mark properties with ``x-mcp-header``; a client then sends each such
argument again as an ``Mcp-Param-<token>`` header, which every intermediary on the way reads. Two
findings come of it:

- ``header-declaration``: an annotation the protocol forbids (on a property not reachable through plain
  ``properties``, on an object or array, a name that is no RFC 9110 token, a duplicate). A conforming
  client drops the whole tool from its list, so an app never sees it; a name holding a line break or
  another control character would inject a header into the client's request (``high``). The judgement
  is the MCP SDK's own (``find_invalid_x_mcp_header``), imported the first time a definition declares
  one: a process that never meets one never loads the SDK.
- ``sensitive-header``: a credential mirrored into a header (``api_key``, ``password``, an access or
  session token), which the protocol says servers should not do: the header shows the secret to every
  proxy, load balancer and log on the way. A pagination or page token, a token *count* and a
  ``max_tokens`` limit are no credentials.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise
from typing import Any, Final

from toolvet.domain.findings.finding import finding

__all__ = ["header_findings"]

ANNOTATION: Final = "x-mcp-header"

#: Words that name a credential on their own, and pairs of words that do.
_SECRET_WORDS: Final = frozenset({"password", "passwd", "passphrase", "secret", "credential", "credentials",
                                  "apikey", "cookie", "bearer", "authorization"})
_SECRET_PAIRS: Final = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
                                  ("auth", "token"), ("access", "token"), ("refresh", "token"), ("id", "token"),
                                  ("session", "id"), ("session", "token"), ("client", "secret"), ("api", "token")})
#: A bare ``token`` names a credential unless the word before it says it is a cursor or a count.
_NOT_A_SECRET_TOKEN: Final = frozenset({"page", "next", "prev", "previous", "continuation", "cursor", "sync",
                                        "resume", "pagination", "max", "min", "num", "total", "count"})
_WORD: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@lru_cache(maxsize=1)
def _invalid() -> Any:
    # The SDK's judgement of a schema's annotations; importing it loads the SDK (about 0.4 s), so only
    # a definition that declares an annotation pays it.
    from mcp.shared.inbound import find_invalid_x_mcp_header

    return find_invalid_x_mcp_header


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _names_a_secret(*texts: str) -> bool:
    for text in texts:
        words = _words(text)
        if _SECRET_WORDS.intersection(words) or any(pair in _SECRET_PAIRS for pair in pairwise(words)):
            return True
        if words and words[-1] == "token" and (len(words) == 1 or words[-2] not in _NOT_A_SECRET_TOKEN):
            return True
    return False


def _annotated(schema: Any, path: str, out: list[tuple[str, str, Any]]) -> None:
    """Every ``x-mcp-header`` reachable through plain ``properties`` chains: (path, property, token)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return
    for name, child in properties.items():
        if not isinstance(child, dict):
            continue
        where = f"{path}.properties.{name}"
        if ANNOTATION in child:
            out.append((where, name, child[ANNOTATION]))
        _annotated(child, where, out)


def header_findings(definition: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings a definition's ``x-mcp-header`` annotations earn (none for a definition without one).
    Call it only for a definition whose JSON text holds ``x-mcp-header``: that test is the caller's, on
    the text it already has."""
    schema = definition.get("inputSchema")
    if not isinstance(schema, dict):
        return []
    annotated: list[tuple[str, str, Any]] = []
    _annotated(schema, "inputSchema", annotated)
    reason = _invalid()(schema)
    if reason is not None:
        injects = any(isinstance(token, str) and any(ord(c) < 32 or ord(c) == 127 for c in token)
                      for _, _, token in annotated)
        # The annotations then mirror nothing, so no argument reaches a header: this is the one finding.
        return [finding(
            "header-declaration", "high" if injects else "warning",
            f"an x-mcp-header annotation the protocol forbids ({reason}): conforming clients drop the tool"
            + ("; its header name holds a control character, which would inject a header into the request"
               if injects else ""),
            "inputSchema", evidence=reason)]
    return [finding("sensitive-header", "warning",
                    f"argument {name!r} looks like a credential and is mirrored into the HTTP header "
                    f"Mcp-Param-{token}, which every intermediary on the way can read", f"{where}.{ANNOTATION}",
                    span=(0, len(token)), evidence=token)
            for where, name, token in annotated if isinstance(token, str) and _names_a_secret(name, token)]
