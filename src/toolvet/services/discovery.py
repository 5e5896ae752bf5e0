"""Discovery passes (SPEC §4): list each server, reconcile, write the result in one transaction.

The network half (``toolvet.discovery``) never raises for what a server does; this half turns its
listing into a change set with the pure ``domain.reconcile`` and writes it with statements built only
from discovery-owned columns, so an operator's edit racing a pass is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Protocol, cast

import anyio
import anyio.to_thread
import httpx2
from sqlalchemy import BindParameter, Connection, Update, bindparam, delete, func, insert, select, update

from toolvet.db.models import DiscoveryRun, Server, Tool, ToolDefinition
from toolvet.db.ownership import DISCOVERY_COLUMNS, only
from toolvet.db.types import Preserialized, utcnow
from toolvet.discovery import Limits, Listing, Target, fetch_listing
from toolvet.domain.reconcile import ChangeSet, StoredTool, Upsert, reconcile
from toolvet.errors import InvalidInput, NotFound
from toolvet.schemas.common import Page
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import leases
from toolvet.services.auth import Permission, Principal
from toolvet.services.context import Context
from toolvet.services.servers import load as load_server

OnRun = Callable[[DiscoveryRunOut], None]


@dataclass(frozen=True)
class PassPlan:
    """One server to list: its id and name, and where it is (secrets opened)."""

    server_id: int
    name: str
    target: Target
    #: The server's remembered listing key when the plan was made: a fresh listing with this key will
    #: most likely take the no-change fast path, whose few statements are run on the event loop.
    listing_key: str | None = None
    updated_at: datetime | None = None


def limits_from(ctx: Context) -> Limits:
    s = ctx.settings
    return Limits(connect_timeout=s.connect_timeout, read_timeout=s.read_timeout, pass_timeout=s.pass_timeout,
                  max_pages=s.max_pages, max_tools=s.max_tools)


def shared_http_client(ctx: Context) -> httpx2.AsyncClient:
    """One pool for a whole sweep: a connection per server is set up once, not once per request."""
    s = ctx.settings
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(s.read_timeout, connect=s.connect_timeout),
        limits=httpx2.Limits(max_connections=max(s.discovery_concurrency * 2, 32),
                             max_keepalive_connections=max(s.discovery_concurrency * 2, 32)),
    )


def _plan(ctx: Context, server: Server) -> PassPlan:
    return PassPlan(server.id, server.name, Target(
        transport=server.transport, url=server.url, headers=ctx.secrets.open(server.headers_secret),  # type: ignore[arg-type]
        command=server.command, args=tuple(server.args or ()), env=ctx.secrets.open(server.env_secret),
        cwd=server.cwd,
    ), listing_key=server.listing_key, updated_at=server.updated_at)


def plan(ctx: Context, names: Sequence[str] | None) -> list[PassPlan]:
    """The servers a pass covers: those named (each must exist and be ``auto``), else every enabled
    ``auto`` server."""
    with ctx.db.transaction() as session:
        if names:
            plans = []
            for name in dict.fromkeys(names):
                server = load_server(session, name)
                if server.discovery == "manual":
                    raise InvalidInput(f"server {name!r} is manual: toolvet never contacts it", "server")
                plans.append(_plan(ctx, server))
            return plans
        servers = session.scalars(
            select(Server).where(Server.enabled.is_(True), Server.discovery == "auto").order_by(Server.name)
        ).all()
        return [_plan(ctx, s) for s in servers]


async def discover(
    ctx: Context, principal: Principal, names: Sequence[str] | None = None, *, trigger: str = "manual",
    on_run: OnRun | None = None, http: httpx2.AsyncClient | None = None,
) -> list[DiscoveryRunOut]:
    """List the named servers (or all enabled ``auto`` ones), at most ``discovery_concurrency`` at a
    time, and return one run report per server in the order planned."""
    principal.require(Permission.DISCOVER)
    plans = await anyio.to_thread.run_sync(plan, ctx, names)
    return await run_passes(ctx, plans, trigger=trigger, on_run=on_run, http=http)


async def run_passes(
    ctx: Context, plans: Sequence[PassPlan], *, trigger: str, on_run: OnRun | None = None,
    http: httpx2.AsyncClient | None = None, unless_discovered_since: datetime | None = None,
) -> list[DiscoveryRunOut]:
    reports: list[DiscoveryRunOut | None] = [None] * len(plans)
    limiter = anyio.CapacityLimiter(ctx.settings.discovery_concurrency)
    db_limiter = anyio.CapacityLimiter(1)
    owned = http is None
    client = http or shared_http_client(ctx)
    try:
        async def one(index: int, item: PassPlan) -> None:
            async with limiter:
                reports[index] = report = await run_pass(ctx, item, trigger=trigger, http=client,
                                                         unless_discovered_since=unless_discovered_since,
                                                         db_limiter=db_limiter)
            if on_run is not None:
                on_run(report)

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(plans):
                tg.start_soon(one, index, item)
    finally:
        if owned:
            await client.aclose()
    return [r for r in reports if r is not None]


def _skipped(item: PassPlan, trigger: str, why: str) -> DiscoveryRunOut:
    now = utcnow()
    return DiscoveryRunOut(id=None, server=item.name, trigger=trigger, runner=None, started_at=now, finished_at=now,
                           status="skipped", protocol_version=None, pages=0, added=0, changed=0, unchanged=0,
                           retired=0, rejected=0, rejections=[], error=why)


def _discovered_since(ctx: Context, server_id: int, since: datetime) -> bool:
    with ctx.db.transaction() as session:
        last = session.scalar(select(Server.last_discovery_at).where(Server.id == server_id))
    return last is not None and last >= since


def _begin(ctx: Context, key: str, lease_seconds: float, server_id: int, since: datetime | None) -> str | None:
    """Take the pass's lease and, for the scheduler, check nobody discovered the server since ``since``.

    One thread hop for what used to be up to three. Returns why the pass is skipped (the lease then
    not held), or None when the pass goes on holding the lease.
    """
    if not leases.acquire(ctx.db, key, lease_seconds):
        return "another toolvet process is discovering this server now"
    if since is None:
        return None
    try:
        discovered = _discovered_since(ctx, server_id, since)
    except BaseException:
        leases.release(ctx.db, key)
        raise
    if discovered:
        leases.release(ctx.db, key)
        return "discovered by another toolvet process meanwhile"
    return None


async def run_pass(
    ctx: Context, item: PassPlan, *, trigger: str, http: httpx2.AsyncClient | None,
    unless_discovered_since: datetime | None = None, db_limiter: anyio.CapacityLimiter | None = None,
) -> DiscoveryRunOut:
    """One pass over one server under its lease; a server another process is listing is skipped, and
    so is one discovered after ``unless_discovered_since`` (another process's scheduler beat us).

    Database work runs in worker threads bounded by ``db_limiter``; ``run_passes`` shares one
    limiter of 1 across a sweep. The pass is CPU-bound under the GIL, so more threads add no
    throughput: with one per concurrent pass they only fought the event loop for the GIL (20+ ms per
    hop measured) and each other for SQLite's single write lock (busy-waits with sleeps). The lease is
    released in the transaction that records the run; only a pass that fails or is cancelled before
    that commits releases it separately, shielded.
    """
    limiter = db_limiter if db_limiter is not None else anyio.CapacityLimiter(1)
    key = f"discover:{item.name}"
    lease_for = max(ctx.settings.lease_seconds, ctx.settings.pass_timeout + 60)
    # Taking the lease is two tiny statements: run on the loop, a thread hop would cost more than it.
    async with limiter:
        why = _begin(ctx, key, lease_for, item.server_id, unless_discovered_since)
    if why is not None:
        return _skipped(item, trigger, why)
    released = False
    try:
        started = utcnow()
        listing = await fetch_listing(item.target, limits_from(ctx), http)
        apply = partial(apply_listing, ctx, item, listing, started, trigger, lease_key=key)
        if _likely_unchanged(ctx, item, listing):
            # A handful of statements (apply_listing re-checks the key in its transaction): cheaper on
            # the loop than a hop to a worker thread, which under the GIL costs milliseconds of waiting.
            async with limiter:
                report = apply()
        else:
            report = await anyio.to_thread.run_sync(apply, limiter=limiter)
        released = True  # committed with the run (a thread hop is not abandoned on cancel)
        return report
    finally:
        if not released:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(leases.release, ctx.db, key, limiter=limiter)


# ------------------------------------------------------------------ the pass's statements, built once
#
# Built once at import and executed on a Core connection: constructing a statement, deriving its
# cache key and the ORM's bulk-statement handling cost more than the SQL itself for the small
# statements of a pass (a few ms per server). Every value is a bound parameter, typed by its column.


def _ids(name: str = "p_ids") -> BindParameter[Any]:
    return bindparam(name, expanding=True)


def _param(column: Any, name: str | None = None) -> BindParameter[Any]:
    return bindparam(name or f"p_{column.key}", type_=column.type)


_SELECT_STORED = select(
    Tool.id, Tool.name, Tool.definition_digest, Tool.advertised_read_only, Tool.retired_at
).where(Tool.server_id == _param(Tool.server_id))
_SELECT_INPUT_SCHEMAS = select(Tool.id, Tool.input_schema).where(Tool.id.in_(_ids()))
_INSERT_TOOLS = insert(Tool).returning(Tool.id, Tool.name)
_UPDATE_CLAIM = update(Tool).where(Tool.id == _param(Tool.id))  # SET: the discovery columns given
_SELECT_KNOWN_DIGESTS = select(ToolDefinition.tool_id, ToolDefinition.digest).where(
    ToolDefinition.tool_id.in_(_ids())
)
_INSERT_HISTORY = insert(ToolDefinition)
# The no-change fast path's one tool write: every live tool of the server seen now, but only while the
# server still has exactly the live tools the recorded listing left (p_count). An operator's delete
# (or anything else that moved the count) makes it match nothing, and the pass reconciles in full.
# The count reads an alias of tools: a bare Tool subquery would be auto-correlated to the row updated.
_live = Tool.__table__.alias("live")
_LIVE_COUNT = (
    select(func.count()).select_from(_live)
    .where(_live.c.server_id == bindparam("p_server_id"), _live.c.retired_at.is_(None))
    .scalar_subquery()
)
_TOUCH_LIVE_IF_COUNT = (
    update(Tool)
    .where(Tool.server_id == bindparam("p_server_id"), Tool.retired_at.is_(None),
           bindparam("p_count") == _LIVE_COUNT)
    .values(last_seen_at=_param(Tool.last_seen_at))
)
_TOUCH_UNCHANGED = update(Tool).where(Tool.id.in_(_ids())).values(last_seen_at=_param(Tool.last_seen_at))
_DELETE_STALE = delete(Tool).where(Tool.id.in_(_ids()))
# The one operator field discovery may touch, and only to clear it (SPEC §4.2).
_RETIRE_STALE = update(Tool).where(Tool.id.in_(_ids())).values(enabled=False,
                                                               retired_at=_param(Tool.retired_at))
_INSERT_RUN = insert(DiscoveryRun).returning(DiscoveryRun.id)

_SERVER_RUN_COLUMNS = (Server.last_discovery_at, Server.last_discovery_status, Server.last_error)
_SERVER_OK_COLUMNS = (*_SERVER_RUN_COLUMNS, Server.protocol_version, Server.server_info, Server.capabilities,
                      Server.instructions)


def _server_update(columns: Sequence[Any], **fixed: Any) -> Update:
    # updated_at is set to itself: discovery's own columns are no operator-visible edit, and an
    # explicit value keeps the column's onupdate from bumping it. RETURNING hands back what the tool
    # writes and the fast-path test need, so the server row is never read separately. The listing
    # columns are left alone here (RETURNING shows their values from before this pass), except that a
    # pass that is not ok clears the key (``fixed``): the next pass must then reconcile in full.
    return (
        update(Server).where(Server.id == _param(Server.id))
        .values({**{c.key: _param(c) for c in columns}, **fixed, "updated_at": Server.updated_at})
        .returning(Server.id, Server.name, Server.new_tools_enabled, Server.remove_stale, Server.updated_at,
                   Server.listing_key, Server.listing_tools)
    )


_UPDATE_SERVER_OK = _server_update(_SERVER_OK_COLUMNS)
_UPDATE_SERVER_NOT_OK = _server_update(_SERVER_RUN_COLUMNS, listing_key=None, listing_tools=None)
_UPDATE_SERVER_LISTING = (
    update(Server).where(Server.id == _param(Server.id))
    .values(listing_key=_param(Server.listing_key), listing_tools=_param(Server.listing_tools),
            updated_at=Server.updated_at)
)


def _likely_unchanged(ctx: Context, item: PassPlan, listing: Listing) -> bool:
    if listing.status != "ok" or listing.digest is None or item.listing_key is None or item.updated_at is None:
        return False
    return listing_key(listing.digest, ctx.settings.max_definition_bytes, item.updated_at) == item.listing_key


def listing_key(listing_digest: str, max_definition_bytes: int, server_updated_at: datetime) -> str:
    """What must be equal for a pass to skip reconcile: the listing as received, and everything else
    a full reconcile of it depends on that is not in the tools table.

    - ``max_definition_bytes``: a changed limit may reject (or now accept) a stored tool;
    - the server row's ``updated_at``: any operator edit of the server (``new_tools_enabled``,
      ``remove_stale``, its URL, a switch to ``manual`` and back with tools edited by hand meanwhile)
      forces one full reconcile. Discovery never moves ``updated_at`` itself.

    The stored tools' side is checked separately (their live count, in ``_TOUCH_LIVE_IF_COUNT``).
    """
    text = f"{listing_digest}\nmax_definition_bytes={max_definition_bytes}\nupdated_at={server_updated_at.isoformat()}"
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _stored(conn: Connection, server_id: int) -> list[StoredTool]:
    # No input_schema: decoding every tool's JSON schema on every pass cost more than the rest of a
    # no-change pass's reads; reconcile asks _input_schemas for the few changed tools that need it.
    rows = conn.execute(_SELECT_STORED, {"p_server_id": server_id}).all()
    return [StoredTool(id=r.id, name=r.name, digest=r.definition_digest,
                       advertised_read_only=r.advertised_read_only, retired=r.retired_at is not None) for r in rows]


def _input_schemas(conn: Connection, tool_ids: Sequence[int]) -> Mapping[int, Any]:
    """The stored input schemas of ``tool_ids``, read in the pass's transaction (reconcile's loader)."""
    rows = conn.execute(_SELECT_INPUT_SCHEMAS, {"p_ids": list(tool_ids)}).all()
    return {r.id: r.input_schema for r in rows}


_dumps = json.JSONEncoder().encode  # json.dumps(value) with default arguments, as the JSON columns store it

#: The JSON columns that hold a member of the definition, by the member's name.
_MEMBER_COLUMNS = (("inputSchema", "input_schema"), ("outputSchema", "output_schema"),
                   ("annotations", "annotations"), ("icons", "icons"), ("_meta", "meta"))


def _json_values(claim: Any) -> dict[str, Any]:
    """The definition and its member columns, each JSON value encoded once.

    ``json.dumps`` of a dict with str keys is ``{`` + ``"key": value`` pairs in the dict's own order,
    joined by ``, `` + ``}``; so the members' texts make up the definition's text, and each is bound
    as :class:`Preserialized` (stored as given, the same text the column would have written). A
    definition that is not a plain dict with str keys is bound as objects, serialised by the column.
    """
    d = claim.definition
    members: dict[str, str] | None = None
    if type(d) is dict and all(type(k) is str for k in d):
        members = {k: _dumps(v) for k, v in d.items()}
    if members is None:
        values = {"definition": d, "input_schema": claim.input_schema, "output_schema": claim.output_schema,
                  "annotations": claim.annotations, "icons": claim.icons, "meta": claim.meta}
        return values
    values = {"definition": Preserialized("{" + ", ".join([_dumps(k) + ": " + text
                                                           for k, text in members.items()]) + "}")}
    for member, column in _MEMBER_COLUMNS:
        # A null or absent member is SQL NULL (none_as_null), never the text "null".
        values[column] = None if d.get(member) is None else Preserialized(members[member])
    return values


def _claim_columns(upsert: Upsert, now: datetime, json_values: dict[str, Any] | None = None) -> dict[str, Any]:
    c = upsert.claim
    if json_values is None:
        json_values = _json_values(c)
    return only(DISCOVERY_COLUMNS, {
        "title": c.title, "description": c.description, **json_values, "advertised_read_only": c.advertised_read_only,
        "definition_fingerprint": c.fingerprint, "definition_digest": c.digest, "last_seen_at": now,
        "retired_at": None, "findings": upsert.findings,
    }, "discovery")


class ServerFlags(Protocol):
    """What ``write_changes`` reads of a server: a ``Server`` or a row with these columns."""

    @property
    def id(self) -> int: ...
    @property
    def new_tools_enabled(self) -> bool: ...
    @property
    def remove_stale(self) -> bool: ...


def write_changes(conn: Connection, server: ServerFlags, changes: ChangeSet, now: datetime) -> None:
    """Apply a change set; the caller's transaction makes it all or nothing."""
    history: list[dict[str, Any]] = []
    if changes.added:
        # New tools get their first operator-owned values here, once (SPEC §4.2); never again.
        values = {u.claim.name: _json_values(u.claim) for u in changes.added}
        rows = [{**_claim_columns(u, now, values[u.claim.name]), "server_id": server.id, "name": u.claim.name,
                 "enabled": server.new_tools_enabled, "writable": True, "first_seen_at": now}
                for u in changes.added]
        ids = conn.execute(_INSERT_TOOLS, rows).all()
        by_name = {u.claim.name: u.claim for u in changes.added}
        # The history row stores the definition's text already made for the tool row.
        history += [{"tool_id": r.id, "digest": by_name[r.name].digest, "fingerprint": by_name[r.name].fingerprint,
                     "definition": values[r.name]["definition"], "first_seen_at": now} for r in ids]
    if changes.changed:
        changed_ids = [u.tool_id for u in changes.changed]
        known = {(r.tool_id, r.digest) for r in conn.execute(_SELECT_KNOWN_DIGESTS, {"p_ids": changed_ids})}
        # One executemany; every row sets the same discovery-owned columns (_claim_columns).
        by_id = {cast(int, u.tool_id): _json_values(u.claim) for u in changes.changed}  # changed: ids are set
        conn.execute(_UPDATE_CLAIM, [{**_claim_columns(u, now, by_id[cast(int, u.tool_id)]), "p_id": u.tool_id}
                                     for u in changes.changed])
        for u in changes.changed:
            if (u.tool_id, u.claim.digest) not in known:
                history.append({"tool_id": u.tool_id, "digest": u.claim.digest, "fingerprint": u.claim.fingerprint,
                                "definition": by_id[cast(int, u.tool_id)]["definition"], "first_seen_at": now})
    if history:
        conn.execute(_INSERT_HISTORY, history)
    if changes.unchanged_ids:
        # One bulk statement for every unchanged tool (SPEC §4.2), never one write per row.
        conn.execute(_TOUCH_UNCHANGED, {"p_ids": changes.unchanged_ids, "p_last_seen_at": now})
    if changes.retire_ids:
        if server.remove_stale:
            conn.execute(_DELETE_STALE, {"p_ids": changes.retire_ids})
        else:
            conn.execute(_RETIRE_STALE, {"p_ids": changes.retire_ids, "p_retired_at": now})


def apply_listing(
    ctx: Context, item: PassPlan, listing: Listing, started: datetime, trigger: str, *,
    lease_key: str | None = None,
) -> DiscoveryRunOut:
    """Reconcile a listing and record the run, in one transaction. Only an ``ok`` listing changes
    tools: an incomplete or failed one is recorded and changes nothing (SPEC §4.2). With ``lease_key``
    this process's lease on it is released in the same transaction.

    Core statements throughout (no ORM identity map or flush): the server row is updated first and
    RETURNING hands back the flags the tool writes need, and the run row is inserted RETURNING its id.
    """
    now = utcnow()
    changes = ChangeSet()
    status, error = listing.status, listing.error
    params: dict[str, Any] = {"p_id": item.server_id, "p_last_discovery_at": now,
                              "p_last_discovery_status": status, "p_last_error": error}
    if status == "ok":
        params |= {"p_protocol_version": listing.protocol_version, "p_server_info": listing.server_info,
                   "p_capabilities": listing.capabilities, "p_instructions": listing.instructions}
    # A Core transaction on the engine: a pass needs none of a Session's unit-of-work machinery.
    with ctx.db.engine.begin() as conn:
        statement = _UPDATE_SERVER_OK if status == "ok" else _UPDATE_SERVER_NOT_OK
        server = conn.execute(statement, params).one_or_none()
        if server is None:
            raise NotFound(f"server {item.name!r} was removed during its discovery pass")
        counts = changes.counts()
        if status == "ok":
            key = (listing_key(listing.digest, ctx.settings.max_definition_bytes, server.updated_at)
                   if listing.digest is not None else None)
            unchanged = _fast_path(conn, server, key, now)
            if unchanged is not None:
                counts["unchanged"] = unchanged
            else:
                changes = reconcile(_stored(conn, server.id), listing.tools, complete=True,
                                    max_definition_bytes=ctx.settings.max_definition_bytes,
                                    load_input_schemas=partial(_input_schemas, conn))
                write_changes(conn, server, changes, now)
                counts = changes.counts()
                _record_listing(conn, server, key, changes)
        run: dict[str, Any] = {
            "server_id": server.id, "server_name": server.name, "started_at": started, "finished_at": now,
            "status": status, "trigger": trigger, "runner": leases.HOLDER,
            "protocol_version": listing.protocol_version, "pages": listing.pages,
            "rejections": [r.as_dict() for r in changes.rejected], "error": error, **counts,
        }
        run_id = conn.execute(_INSERT_RUN, run).scalar_one()
        if lease_key is not None:
            leases.release_in(conn, lease_key)
    return DiscoveryRunOut(
        id=run_id, server=run["server_name"], trigger=trigger, runner=run["runner"], started_at=started,
        finished_at=now, status=status, protocol_version=listing.protocol_version, pages=listing.pages,
        rejections=list(run["rejections"]), error=error, **counts,
    )


def _fast_path(conn: Connection, server: Any, key: str | None, now: datetime) -> int | None:
    """The no-change fast path: when this ok listing's key equals the one recorded by the last full
    reconcile, advance ``last_seen_at`` of every live tool in one statement and return how many.

    Equal keys mean the server advertises byte-for-byte what was last reconciled with nothing
    rejected, under the same settings and server row; the last pass was ok (any other clears the key).
    The stored tools must also be as that reconcile left them: the statement matches nothing unless
    the live-tool count still equals the recorded one (an operator's delete moves it; discovery is
    the only writer of the discovery-owned columns and of ``retired_at``, and held the lease since).
    None means the full reconcile must run; nothing has been written then.
    """
    expected = server.listing_tools
    if key is None or server.listing_key != key or not expected:
        return None  # (a server with no tools has nothing to skip, and rowcount 0 would be ambiguous)
    touched = conn.execute(_TOUCH_LIVE_IF_COUNT,
                           {"p_server_id": server.id, "p_count": expected, "p_last_seen_at": now}).rowcount
    return expected if touched == expected else None


def _record_listing(conn: Connection, server: Any, key: str | None, changes: ChangeSet) -> None:
    """After a full reconcile: remember the listing's key and the live tools it left, so an identical
    next listing takes the fast path. A listing with rejections is not remembered: its run must list
    them again, which only a full reconcile does. Written only when it differs from what is stored."""
    if changes.rejected:
        key = None
    live = len(changes.added) + len(changes.changed) + len(changes.unchanged_ids)
    recorded = (key, live if key is not None else None)
    if recorded != (server.listing_key, server.listing_tools):
        conn.execute(_UPDATE_SERVER_LISTING, {"p_id": server.id, "p_listing_key": recorded[0],
                                              "p_listing_tools": recorded[1]})


def run_out(run: DiscoveryRun) -> DiscoveryRunOut:
    return DiscoveryRunOut(
        id=run.id, server=run.server_name, trigger=run.trigger, runner=run.runner, started_at=run.started_at,
        finished_at=run.finished_at, status=run.status, protocol_version=run.protocol_version, pages=run.pages,
        added=run.added, changed=run.changed, unchanged=run.unchanged, retired=run.retired, rejected=run.rejected,
        rejections=list(run.rejections or []), error=run.error,
    )


def list_runs(
    ctx: Context, principal: Principal, *, server: str | None = None, status: str | None = None,
    limit: int = 100, offset: int = 0,
) -> Page[DiscoveryRunOut]:
    """Discovery runs, newest first."""
    principal.require(Permission.READ)
    query = select(DiscoveryRun)
    if server:
        query = query.where(DiscoveryRun.server_name == server)
    if status:
        query = query.where(DiscoveryRun.status == status)
    with ctx.db.transaction() as session:
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = session.scalars(query.order_by(DiscoveryRun.id.desc()).limit(limit).offset(offset)).all()
        return Page(items=[run_out(r) for r in rows], total=total, limit=limit, offset=offset)
