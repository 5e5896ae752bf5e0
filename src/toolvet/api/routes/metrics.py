"""``GET /metrics``: Prometheus text (docs/operate.md names every metric)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from toolvet.api.deps import CallerDep, ContextDep
from toolvet.services import metrics, metrics_db

router = APIRouter(tags=["metrics"])


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {metrics.CONTENT_TYPE: {}}, "description": "Prometheus text format."}})
def scrape(ctx: ContextDep, caller: CallerDep) -> Response:
    """Calls by outcome, call latency, discovery, tools by review state, pending calls, upstream sessions.
    Needs an operator's or an admin's token unless `TOOLVET_METRICS_OPEN` is set."""
    return Response(metrics_db.scrape(ctx, caller), media_type=metrics.CONTENT_TYPE)
