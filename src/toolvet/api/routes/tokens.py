"""``/tokens``: minting, listing and revoking bearer tokens (admins only; the service checks)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from toolvet.api.deps import ContextDep, Limit, Offset, PrincipalDep
from toolvet.schemas.common import Page
from toolvet.schemas.tools import TokenCreate, TokenCreated, TokenOut
from toolvet.services import tokens

router = APIRouter(tags=["tokens"])
#: Token ids are database integers: a bigger one cannot name a token (and would overflow SQLite).
MAX_TOKEN_ID = 2**63 - 1


@router.get("/tokens")
def list_tokens(
    ctx: ContextDep, principal: PrincipalDep, limit: Limit = 100, offset: Offset = 0
) -> Page[TokenOut]:
    """Tokens oldest first; only their prefix is shown, never the token."""
    return tokens.token_page(ctx, principal, limit=limit, offset=offset)


@router.post("/tokens", status_code=201)
def create_token(ctx: ContextDep, principal: PrincipalDep, data: TokenCreate) -> TokenCreated:
    """Mint a token; the response is the only time the token itself is shown."""
    return tokens.create_token(ctx, principal, data)


@router.delete("/tokens/{token_id}", status_code=204, response_class=Response)
def revoke_token(ctx: ContextDep, principal: PrincipalDep,
                 token_id: Annotated[int, Path(ge=1, le=MAX_TOKEN_ID)]) -> None:
    """Revoke a token; requests carrying it are refused from now on."""
    tokens.revoke_token(ctx, principal, token_id)
