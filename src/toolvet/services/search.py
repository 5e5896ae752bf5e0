"""The text search and sorting every paged list shares (the console's lists, and the services under them).

A search matches a case-insensitive substring of any of the columns it is given (``%`` and ``_`` in
it match themselves); a sort is one of a list's named orders, ascending or descending, and always
ends on a unique column, so that pages never overlap or skip a row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.orm import Session

from toolvet.errors import InvalidInput
from toolvet.schemas.common import Page

T = TypeVar("T")

#: Longest search text accepted.
MAX_QUERY: Final = 200


def matching(q: str, *columns: Any) -> ColumnElement[bool]:
    """Rows where any of ``columns`` contains ``q`` (case-insensitive)."""
    if len(q) > MAX_QUERY:
        raise InvalidInput(f"at most {MAX_QUERY} characters", "q")
    escaped = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return or_(*(column.ilike(f"%{escaped}%", escape="\\") for column in columns))


def order_of(orders: Mapping[str, Sequence[Any]], key: str, *, descending: bool = False) -> list[Any]:
    """The ORDER BY of the named order ``key`` of ``orders`` (its columns in turn)."""
    columns = orders.get(key)
    if columns is None:
        raise InvalidInput(f"must be one of {', '.join(orders)}", "sort")
    return [c.desc() if descending else c.asc() for c in columns]


def page_of(session: Session, query: Select[Any], order: Sequence[Any], limit: int, offset: int,
            convert: Callable[[Any], T]) -> Page[T]:
    """One page of ``query``'s rows (a one-entity SELECT) in ``order``, each converted, with the total."""
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(*order).limit(limit).offset(offset)).all()
    return Page(items=[convert(row) for row in rows], total=total, limit=limit, offset=offset)
