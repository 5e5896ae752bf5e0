"""Every route of the API is documented in docs/api.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI

from toolvet.api.app import API_PREFIX

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_every_api_route_is_in_docs_api_md(app: FastAPI) -> None:
    text = DOC.read_text(encoding="utf-8")
    routes = [
        f"`{method.upper()} {path.removeprefix(API_PREFIX)}`"
        for path, operations in app.openapi()["paths"].items()
        if path.startswith(API_PREFIX)
        for method in operations
    ]
    assert routes
    missing = [route for route in routes if route not in text]
    assert not missing, f"docs/api.md does not document {missing}"


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """The route table does not depend on the database: SQLite only."""
    return f"sqlite:///{tmp_path}/toolvet.sqlite3"
