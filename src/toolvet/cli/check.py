"""``toolvet check --user U --scope S SERVER/TOOL``: the approval decision and every reason (docs/policy.md),
the same as ``POST /api/v1/decide``."""

from __future__ import annotations

from typing import Annotated

import typer

from toolvet.cli import render
from toolvet.cli.render import JsonOption
from toolvet.cli.runtime import local
from toolvet.services import preferences
from toolvet.services.policy_facts import DEFAULT_SCOPE
from toolvet.services.tools import split_address


def check(
    address: Annotated[str, typer.Argument(metavar="SERVER/TOOL", help="The tool, as SERVER/TOOL.")],
    user: Annotated[str, typer.Option("--user", help="The user whose permission mode applies.")],
    scope: Annotated[
        str, typer.Option("--scope", help="The scope whose disabled map and always-allow list apply.")
    ] = DEFAULT_SCOPE,
    as_json: JsonOption = False,
) -> None:
    """Show whether the tool runs without a dialog, is asked about or is refused, and why."""
    server, name = split_address(address)
    with local() as (ctx, me):
        decision = preferences.decide_for(ctx, me, user, scope, server, name, as_caller=False)
    if as_json:
        render.emit_json(decision)
        return
    verdict = "refused" if decision.refused else "runs without a dialog" if decision.auto_allow else "asks"
    render.say(f"{server}/{name} for user {user} in scope {scope}: {verdict}")
    for reason in decision.reasons:
        render.say(f"  - {reason}")
