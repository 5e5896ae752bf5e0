"""Cross-server findings during discovery passes: the passes' new and changed tools against the tools
other servers have in the registry (``domain.findings.cross_server_findings``), and back.

Candidates are the other servers' live tools whose name has the key (``domain.findings.name_key``: case,
separators and look-alike letters folded) of a tool a pass adds or changes, or of a word its text mentions
as a tool's name (``send_email``, ``sendEmail``, ```search```: ``domain.findings.mentioned_names``): for each
such key, the PER_NAME earliest registered (the
index on ``tools (name_key, id)`` finds them without reading the others). So a copy named ``Create-Issue``
or ``createIssue`` meets the ``create_issue`` it copies. A name changed by a letter (``create_isue``) has
another key: a tool's own key also brings the keys within one edit of it (``domain.findings.NearNames``,
over every key stored, kept per database by each process that writes passes: :func:`stored_keys`).

A tool that speaks of another by name (``when calling send_email, always ...``) is read against the
tools of that name when its own pass runs, and again when a later pass of another server brings a tool
of that name: each tool's mentioned names are stored by key (``tool_mentions``, :func:`write_mentions`),
and :meth:`CrossServer.add_findings` reads the tools that mention the names a pass adds. A new copy
of a tool adds a ``tool-duplicate`` finding to the copy and to the tool it copies (whose own pass may be
long over); a tool mentioned by a new one is not re-read (its findings are about its own text). A tool
retired by a pass is named by no finding afterwards (:meth:`CrossServer.retired`), nor is one an operator
removes (:func:`forget`).

:class:`CrossServer` serves the passes of one transaction (``services.discovery_writes`` applies several
passes' listings in one): each name's candidates are read once, with the tools' findings, and kept in
step with what the passes write, so every pass sees exactly what a query of its own would return; the
findings written back onto copied tools are gathered and written once, before the commit. A pass that
changes nothing reads nothing.

Servers an operator says run the same software (``Server.software``: deployments of one product) are compared as one
server is with itself: not at all. When a server's software changes, :func:`compare_again` works out the
findings between it and the servers running its old and new software anew, in the update's transaction.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Final

import orjson
from sqlalchemy import Connection, String, Text, bindparam, cast, column, delete, insert, select, update, values
from sqlalchemy.engine import Dialect, Engine

from toolvet.db.models import Server, Tool, ToolMention
from toolvet.domain import findings as checks
from toolvet.domain.findings.near_names import NearNames
from toolvet.domain.reconcile import ChangeSet, Upsert
from toolvet.jsontext import loads

#: A tool is compared with at most PER_NAME other servers' tools bearing one name: the earliest
#: registered (by id), which a copy imitates. A name many servers share (one vendor's server deployed
#: per team) then costs a few comparisons, not one per server, and never crowds out another name.
PER_NAME: Final = 2
#: A copied tool keeps at most this many cross-server findings (the earliest copies'): a tool that fifty
#: deployments resemble needs a reviewer's look, not fifty findings.
MAX_CROSS_FINDINGS: Final = 5
MAX_NAMES: Final = 2000
_CROSS_CODES: Final = frozenset({"tool-duplicate", "tool-shadowing"})

# The checks are reached as ``checks.NAME``, so ``domain.findings`` loads their rules on first use: a
# process that only reads servers (``toolvet server list``) imports this module through
# ``services.servers`` and needs no rule.
if TYPE_CHECKING:
    from toolvet.domain.definitions import ToolClaim
    from toolvet.domain.findings import OtherTool

_OTHER = Tool.__table__.alias("other")


_Compiled = tuple[str, tuple[str, ...] | None, dict[str, Any]]
_CANDIDATES: dict[tuple[Any, ...], _Compiled] = {}


def _select_candidates(dialect: Dialect, slots: int) -> _Compiled:
    """:func:`_compile_candidates`, compiled once per kind of dialect (its class, parameter style and server
    version: all that this statement's SQL depends on) and number of slots, not once per engine, so a
    process that opens another engine (a Context opened again) does not compile it anew (37 ms for 2,048
    slots): SQLAlchemy does not cache a statement holding a VALUES list, and compiling it cost more than
    running it. Slots are powers of two up to MAX_NAMES: a dozen entries per kind of dialect at most."""
    key = (type(dialect), dialect.paramstyle, dialect.server_version_info, slots)
    found = _CANDIDATES.get(key)
    if found is None:
        found = _CANDIDATES[key] = _compile_candidates(dialect, slots)
    return found


def _compile_candidates(dialect: Dialect, slots: int) -> _Compiled:
    """The SQL (and its positional parameter order) of the live tools whose name has each of the keys bound
    as ``p_key_0`` .. ``p_key_{slots-1}``, the PER_NAME + 1 earliest per key, whatever their server. A
    server's tools rarely share a key (``create_issue`` and ``createIssue`` on one server), so leaving out
    the pass's own nearly always leaves PER_NAME of the others."""
    wanted = (values(column("key", String), name="wanted")
              .data([(bindparam(f"p_key_{i}", type_=String),) for i in range(slots)]).cte("wanted"))
    earliest = (select(_OTHER.c.id)
                .where(_OTHER.c.name_key == wanted.c.key, _OTHER.c.retired_at.is_(None))
                .order_by(_OTHER.c.id).limit(PER_NAME + 1).correlate(wanted))
    statement = (select(Tool.id, Tool.server_id, Tool.name_key, Tool.name, Tool.title, Tool.description, Tool.findings,
                        Server.name.label("server"), Server.software)
                 .select_from(wanted).join(Tool, Tool.id.in_(earliest)).join(Server, Tool.server_id == Server.id)
                 .order_by(Tool.id))
    compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    order = tuple(compiled.positiontup) if compiled.positional and compiled.positiontup else None
    return compiled.string, order, dict(compiled.params)  # the limit's (and offset's) own values


# ------------------------------------------------------------------ every key stored, for near names

#: A process's index of the keys stored is read again from scratch when it is this old (seconds), so a
#: key it missed (a tool PostgreSQL committed after one with a higher id, or ids that a rolled-back
#: pass had used and a later one took again) is missed for at most this long.
REBUILD_AFTER: Final = 600.0
# Read by the primary key's range: grouped by key, SQLite's planner chose the (name_key, id) index and
# read all of it on every call (discovery Round 17).
_SELECT_KEYS_AFTER = (select(Tool.id, Tool.name_key).where(Tool.id > bindparam("p_id"), Tool.name_key.is_not(None))
                      .order_by(Tool.id))


class _StoredKeys:
    __slots__ = ("built", "last_id", "names")

    def __init__(self) -> None:
        self.names = NearNames()
        self.last_id = 0
        self.built = time.monotonic()


_STORED: weakref.WeakKeyDictionary[Engine, _StoredKeys] = weakref.WeakKeyDictionary()


def stored_keys(conn: Connection) -> NearNames:
    """Every name key stored in ``conn``'s database, as this process knows it: read once (the tools' ids
    and keys), then only the tools with a higher id than any read before, on each call (one indexed read
    per transaction that needs it), and read whole again after REBUILD_AFTER. Kept per engine, so by each
    process that writes passes; a key is never taken out (a superset: the candidates' query finds only
    live tools)."""
    stored = _STORED.get(conn.engine)
    if stored is None or time.monotonic() - stored.built > REBUILD_AFTER:
        stored = _STORED[conn.engine] = _StoredKeys()
    for tool_id, key in conn.execute(_SELECT_KEYS_AFTER, {"p_id": stored.last_id}):
        if key:
            stored.names.add(key)
        stored.last_id = tool_id
    return stored.names


# ------------------------------------------------------------------ names a tool's text speaks of

_SIBLING = Tool.__table__.alias("sibling")
_ANY_MENTION = select(ToolMention.tool_id).limit(1)
_DELETE_MENTIONS = delete(ToolMention).where(ToolMention.tool_id.in_(bindparam("p_ids", expanding=True)))
_INSERT_MENTIONS = insert(ToolMention)
_MENTIONERS = (
    select(Tool.id, Tool.server_id, Tool.name, Tool.title, Tool.description, Tool.annotations, Tool.findings,
           Server.name.label("server"), Server.software, ToolMention.name_key)
    .select_from(ToolMention).join(Tool, Tool.id == ToolMention.tool_id).join(Server, Server.id == Tool.server_id)
    .where(ToolMention.name_key.in_(bindparam("p_keys", expanding=True)), Tool.retired_at.is_(None),
           Tool.server_id != bindparam("p_server_id"))
)
#: Other servers' live tools whose text mentions one of ``p_keys`` (any of them may hold a steering finding
#: about a tool of that key on server ``p_server_id``).
_SELECT_MENTIONERS = _MENTIONERS.order_by(Tool.id)
_SELECT_SPEAKERS = (
    # A name its own server also bears speaks of that sibling.
    _MENTIONERS.where(~select(_SIBLING.c.id).where(_SIBLING.c.server_id == Tool.server_id,
                                                   _SIBLING.c.name_key == ToolMention.name_key,
                                                   _SIBLING.c.retired_at.is_(None)).exists())
    .order_by(Tool.id)
)


def _mentioned_keys(title: str | None, description: str | None, annotations: Any) -> set[str]:
    """The keys of the words a tool's title, description and annotations' title mention as a tool's name."""
    return {checks.name_key(n) for n in checks.mentioned_names(title, description,
                                                              checks.annotations_title(annotations))}


def write_mentions(conn: Connection, claims: list[tuple[int, str | None, str | None, Any]], replaced: list[int],
                   ) -> int:
    """Store the keys of the names each tool's title, description and annotations' title mention
    (``claims``: its id, title, description and annotations), after removing those stored for the tools
    ``replaced`` (their claims changed); returns how many it stored. Most prose names no tool, and writes
    nothing."""
    if replaced:
        conn.execute(_DELETE_MENTIONS, {"p_ids": replaced})
    rows = [{"tool_id": tool_id, "name_key": key} for tool_id, title, description, annotations in claims
            for key in sorted(_mentioned_keys(title, description, annotations))]
    if rows:
        conn.execute(_INSERT_MENTIONS, rows)
    return len(rows)


_UPDATE_FINDINGS = update(Tool).where(Tool.id == bindparam("p_id")).values(findings=bindparam("p_findings"))


def _without(findings: list[dict[str, Any]], codes: Collection[str], server_name: str,
             names: Collection[str] | None) -> list[dict[str, Any]]:
    """``findings`` less those of ``codes`` that name a tool of ``server_name`` (one of ``names``, or any
    when None)."""
    return [f for f in findings if not (f.get("code") in codes and f.get("other_server") == server_name
                                        and (names is None or f.get("other_tool") in names))]


class _Candidate:
    """A live tool that may be another server's candidate, as :class:`CrossServer` keeps it."""

    __slots__ = ("_copied_by", "_findings", "id", "other", "server_id")

    def __init__(self, tool_id: int, server_id: int, other: OtherTool, findings: Any) -> None:
        self.id = tool_id
        self.server_id = server_id
        self.other = other
        self._findings = findings  # as the driver returned it (SQLite: the JSON text) until first needed
        self._copied_by: frozenset[Any] | None = None  # the other_server of its findings, once decoded

    @property
    def findings(self) -> list[dict[str, Any]]:
        if not isinstance(self._findings, list):
            self._findings = loads(self._findings) if isinstance(self._findings, str | bytes) else []
        return self._findings

    @findings.setter
    def findings(self, value: list[dict[str, Any]]) -> None:
        self._findings = value
        self._copied_by = None

    def may_name(self, server: str) -> bool:
        """False when no finding of this tool names ``server`` (told from its text while it is not decoded)."""
        raw = self._findings
        if isinstance(raw, bytes):
            raw = raw.decode()
        if isinstance(raw, str):
            return server in raw
        if self._copied_by is None:
            self._copied_by = frozenset(f.get("other_server") for f in self.findings)
        return server in self._copied_by


def _keys(wanted: Iterable[set[str]]) -> list[str]:
    return sorted(set().union(*wanted))[:MAX_NAMES]


def _wanted(name: str, title: str | None, description: str | None, annotations: Any) -> set[str]:
    """The keys whose tools a tool of ``name`` is compared with: its own name's and those of the words its
    title, description and annotations' title mention as a tool's name."""
    return {checks.name_key(name)} | _mentioned_keys(title, description, annotations)


def _merged(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A tool's findings once a pass found it copied, or spoken of, by tools the pass brings (``new``, about
    those tools): its own findings, the cross-server ones about other tools (another server's, or another
    tool of the same server that this pass did not bring again), and the new ones while fewer than
    MAX_CROSS_FINDINGS are held (the earliest are kept, so a tool copied by a whole fleet is not rewritten
    by every pass; the earlier findings about a tool the pass brings again are replaced by its new ones)."""
    again = {(f.get("other_server"), f.get("other_tool")) for f in new}
    own = [f for f in old if f.get("code") not in _CROSS_CODES]
    cross = [f for f in old
             if f.get("code") in _CROSS_CODES and (f.get("other_server"), f.get("other_tool")) not in again]
    return own + cross + new[:max(MAX_CROSS_FINDINGS - len(cross), 0)]


class CrossServer:
    """The cross-server findings of the passes written in one transaction on ``conn``, in order."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._by_key: dict[str, list[_Candidate]] = {}  # the PER_NAME + 1 earliest live tools per key read
        self._by_id: dict[int, _Candidate] = {}
        self._pending: dict[int, _Candidate] = {}  # findings changed here, written by flush
        self._near: NearNames | None = None  # every key stored, read on the first pass that needs it
        self._mentions: bool | None = None  # whether any tool mentions a name (read once, then kept in step)

    def _near_keys(self, key: str) -> list[str]:
        """The stored keys within one edit of ``key``."""
        if self._near is None:
            self._near = stored_keys(self._conn)
        return self._near.near(key)

    def _load(self, keys: list[str]) -> None:
        missing = [k for k in keys if k not in self._by_key]
        if not missing:
            return
        slots = 1 << max(len(missing) - 1, 0).bit_length()
        sql, order, fixed = _select_candidates(self._conn.dialect, slots)
        params = {**fixed} | {f"p_key_{i}": k for i, k in enumerate(missing + [""] * (slots - len(missing)))}
        for key in missing:
            self._by_key[key] = []
        for (tool_id, server_id, key, name, title, description, findings, server,
             software) in self._conn.exec_driver_sql(
                sql, tuple(params[k] for k in order) if order is not None else params):
            # A tool whose findings changed here keeps them (they are not written yet).
            candidate = self._pending.get(tool_id)
            if candidate is None:
                other = checks.OtherTool(server, name, description, title, software)
                candidate = _Candidate(tool_id, server_id, other, findings)
            self._by_key[key].append(candidate)
            self._by_id[tool_id] = candidate

    def _others(self, key: str, server_id: int, software: str | None) -> list[_Candidate]:
        """``key``'s candidates for a pass of server ``server_id`` of ``software`` (loaded): other servers'
        PER_NAME earliest, leaving out those running the same ``software`` (deployments that are a key's
        earliest leave it none: a later copy on a server running other software was compared with them when it came)."""
        return [c for c in self._by_key[key]
                if c.server_id != server_id and (software is None or c.other.software != software)][:PER_NAME]

    def _forget(self, key: str) -> None:
        """Read ``key``'s candidates again when next needed (the passes' writes changed who they are)."""
        for candidate in self._by_key.pop(key, ()):
            self._by_id.pop(candidate.id, None)

    def add_findings(self, server_id: int, server_name: str, changes: ChangeSet, software: str | None = None,
                     siblings: Collection[str] = ()) -> None:
        """Add to the pass's upserts (before they are written) the findings they earn against other servers'
        tools (those of servers running the same ``software`` left out; a mention of one of ``siblings``, the
        names of the server's own tools, is no mention of another server's), and change the matching
        ``tool-duplicate`` and ``tool-shadowing`` findings of the tools they copy or that speak of them (see
        :meth:`flush`)."""
        if not changes.added and not changes.changed:
            return
        # A revived tool is spoken of again as a new one is (its retirement took the steering findings off).
        if arrived := [*changes.added, *(u for u in changes.changed if u.revived)]:
            self._spoken_of(server_id, server_name, arrived, software)
        upserts = []
        for u in (*changes.added, *changes.changed):
            own = checks.name_key(u.claim.name)
            close = self._near_keys(own)
            upserts.append((u, own, close, _wanted(u.claim.name, u.claim.title, u.claim.description,
                                                                u.claim.annotations).union(close)))
        keys = _keys(wanted for _, _, _, wanted in upserts)
        self._load(keys)
        by_key: dict[str, list[_Candidate]] = {}
        for key in keys:
            if others := self._others(key, server_id, software):
                by_key[key] = others
        if not by_key:
            return
        copied: dict[int, list[dict[str, Any]]] = {}
        for upsert, own, close, wanted in upserts:
            candidates = (by_key.get(own, []) if len(wanted) == 1
                          else [c for key in sorted(wanted) for c in by_key.get(key, ())])
            if not candidates:
                continue
            found = checks.cross_server_findings(server_name, upsert.claim.definition,
                                                 [c.other for c in candidates], software, siblings)
            upsert.findings.extend(found)
            copies: set[int] = set()
            for f in found:
                if f["code"] != "tool-duplicate":
                    continue
                original = next(c for c in candidates
                                if (c.other.server, c.other.name) == (f["other_server"], f["other_tool"]))
                copies.add(original.id)
                mine = checks.OtherTool(server_name, upsert.claim.name, upsert.claim.description,
                                        upsert.claim.title, software)
                copied.setdefault(original.id, []).extend(checks.copied_findings(original.other, mine))
            # A tool of its name's key (or a near one) that this one copied before, and copies no more.
            for original in (c for key in (own, *close) for c in by_key.get(key, ())):
                if original.id not in copies:
                    self._drop(original, ("tool-duplicate",), server_name, (upsert.claim.name,))
        for tool_id, new in copied.items():
            self._amend(self._by_id[tool_id], new)

    def _amend(self, candidate: _Candidate, new: list[dict[str, Any]]) -> None:
        """Merge ``new`` into ``candidate``'s findings (:func:`_merged`), to be written by :meth:`flush`."""
        updated = _merged(candidate.findings, new)
        if updated != candidate.findings:
            candidate.findings = updated
            self._pending[candidate.id] = candidate

    def _any_mention(self) -> bool:
        """Whether any stored tool mentions a name (read once per transaction, then kept in step)."""
        if self._mentions is None:
            self._mentions = self._conn.execute(_ANY_MENTION).first() is not None
        return self._mentions

    def _speaker(self, row: Any) -> _Candidate:
        """The candidate of a tool read by a speakers' query (the one already held here, if any)."""
        candidate = self._pending.get(row.id) or self._by_id.get(row.id)
        if candidate is None:
            candidate = _Candidate(row.id, row.server_id, checks.OtherTool(row.server, row.name, row.description,
                                                                          row.title, row.software), row.findings)
        return candidate

    def _spoken_of(self, server_id: int, server_name: str, added: list[Upsert], software: str | None) -> None:
        """Other servers' live tools whose text mentions a name this pass adds (or revives): read again
        against the new tools of that name, they earn the ``tool-shadowing`` findings their own pass could
        not give (the tool they steer about was not there yet)."""
        if not self._any_mention():
            return  # no tool speaks of any name (a registry of plain prose reads nothing more)
        by_key: dict[str, list[OtherTool]] = {}
        for u in added:
            by_key.setdefault(checks.name_key(u.claim.name), []).append(
                checks.OtherTool(server_name, u.claim.name, u.claim.description, u.claim.title, software))
        rows = self._conn.execute(_SELECT_SPEAKERS, {"p_keys": sorted(by_key), "p_server_id": server_id}).all()
        for row in rows:
            definition = {"name": row.name, "title": row.title, "description": row.description,
                          "annotations": row.annotations}
            found = [f for f in checks.cross_server_findings(row.server, definition, by_key[row.name_key], row.software)
                     if f["code"] == "tool-shadowing"]
            if found:
                self._amend(self._speaker(row), found)

    def _drop(self, candidate: _Candidate, codes: Collection[str], server_name: str, names: Collection[str]) -> None:
        """Remove from ``candidate`` its ``codes`` findings naming one of the tools ``names`` of ``server_name``."""
        if not candidate.may_name(server_name):
            return  # most tools: no finding names that server
        kept = _without(candidate.findings, codes, server_name, names)
        if len(kept) != len(candidate.findings):
            candidate.findings = kept
            self._pending[candidate.id] = candidate

    def retired(self, server_id: int, server_name: str, names: list[str], software: str | None = None) -> None:
        """A pass retired (or deleted) its tools ``names``: the tools they copied no longer name them."""
        if not names:
            return
        keys: dict[str, list[str]] = {}
        for name in names:
            own: str = checks.name_key(name)
            keys[name] = [own, *self._near_keys(own)]
        self._load(sorted({key for near in keys.values() for key in near}))
        for name, near in keys.items():
            for original in (c for key in near for c in self._others(key, server_id, software)):
                self._drop(original, ("tool-duplicate",), server_name, (name,))
        if not self._any_mention():
            return
        # The tools that steered about them: those whose text mentions one of the names' keys.
        gone = set(names)
        for row in self._conn.execute(_SELECT_MENTIONERS, {"p_keys": sorted({near[0] for near in keys.values()}),
                                                           "p_server_id": server_id}):
            self._drop(self._speaker(row), ("tool-shadowing",), server_name, gone)

    def written(self, changes: ChangeSet, removed: bool, mentions: int = 0) -> None:
        """Keep the candidates in step with a pass's writes (``removed``: its stale tools were deleted, not
        retired; ``mentions``: how many names its claims' texts mention): what a query in the same
        transaction would now return."""
        if mentions:
            self._mentions = True
        for upsert in changes.changed:
            tool_id = upsert.tool_id
            if tool_id is None:
                continue
            # The pass wrote the tool's own findings over any changed here (as a write of them would have been).
            self._pending.pop(tool_id, None)
            if upsert.revived:
                self._forget(checks.name_key(upsert.claim.name))  # live again, perhaps among its key's earliest
                continue
            candidate = self._by_id.get(tool_id)
            if candidate is None:
                continue
            c = upsert.claim
            candidate.other = checks.OtherTool(candidate.other.server, c.name, c.description, c.title,
                                               candidate.other.software)
            candidate.findings = list(upsert.findings)
        for upsert in changes.added:
            # A new tool is the latest of its key: it joins only a key that has fewer than PER_NAME + 1.
            key = checks.name_key(upsert.claim.name)
            if self._near is not None:
                self._near.add(key)
            known = self._by_key.get(key)
            if known is not None and len(known) <= PER_NAME:
                self._forget(key)
        for tool_id in changes.retire_ids:
            candidate = self._by_id.get(tool_id)
            if candidate is not None:
                self._forget(checks.name_key(candidate.other.name))
            if removed:
                self._pending.pop(tool_id, None)

    def flush(self) -> None:
        """Write the findings changed on copied tools, one statement for all (before the commit)."""
        if self._pending:
            self._conn.execute(_UPDATE_FINDINGS, [{"p_id": tool_id, "p_findings": c.findings}
                                                  for tool_id, c in self._pending.items()])
            self._pending.clear()


# ------------------------------------------------------------------ a tool registered, edited or removed by hand

_SELECT_SERVER_NAMES = select(Tool.name).where(Tool.server_id == bindparam("p_server_id"), Tool.retired_at.is_(None))


def check_by_hand(conn: Connection, server_id: int, server_name: str, software: str | None, claim: ToolClaim,
                  own: list[dict[str, Any]], tool_id: int | None) -> list[dict[str, Any]]:
    """The findings of a tool registered (``tool_id`` None) or edited by hand on a manual server: ``own`` (its
    definition's) and those it earns against other servers' tools, as a discovery pass that brought it
    would give them; the tools it copies, and those that steer the model about it, get theirs (written
    on ``conn``, in the caller's transaction)."""
    upsert = Upsert(tool_id, claim, list(own))
    changes = ChangeSet(added=[upsert]) if tool_id is None else ChangeSet(changed=[upsert])
    siblings = {*conn.scalars(_SELECT_SERVER_NAMES, {"p_server_id": server_id}), claim.name}
    cross = CrossServer(conn)
    cross.add_findings(server_id, server_name, changes, software, siblings)
    cross.flush()
    return upsert.findings


# Other servers' tools whose findings' text holds ``p_name`` (a superset: each finding is checked again).
_SELECT_NAMED_BY = (
    select(Tool.id, Tool.findings)
    .where(Tool.server_id != bindparam("p_server_id"),
           # Server names hold no LIKE wildcard (lowercase letters, digits and "-").
           cast(Tool.findings, Text).contains(bindparam("p_name", type_=Text)))
)


def forget(conn: Connection, server_id: int, server_name: str, names: Collection[str] | None = None) -> int:
    """Take off other servers' tools the cross-server findings that name tools ``names`` of server
    ``server_name`` (all of its tools when None), which an operator is removing: a copy's and a steering
    finding about a tool that no longer exists would keep a tool flagged, and held, for nothing. Reads the
    tools whose findings mention the server (a removal by hand is rare; a pass's retirements read only the
    tools that could name them, :meth:`CrossServer.retired`). Written on ``conn``, in the caller's
    transaction; returns how many tools' findings changed."""
    updates = []
    for row in conn.execute(_SELECT_NAMED_BY, {"p_server_id": server_id, "p_name": server_name}):
        before = row.findings if isinstance(row.findings, list) else loads(row.findings or "[]")
        kept = _without(before, _CROSS_CODES, server_name, names)
        if len(kept) != len(before):
            updates.append({"p_id": row.id, "p_findings": kept})
    if updates:
        conn.execute(_UPDATE_FINDINGS, updates)
    return len(updates)


# ------------------------------------------------------------------ a server's software changed

_SELECT_SOFTWARE_SERVERS = select(Server.id, Server.name, Server.software).where(
    Server.id.in_(bindparam("p_ids", expanding=True)))
_SOFTWARE_TOOL_COLUMNS = (Tool.id, Tool.server_id, Tool.name, Tool.title, Tool.description, Tool.annotations,
                       Tool.findings)
_SELECT_SOFTWARE_TOOLS = (
    select(*_SOFTWARE_TOOL_COLUMNS)
    .where(Tool.server_id.in_(bindparam("p_ids", expanding=True)), Tool.retired_at.is_(None))
)
# A new sibling's tools that may hold a finding naming the server (its name in their findings' text: a
# superset, each finding is checked again); the others need nothing, so naming the software of many servers
# one at a time does not read all of them at each step.
_SELECT_NAMING_TOOLS = (
    select(*_SOFTWARE_TOOL_COLUMNS)
    .where(Tool.server_id.in_(bindparam("p_ids", expanding=True)), Tool.retired_at.is_(None),
           # Server names hold no LIKE wildcard (lowercase letters, digits and "-").
           cast(Tool.findings, Text).contains(bindparam("p_name", type_=Text)))
)
_SELECT_SOFTWARE_MEMBERS = select(Server.id).where(Server.software == bindparam("p_software"))


def compare_again(conn: Connection, server_id: int, before: str | None, after: str | None) -> int:
    """After an operator changed the software server ``server_id`` runs from ``before`` to ``after`` (None:
    none named): the cross-server findings between its live tools and those of the other servers running
    either (its old and new siblings), the only pairs whose sameness changed, worked out as a discovery
    pass would now. With the new siblings there are none (their findings naming each other go); with the
    old ones, per name, each tool is compared with the PER_NAME earliest of the other side's. Every other
    finding is kept. Written on ``conn``, in the caller's transaction; returns how many tools' findings
    changed."""
    def members(software: str | None) -> set[int]:
        if software is None:
            return set()
        return set(conn.scalars(_SELECT_SOFTWARE_MEMBERS, {"p_software": software})) - {server_id}

    joined, parted = members(after), members(before) if before != after else set()
    if not joined and not parted:
        return 0
    servers = {row.id: row for row in conn.execute(_SELECT_SOFTWARE_SERVERS,
                                                   {"p_ids": sorted({server_id, *joined, *parted})})}
    me = servers[server_id]
    mine = conn.execute(_SELECT_SOFTWARE_TOOLS, {"p_ids": [server_id]}).all()
    theirs: list[Any] = list(conn.execute(_SELECT_SOFTWARE_TOOLS, {"p_ids": sorted(parted)})) if parted else []
    if joined:
        theirs += conn.execute(_SELECT_NAMING_TOOLS, {"p_ids": sorted(joined), "p_name": me.name}).all()
    rows = sorted([*mine, *theirs], key=lambda row: row.id)
    member_names = {row.name for row in servers.values() if row.id != server_id}
    by_key: dict[bool, dict[str, list[Any]]] = {True: {}, False: {}}  # mine or theirs, by their name's key
    near = {True: NearNames(), False: NearNames()}
    before_findings: dict[int, list[dict[str, Any]]] = {}
    kept: dict[int, list[dict[str, Any]]] = {}
    # Each server's names as read here: all of its live tools for this server and its old siblings.
    siblings: dict[int, set[str]] = {}
    for row in rows:
        siblings.setdefault(row.server_id, set()).add(row.name)
        key = checks.name_key(row.name)
        by_key[row.server_id == server_id].setdefault(key, []).append(row)
        near[row.server_id == server_id].add(key)
        before_findings[row.id] = row.findings if isinstance(row.findings, list) else []
        # The findings between this server and its siblings go; those with the old siblings come back below.
        gone = member_names if row.server_id == server_id else {me.name}
        kept[row.id] = [f for f in before_findings[row.id]
                        if f.get("code") not in _CROSS_CODES or f.get("other_server") not in gone]
    earned: dict[int, list[dict[str, Any]]] = {row.id: [] for row in rows}
    copied: dict[int, list[dict[str, Any]]] = {row.id: [] for row in rows}
    for row in rows:
        # Each side's tools against the other side's: this server's against its siblings', and back.
        server = servers[row.server_id]
        side = by_key[row.server_id != server_id]
        wanted = _wanted(row.name, row.title, row.description, row.annotations).union(
            near[row.server_id != server_id].near(checks.name_key(row.name)))
        candidates = [c for key in sorted(wanted) for c in [
            c for c in side.get(key, ()) if server.software is None or servers[c.server_id].software != server.software
        ][:PER_NAME]]
        if not candidates:
            continue
        others = {(servers[c.server_id].name, c.name): c for c in candidates}
        definition = {"name": row.name, "title": row.title, "description": row.description,
                      "annotations": row.annotations}
        found = checks.cross_server_findings(server.name, definition,
                                             [_other(servers[c.server_id], c) for c in candidates], server.software,
                                             siblings[row.server_id])
        earned[row.id] += found
        for f in found:
            if f["code"] == "tool-duplicate":
                original = others[f["other_server"], f["other_tool"]]
                copied[original.id] += checks.copied_findings(_other(servers[original.server_id], original),
                                                              _other(server, row))
    updates = []
    for row in rows:
        updated = _unique(kept[row.id] + earned[row.id])
        cross = sum(1 for f in updated if f.get("code") in _CROSS_CODES)
        updated = _unique(updated + copied[row.id][:max(MAX_CROSS_FINDINGS - cross, 0)])
        if updated != before_findings[row.id]:
            updates.append({"p_id": row.id, "p_findings": updated})
    if updates:
        conn.execute(_UPDATE_FINDINGS, updates)
    return len(updates)


def _other(server: Any, tool: Any) -> OtherTool:
    return checks.OtherTool(server.name, tool.name, tool.description, tool.title, server.software)


def _unique(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``findings`` with each cross-server finding once (two copies find each other from both sides, and
    each side's finding on the other is the same), in order; other findings as they are."""
    seen: set[bytes] = set()
    out = []
    for f in findings:
        if f.get("code") in _CROSS_CODES:
            key = orjson.dumps(f, option=orjson.OPT_SORT_KEYS)
            if key in seen:
                continue
            seen.add(key)
        out.append(f)
    return out
