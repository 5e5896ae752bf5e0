"""The console in a real headless Chromium: the app under uvicorn on loopback, SQLite, tokens of each role.

Chromium (Debian's ``chromium``) and Playwright for Python are required under ``CI=true``; elsewhere
a missing one skips these tests with the reason.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet

from tests.upstreams import bound_socket, serve
from toolvet.api.app import create_app
from toolvet.schemas.tools import TokenCreate
from toolvet.services import tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

IN_CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
TIMEOUT_MS = 15_000
ADMIN = Principal(actor="test:admin", role=Role.ADMIN)


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"the console tests need {reason} under CI=true")
    pytest.skip(f"console browser tests skipped: {reason}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module. Not per session: Playwright's sync API keeps an event
    loop running in this thread while it is open, which would break every anyio test after it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python (pip install playwright)")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        _unavailable(f"Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=TIMEOUT_MS)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass(frozen=True)
class Console:
    """A running toolvet: its base URL, Context, and tokens by role."""

    url: str
    ctx: Context
    tokens: dict[str, str]

    def at(self, path: str) -> str:
        return self.url + path


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    """toolvet (API + console) served on 127.0.0.1 over a fresh SQLite database, knowing its own URL
    (``public_url``: where an OAuth authorization server sends the browser back)."""
    sock = bound_socket()
    settings = Settings(
        home=tmp_path,
        database_url=f"sqlite:///{tmp_path}/toolvet.sqlite3",
        secret_key=Fernet.generate_key().decode(),
        public_url=f"http://127.0.0.1:{sock.getsockname()[1]}",
    )
    ctx = Context.open(settings)
    minted = {
        role: tokens.create_token(
            ctx, ADMIN, TokenCreate(role=role, name=role, user="ana" if role == "consumer" else None)
        ).token
        for role in ("admin", "operator", "reader", "consumer")
    }
    try:
        with serve(create_app(ctx), "", sock) as running:
            yield Console(running.url, ctx, minted)
    finally:
        ctx.close()


def new_page(browser: Any, *, width: int = 1360, height: int = 900, javascript: bool = True) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=javascript)
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A laptop-width page in its own browser context (its own cookies)."""
    tab = new_page(browser)
    yield tab
    tab.context.close()


def sign_in(page: Any, console: Console, role: str = "operator") -> None:
    page.goto(console.at("/console/login"))
    page.fill("input[name=token]", console.tokens[role])
    page.click("button:has-text('Sign in')")
    page.wait_for_url("**/console/tools")


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot under test-artifacts/console/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
