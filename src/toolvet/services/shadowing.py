"""Cross-server findings during a discovery pass: the pass's new and changed tools against the tools
other servers have in the registry (``domain.findings.cross_server_findings``), and back.

Candidates are the other servers' live tools that bear the name of a tool this pass adds or changes, or
a name-like word its title or description mentions (``send_email``): for each such name, the PER_NAME
earliest registered (the index on ``tools (name, id)`` finds them without reading the others), in one
query per pass with something new, none for a pass that changes nothing. A new copy of a tool adds a ``tool-duplicate``
finding to the copy and to the tool it copies (whose own pass may be long over); a tool mentioned by a
new one is not re-read (its findings are about its own text).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

from sqlalchemy import Connection, String, bindparam, column, select, update, values
from sqlalchemy.engine import Dialect

from toolvet.db.models import Server, Tool
from toolvet.domain.findings import OtherTool, cross_server_findings
from toolvet.domain.reconcile import ChangeSet, Upsert

#: A tool is compared with at most PER_NAME other servers' tools bearing one name: the earliest
#: registered (by id), which a copy imitates. A name many servers share (one vendor's server deployed
#: per team) then costs a few comparisons, not one per server, and never crowds out another name.
PER_NAME: Final = 2
#: A copied tool keeps at most this many cross-server findings (the newest replace the oldest): a tool that
#: fifty deployments resemble needs a reviewer's look, not fifty findings.
MAX_CROSS_FINDINGS: Final = 5
MAX_NAMES: Final = 2000
_CROSS_CODES: Final = frozenset({"tool-duplicate", "tool-shadowing"})
_NAME_LIKE: Final = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+\b")
#: What every name-like word holds: a text without it (most prose) needs no search for names.
_JOINED: Final = re.compile(r"[_.-][A-Za-z0-9]")

_OTHER = Tool.__table__.alias("other")


@lru_cache(maxsize=32)
def _select_candidates(dialect: Dialect, slots: int) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
    """The SQL (and its positional parameter order) of the other servers' live tools bearing each of the
    names bound as ``p_name_0`` .. ``p_name_{slots-1}``, PER_NAME per name, earliest first.

    Compiled here once per dialect and number of slots: SQLAlchemy does not cache a statement holding a
    VALUES list, and compiling it cost more than running it."""
    wanted = (values(column("name", String), name="wanted")
              .data([(bindparam(f"p_name_{i}", type_=String),) for i in range(slots)]).cte("wanted"))
    earliest = (select(_OTHER.c.id)
                .where(_OTHER.c.name == wanted.c.name, _OTHER.c.server_id != bindparam("p_server_id"),
                       _OTHER.c.retired_at.is_(None))
                .order_by(_OTHER.c.id).limit(PER_NAME).correlate(wanted))
    statement = (select(Tool.id, Tool.name, Tool.title, Tool.description, Server.name.label("server"))
                 .select_from(wanted).join(Tool, Tool.id.in_(earliest)).join(Server, Tool.server_id == Server.id)
                 .order_by(Tool.id))
    compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    order = tuple(compiled.positiontup) if compiled.positional and compiled.positiontup else None
    return compiled.string, order, dict(compiled.params)  # the limit's (and offset's) own values


def _candidates(conn: Connection, server_id: int, names: list[str]) -> list[Any]:
    """The candidate rows for ``names``: the statement with the next power of two of slots (a handful of
    statements serve every pass; spare slots hold the empty name, which no tool has)."""
    slots = 1 << max(len(names) - 1, 0).bit_length()
    sql, order, fixed = _select_candidates(conn.dialect, slots)
    params = {**fixed, "p_server_id": server_id}
    params |= {f"p_name_{i}": n for i, n in enumerate(names + [""] * (slots - len(names)))}
    return list(conn.exec_driver_sql(sql, tuple(params[k] for k in order) if order is not None else params))


_SELECT_FINDINGS = select(Tool.id, Tool.findings).where(Tool.id.in_(bindparam("p_ids", expanding=True)))
_UPDATE_FINDINGS = update(Tool).where(Tool.id == bindparam("p_id")).values(findings=bindparam("p_findings"))


def _mentioned(upsert: Upsert) -> set[str]:
    return {n for text in (upsert.claim.title, upsert.claim.description) if text and _JOINED.search(text)
            for n in _NAME_LIKE.findall(text)}


def _names(upserts: list[tuple[Upsert, set[str]]]) -> list[str]:
    return sorted(set().union(*(names for _, names in upserts)))[:MAX_NAMES]


def add_cross_server_findings(conn: Connection, server_id: int, server_name: str, changes: ChangeSet) -> None:
    """Add to the pass's upserts (before they are written) the findings they earn against other servers'
    tools, and write the matching ``tool-duplicate`` findings onto the tools they copy."""
    if not changes.added and not changes.changed:
        return
    upserts = [(u, {u.claim.name} | _mentioned(u)) for u in (*changes.added, *changes.changed)]
    rows = _candidates(conn, server_id, _names(upserts))
    if not rows:
        return
    by_name: dict[str, list[OtherTool]] = {}
    by_key: dict[tuple[str, str], int] = {}
    for tool_id, name, title, description, server in rows:
        by_name.setdefault(name, []).append(OtherTool(server, name, description, title))
        by_key[(server, name)] = tool_id
    copied: dict[int, list[dict[str, Any]]] = {}
    for upsert, names in upserts:
        others = (by_name.get(upsert.claim.name, []) if len(names) == 1
                  else [o for name in sorted(names) for o in by_name.get(name, ())])
        if not others:
            continue
        found = cross_server_findings(server_name, upsert.claim.definition, others)
        upsert.findings.extend(found)
        for f in found:
            if f["code"] == "tool-duplicate":
                back = {"name": f["other_tool"]}
                theirs = next(o for o in others if (o.server, o.name) == (f["other_server"], f["other_tool"]))
                back |= {"title": theirs.title, "description": theirs.description}
                mine = OtherTool(server_name, upsert.claim.name, upsert.claim.description, upsert.claim.title)
                copied.setdefault(by_key[(theirs.server, theirs.name)], []).extend(
                    cross_server_findings(theirs.server, back, [mine]))
    if copied:
        current: dict[int, Any] = {r.id: r.findings for r in conn.execute(_SELECT_FINDINGS, {"p_ids": list(copied)})}
        writes = []
        for tool_id, new in copied.items():
            old = current.get(tool_id) or []
            own = [f for f in old if f.get("code") not in _CROSS_CODES]
            cross = [f for f in old if f.get("code") in _CROSS_CODES and f.get("other_server") != server_name]
            updated = own + (cross + new)[-MAX_CROSS_FINDINGS:]
            if updated != old:
                writes.append({"p_id": tool_id, "p_findings": updated})
        if writes:
            conn.execute(_UPDATE_FINDINGS, writes)
