from toolvet.services import servers, tools


def test_tool_names_are_case_sensitive(ctx, admin):
    servers.create_server(ctx, admin, {"name": "hand", "url": "http://127.0.0.1:1/mcp", "discovery": "manual"})
    tools.register_tool(ctx, admin, "hand", {"name": "Foo", "input_schema": {"type": "object"}})
    tools.register_tool(ctx, admin, "hand", {"name": "foo", "input_schema": {"type": "object"}})
    names = [t.name for t in tools.list_tools(ctx, admin, server="hand").items]
    assert names == ["Foo", "foo"]


def test_utc_datetimes_bind_right_however_they_alternate(ctx):
    """UTCDateTime remembers its last bound value; alternating values must still each bind as
    themselves, and a naive datetime is still refused."""
    from datetime import UTC, datetime, timedelta, timezone

    import pytest
    from sqlalchemy import insert, select

    from toolvet.db.models import Lease

    a = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    b = datetime(2026, 1, 1, 14, 0, 0, 5, tzinfo=timezone(timedelta(hours=2)))  # 12:00:00.000005 UTC
    with ctx.db.engine.begin() as conn:
        conn.execute(insert(Lease), [{"key": f"k{i}", "holder": "h", "expires_at": t}
                                     for i, t in enumerate([a, b, a, a, b])])
        stored = dict(conn.execute(select(Lease.key, Lease.expires_at)).all())
    assert [stored[f"k{i}"] for i in range(5)] == [a, b, a, a, b]
    assert stored["k1"] - stored["k0"] == timedelta(microseconds=5)
    with pytest.raises(Exception, match="naive datetime"), ctx.db.engine.begin() as conn:
        conn.execute(insert(Lease).values(key="naive", holder="h", expires_at=datetime(2026, 1, 1)))
