"""Preferences: permission modes, disabled maps, always-allow lists, the ``default`` fallback,
who may touch what, the audit trail, ``decide_for`` and ``toolvet check`` — on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from toolvet.cli import app as cli_app
from toolvet.db.models import AuditEntry
from toolvet.errors import Forbidden, InvalidInput, NotFound
from toolvet.services import preferences, review, servers, tools
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}
ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="room-1")


def build_registry(ctx: Context, admin: Principal) -> None:
    """Two manual servers, ``hand`` and ``other``, with tools in every state the catalog cares about:

    - ``hand/search``: read-only, reviewed (requireApproval false); ``hand/write``: writable, destructive;
    - ``hand/widget``: app-only (``_meta.ui.visibility: ["app"]``);
    - ``hand/held``: reviewed then changed (held, so not offered); ``hand/off``: disabled;
    - ``other/search``: the same name on another server, unreviewed."""
    for name in ("hand", "other"):
        servers.create_server(
            ctx, admin, {"name": name, "url": "http://127.0.0.1:9/mcp", "discovery": "manual"}
        )

    def add(server: str, name: str, **fields: Any) -> None:
        tools.register_tool(ctx, admin, server, {"name": name, "input_schema": OBJECT, **fields})

    add(
        "hand",
        "search",
        title="Search",
        description="Find things",
        writable=False,
        annotations={"readOnlyHint": True},
        output_schema={"type": "object"},
        icons=[{"src": "https://x/i.png"}],
    )
    review.review_tool(ctx, admin, "hand", "search")
    add(
        "hand",
        "write",
        description="Write things",
        annotations={"readOnlyHint": False, "destructiveHint": True},
    )
    add("hand", "widget", description="A widget", meta={"ui": {"visibility": ["app"]}})
    add("hand", "held", description="before")
    review.review_tool(ctx, admin, "hand", "held")
    tools.update_tool(ctx, admin, "hand", "held", {"description": "after: the contract changed"})
    add("hand", "off", description="Disabled by an operator", enabled=False)
    add("other", "search", description="Same name, other server")


@pytest.fixture
def registry(ctx: Context, admin: Principal) -> Context:
    build_registry(ctx, admin)
    return ctx


def audit_actions(ctx: Context) -> list[str]:
    with ctx.db.transaction() as session:
        return list(session.scalars(select(AuditEntry.action).order_by(AuditEntry.id)).all())


# --- permission modes ------------------------------------------------------------------------------


def test_a_user_who_never_chose_is_in_auto_mode(ctx: Context) -> None:
    out = preferences.get_permission_mode(ctx, ALICE, "alice")
    assert (out.mode, out.default) == ("auto", True)


def test_a_consumer_sets_its_own_mode_and_the_change_is_audited(ctx: Context) -> None:
    out = preferences.set_permission_mode(ctx, ALICE, "alice", "ask")
    assert (out.mode, out.default) == ("ask", False)
    assert preferences.get_permission_mode(ctx, ALICE, "alice").mode == "ask"
    assert audit_actions(ctx)[-1] == "user.permission_mode"


def test_a_bad_mode_is_refused_listing_the_valid_values(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="ask, auto, allow") as caught:
        preferences.set_permission_mode(ctx, ALICE, "alice", "yolo")
    assert caught.value.field == "mode"


def test_a_consumer_cannot_touch_another_users_mode(ctx: Context) -> None:
    with pytest.raises(Forbidden):
        preferences.set_permission_mode(ctx, ALICE, "bob", "allow")
    with pytest.raises(Forbidden):
        preferences.get_permission_mode(ctx, ALICE, "bob")


def test_an_operator_may_set_any_users_mode_and_a_reader_only_read_it(
    ctx: Context, operator: Principal, reader: Principal
) -> None:
    assert preferences.set_permission_mode(ctx, operator, "bob", "allow").mode == "allow"
    assert preferences.get_permission_mode(ctx, reader, "bob").mode == "allow"
    with pytest.raises(Forbidden):
        preferences.set_permission_mode(ctx, reader, "bob", "ask")


# --- disabled maps --------------------------------------------------------------------------------


def test_an_unknown_server_type_is_refused_listing_the_valid_ones(registry: Context) -> None:
    with pytest.raises(InvalidInput, match="valid: hand, other, toolvet") as caught:
        preferences.set_disabled(registry, ALICE, "room-1", "nope", ["x"])
    assert caught.value.field == "serverType"


def test_a_consumer_cannot_touch_another_scope(registry: Context) -> None:
    with pytest.raises(Forbidden):
        preferences.set_disabled(registry, ALICE, "room-2", "hand", ["write"])
    with pytest.raises(Forbidden):
        preferences.get_always_allow(registry, ALICE, "default")


def test_an_empty_list_re_enables_a_server_types_tools(registry: Context) -> None:
    assert preferences.set_disabled(
        registry, ALICE, "room-1", "hand", ["write", "write", "search"]
    ).disabled == {"hand": ["search", "write"]}
    out = preferences.set_disabled(registry, ALICE, "room-1", "hand", [])
    assert (out.disabled, out.reads_from) == ({}, "room-1")
    assert audit_actions(registry)[-2:] == ["scope.disabled", "scope.disabled"]


def test_a_scope_with_no_entry_of_its_own_reads_default(registry: Context, admin: Principal) -> None:
    preferences.set_disabled(registry, admin, "default", "hand", ["write"])
    preferences.add_always_allow(registry, admin, "default", "other", "search")
    disabled = preferences.get_disabled(registry, ALICE, "room-1")
    assert (disabled.reads_from, disabled.disabled) == ("default", {"hand": ["write"]})
    assert [e.tool_name for e in preferences.get_always_allow(registry, ALICE, "room-1").entries] == [
        "search"
    ]


def test_the_first_change_to_a_scope_starts_from_what_it_read_from_default(
    registry: Context, admin: Principal
) -> None:
    preferences.set_disabled(registry, admin, "default", "hand", ["write"])
    preferences.add_always_allow(registry, admin, "default", "other", "search")
    out = preferences.set_disabled(registry, ALICE, "room-1", "other", ["search"])
    assert (out.reads_from, out.disabled) == ("room-1", {"hand": ["write"], "other": ["search"]})
    assert preferences.get_always_allow(registry, ALICE, "room-1").reads_from == "room-1"
    # default itself is untouched, and an emptied list in default is simply gone
    assert preferences.get_disabled(registry, admin, "default").disabled == {"hand": ["write"]}
    assert preferences.set_disabled(registry, admin, "default", "hand", []).disabled == {}


# --- always-allow ---------------------------------------------------------------------------------


def test_an_always_allow_entry_defaults_to_the_tools_current_fingerprint(
    registry: Context, admin: Principal
) -> None:
    current = tools.get_tool(registry, admin, "hand", "write").definition_fingerprint
    out = preferences.add_always_allow(registry, ALICE, "room-1", "hand", "write")
    assert [(e.server_type, e.tool_name, e.fingerprint) for e in out.entries] == [("hand", "write", current)]
    assert out.entries[0].created_by == "token:alice"
    again = preferences.add_always_allow(registry, ALICE, "room-1", "hand", "write")
    assert len(again.entries) == 1


def test_always_allow_refuses_unknown_tools_and_malformed_fingerprints(registry: Context) -> None:
    with pytest.raises(NotFound):
        preferences.add_always_allow(registry, ALICE, "room-1", "hand", "nope")
    with pytest.raises(InvalidInput, match="sha256"):
        preferences.add_always_allow(registry, ALICE, "room-1", "hand", "write", "md5:abc")
    with pytest.raises(InvalidInput, match="valid: hand, other, toolvet"):
        preferences.add_always_allow(registry, ALICE, "room-1", "nope", "write")


def test_removing_an_entry_and_removing_one_that_is_not_there(registry: Context) -> None:
    preferences.add_always_allow(registry, ALICE, "room-1", "hand", "write")
    assert preferences.remove_always_allow(registry, ALICE, "room-1", "hand", "write").entries == []
    with pytest.raises(NotFound):
        preferences.remove_always_allow(registry, ALICE, "room-1", "hand", "write")
    assert audit_actions(registry)[-2:] == ["scope.always_allow.add", "scope.always_allow.remove"]


# --- decisions ------------------------------------------------------------------------------------


def test_decide_for_explains_an_auto_decision(registry: Context) -> None:
    asks = preferences.decide_for(registry, ALICE, "alice", "room-1", "hand", "write")
    assert (asks.auto_allow, asks.refused) == (False, False)
    assert "scope 'room-1' has no entry of its own: it reads 'default'" in asks.reasons
    runs = preferences.decide_for(registry, ALICE, "alice", "room-1", "hand", "search")
    assert runs.auto_allow
    assert any("reviewed it as read-only" in r for r in runs.reasons)


def test_decide_for_follows_always_allow_disabled_maps_and_holds(registry: Context) -> None:
    preferences.set_permission_mode(registry, ALICE, "alice", "ask")
    preferences.add_always_allow(registry, ALICE, "room-1", "hand", "write")
    assert preferences.decide_for(registry, ALICE, "alice", "room-1", "hand", "write").auto_allow
    # pinned to the server: the same name elsewhere is asked about
    assert not preferences.decide_for(registry, ALICE, "alice", "room-1", "other", "search").auto_allow
    preferences.set_disabled(registry, ALICE, "room-1", "hand", ["write"])
    refused = preferences.decide_for(registry, ALICE, "alice", "room-1", "hand", "write")
    assert refused.refused and any("disabled map" in r for r in refused.reasons)
    held = preferences.decide_for(registry, ALICE, "alice", "room-1", "hand", "held")
    assert held.refused and any("changed after review" in r for r in held.reasons)


def test_decide_for_names_what_is_missing(registry: Context) -> None:
    with pytest.raises(NotFound, match="server 'nope'"):
        preferences.decide_for(registry, ALICE, "alice", "room-1", "nope", "x")
    with pytest.raises(NotFound, match="hand/nope"):
        preferences.decide_for(registry, ALICE, "alice", "room-1", "hand", "nope")
    with pytest.raises(Forbidden):
        preferences.decide_for(registry, ALICE, "bob", "room-1", "hand", "write")


def test_decide_for_knows_the_host_tools(registry: Context) -> None:
    listed = preferences.decide_for(registry, ALICE, "alice", "room-1", "toolvet", "list_tools")
    assert listed.auto_allow and "requireApproval is false (a host tool)" in listed.reasons
    discover = preferences.decide_for(registry, ALICE, "alice", "room-1", "toolvet", "discover_server")
    assert (discover.auto_allow, discover.refused) == (False, False)
    preferences.set_disabled(registry, ALICE, "room-1", "toolvet", ["list_tools"])
    assert preferences.decide_for(registry, ALICE, "alice", "room-1", "toolvet", "list_tools").refused
    with pytest.raises(NotFound, match="tool toolvet/nope not found"):
        preferences.decide_for(registry, ALICE, "alice", "room-1", "toolvet", "nope")
    # An entry for a host tool is pinned to its current fingerprint by default, like any tool's.
    preferences.set_permission_mode(registry, ALICE, "alice", "ask")
    assert not preferences.decide_for(registry, ALICE, "alice", "room-1", "toolvet", "discover_server").auto_allow
    added = preferences.add_always_allow(registry, ALICE, "room-1", "toolvet", "discover_server")
    assert [(e.server_type, e.tool_name) for e in added.entries] == [("toolvet", "discover_server")]
    assert preferences.decide_for(registry, ALICE, "alice", "room-1", "toolvet", "discover_server").auto_allow


# --- toolvet check --------------------------------------------------------------------------------


def test_toolvet_check_shows_the_decision_and_every_reason(
    registry: Context, admin: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = registry.settings
    monkeypatch.setenv("TOOLVET_HOME", str(settings.home))
    monkeypatch.setenv("TOOLVET_DATABASE_URL", settings.resolved_database_url())
    monkeypatch.setenv("TOOLVET_SECRET_KEY", str(settings.secret_key))
    monkeypatch.delenv("TOOLVET_DEBUG", raising=False)
    runner = CliRunner()
    shown = runner.invoke(cli_app, ["check", "--user", "alice", "--scope", "room-1", "hand/search"])
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "hand/search for user alice in scope room-1: runs without a dialog"
    assert "  - an operator reviewed it as read-only (writable=false, review state reviewed)" in lines
    as_json = runner.invoke(cli_app, ["check", "--user", "alice", "hand/write", "--json"])
    assert as_json.exit_code == 0, as_json.stderr
    decision = json.loads(as_json.stdout)
    assert decision == preferences.decide_for(
        registry, admin, "alice", "default", "hand", "write"
    ).model_dump(mode="json")
    assert set(decision) == {"autoAllow", "refused", "reasons", "approval"} and decision["autoAllow"] is False
    assert decision["approval"] == "user"
    host = runner.invoke(cli_app, ["check", "--user", "alice", "toolvet/list_servers"])
    assert host.exit_code == 0, host.stderr
    assert host.stdout.splitlines()[0] == "toolvet/list_servers for user alice in scope default: runs without a dialog"
    missing = runner.invoke(cli_app, ["check", "--user", "alice", "hand/nope"])
    assert missing.exit_code == 1 and missing.stderr.startswith("error: tool hand/nope not found")
