"""Handshake-era MCP sessions that every replica can serve: a signed session id, and a row for what
changes.

A 2025-11-25 client opens a session with ``initialize`` and sends its ``Mcp-Session-Id`` on every
request after. toolvet's session id carries what the session negotiated: the endpoint, a digest of
the credential that opened it, the protocol version, the client's ``initialize`` params (its
capabilities and identity) and when it was opened, signed with an HMAC (SHA-256) under a key derived
from toolvet's secret key, which every replica of a fleet shares. So a process that gets a request
for a session it has never seen checks the signature and serves it, and opening a session writes
nothing: ``initialize`` is answered even while the database is busy.

What a client changes after ``initialize`` (its ``logging/setLevel``) and the end of a session (its
``DELETE``) are a row of ``mcp_sessions``, keyed by :func:`reference` (a digest of the id, which
names a session in events and logs without letting anyone use it). A session lasts
``mcp_session_ttl`` seconds from its ``initialize``; rows older than that are deleted by
:func:`prune`, a bounded batch at a time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from toolvet.db.models import McpSession
from toolvet.db.types import utcnow
from toolvet.services.context import Context
from toolvet.services.secrets import load_key
from toolvet.settings import Settings

__all__ = [
    "INTERNAL_EVENT",
    "PRUNE_BATCH",
    "SessionState",
    "Signer",
    "end",
    "owner_digest",
    "prune",
    "reference",
    "set_log_level",
    "state_of",
]

#: Most expired session rows deleted by one :func:`prune`.
PRUNE_BATCH: Final = 500
#: Events of this type are toolvet's own traffic between replicas, never streamed to API clients.
INTERNAL_EVENT: Final = "toolvet.internal"
#: Largest ``initialize`` params kept in a session id (bytes of JSON); past it only the capabilities
#: and the client's name and version are kept.
MAX_PARAMS_BYTES: Final = 2048
_VERSION: Final = "s1"


@dataclass(frozen=True, slots=True)
class SessionState:
    """What a session id says (checked), and what its row adds."""

    id: str
    endpoint: str
    owner: str  # owner_digest of the credential that opened it
    protocol_version: str
    client_params: dict[str, Any]
    log_level: str | None = None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def owner_digest(actor: str) -> str:
    """How a session id names the credential that opened it ("" for a caller without a token)."""
    return hashlib.sha256(actor.encode()).hexdigest()[:32] if actor else ""


def reference(session_id: str) -> str:
    """A name for the session that does not let anyone use it (for events, logs and its row)."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:32]


def _kept_params(params: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in params.items() if k != "_meta"}
    if len(json.dumps(kept, separators=(",", ":"))) <= MAX_PARAMS_BYTES:
        return kept
    found = kept.get("clientInfo")
    info: dict[str, Any] = found if isinstance(found, dict) else {}
    return {"protocolVersion": kept.get("protocolVersion"), "capabilities": kept.get("capabilities") or {},
            "clientInfo": {"name": str(info.get("name", ""))[:64], "version": str(info.get("version", ""))[:64]}}


class Signer:
    """Makes and checks session ids with a key derived from toolvet's secret key."""

    def __init__(self, settings: Settings) -> None:
        self._key = hmac.new(load_key(settings), b"toolvet mcp session id", hashlib.sha256).digest()
        self.ttl = settings.mcp_session_ttl

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest())

    def mint(self, endpoint: str, owner: str, protocol_version: str, client_params: dict[str, Any]) -> str:
        """A new session's id, saying what it negotiated."""
        payload = {"e": endpoint, "o": owner, "v": protocol_version,
                   "p": {**_kept_params(client_params), "protocolVersion": protocol_version},
                   "t": int(time.time()), "n": secrets.token_hex(16)}
        body = f"{_VERSION}.{_b64(json.dumps(payload, separators=(',', ':')).encode())}"
        return f"{body}.{self._mac(body)}"

    def check(self, session_id: str) -> SessionState | None:
        """What a session id says, if toolvet signed it and it has not expired; else None."""
        version, _, rest = session_id.partition(".")
        encoded, _, mac = rest.partition(".")
        if version != _VERSION or not encoded or not mac:
            return None
        if not hmac.compare_digest(mac, self._mac(f"{version}.{encoded}")):
            return None
        try:
            payload = json.loads(_unb64(encoded))
        except ValueError:
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("t"), int):
            return None
        if payload["t"] + self.ttl < time.time():
            return None
        return SessionState(session_id, str(payload.get("e")), str(payload.get("o")), str(payload.get("v")),
                            dict(payload.get("p") or {}))


def state_of(ctx: Context, state: SessionState) -> SessionState | None:
    """The session with what its client changed since ``initialize``; None if it was ended."""
    with ctx.db.transaction() as session:
        row = session.get(McpSession, reference(state.id))
    if row is None:
        return state
    if row.ended:
        return None
    return SessionState(state.id, state.endpoint, state.owner, state.protocol_version, state.client_params,
                        row.log_level)


def _write(ctx: Context, state: SessionState, **values: Any) -> None:
    key = reference(state.id)
    for _ in range(2):
        with ctx.db.transaction() as session:
            done = session.execute(update(McpSession).where(McpSession.id == key)
                                   .values(updated_at=utcnow(), **values)).rowcount  # type: ignore[attr-defined]
            if done:
                return
        try:
            with ctx.db.transaction() as session:
                session.add(McpSession(id=key, endpoint=state.endpoint, updated_at=utcnow(),
                                       **{"ended": False, "log_level": None, **values}))
            return
        except IntegrityError:
            continue  # another replica wrote it first: update that row


def set_log_level(ctx: Context, state: SessionState, level: str) -> None:
    """The level of log messages the session's client asked for (``logging/setLevel``)."""
    _write(ctx, state, log_level=level)


def end(ctx: Context, state: SessionState) -> None:
    """End the session (its client sent DELETE): no replica serves it again."""
    _write(ctx, state, ended=True)


def prune(ctx: Context, *, limit: int = PRUNE_BATCH) -> int:
    """Delete up to ``limit`` rows of sessions past ``mcp_session_ttl``; how many went."""
    cutoff = utcnow() - timedelta(seconds=ctx.settings.mcp_session_ttl)
    with ctx.db.transaction() as session:
        ids = session.scalars(select(McpSession.id).where(McpSession.updated_at < cutoff)
                              .order_by(McpSession.updated_at).limit(limit)).all()
        if ids:
            session.execute(delete(McpSession).where(McpSession.id.in_(ids)))
    return len(ids)
