"""Prompts, resources, resource templates and completions of the upstream servers, federated.

An endpoint's servers are the ones its view names (``/mcp/servers/{name}``: that one) or, on ``/mcp``,
every server with an offered tool the caller may use. What is listed is what discovery stored and an
operator lets through (``services.entries``): each server's enabled prompts, resources and templates
that are not held for review, as the server listed them, read from the registry at most once per
:data:`toolvet.cache.READ_TTL` (:class:`EntryCache`) and merged onto one page (as tools are):

- prompts are named like tools: ``{server}_{prompt}`` on ``/mcp``, their own name on a server's view;
  ``prompts/get`` (and a completion) of a prompt that is disabled or held is refused, saying why;
- resources and templates keep their URIs while one server of the endpoint claims each (lists it, or
  names it as an offered tool's ``ui://`` resource). A URI that two or more of them claim is served,
  for each, as the server wrote it followed by :data:`MARKER` and the server's name
  (``data://config#toolvet-server=north``): every copy stays listed and readable, and none is read
  from another server (:class:`Claims`). A read, a subscription or a completion for a URI goes to the
  server its marker names, else to the one server of the caller's that claims it (two: refused, naming
  the URIs to use), else to the server whose template it is an expansion of (the most literal
  template's, when several match), else, on ``/mcp``, to the server whose tool returned it in a result,
  else to each server in turn until one answers.

Resource *contents* pass through unchanged: they are read at call time and are not vetted (a result's
``uri`` members and the links and embedded resources of tool results and prompts are only given the
URIs the client knows the resources by).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

import anyio
import anyio.to_thread
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from toolvet.cache import MISSING, TtlCache
from toolvet.domain.names import HOST_SERVER
from toolvet.errors import UpstreamError
from toolvet.gateway.offered import OfferedCache, View
from toolvet.services.context import Context
from toolvet.services.entries import Listed, listed_entries

__all__ = ["MARKER", "Claims", "EntryCache", "Federation", "Routed", "namespaced", "split_namespaced"]

log = logging.getLogger("toolvet.gateway")

#: The entry kind each list holds, by the list's member name.
_KIND_OF: Final = {"prompts": "prompt", "resources": "resource", "resourceTemplates": "template"}
#: URIs remembered per endpoint for routing reads (the oldest are forgotten first).
MAX_ROUTES: Final = 10_000
#: Follows a URI that two or more of an endpoint's servers claim, then the name of the server whose
#: copy it is. A fragment keeps the scheme (an MCP Apps host wants ``ui://``), the authority, the path
#: and the query as the server wrote them, and a template's expansion keeps it.
MARKER: Final = "#toolvet-server="
#: Server names are lower-case letters, digits and "-" (``schemas.servers``).
_SERVER_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
#: An RFC 6570 expression, and what each operator's expansion may be: simple string expansion
#: percent-encodes "/", "?" and "#"; reserved expansion keeps them; the others start with their own
#: character or are empty.
_EXPRESSION: Final = re.compile(r"\{([+#./;?&]?)[^}]*\}")
_EXPANSIONS: Final = {"": r"[^/?#]*", "+": r".*", "#": r"(?:#.*)?", ".": r"(?:\..*)?", "/": r"(?:/.*)?",
                      ";": r"(?:;.*)?", "?": r"(?:\?.*)?", "&": r"(?:&.*)?"}

#: Sends one request to one server on the caller's session: (server, method, params) -> raw result.
Send = Callable[[str, str, dict[str, Any] | None], Awaitable[Any]]


def namespaced(uri: str, server: str) -> str:
    """``uri`` of ``server`` as an endpoint serves it when another of its servers claims it too."""
    return f"{uri}{MARKER}{server}"


def split_namespaced(uri: str) -> tuple[str, str] | None:
    """(server, the URI as that server wrote it) of a :func:`namespaced` URI; None for any other."""
    at = uri.rfind(MARKER)
    if at < 0:
        return None
    server = uri[at + len(MARKER):]
    return (server, uri[:at]) if server and _SERVER_CHARS.issuperset(server) else None


@dataclass(frozen=True)
class Template:
    """A resource template a server lists, as a pattern its expansions match."""

    server: str
    pattern: re.Pattern[str]
    #: How many of its characters are literal (outside its expressions): of two templates an expansion
    #: matches, the one with more says more about it (``notes://{id}`` over ``{+path}``).
    literal: int

    @classmethod
    def of(cls, server: str, template: str) -> Template:
        return cls(server, *_pattern(template))


@lru_cache(maxsize=4096)
def _pattern(template: str) -> tuple[re.Pattern[str], int]:
    """A template's pattern and its count of literal characters (worked out once: the claims are worked
    out again each time the entries are read)."""
    parts, at, literal = [], 0, 0
    for m in _EXPRESSION.finditer(template):
        parts.append(re.escape(template[at:m.start()]))
        literal += m.start() - at
        parts.append(_EXPANSIONS[m.group(1)])
        at = m.end()
    parts.append(re.escape(template[at:]))
    return re.compile("".join(parts), re.DOTALL), literal + len(template) - at


@dataclass(frozen=True)
class Claims:
    """Which servers of an endpoint claim each URI: list it as a resource or a template, or name it as
    an offered tool's ``ui://`` resource."""

    by_uri: Mapping[str, frozenset[str]]
    #: Whether some URI has two or more claimants (else nothing served here is namespaced but URIs
    #: that hold the marker already).
    shared: bool
    templates: tuple[Template, ...] = ()

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]], templates: Iterable[tuple[str, str]] = ()) -> Claims:
        """The claims of (server, URI) pairs; ``templates`` are those of the pairs that are templates."""
        by_uri: dict[str, set[str]] = {}
        for server, uri in pairs:
            by_uri.setdefault(uri, set()).add(server)
        frozen = {uri: frozenset(servers) for uri, servers in by_uri.items()}
        return cls(frozen, any(len(s) > 1 or MARKER in uri for uri, s in frozen.items()),
                   tuple(Template.of(server, template) for server, template in templates))

    def outward(self, server: str, uri: str) -> str:
        """``uri`` of ``server`` as the endpoint serves it: namespaced when another server claims it too
        (or when it holds the marker itself, so that reading it back cannot name another server)."""
        if len(self.by_uri.get(uri, ())) > 1 or MARKER in uri:
            return namespaced(uri, server)
        return uri

    def owners(self, uri: str, servers: Iterable[str]) -> list[str]:
        """The servers among ``servers`` that claim ``uri`` as written, in their order."""
        claimants = self.by_uri.get(uri, frozenset())
        return [server for server in servers if server in claimants]

    @property
    def template_servers(self) -> list[str]:
        """Every server that lists a template, in name order."""
        return sorted({t.server for t in self.templates})

    def expanders(self, uri: str, servers: Iterable[str]) -> list[str]:
        """The servers among ``servers`` whose templates ``uri`` is an expansion of, in their order: those
        of the template with the most literal characters when several match."""
        known = set(servers)
        matching = [t for t in self.templates if t.server in known and t.pattern.fullmatch(uri)]
        best = max((t.literal for t in matching), default=0)
        found = {t.server for t in matching if t.literal == best}
        return [server for server in servers if server in found]


NO_CLAIMS: Final = Claims({}, False)


def ambiguous(uri: str, owners: Iterable[str]) -> MCPError:
    """The error for a URI, as written, that several of the caller's servers claim."""
    named = list(owners)
    choices = " or ".join(namespaced(uri, server) for server in named)
    return MCPError(INVALID_PARAMS, f"{uri[:200]} is claimed by {', '.join(named)}: use {choices[:600]}")


@dataclass(frozen=True)
class Entries:
    """The live entries of every enabled server, indexed for the gateway."""

    by_server: dict[tuple[str, str], list[Listed]]  # (server, kind) -> its entries, in key order

    def find(self, server: str, kind: str, key: str) -> Listed | None:
        return next((e for e in self.by_server.get((server, kind), ()) if e.key == key), None)


class EntryCache:
    """The stored entries, re-read from the registry at most once per :data:`toolvet.cache.READ_TTL`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._current: TtlCache[None, Entries] = TtlCache(max_size=1)
        self._lock = anyio.Lock()

    async def get(self) -> Entries:
        if (hit := self._current.get(None)) is not MISSING:
            return hit
        async with self._lock:
            if (hit := self._current.get(None)) is not MISSING:
                return hit
            return self._current.put(None, await anyio.to_thread.run_sync(self._read))

    def _read(self) -> Entries:
        by_server: dict[tuple[str, str], list[Listed]] = {}
        for entry in listed_entries(self.ctx):
            by_server.setdefault((entry.server, entry.kind), []).append(entry)
        return Entries(by_server)


@dataclass(frozen=True)
class Routed:
    """A prompt name as a client used it, resolved: its server, its own name there, and why it is
    refused (None: offered)."""

    server: str
    name: str
    refusal: str | None


@dataclass
class Federation:
    """The routing of one endpoint's prompts and URIs over the stored entries and its offered tools."""

    prefixed: bool  # /mcp names prompts {server}_{prompt}
    entries: EntryCache
    offered: OfferedCache
    view: View
    _uris: dict[str, str] = field(default_factory=dict)
    _claims: tuple[Any, Any, Claims] | None = None  # (the entries and the offered set read, their claims)

    def remember(self, uri: str, server: str) -> None:
        """Route a URI no server lists (a tool's result linked to it) to ``server``."""
        if len(self._uris) >= MAX_ROUTES:
            self._uris.pop(next(iter(self._uris)))
        self._uris[uri] = server

    def owner(self, uri: str) -> str | None:
        return self._uris.get(uri)

    async def claims(self) -> Claims:
        """The endpoint's claims, worked out again when the entries or the offered tools were read again."""
        stored, offered = await self.entries.get(), await self.offered.get()
        cached = self._claims
        if cached is not None and cached[0] is stored and cached[1] is offered:
            return cached[2]
        listed = [(kind, server, entry.key) for (server, kind), items in stored.by_server.items()
                  if kind in ("resource", "template") and self.view.serves(server)
                  for entry in items if entry.refusal is None]
        pairs = [(server, key) for _, server, key in listed]
        pairs += [(tool.server, uri) for tool in offered.names(self.view).values()
                  if tool.server != HOST_SERVER and (uri := tool.resource_uri) is not None]
        claims = Claims.of(pairs, [(server, key) for kind, server, key in listed if kind == "template"])
        self._claims = (stored, offered, claims)
        return claims

    async def list(self, servers: Iterable[str], key: str) -> list[dict[str, Any]]:
        """Every offered item of one list (``key``: "prompts", "resources", "resourceTemplates") of
        ``servers``, in server order."""
        stored = await self.entries.get()
        claims = await self.claims() if key != "prompts" else NO_CLAIMS
        kind = _KIND_OF[key]
        return [self._outward(server, key, dict(entry.definition), claims)
                for server in servers for entry in stored.by_server.get((server, kind), ())
                if entry.refusal is None]

    def _outward(self, server: str, key: str, item: dict[str, Any], claims: Claims) -> dict[str, Any]:
        if key == "prompts":
            name = item.get("name")
            return {**item, "name": f"{server}_{name}"} if self.prefixed and isinstance(name, str) else item
        member = "uri" if key == "resources" else "uriTemplate"
        uri = item.get(member)
        return {**item, member: claims.outward(server, uri)} if isinstance(uri, str) else item

    async def prompt(self, name: str, servers: Iterable[str]) -> Routed | None:
        """The stored prompt a listed prompt name means (offered or not), or None."""
        stored = await self.entries.get()
        known = list(servers)
        candidates = [(known[0], name)] if not self.prefixed and known else [
            (server, name[len(server) + 1:]) for server in known
            if name.startswith(f"{server}_") and len(name) > len(server) + 1]
        for server, own in candidates:
            if (entry := stored.find(server, "prompt", own)) is not None:
                return Routed(server, own, entry.refusal)
        return None

    def resolve(self, uri: str, servers: Iterable[str], claims: Claims) -> tuple[str, str] | None:
        """(server, the URI as it wrote it) for a URI as a client sent it: the server its marker names, or
        the one of ``servers`` that claims it; None when none does. Raises MCPError when several do."""
        if (split := split_namespaced(uri)) is not None and self.view.serves(split[0]):
            return split
        owners = claims.owners(uri, servers)
        if len(owners) > 1:
            raise ambiguous(uri, owners)
        return (owners[0], uri) if owners else None

    async def for_uri(self, send: Send, servers: Iterable[str], uri: str, method: str,
                      params_for: Callable[[str], dict[str, Any]]) -> tuple[str, str, Any]:
        """Send a URI's request (``params_for`` gives its params for the URI as the server wrote it) to
        the server that claims it (see :meth:`resolve`), else to those of ``servers`` whose template it
        expands, else to the one a tool result linked it from, else to each of ``servers`` until one
        answers; returns (server, the URI as it wrote it, the result)."""
        known = list(servers)
        claims = await self.claims()
        routed = self.resolve(uri, known, claims)
        if routed is not None:
            server, own = routed
            if server not in known:
                raise _not_offered(uri)
            return server, own, await send(server, method, params_for(own))
        # A template's expansion goes to the servers whose template it expands (one that answers any URI
        # then answers no other server's, nor does one whose tool linked to it); a URI no template
        # describes goes to the server whose tool result linked to it, else is asked of each in turn.
        expanders = claims.expanders(uri, known)
        owner = self.owner(uri)
        if owner in (expanders or known):
            return owner, uri, await send(owner, method, params_for(uri))
        last: UpstreamError | None = None
        for server in expanders or known:
            try:
                result = await send(server, method, params_for(uri))
            except UpstreamError as exc:
                last = exc
                continue
            self.remember(uri, server)
            return server, uri, result
        if last is not None:
            raise last
        raise _not_offered(uri)

    def linked(self, server: str, blocks: Iterable[Any], claims: Claims) -> None:
        """Give the resource links and embedded resources among content ``blocks`` of ``server`` (a tool
        result's or a prompt's, as JSON, changed in place) the URIs the endpoint serves them by (an
        expansion of a template two servers list is namespaced too), and route a linked URI no server
        lists back to ``server``."""
        for block in blocks:
            if not isinstance(block, dict):
                continue
            holder = block if block.get("type") == "resource_link" else block.get("resource")
            if block.get("type") not in LINKS or not isinstance(holder, dict) or not isinstance(
                    uri := holder.get("uri"), str):
                continue
            if uri in claims.by_uri or MARKER in uri:
                holder["uri"] = claims.outward(server, uri)
            elif len(claims.expanders(uri, claims.template_servers)) > 1:
                holder["uri"] = namespaced(uri, server)  # an expansion of a template two servers list
            else:
                self.remember(uri, server)


def _not_offered(uri: str) -> UpstreamError:
    """The error for a URI no server of the caller's answers for (as a server says it: -32002)."""
    return UpstreamError(f"no server offers {uri[:200]}", -32002, {"uri": uri[:200]}, "Resource not found")


#: The content block types that name a resource by its URI.
LINKS: Final = frozenset({"resource_link", "resource"})


def holds_links(blocks: Any) -> bool:
    """Whether a list of content blocks holds a resource link or an embedded resource."""
    return isinstance(blocks, list) and any(isinstance(b, dict) and b.get("type") in LINKS for b in blocks)
