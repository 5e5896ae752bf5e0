"""Pieces every representation uses: pages and the read-only-field guard."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

MAX_LIMIT = 1000
#: Far past any real list, and inside every database's integer (SQLite's OFFSET is a signed 64-bit one).
MAX_OFFSET = 1_000_000_000


class Page(BaseModel, Generic[T]):
    """One page of a list: ``items`` plus the paging that produced it and the total that matched."""

    items: list[T]
    total: int
    limit: int
    offset: int


def refuse_read_only(data: Any, read_only: dict[str, str]) -> Any:
    """Used by ``model_validator(mode="before")``: name the first read-only field the input sets."""
    if isinstance(data, dict):
        for key in data:
            if key in read_only:
                raise ValueError(f"{key} is read-only (owned by {read_only[key]})")
    return data


def read_only_map(owner: str, names: Iterable[str]) -> dict[str, str]:
    return dict.fromkeys(names, owner)
