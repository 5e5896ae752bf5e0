"""``toolvet audit``: every change a command makes is recorded, under the local admin's name."""

from __future__ import annotations

from tests.cli.conftest import LOCAL_ACTOR, Toolvet
from toolvet.services import audit
from toolvet.services.auth import Principal
from toolvet.services.context import Context


def test_audit_shows_each_action_newest_first_by_the_local_admin(hand: Toolvet) -> None:
    hand.ok("tool", "set", "hand/search", "--read-only")
    hand.ok("review", "hand/search")
    hand.ok("server", "set", "hand", "--disabled")
    hand.ok("token", "create", "--role", "reader", "-q")
    hand.ok("tool", "remove", "hand/search", "--yes")
    hand.ok("server", "remove", "hand", "--yes")
    page = hand.json("audit")
    assert [(e["action"], e["object_id"]) for e in page["items"]] == [
        ("server.delete", "server:hand"),
        ("tool.delete", "tool:hand/search"),
        ("token.create", "token:1"),
        ("server.update", "server:hand"),
        ("tool.review", "tool:hand/search"),
        ("tool.update", "tool:hand/search"),
        ("tool.register", "tool:hand/search"),
        ("server.create", "server:hand"),
    ]
    assert {e["actor"] for e in page["items"]} == {LOCAL_ACTOR}
    table = hand.ok("audit").stdout
    assert "tool.review" in table and LOCAL_ACTOR in table and table.splitlines()[-1] == "1-8 of 8 entries"


def test_audit_filters_by_object_and_actor_as_the_service_does(
    hand: Toolvet, service: Context, admin: Principal
) -> None:
    hand.ok("tool", "set", "hand/search", "--disabled")
    page = hand.json("audit", "--object", "tool:hand/search", "--limit", "1")
    assert page == audit.list_entries(service, admin, object_id="tool:hand/search", limit=1).model_dump(
        mode="json"
    )
    assert page["total"] == 2 and page["items"][0]["action"] == "tool.update"
    assert page["items"][0]["before"]["enabled"] is True and page["items"][0]["after"]["enabled"] is False
    assert hand.json("audit", "--actor", "someone-else")["total"] == 0
