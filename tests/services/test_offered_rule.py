"""The offered rule is written as Python (``domain.policy``) and as SQL (``services.tools.sql_*``): over
real rows, on SQLite and PostgreSQL, both agree for every combination of their inputs."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from sqlalchemy import ColumnElement, not_, select, update

from toolvet.db.models import Server, Tool
from toolvet.db.types import utcnow
from toolvet.domain.policy import ReviewState, is_available, offered
from toolvet.services import review, servers, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context
from toolvet.services.tools import TOOL_RECORDS, sql_available, sql_offered, sql_review_state

OBJECT = {"type": "object"}


@dataclass(frozen=True)
class Inputs:
    """One combination of everything the offered rule could depend on."""

    server_enabled: bool
    hold: bool
    tool_enabled: bool
    state: ReviewState
    retired: bool

    @property
    def server(self) -> str:
        return f"s-{int(self.server_enabled)}-{int(self.hold)}"

    @property
    def tool(self) -> str:
        return f"t-{int(self.tool_enabled)}-{self.state.value}-{int(self.retired)}"

    def python_offered(self) -> bool:
        return offered(is_available(self.tool_enabled, self.server_enabled), self.state, self.hold)


COMBINATIONS = [
    Inputs(*values)
    for values in itertools.product((True, False), (True, False), (True, False), ReviewState, (False, True))
]


@pytest.fixture
def every_combination(ctx: Context, admin: Principal) -> Context:
    """A tool for each combination, made through the services (a manual server per server flag pair);
    ``retired_at`` is set in the database, as discovery sets it."""
    for server_enabled, hold in itertools.product((True, False), (True, False)):
        name = Inputs(server_enabled, hold, True, ReviewState.REVIEWED, False).server
        servers.create_server(ctx, admin, {"name": name, "url": "http://127.0.0.1:9/mcp", "discovery": "manual",
                                           "enabled": server_enabled, "hold_changed_tools": hold})
    for combo in COMBINATIONS:
        tools.register_tool(ctx, admin, combo.server, {"name": combo.tool, "description": "before",
                                                       "input_schema": OBJECT, "enabled": combo.tool_enabled})
        if combo.state is not ReviewState.UNREVIEWED:
            review.review_tool(ctx, admin, combo.server, combo.tool)
        if combo.state is ReviewState.CHANGED:
            tools.update_tool(ctx, admin, combo.server, combo.tool, {"description": "after"})
        if combo.retired:
            with ctx.db.transaction() as session:
                tool_id = session.scalar(select(Tool.id).join(Server, Tool.server_id == Server.id)
                                         .where(Server.name == combo.server, Tool.name == combo.tool))
                session.execute(update(Tool).where(Tool.id == tool_id).values(retired_at=utcnow()))
    return ctx


def matching(ctx: Context, condition: ColumnElement[bool]) -> set[tuple[str, str]]:
    """The (server, tool) rows a WHERE on ``condition`` keeps."""
    query = (select(Server.name, Tool.name).select_from(TOOL_RECORDS).join(Server, Tool.server_id == Server.id)
             .where(condition))
    with ctx.db.transaction() as session:
        return {(server, tool) for server, tool in session.execute(query).all()}


def test_the_fixture_covers_every_combination_once(every_combination: Context) -> None:
    assert len(COMBINATIONS) == 2 * 2 * 2 * 3 * 2
    assert len({(c.server, c.tool) for c in COMBINATIONS}) == len(COMBINATIONS)


def test_sql_offered_keeps_and_its_negation_drops_exactly_what_python_offers(every_combination: Context) -> None:
    offered_rows = {(c.server, c.tool) for c in COMBINATIONS if c.python_offered()}
    not_offered_rows = {(c.server, c.tool) for c in COMBINATIONS if not c.python_offered()}
    assert offered_rows and not_offered_rows
    # Both filter forms are used (``?offered=true`` and ``?offered=false``): NULL logic in SQL could
    # leave a row out of both.
    assert matching(every_combination, sql_offered()) == offered_rows
    assert matching(every_combination, not_(sql_offered())) == not_offered_rows


def test_sql_available_and_review_states_agree_with_python(every_combination: Context) -> None:
    available = {(c.server, c.tool) for c in COMBINATIONS if is_available(c.tool_enabled, c.server_enabled)}
    assert matching(every_combination, sql_available()) == available
    assert matching(every_combination, not_(sql_available())) == {(c.server, c.tool) for c in COMBINATIONS} - available
    for state in ReviewState:
        assert matching(every_combination, sql_review_state(state)) == {
            (c.server, c.tool) for c in COMBINATIONS if c.state is state
        }, state


def test_the_tools_listing_filters_in_sql_what_each_tool_says_in_python(
    every_combination: Context, admin: Principal
) -> None:
    every = tools.list_tools(every_combination, admin, limit=1000).items
    assert {(t.server, t.name): (t.offered, t.review_state) for t in every} == {
        (c.server, c.tool): (c.python_offered(), c.state) for c in COMBINATIONS
    }
    for wanted in (True, False):
        page = tools.list_tools(every_combination, admin, offered_=wanted, limit=1000)
        assert {(t.server, t.name) for t in page.items} == {(c.server, c.tool) for c in COMBINATIONS
                                                             if c.python_offered() is wanted}
