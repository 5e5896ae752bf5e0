"""Every answer of the API and the console carries the browser security headers; sign-in refuses
a form posted from another site."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from cryptography.fernet import Fernet

from tests.api.conftest import Headers
from toolvet.console.session import COOKIE
from toolvet.services.context import Context
from toolvet.settings import Settings

pytestmark = pytest.mark.anyio

TEMPLATES = Path(__file__).resolve().parents[2] / "src" / "toolvet" / "console" / "templates"
COMMON = {"x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "same-origin"}


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[Context]:
    """SQLite only: the headers do not depend on the database."""
    context = Context.open(Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/t.sqlite3",
                                    secret_key=Fernet.generate_key().decode()))
    yield context
    context.close()


def directives(policy: str) -> dict[str, list[str]]:
    parts = [p.split() for p in policy.split(";") if p.strip()]
    return {p[0]: p[1:] for p in parts}


def response_policy_text(policy: dict[str, list[str]]) -> str:
    return " ".join(source for sources in policy.values() for source in sources)


def assert_guarded(response: httpx2.Response) -> dict[str, list[str]]:
    for name, value in COMMON.items():
        assert response.headers.get(name) == value, (response.request.url, name)
    policy = directives(response.headers["content-security-policy"])
    assert policy["frame-ancestors"] == ["'none'"]
    return policy


@pytest.mark.parametrize("path", ["/api/v1/servers", "/api/v1/nope", "/healthz", "/openapi.json"])
async def test_api_answers_carry_the_headers_and_load_nothing(client: httpx2.AsyncClient, as_reader: Headers,
                                                              path: str) -> None:
    policy = assert_guarded(await client.get(path, headers=as_reader))
    assert policy["default-src"] == ["'none'"]


async def test_refusals_carry_the_headers_too(client: httpx2.AsyncClient) -> None:
    assert_guarded(await client.get("/api/v1/servers"))  # 401
    assert_guarded(await client.post("/api/v1/servers", content=b"[" * 100 + b"]" * 100,
                                      headers={"Content-Type": "application/json"}))


@pytest.mark.parametrize("path", ["/console/login", "/console/tools", "/console/static/console.css", "/"])
async def test_console_answers_allow_only_toolvets_own_scripts(client: httpx2.AsyncClient, path: str) -> None:
    policy = assert_guarded(await client.get(path))
    assert policy["script-src"] == ["'self'"]
    assert policy["default-src"] == ["'self'"]
    assert "'unsafe-inline'" not in response_policy_text(policy)


async def test_the_swagger_ui_may_not_be_framed_either(client: httpx2.AsyncClient) -> None:
    r = await client.get("/docs")
    assert r.status_code == 200
    assert_guarded(r)


def test_console_templates_hold_no_inline_script_or_handler() -> None:
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), f"inline <script> in {template.name}"
        assert not re.search(r"\son[a-z]+\s*=", text, re.IGNORECASE), f"inline event handler in {template.name}"
        assert "javascript:" not in text.lower(), template.name


@pytest.fixture
def operator_token(mint: Callable[..., str]) -> str:
    return mint("operator")


async def test_a_sign_in_posted_from_another_site_is_refused(client: httpx2.AsyncClient,
                                                             operator_token: str) -> None:
    for headers in ({"Origin": "http://127.0.0.1:9999"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": "http://attacker.example", "Sec-Fetch-Site": "same-origin"}):
        r = await client.post("/console/login", data={"token": operator_token}, headers=headers)
        assert r.status_code == 403, headers
        assert COOKIE not in r.headers.get("set-cookie", "")


async def test_a_sign_in_from_the_consoles_own_page_starts_a_session(client: httpx2.AsyncClient,
                                                                     operator_token: str) -> None:
    for headers in ({"Origin": "http://toolvet"}, {"Sec-Fetch-Site": "same-origin"}, {}):
        r = await client.post("/console/login", data={"token": operator_token}, headers=headers)
        assert r.status_code == 303, headers
        assert COOKIE in r.headers["set-cookie"]
