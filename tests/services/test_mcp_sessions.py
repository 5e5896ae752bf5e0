"""Handshake-era session ids and rows: a signed id says what the session negotiated and nothing
altered passes; an ended session is refused; rows past the lifetime are pruned a bounded batch at a
time."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select, update

from toolvet.db.models import McpSession
from toolvet.db.types import utcnow
from toolvet.services import mcp_sessions
from toolvet.services.mcp_sessions import Signer

PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
          "clientInfo": {"name": "probe", "version": "1"}, "_meta": {"dropped": True}}


def changed(text: str) -> str:
    """``text`` with its last character another."""
    return text[:-1] + ("B" if text[-1] == "A" else "A")


def test_a_signed_id_says_what_was_negotiated_and_a_changed_one_is_refused(settings):
    signer = Signer(settings)
    session_id = signer.mint("/mcp", "owner", "2025-11-25", PARAMS)
    state = signer.check(session_id)
    assert state is not None
    assert (state.endpoint, state.owner, state.protocol_version) == ("/mcp", "owner", "2025-11-25")
    assert state.client_params["capabilities"] == {"elicitation": {}} and "_meta" not in state.client_params
    assert signer.mint("/mcp", "owner", "2025-11-25", PARAMS) != session_id  # each session its own id
    version, body, mac = session_id.split(".")
    assert signer.check(f"{version}.{changed(body)}.{mac}") is None
    assert signer.check(f"{version}.{body}.{changed(mac)}") is None
    other_key = settings.model_copy(update={"secret_key": "A" * 43 + "="})
    assert Signer(other_key).check(session_id) is None  # another fleet's key


def test_an_id_past_the_lifetime_is_refused(settings):
    session_id = Signer(settings).mint("/mcp", "", "2025-11-25", PARAMS)
    expired = settings.model_copy(update={"mcp_session_ttl": 0.000001})
    assert Signer(expired).check(session_id) is None


def test_an_ended_session_is_refused_and_a_log_level_kept(ctx):
    signer = Signer(ctx.settings)
    state = signer.check(signer.mint("/mcp", "", "2025-11-25", PARAMS))
    assert state is not None
    mcp_sessions.set_log_level(ctx, state, "warning")
    kept = mcp_sessions.state_of(ctx, state)
    assert kept is not None and kept.log_level == "warning"
    mcp_sessions.end(ctx, state)
    assert mcp_sessions.state_of(ctx, state) is None


def test_rows_past_the_lifetime_are_pruned_a_bounded_batch_at_a_time(ctx):
    signer = Signer(ctx.settings)
    states = [signer.check(signer.mint("/mcp", "", "2025-11-25", PARAMS)) for _ in range(5)]
    for state in states:
        assert state is not None
        mcp_sessions.end(ctx, state)
    old = utcnow() - timedelta(seconds=ctx.settings.mcp_session_ttl + 60)
    with ctx.db.transaction() as session:
        session.execute(update(McpSession).where(McpSession.id.in_(
            [mcp_sessions.reference(s.id) for s in states[:3] if s is not None])).values(updated_at=old))
    assert mcp_sessions.prune(ctx, limit=2) == 2
    assert mcp_sessions.prune(ctx, limit=2) == 1
    assert mcp_sessions.prune(ctx, limit=2) == 0
    with ctx.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(McpSession)) == 2
