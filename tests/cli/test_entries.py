"""``toolvet prompt ...`` and ``toolvet resource ...`` against a real database and a real upstream."""

from __future__ import annotations

from tests.cli.conftest import Toolvet
from tests.library import POISONED, library, set_summarise
from tests.upstreams import modern_http_server


def test_an_operator_lists_reviews_disables_and_diffs_prompts_and_resources(toolvet: Toolvet) -> None:
    upstream = library()
    with modern_http_server(upstream) as up:
        toolvet.ok("server", "add", "library", "--url", up.url)
        toolvet.ok("discover", "library")
        listed = toolvet.json("prompt", "list")
        reviewed = toolvet.ok("prompt", "review", "library/summarise", "--note", "reads fine").stdout
        set_summarise(upstream, POISONED)
        toolvet.ok("discover", "library")
    held = toolvet.json("prompt", "list", "--held")
    table = toolvet.ok("prompt", "list").stdout
    diff = toolvet.ok("prompt", "diff", "library/summarise").stdout
    shown = toolvet.ok("prompt", "show", "library/summarise").stdout
    disabled = toolvet.ok("resource", "disable", "library/books://by-title/{title}").stdout
    resources = toolvet.json("resource", "list", "--server", "library")
    missing = toolvet.fails("prompt", "show", "library/nothing")

    assert [p["key"] for p in listed["items"]] == ["greet", "summarise"]
    assert reviewed.startswith("reviewed prompt library/summarise at sha256:") and "offered=True" in reviewed
    assert [(p["key"], p["review_state"]) for p in held["items"]] == [("summarise", "changed")]
    assert "library/summarise" in table and "changed" in table
    assert "review state: changed" in diff and "description" in diff and "Ignore all previous" in diff
    assert "SEVERITY" in shown  # its findings, as a table
    assert disabled == "disabled resource library/books://by-title/{title} (offered=False)\n"
    assert [(r["kind"], r["enabled"]) for r in resources["items"]] == [("resource", True), ("template", False)]
    assert missing == "error: prompt library/nothing not found"
