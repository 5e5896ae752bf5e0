"""``toolvet apply``/``export`` as services: a file made true through the services a person uses (and
their audit log), idempotently, secrets by reference only; on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from toolvet.db.models import AuditEntry, Server
from toolvet.errors import InvalidInput
from toolvet.schemas.config_file import ApplyPlan
from toolvet.services import config_apply, config_export, preferences, servers, tool_sets, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

FILE = """
version: 1
servers:
  notes:
    title: Notes
    url: https://notes.example/mcp
    headers:
      Authorization: ${NOTES_AUTH}
    approval: always
    tools:
      search: {writable: false}
      later: {enabled: false}
  hand:
    url: http://127.0.0.1:9/mcp
    discovery: manual
    tools:
      lookup: {approval: operator}
tool_sets:
  research:
    title: Research
    members: [{server: hand, tool: lookup}, {server: notes}]
scopes:
  team:
    disabled: {hand: [drop]}
    always_allow: [{server: hand, tool: lookup}]
users:
  alice: {mode: ask}
"""
ENV = {"NOTES_AUTH": "Bearer n0tes-secret"}


@pytest.fixture
def hand(ctx: Context, admin: Principal) -> Context:
    """A manual server ``hand`` with two tools registered by hand, as discovery would have found them."""
    servers.create_server(ctx, admin, {"name": "hand", "url": "http://127.0.0.1:9/mcp", "discovery": "manual"})
    for name in ("lookup", "drop"):
        tools.register_tool(ctx, admin, "hand", {"name": name, "input_schema": {"type": "object"}})
    return ctx


def apply(ctx: Context, admin: Principal, text: str = FILE, env: dict[str, str] | None = None,
          **options: Any) -> ApplyPlan:
    config = config_apply.parse_config(text)
    return config_apply.apply_config(ctx, admin, config, environ=ENV if env is None else env, base=Path("."),
                                     **options)


def audit_count(ctx: Context) -> int:
    with ctx.db.transaction() as session:
        return session.scalar(select(func.count()).select_from(AuditEntry)) or 0


def test_an_apply_makes_the_registry_match_the_file_through_the_audited_services(hand: Context, admin: Principal):
    before = audit_count(hand)
    plan = apply(hand, admin)

    assert plan.applied
    notes = servers.get_server(hand, admin, "notes")
    assert (notes.title, notes.approval.value, notes.header_names) == ("Notes", "always", ["Authorization"])
    lookup = tools.get_tool(hand, admin, "hand", "lookup")
    assert lookup.approval.value == "operator"
    assert [(m.server, m.tool) for m in tool_sets.get_tool_set(hand, admin, "research").members] == [
        ("hand", "lookup"), ("notes", None)]
    assert preferences.get_disabled(hand, admin, "team").disabled == {"hand": ["drop"]}
    [entry] = preferences.get_always_allow(hand, admin, "team").entries
    assert (entry.tool_name, entry.fingerprint) == ("lookup", lookup.definition_fingerprint)
    assert preferences.get_permission_mode(hand, admin, "alice").mode.value == "ask"
    with hand.db.transaction() as session:
        actions = session.scalars(select(AuditEntry.action).order_by(AuditEntry.id).offset(before)).all()
        assert all(actor == admin.actor for actor in session.scalars(select(AuditEntry.actor).offset(before)))
    assert actions == ["server.create", "tool.update", "tool_set.create", "scope.disabled",
                       "scope.always_allow.add", "user.permission_mode"]
    # A tool the server has not listed yet waits for discovery, and says so.
    assert [(c.op, c.object) for c in plan.changes if c.op == "!"] == [
        ("!", "tool:notes/search"), ("!", "tool:notes/later")]


def test_a_second_apply_changes_nothing(hand: Context, admin: Principal):
    apply(hand, admin)
    count = audit_count(hand)

    again = apply(hand, admin)

    assert [c for c in again.changes if c.op != "!"] == []
    assert audit_count(hand) == count


def test_a_dry_run_plans_every_change_and_writes_nothing(hand: Context, admin: Principal):
    count = audit_count(hand)

    plan = apply(hand, admin, dry_run=True)

    assert not plan.applied
    assert ("+", "server:notes") in [(c.op, c.object) for c in plan.changes]
    assert ("~", "tool:hand/lookup", "approval", "user", "operator") in [
        (c.op, c.object, c.field, c.before, c.after) for c in plan.changes]
    assert audit_count(hand) == count
    with hand.db.transaction() as session:
        assert session.scalar(select(Server.id).where(Server.name == "notes")) is None


def test_a_changed_secret_is_planned_without_its_value_and_stored_sealed(hand: Context, admin: Principal):
    apply(hand, admin)

    plan = apply(hand, admin, env={"NOTES_AUTH": "Bearer rotated"})

    [change] = [c for c in plan.changes if c.op == "~"]
    assert (change.object, change.field, change.note) == ("server:notes", "headers", "values changed: Authorization")
    assert "rotated" not in plan.model_dump_json()
    with hand.db.transaction() as session:
        sealed = session.scalar(select(Server.headers_secret).where(Server.name == "notes"))
    assert "rotated" not in (sealed or "")
    assert hand.secrets.open(sealed) == {"Authorization": "Bearer rotated"}


def test_a_secret_written_inline_or_without_a_value_is_refused_naming_where(hand: Context, admin: Principal):
    inline = FILE.replace("${NOTES_AUTH}", "Bearer pasted-secret")
    with pytest.raises(InvalidInput) as refused:
        apply(hand, admin, inline)
    assert refused.value.field == "servers.notes.headers.Authorization" and "by reference" in refused.value.message
    with pytest.raises(InvalidInput) as unset:
        apply(hand, admin, env={})
    assert "NOTES_AUTH" in unset.value.message


def test_a_secret_may_be_read_from_a_file_beside_the_applied_one(hand: Context, admin: Principal, tmp_path: Path):
    (tmp_path / "notes.token").write_text("Bearer from-a-file\n")
    config = config_apply.parse_config(FILE.replace("${NOTES_AUTH}", "${file:notes.token}"))
    config_apply.apply_config(hand, admin, config, environ={}, base=tmp_path)
    with hand.db.transaction() as session:
        sealed = session.scalar(select(Server.headers_secret).where(Server.name == "notes"))
    assert hand.secrets.open(sealed) == {"Authorization": "Bearer from-a-file"}


def test_an_export_applied_again_changes_nothing_and_holds_no_secret(hand: Context, admin: Principal):
    apply(hand, admin)
    text = config_export.to_yaml(config_export.export_config(hand, admin))

    assert "n0tes-secret" not in text and "${TOOLVET_SECRET_NOTES_AUTHORIZATION}" in text
    plan = apply(hand, admin, text, env={"TOOLVET_SECRET_NOTES_AUTHORIZATION": ENV["NOTES_AUTH"]})
    assert plan.changes == []


def test_prune_removes_servers_and_tool_sets_the_file_leaves_out(hand: Context, admin: Principal):
    apply(hand, admin)
    servers.create_server(hand, admin, {"name": "stray", "url": "http://127.0.0.1:9/x"})

    plan = apply(hand, admin, prune=True)

    assert [(c.op, c.object) for c in plan.changes if c.op == "-"] == [("-", "server:stray")]
    assert [s.name for s in servers.list_servers(hand, admin).items] == ["hand", "notes"]


def test_a_file_that_breaks_the_schema_is_refused_naming_the_field(hand: Context, admin: Principal):
    with pytest.raises(InvalidInput) as refused:
        apply(hand, admin, "version: 1\nservers:\n  notes:\n    enabeld: true\n")
    assert "enabeld" in refused.value.message and refused.value.field == "servers.notes"


def test_a_scope_naming_an_unknown_server_is_refused_before_anything_is_written(hand: Context, admin: Principal):
    count = audit_count(hand)
    with pytest.raises(InvalidInput) as refused:
        apply(hand, admin, FILE.replace("disabled: {hand: [drop]}", "disabled: {nowhere: [drop]}"))
    assert "nowhere" in refused.value.message and refused.value.field == "scopes.team"
    assert audit_count(hand) == count
