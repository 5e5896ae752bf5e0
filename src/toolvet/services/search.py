"""The text search and sorting every paged list shares (the console's lists, and the services under them).

A search matches a case-insensitive substring of any of the columns it is given (``%`` and ``_`` in
it match themselves); a sort is one of a list's named orders, ascending or descending, and always
ends on a unique column, so that pages never overlap or skip a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from sqlalchemy import ColumnElement, or_

from toolvet.errors import InvalidInput

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
