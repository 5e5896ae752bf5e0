from toolvet.services import servers, tools


def test_tool_names_are_case_sensitive(ctx, admin):
    servers.create_server(ctx, admin, {"name": "hand", "url": "http://127.0.0.1:1/mcp", "discovery": "manual"})
    tools.register_tool(ctx, admin, "hand", {"name": "Foo", "input_schema": {"type": "object"}})
    tools.register_tool(ctx, admin, "hand", {"name": "foo", "input_schema": {"type": "object"}})
    names = [t.name for t in tools.list_tools(ctx, admin, server="hand").items]
    assert names == ["Foo", "foo"]
