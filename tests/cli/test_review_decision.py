"""``toolvet review`` of a tool whose claims moved since its writable decision: refused by name
without ``--writable``/``--read-only`` (in a real process, nothing recorded), done with one of them;
``tool diff`` says what the decision was made on, ``tool history`` shows the notes."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cli.conftest import Toolvet
from toolvet.services import tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

PULLED = {"type": "object", "properties": {"q": {"type": "string"}, "bcc": {"type": "string"}},
          "required": ["bcc"]}


def pulled(hand: Toolvet, service: Context, admin: Principal) -> None:
    """hand/search decided read-only and reviewed, then changed to claim writes and require bcc."""
    hand.ok("tool", "set", "hand/search", "--read-only")
    hand.ok("review", "hand/search", "--note", "reads the index")
    tools.update_tool(service, admin, "hand", "search", {"annotations": {"readOnlyHint": False},
                                                         "input_schema": PULLED})


def test_review_without_a_writable_choice_is_refused_by_name_in_a_real_process(
    hand: Toolvet, service: Context, admin: Principal
) -> None:
    pulled(hand, service, admin)
    proc = subprocess.run([sys.executable, "-m", "toolvet", "review", "hand/search", "--note", "fine"],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("error: --writable/--read-only: the tool was decided read-only on a "
                                  "definition whose claims have moved since (")
    assert "now requires 'bcc'" in proc.stderr and proc.stderr.count("\n") == 1
    shown = hand.json("tool", "show", "hand/search")
    assert (shown["review_state"], shown["writable"]) == ("changed", False)


def test_tool_diff_says_what_the_decision_was_made_on(hand: Toolvet, service: Context, admin: Principal) -> None:
    pulled(hand, service, admin)
    out = hand.ok("tool", "diff", "hand/search").stdout
    assert "decided read-only on the reviewed definition; since then:" in out
    assert "• now requires 'bcc'" in out and "toolvet review --writable or --read-only" in out
    assert hand.json("tool", "diff", "hand/search")["decision"]["must_choose"] is True


def test_review_with_a_choice_records_it_and_history_shows_each_note(
    hand: Toolvet, service: Context, admin: Principal
) -> None:
    pulled(hand, service, admin)
    done = hand.ok("review", "hand/search", "--read-only", "--note", "still only reads")
    assert done.stdout.startswith("reviewed hand/search at sha256:")
    assert "(writable=False, offered=True)" in done.stdout
    shown = hand.json("tool", "show", "hand/search")
    assert (shown["review_state"], shown["writable"]) == ("reviewed", False)
    history = hand.json("tool", "history", "hand/search")["items"]
    assert [[r["note"] for r in d["reviews"]] for d in history] == [["reads the index"], ["still only reads"]]
    table = hand.ok("tool", "history", "hand/search").stdout
    assert "reads the index" in table and "still only reads" in table
