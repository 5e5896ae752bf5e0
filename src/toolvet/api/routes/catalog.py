"""``/catalog`` and ``/decide``: the consumer's side of the approval policy (docs/policy.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from toolvet.api.deps import CallerDep, ContextDep, PrincipalDep
from toolvet.schemas.policy import AiMCPItem, DecideIn, DecisionOut, catalog_json
from toolvet.services import catalog as catalog_service
from toolvet.services import preferences
from toolvet.services.catalog import View

open_router = APIRouter(tags=["catalog"])  # without the token check: see api.routes
router = APIRouter(tags=["catalog"])


@router.get("/catalog", response_model=list[AiMCPItem], response_model_exclude_none=True)
def catalog(
    ctx: ContextDep,
    principal: PrincipalDep,
    scope: Annotated[str | None, Query(description="Default: the token's scope, else `default`.")] = None,
    view: Annotated[View, Query(description="`all`, or `model`: what may be shown to the model.")] = View.ALL,
) -> Response:
    """The offered tools as AiMCPItem descriptors (camelCase, absent members omitted)."""
    # Serialised here in one pass (pydantic-core) rather than validated again by the framework.
    return Response(
        catalog_json(catalog_service.catalog(ctx, principal, scope, view)), media_type="application/json"
    )


@open_router.post("/decide")
def decide(ctx: ContextDep, principal: CallerDep, data: DecideIn) -> DecisionOut:
    """Whether the tool runs without a dialog for the user in the scope, is refused, or is asked about,
    with every reason: what a call with this request's token would get (refused, naming the OAuth
    scopes it lacks, when it does not satisfy the tool's ``securitySchemes``)."""
    return preferences.decide_for(ctx, principal, data.user, data.scope, data.server_type, data.tool_name)
