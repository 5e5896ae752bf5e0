"""``toolvet token create|list|revoke``: bearer tokens for the REST API and the gateway."""

from __future__ import annotations

from typing import Annotated

import typer

from toolvet.cli import render
from toolvet.cli.group import command_group, exclusive
from toolvet.cli.render import JsonOption, LimitOption, OffsetOption
from toolvet.cli.runtime import local
from toolvet.schemas.tools import TokenCreate
from toolvet.services import tokens

token_app = command_group("Create, list and revoke bearer tokens.")



@token_app.command("create")
def create(
    role: Annotated[str, typer.Option("--role", help="admin, operator, reader or consumer.")],
    name: Annotated[str | None, typer.Option("--name", help="A label to recognise the token by.")] = None,
    user: Annotated[str | None, typer.Option("--user", help="The user a consumer token acts for.")] = None,
    scope: Annotated[
        str | None, typer.Option("--scope", help="A consumer token's scope (default: default).")
    ] = None,
    oauth_scope: Annotated[
        list[str] | None,
        typer.Option("--oauth-scope", help="An OAuth scope the token holds (for oauth2 tools); repeatable."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the token.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Mint a token and print it once; toolvet keeps only its hash."""
    exclusive(("--quiet", quiet), ("--json", as_json))
    data = TokenCreate(role=role, name=name, user=user, scope=scope, oauth_scopes=oauth_scope or [])
    with local() as (ctx, me):
        out = tokens.create_token(ctx, me, data)
    render.show_new_token(out, as_json, quiet)


@token_app.command("list")
def list_(limit: LimitOption = 100, offset: OffsetOption = 0, as_json: JsonOption = False) -> None:
    """List tokens, oldest first, revoked ones included (never their values)."""
    with local() as (ctx, me):
        page = tokens.token_page(ctx, me, limit=limit, offset=offset)
    render.show_page(page, as_json, "tokens", render.token_row, render.TOKEN_HEADERS)


@token_app.command("revoke")
def revoke(
    token_id: Annotated[int, typer.Argument(metavar="ID", help="The token's id (see token list).")],
    as_json: JsonOption = False,
) -> None:
    """Revoke a token; it stops authenticating at once (on a running server's MCP endpoints, within a second)."""
    with local() as (ctx, me):
        out = tokens.revoke_token(ctx, me, token_id)
    render.show_change(out, as_json, f"revoked token {out.id}")
