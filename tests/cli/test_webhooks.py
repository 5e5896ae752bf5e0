"""``toolvet webhook ...``: the secret printed once is the one deliveries are signed with."""

from __future__ import annotations

from tests.cli.conftest import Toolvet
from toolvet.services import webhooks
from toolvet.services.context import Context


def test_webhook_add_prints_its_secret_once_and_list_never_shows_it(toolvet: Toolvet, service: Context) -> None:
    out = toolvet.ok("webhook", "add", "pager", "https://hooks.example/p", "--kind", "call.pending",
                     "--kind", "tool.held").stdout
    secret = out.strip().splitlines()[-1]
    [hook] = webhooks.hooks(service)
    assert (hook.name, hook.secret, hook.kinds) == ("pager", secret, frozenset({"call.pending", "tool.held"}))
    listed = toolvet.json("webhook", "list")
    assert [(h["name"], h["kinds"]) for h in listed] == [("pager", ["call.pending", "tool.held"])]
    assert secret not in toolvet.ok("webhook", "list").stdout
    assert toolvet.json("webhook", "deliveries", "pager")["total"] == 0
    toolvet.ok("webhook", "remove", "pager")
    assert webhooks.hooks(service) == []


def test_webhook_add_refuses_an_unknown_kind_and_a_bad_url_in_one_line(toolvet: Toolvet) -> None:
    assert "kinds" in toolvet.fails("webhook", "add", "pager", "https://hooks.example/p", "--kind", "everything")
    assert "url" in toolvet.fails("webhook", "add", "pager", "ftp://hooks.example/p")
    assert "not found" in toolvet.fails("webhook", "remove", "nobody")
