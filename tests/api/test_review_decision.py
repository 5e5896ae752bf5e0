"""A review cannot carry a stale ``writable`` decision: reviewing a tool whose read-only claim,
annotations or required parameters moved since its last review needs ``writable`` in the same
request (422 naming the field otherwise, nothing recorded); the diff shows what the decision was
made on; the note is kept and shown in the history. Over ASGI, on both databases."""

from __future__ import annotations

import httpx2
import pytest

from tests.api.conftest import Headers
from tests.api.test_diff import reviewed_then_pulled, tool_url
from toolvet.domain.policy import ReviewState
from toolvet.services import review, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio


def decided_read_only_then_pulled(ctx: Context, admin: Principal, server: str) -> None:
    tools.register_tool(ctx, admin, server, {"name": "send", "description": "Sends.", "annotations":
                                              {"readOnlyHint": True}, "input_schema": {"type": "object"}})
    tools.update_tool(ctx, admin, server, "send", {"writable": False})
    review.review_tool(ctx, admin, server, "send", "reads only")
    tools.update_tool(ctx, admin, server, "send", {
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "input_schema": {"type": "object", "properties": {"bcc": {"type": "string"}}, "required": ["bcc"]}})


async def test_the_diff_shows_what_the_writable_decision_was_made_on(
    client: httpx2.AsyncClient, as_reader: Headers, manual_server: str, ctx: Context, admin: Principal
) -> None:
    decided_read_only_then_pulled(ctx, admin, manual_server)
    body = (await client.get(tool_url(manual_server, "send", "/diff"), headers=as_reader)).json()
    assert body["decision"] == {
        "writable": False,
        "decided_on": {"read_only": True, "annotations": {"readOnlyHint": True}, "required": []},
        "now": {"read_only": False, "annotations": {"readOnlyHint": False, "destructiveHint": True},
                "required": ["bcc"]},
        "moved": ["readOnlyHint: true → false", "destructiveHint: absent (means true) → true",
                  "claims read-only: yes → no", "now requires 'bcc'"],
        "must_choose": True,
    }


async def test_a_review_without_writable_is_refused_naming_the_field_and_records_nothing(
    client: httpx2.AsyncClient, as_operator: Headers, manual_server: str, ctx: Context, admin: Principal
) -> None:
    decided_read_only_then_pulled(ctx, admin, manual_server)
    for body in (None, {"note": "looks fine"}):
        response = await client.post(tool_url(manual_server, "send", "/review"), json=body, headers=as_operator)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["field"] == "writable" and "decided read-only" in error["message"]
        assert "now requires 'bcc'" in error["message"]
    still = tools.get_tool(ctx, admin, manual_server, "send")
    assert (still.review_state, still.writable) == (ReviewState.CHANGED, False)


@pytest.mark.parametrize("writable", [True, False])
async def test_a_review_that_chooses_writable_again_records_the_choice_and_the_note(
    client: httpx2.AsyncClient, as_operator: Headers, manual_server: str, ctx: Context, admin: Principal,
    writable: bool,
) -> None:
    decided_read_only_then_pulled(ctx, admin, manual_server)
    response = await client.post(tool_url(manual_server, "send", "/review"), headers=as_operator,
                                 json={"writable": writable, "note": "it sends mail now"})
    assert response.status_code == 200, response.text
    assert (response.json()["review_state"], response.json()["writable"]) == ("reviewed", writable)
    history = (await client.get(tool_url(manual_server, "send", "/history"), headers=as_operator)).json()
    notes = [[r["note"] for r in item["reviews"]] for item in history["items"]]
    assert notes == [["reads only"], ["it sends mail now"]]
    assert history["items"][1]["reviews"][0]["reviewed_by"].startswith("token:")


async def test_a_change_that_leaves_the_claims_alone_needs_no_new_choice(
    client: httpx2.AsyncClient, as_operator: Headers, manual_server: str, ctx: Context, admin: Principal
) -> None:
    tools.register_tool(ctx, admin, manual_server, {"name": "look", "description": "Looks.",
                                                    "annotations": {"readOnlyHint": True},
                                                    "input_schema": {"type": "object"}})
    review.review_tool(ctx, admin, manual_server, "look")
    tools.update_tool(ctx, admin, manual_server, "look", {"description": "Looks around."})
    diff = review.diff(ctx, admin, manual_server, "look")
    assert diff.decision is not None and (diff.decision.moved, diff.decision.must_choose) == ([], False)
    response = await client.post(tool_url(manual_server, "look", "/review"), headers=as_operator)
    assert response.status_code == 200 and response.json()["writable"] is True


async def test_a_reader_may_not_set_writable_with_a_review(
    client: httpx2.AsyncClient, as_reader: Headers, manual_server: str, ctx: Context, admin: Principal
) -> None:
    reviewed_then_pulled(ctx, admin, manual_server, "send")
    response = await client.post(tool_url(manual_server, "send", "/review"), headers=as_reader,
                                 json={"writable": False})
    assert response.status_code == 403
