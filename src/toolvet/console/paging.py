"""Paging, search and sorting for every console list: read from the query string, handed to the
service (which pages in SQL), and turned back into the pager's and the column headers' links, each
keeping the page's other filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

from toolvet.console.visit import Visit
from toolvet.errors import InvalidInput
from toolvet.schemas.common import MAX_OFFSET, Page

PAGE_SIZES: Final = (25, 50, 100, 200, 500)
DEFAULT_SIZE: Final = 50


@dataclass(frozen=True)
class Paging:
    """What the visitor asked for: ``q``, the sort and its direction, the page's size and start."""

    q: str
    sort: str
    descending: bool
    limit: int
    offset: int

    def service_args(self) -> dict[str, Any]:
        return {"q": self.q, "sort": self.sort, "descending": self.descending, "limit": self.limit,
                "offset": self.offset}


def _number(visit: Visit, name: str, default: int) -> int:
    text = visit.field(name)
    try:
        return int(text) if text else default
    except ValueError:
        raise InvalidInput("must be a whole number", name) from None


def paging(visit: Visit, sorts: Sequence[str], default_sort: str, *, descending: bool = False) -> Paging:
    sort = visit.field("sort") or default_sort
    if sort not in sorts:
        raise InvalidInput(f"must be one of {', '.join(sorts)}", "sort")
    order = visit.field("order")
    if order not in ("", "asc", "desc"):
        raise InvalidInput("must be asc or desc", "order")
    limit = _number(visit, "limit", DEFAULT_SIZE)
    if limit not in PAGE_SIZES:
        raise InvalidInput(f"must be one of {', '.join(map(str, PAGE_SIZES))}", "limit")
    offset = min(max(_number(visit, "offset", 0), 0), MAX_OFFSET)
    return Paging(q=visit.field("q").strip(), sort=sort, descending=(order == "desc") if order else descending,
                  limit=limit, offset=offset)


@dataclass(frozen=True)
class Pager:
    """The links of one rendered page of a list."""

    total: int
    first_item: int
    last_item: int
    number: int
    pages: int
    first: str | None
    previous: str | None
    next: str | None
    last: str | None
    sizes: Sequence[int]
    limit: int
    sort: str
    descending: bool
    path: str
    params: dict[str, str]

    def url(self, **changes: Any) -> str:
        """This list with ``changes`` to its query (``None`` drops a parameter)."""
        merged = {**self.params, **{k: str(v) for k, v in changes.items() if v is not None}}
        for key in [k for k, v in changes.items() if v is None]:
            merged.pop(key, None)
        return self.path + ("?" + urlencode(merged) if merged else "")

    def sort_url(self, key: str) -> str:
        """The column header's link: sort by ``key``, or turn the order round when it is the sort already."""
        order = ("asc" if self.descending else "desc") if key == self.sort else "asc"
        return self.url(sort=key, order=order, offset=None)

    def aria_sort(self, key: str) -> str:
        return ("descending" if self.descending else "ascending") if key == self.sort else "none"


def pager(visit: Visit, page: Page[Any], asked: Paging) -> Pager:
    params = {k: v for k, v in visit.request.query_params.items() if v != ""}
    limit, total = asked.limit, page.total
    pages = max(1, -(-total // limit))
    number = min(asked.offset // limit + 1, pages)
    last_offset = (pages - 1) * limit
    path = visit.request.url.path

    def at(offset: int) -> str:
        merged = {**params, "offset": str(offset)} if offset else {k: v for k, v in params.items() if k != "offset"}
        return path + ("?" + urlencode(merged) if merged else "")

    return Pager(
        total=total, first_item=min(asked.offset + 1, total) if page.items else 0,
        last_item=asked.offset + len(page.items), number=number, pages=pages,
        first=at(0) if asked.offset > 0 else None,
        previous=at(max(asked.offset - limit, 0)) if asked.offset > 0 else None,
        next=at(asked.offset + limit) if asked.offset + limit < total else None,
        last=at(last_offset) if asked.offset < last_offset else None,
        sizes=PAGE_SIZES, limit=limit, sort=asked.sort, descending=asked.descending, path=path, params=params,
    )
