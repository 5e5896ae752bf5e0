"""``toolvet import``: the servers of real clients' config files and of the registry's server.json,
registered through the same service as ``server add``, their secrets sealed and never printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.cli.conftest import Toolvet
from toolvet.db.models import AuditEntry, Server
from toolvet.services.context import Context

FILES = Path(__file__).parent / "imports"
SECRETS = ("ghp_desktopSecretValue123", "BSA-desktop-secret-456", "ctx7-cursor-secret-789", "sentry-tok-31",
           "gh-tok-42", "acme-key-7", "time-tok-9", "postgres://u:pw@db/x")


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """The values the files name by reference, set the way a person sets them: in the environment."""
    for name, value in {"SENTRY_TOKEN": "sentry-tok-31", "GH_TOKEN": "gh-tok-42", "X_API_KEY": "acme-key-7",
                        "TIME_API_TOKEN": "time-tok-9", "DATABASE_DSN": "postgres://u:pw@db/x"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TOOLS_HOME", raising=False)


def _stored(service: Context, name: str) -> tuple[Server, dict[str, str], dict[str, str]]:
    with service.db.transaction() as session:
        server = session.scalars(select(Server).where(Server.name == name)).one()
        session.expunge(server)
    return server, service.secrets.open(server.headers_secret), service.secrets.open(server.env_secret)


def _assert_no_secret_in(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_a_claude_desktop_config_registers_its_stdio_servers_with_valid_names_and_sealed_env(
    toolvet: Toolvet, service: Context
) -> None:
    result = toolvet.ok("import", str(FILES / "claude_desktop_config.json"))
    _assert_no_secret_in(result.stdout)
    assert "registered 3 of 3 server(s)" in result.stdout
    assert [s["name"] for s in toolvet.json("server", "list")["items"]] == ["brave-search", "filesystem", "github"]
    github, headers, env = _stored(service, "github")
    assert (github.transport, github.command) == ("stdio", "docker")
    assert github.args[-1] == "ghcr.io/github/github-mcp-server"
    assert env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktopSecretValue123"} and headers == {}
    assert "ghp_desktopSecretValue123" not in (github.env_secret or "")
    with service.db.transaction() as session:
        created = session.scalars(select(AuditEntry).where(AuditEntry.action == "server.create")).all()
        assert sorted(e.object_id for e in created) == ["server:brave-search", "server:filesystem", "server:github"]
        _assert_no_secret_in(repr([(e.before, e.after) for e in created]))


def test_the_plan_names_what_was_renamed_and_json_shows_only_secret_names(toolvet: Toolvet) -> None:
    plan = toolvet.json("import", str(FILES / "claude_desktop_config.json"), "--dry-run")
    assert plan["kind"] == "mcpServers" and plan["applied"] is False
    by_name = {item["name"]: item for item in plan["items"]}
    assert by_name["github"]["source"] == "GitHub" and by_name["github"]["renamed"] is True
    assert by_name["brave-search"]["env_names"] == ["BRAVE_API_KEY"]
    assert by_name["filesystem"]["renamed"] is False
    assert all(item["action"] == "create" for item in plan["items"])
    _assert_no_secret_in(repr(plan))
    assert toolvet.json("server", "list")["items"] == []  # a dry run writes nothing


def test_a_claude_code_file_expands_references_from_the_environment(
    toolvet: Toolvet, service: Context, environ: None
) -> None:
    result = toolvet.ok("import", str(FILES / "claude_code.mcp.json"))
    _assert_no_secret_in(result.stdout)
    sentry, headers, _ = _stored(service, "sentry")
    assert (sentry.transport, sentry.url, headers) == ("streamable-http", "https://mcp.sentry.dev/mcp",
                                                       {"Authorization": "Bearer sentry-tok-31"})
    linear, _, _ = _stored(service, "linear")
    assert (linear.transport, linear.url) == ("sse", "https://mcp.linear.app/sse")
    db, _, env = _stored(service, "db")
    assert db.command == "/opt/tools/bin/db-mcp" and db.args == ["--dsn", "postgres://u:pw@db/x"]
    assert env == {"LOG_LEVEL": "info"}


def test_an_entry_whose_reference_has_no_value_is_skipped_naming_it(toolvet: Toolvet) -> None:
    plan = toolvet.json("import", str(FILES / "claude_code.mcp.json"))
    by_name = {item["name"]: item for item in plan["items"]}
    assert by_name["sentry"]["action"] == "skip" and "SENTRY_TOKEN" in by_name["sentry"]["reason"]
    assert by_name["linear"]["action"] == "create"
    assert [s["name"] for s in toolvet.json("server", "list")["items"]] == ["linear"]


def test_a_cursor_file_keeps_its_http_headers_sealed_and_gives_toolvet_a_free_name(
    toolvet: Toolvet, service: Context
) -> None:
    toolvet.ok("import", str(FILES / "cursor.mcp.json"))
    context7, headers, _ = _stored(service, "context7")
    assert context7.transport == "streamable-http" and headers == {"CONTEXT7_API_KEY": "ctx7-cursor-secret-789"}
    assert context7.header_names == ["CONTEXT7_API_KEY"]
    names = [s["name"] for s in toolvet.json("server", "list")["items"]]
    assert names == ["context7", "playwright", "toolvet-server"]  # "toolvet" names toolvet's own tools


def test_a_vscode_file_imports_what_it_can_and_says_why_not_the_rest(
    toolvet: Toolvet, service: Context, environ: None
) -> None:
    plan = toolvet.json("import", str(FILES / "vscode.mcp.json"))
    assert plan["kind"] == "vscode"
    by_name = {item["name"]: item for item in plan["items"]}
    assert by_name["perplexity"]["action"] == "skip" and "VS Code input" in by_name["perplexity"]["reason"]
    assert by_name["memory"]["action"] == "create" and any("envFile" in n for n in by_name["memory"]["notes"])
    _, headers, _ = _stored(service, "github")
    assert headers == {"Authorization": "Bearer gh-tok-42"}


def test_a_registry_server_json_with_a_remote_becomes_an_http_server(
    toolvet: Toolvet, service: Context, environ: None
) -> None:
    plan = toolvet.json("import", str(FILES / "registry-remote.server.json"))
    assert plan["kind"] == "registry" and plan["items"][0]["name"] == "weather"
    weather, headers, _ = _stored(service, "weather")
    assert (weather.url, weather.title, headers) == ("https://weather.acme.example/mcp", "Acme Weather",
                                                     {"X-API-Key": "acme-key-7"})


def test_a_registry_package_is_launched_the_way_its_registry_runs_it(
    toolvet: Toolvet, service: Context, environ: None
) -> None:
    toolvet.ok("import", str(FILES / "registry-package.server.json"))
    time, _, env = _stored(service, "time")
    assert time.command == "uvx"
    assert time.args == ["mcp-server-time==2025.9.25", "--local-timezone", "Europe/Paris"]
    assert env == {"TIME_API_TOKEN": "time-tok-9", "TIME_DEBUG": "0"}


def test_a_registry_package_without_a_required_secret_is_skipped_naming_the_variable(toolvet: Toolvet) -> None:
    plan = toolvet.json("import", str(FILES / "registry-package.server.json"), "--dry-run")
    assert plan["items"][0]["action"] == "skip" and "TIME_API_TOKEN" in plan["items"][0]["reason"]


def test_a_server_json_that_breaks_the_registry_schema_is_refused_with_the_schema_error(toolvet: Toolvet) -> None:
    plan = toolvet.json("import", str(FILES / "registry-invalid.server.json"))
    item = plan["items"][0]
    assert item["action"] == "skip" and "server.json schema" in item["reason"] and "name" in item["reason"]
    assert toolvet.json("server", "list")["items"] == []


def test_importing_again_leaves_registered_servers_alone(toolvet: Toolvet) -> None:
    toolvet.ok("import", str(FILES / "cursor.mcp.json"))
    again = toolvet.json("import", str(FILES / "cursor.mcp.json"))
    assert {item["action"] for item in again["items"]} == {"exists"}


def test_a_file_that_is_no_client_config_is_refused(toolvet: Toolvet, tmp_path: Path) -> None:
    other = tmp_path / "package.json"
    other.write_text('{"name": "x", "version": "1.0.0"}')
    assert "not a file toolvet imports" in toolvet.fails("import", str(other))
    commented = tmp_path / "mcp.json"
    shutil.copy(FILES / "vscode.mcp.json", commented)
    commented.write_text("// servers\n" + commented.read_text())
    assert "is not JSON" in toolvet.fails("import", str(commented))


def test_claude_codes_user_file_brings_each_projects_servers_and_vscode_settings_their_mcp_section(
    toolvet: Toolvet, tmp_path: Path
) -> None:
    user_file = tmp_path / ".claude.json"
    user_file.write_text(json.dumps({
        "numStartups": 12,
        "mcpServers": {"docs": {"type": "http", "url": "https://docs.example/mcp"}},
        "projects": {"/home/sam/app": {"mcpServers": {"docs": {"command": "docs-mcp"}}}},
    }))
    plan = toolvet.json("import", str(user_file), "--dry-run")
    assert [(i["name"], i["transport"]) for i in plan["items"]] == [("docs", "streamable-http"), ("docs-2", "stdio")]
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"editor.tabSize": 4, "mcp": {"servers": {"time": {"command": "uvx",
                                                                                      "args": ["mcp-server-time"]}}}}))
    assert toolvet.json("import", str(settings))["items"][0]["action"] == "create"
    assert toolvet.json("server", "show", "time")["args"] == ["mcp-server-time"]
