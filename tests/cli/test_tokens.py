"""``toolvet token ...``: the printed token is the one that authenticates."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Toolvet
from toolvet.errors import Unauthenticated
from toolvet.services import tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context


def test_token_create_quiet_prints_only_a_token_that_authenticates(
    toolvet: Toolvet, service: Context
) -> None:
    out = toolvet.ok("token", "create", "--role", "operator", "--name", "ci", "-q").stdout
    token = out.removesuffix("\n")
    assert out == token + "\n" and " " not in token and token.startswith("tv_")
    assert tokens.authenticate(service, token).role is Role.OPERATOR


def test_a_consumer_token_carries_its_user_scope_and_oauth_scopes(toolvet: Toolvet, service: Context) -> None:
    token = toolvet.ok(
        "token",
        "create",
        "--role",
        "consumer",
        "--user",
        "alice",
        "--scope",
        "room-42",
        "--oauth-scope",
        "repo:read",
        "--oauth-scope",
        "repo:write",
        "--quiet",
    ).stdout.strip()
    principal = tokens.authenticate(service, token)
    assert (principal.user, principal.scope, principal.oauth_scopes) == (
        "alice",
        "room-42",
        frozenset({"repo:read", "repo:write"}),
    )


def test_token_create_shows_the_token_once_after_its_details(toolvet: Toolvet, service: Context) -> None:
    lines = toolvet.ok("token", "create", "--role", "reader").stdout.splitlines()
    assert tokens.authenticate(service, lines[-1]).role is Role.READER
    assert sum(lines[-1] in line for line in lines) == 1


def test_token_create_json_includes_the_token_and_its_rest_fields(
    toolvet: Toolvet, service: Context, admin: Principal
) -> None:
    created = toolvet.json("token", "create", "--role", "admin", "--name", "ops")
    assert tokens.authenticate(service, created.pop("token")).role is Role.ADMIN
    assert created == tokens.list_tokens(service, admin)[0].model_dump(mode="json")


def test_token_list_never_prints_a_token(toolvet: Toolvet, service: Context, admin: Principal) -> None:
    token = toolvet.ok("token", "create", "--role", "admin", "-q").stdout.strip()
    listing, as_json = toolvet.ok("token", "list").stdout, toolvet.ok("token", "list", "--json").stdout
    assert token not in listing and token not in as_json and token[:10] in listing
    assert toolvet.json("token", "list") == tokens.token_page(service, admin).model_dump(mode="json")


def test_a_revoked_token_stops_authenticating(toolvet: Toolvet, service: Context) -> None:
    token = toolvet.ok("token", "create", "--role", "admin", "-q").stdout.strip()
    token_id = toolvet.json("token", "list")["items"][0]["id"]
    assert toolvet.ok("token", "revoke", str(token_id)).stdout == f"revoked token {token_id}\n"
    with pytest.raises(Unauthenticated):
        tokens.authenticate(service, token)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ("token", "create", "--role", "root"),
            "error: role: 'root' is not one of admin, operator, reader, consumer",
        ),
        (
            ("token", "create", "--role", "consumer"),
            "error: user: a consumer token needs the user it acts for",
        ),
        (("token", "revoke", "99"), "error: token 99 not found"),
    ],
)
def test_bad_token_input_is_refused_and_nothing_is_created(
    toolvet: Toolvet, args: tuple[str, ...], error: str
) -> None:
    assert toolvet.fails(*args) == error
    assert toolvet.json("token", "list")["total"] == 0
