"""What routes depend on: the Context, the authenticated Principal, paging parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from toolvet.schemas.common import MAX_LIMIT, MAX_OFFSET
from toolvet.services import rate_limit, tokens
from toolvet.services.auth import Principal
from toolvet.services.context import Context

# auto_error=False: a missing or non-Bearer header reaches ``authenticate`` as None, so every
# authentication failure is the same Unauthenticated error, rendered by the one error table.
_bearer = HTTPBearer(auto_error=False, description="A toolvet token: `Authorization: Bearer tv_...`.")


def get_context(request: Request) -> Context:
    """The Context the app was created with."""
    ctx: Context = request.app.state.ctx
    return ctx


def get_principal(
    ctx: Annotated[Context, Depends(get_context)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The principal the request's bearer token stands for; Unauthenticated (401) otherwise, and
    RateLimited (429) past the token's rate limit."""
    principal = tokens.authenticate(ctx, credentials.credentials if credentials else None)
    rate_limit.admit(ctx, principal)
    return principal


def get_caller(
    ctx: Annotated[Context, Depends(get_context)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal | None:
    """Like :func:`get_principal`, but None when the request has no bearer token: the routes a caller
    without a token may use at a ``noauth`` tool (``POST /calls``, ``/decide``), whose service decides."""
    if credentials is None:
        return None
    principal = tokens.authenticate(ctx, credentials.credentials)
    rate_limit.admit(ctx, principal)
    return principal


ContextDep = Annotated[Context, Depends(get_context)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
CallerDep = Annotated[Principal | None, Depends(get_caller)]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Most items in the page.")]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Items skipped before the page.")]
