"""``toolvet server ...`` against a real database."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Toolvet
from toolvet.services import servers, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context


def test_an_http_server_is_added_and_listed_with_its_endpoint(toolvet: Toolvet) -> None:
    result = toolvet.ok(
        "server", "add", "github", "--url", "https://api.example.com/mcp", "--title", "GitHub"
    )
    assert result.stdout == "added server github (streamable-http)\n"
    listing = toolvet.ok("server", "list").stdout
    assert "github" in listing and "streamable-http" in listing and "https://api.example.com/mcp" in listing
    assert "never" in listing  # never discovered yet


def test_a_stdio_server_keeps_its_command_args_and_only_the_names_of_its_env(toolvet: Toolvet) -> None:
    toolvet.ok(
        "server",
        "add",
        "files",
        "--command",
        "npx",
        "--arg",
        "-y",
        "--arg",
        "@mcp/fs",
        "--env",
        "API_KEY=hunter2",
        "--cwd",
        "/srv",
    )
    shown = toolvet.json("server", "show", "files")
    assert (shown["transport"], shown["command"], shown["args"], shown["cwd"]) == (
        "stdio",
        "npx",
        ["-y", "@mcp/fs"],
        "/srv",
    )
    assert shown["env_names"] == ["API_KEY"]
    assert "npx -y @mcp/fs" in toolvet.ok("server", "list").stdout


def test_server_flags_given_at_add_are_stored(toolvet: Toolvet) -> None:
    shown = toolvet.json(
        "server",
        "add",
        "legacy",
        "--url",
        "http://10.0.0.5/sse",
        "--transport",
        "sse",
        "--manual",
        "--trust-annotations",
        "--new-tools-disabled",
        "--no-hold-changed",
        "--remove-stale",
        "--disabled",
    )
    assert shown["transport"] == "sse" and shown["discovery"] == "manual"
    assert shown["trust_annotations"] is True and shown["remove_stale"] is True
    assert (
        shown["new_tools_enabled"] is False
        and shown["hold_changed_tools"] is False
        and shown["enabled"] is False
    )


def test_server_show_json_is_what_the_service_returns(
    toolvet: Toolvet, service: Context, admin: Principal
) -> None:
    toolvet.ok("server", "add", "github", "--url", "https://api.example.com/mcp")
    assert toolvet.json("server", "show", "github") == servers.get_server(
        service, admin, "github"
    ).model_dump(mode="json")


def test_server_list_json_is_the_rest_page_envelope(
    toolvet: Toolvet, service: Context, admin: Principal
) -> None:
    for name in ("a", "b", "c"):
        toolvet.ok("server", "add", name, "--url", f"http://{name}.example/mcp")
    page = toolvet.json("server", "list", "--limit", "2", "--offset", "1")
    assert page == servers.list_servers(service, admin, limit=2, offset=1).model_dump(mode="json")
    assert [s["name"] for s in page["items"]] == ["b", "c"] and page["total"] == 3


def test_header_and_env_values_are_never_printed(toolvet: Toolvet) -> None:
    outputs = [
        toolvet.ok(
            "server",
            "add",
            "web",
            "--url",
            "http://x/mcp",
            "--header",
            "Authorization: Bearer s3cret-h",
            "--json",
        ).stdout,
        toolvet.ok("server", "add", "cmd", "--command", "run", "--env", "TOKEN=s3cret-e").stdout,
        toolvet.ok("server", "set", "web", "--header", "X-Api-Key: s3cret-h2", "--json").stdout,
    ]
    for args in (
        ("server", "show", "web"),
        ("server", "show", "web", "--json"),
        ("server", "show", "cmd"),
        ("server", "list"),
        ("server", "list", "--json"),
        ("audit",),
        ("audit", "--json"),
    ):
        outputs.append(toolvet.ok(*args).stdout)
    assert toolvet.json("server", "show", "web")["header_names"] == ["X-Api-Key"]
    assert not [out for out in outputs if "s3cret" in out]


def test_server_set_changes_only_the_options_given(toolvet: Toolvet) -> None:
    before = toolvet.json("server", "add", "github", "--url", "https://a.example/mcp", "--title", "GitHub")
    after = toolvet.json(
        "server",
        "set",
        "github",
        "--disabled",
        "--manual",
        "--trust-annotations",
        "--no-hold-changed",
        "--remove-stale",
        "--new-tools-disabled",
    )
    assert (after["enabled"], after["discovery"], after["trust_annotations"]) == (False, "manual", True)
    assert (after["hold_changed_tools"], after["remove_stale"], after["new_tools_enabled"]) == (
        False,
        True,
        False,
    )
    assert after["title"] == "GitHub" and after["url"] == before["url"]
    back = toolvet.json(
        "server",
        "set",
        "github",
        "--enabled",
        "--auto",
        "--no-trust-annotations",
        "--hold-changed",
        "--keep-stale",
        "--new-tools-enabled",
        "--url",
        "https://b.example/mcp",
    )
    assert (back["enabled"], back["discovery"], back["trust_annotations"]) == (True, "auto", False)
    assert (back["hold_changed_tools"], back["remove_stale"], back["new_tools_enabled"]) == (
        True,
        False,
        True,
    )
    assert back["url"] == "https://b.example/mcp"


def test_a_software_is_set_at_add_changed_shown_and_cleared(toolvet: Toolvet) -> None:
    added = toolvet.json("server", "add", "crm-eu", "--url", "http://eu.example/mcp", "--software", "crm")
    assert added["software"] == "crm"
    assert toolvet.json("server", "add", "wiki", "--url", "http://wiki.example/mcp")["software"] is None
    assert toolvet.json("server", "set", "crm-eu", "--software", "crm-next")["software"] == "crm-next"
    shown = toolvet.ok("server", "show", "crm-eu").stdout
    assert [line.split() for line in shown.splitlines() if line.startswith("software ")] == [["software", "crm-next"]]
    names = [s["name"] for s in toolvet.json("server", "list", "--software", "crm-next")["items"]]
    assert names == ["crm-eu"]
    assert toolvet.json("server", "list", "--software", "crm")["items"] == []
    cleared = toolvet.json("server", "set", "crm-eu", "--no-software")
    assert cleared["software"] is None and cleared["url"] == "http://eu.example/mcp"
    assert toolvet.json("server", "show", "crm-eu")["software"] is None


def test_a_bad_software_is_refused_naming_the_field_and_changes_nothing(toolvet: Toolvet) -> None:
    toolvet.ok("server", "add", "crm-eu", "--url", "http://eu.example/mcp", "--software", "crm")
    assert toolvet.fails("server", "set", "crm-eu", "--software", "CRM").startswith(
        "error: software: 'CRM' does not match ^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$"
    )
    both = toolvet("server", "set", "crm-eu", "--software", "erp", "--no-software")
    assert both.exit_code == 2 and "--software and --no-software contradict each other" in both.stderr
    assert toolvet.json("server", "show", "crm-eu")["software"] == "crm"


def test_server_set_can_switch_an_http_server_to_stdio(toolvet: Toolvet) -> None:
    toolvet.ok("server", "add", "svc", "--url", "http://x/mcp")
    shown = toolvet.json(
        "server", "set", "svc", "--transport", "stdio", "--command", "svc-mcp", "--arg", "--stdio"
    )
    assert (shown["transport"], shown["url"], shown["command"], shown["args"]) == (
        "stdio",
        None,
        "svc-mcp",
        ["--stdio"],
    )


def test_server_set_with_nothing_to_change_is_refused(toolvet: Toolvet) -> None:
    toolvet.ok("server", "add", "svc", "--url", "http://x/mcp")
    assert "nothing to change" in toolvet.fails("server", "set", "svc")


def test_server_remove_with_yes_removes_the_server_and_its_tools(
    hand: Toolvet, service: Context, admin: Principal
) -> None:
    assert hand.ok("server", "remove", "hand", "--yes").stdout == "removed server hand\n"
    assert servers.list_servers(service, admin).total == 0
    assert tools.list_tools(service, admin).total == 0


def test_server_remove_without_a_terminal_or_yes_is_refused_and_keeps_the_server(toolvet: Toolvet) -> None:
    toolvet.ok("server", "add", "svc", "--url", "http://x/mcp")
    assert (
        toolvet.fails("server", "remove", "svc")
        == "error: --yes: no terminal to confirm on; pass --yes to go ahead"
    )
    assert toolvet.json("server", "show", "svc")["name"] == "svc"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("server", "add", "Bad_Name", "--url", "http://x/mcp"), "name"),
        (("server", "add", "toolvet", "--url", "http://x/mcp"), "name"),
        (("server", "add", "svc", "--transport", "stdio"), "command"),
        (("server", "add", "svc"), "url"),
        (("server", "add", "svc", "--url", "ftp://x/mcp"), "url"),
        (("server", "add", "svc", "--url", "http://x/mcp", "--command", "run"), "command"),
        (("server", "add", "svc", "--url", "http://x/mcp", "--transport", "grpc"), "transport"),
        (("server", "add", "svc", "--url", "http://x/mcp", "--header", "Authorization Bearer x"), "--header"),
        (("server", "add", "svc", "--command", "run", "--env", "TOKEN"), "--env"),
        (("server", "add", "svc", "--url", "http://x/mcp", "--software", "crm_eu"), "software"),
        (("server", "add", "svc", "--url", "http://x/mcp", "--software", ""), "software"),
    ],
)
def test_bad_server_input_is_refused_naming_the_field_and_nothing_is_written(
    toolvet: Toolvet,
    service: Context,
    admin: Principal,
    args: tuple[str, ...],
    field: str,
) -> None:
    assert toolvet.fails(*args).startswith(f"error: {field}: ")
    assert servers.list_servers(service, admin).total == 0
    assert toolvet.json("audit")["total"] == 0


def test_a_duplicate_server_is_refused_and_the_first_is_kept(toolvet: Toolvet) -> None:
    toolvet.ok("server", "add", "svc", "--url", "http://first/mcp")
    assert (
        toolvet.fails("server", "add", "svc", "--url", "http://second/mcp")
        == "error: server 'svc' already exists"
    )
    assert toolvet.json("server", "show", "svc")["url"] == "http://first/mcp"


@pytest.mark.parametrize(
    "args",
    [
        ("server", "show", "nope"),
        ("server", "set", "nope", "--disabled"),
        ("server", "remove", "nope", "--yes"),
    ],
)
def test_an_unknown_server_is_not_found(toolvet: Toolvet, args: tuple[str, ...]) -> None:
    assert toolvet.fails(*args) == "error: server 'nope' not found"
