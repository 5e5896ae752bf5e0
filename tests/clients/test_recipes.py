"""docs/clients.md works as written: its Python and TypeScript snippets run, unchanged, against a real
``toolvet demo`` (the demo server registered and served by ``toolvet serve``'s own code) in both
protocol eras the SDKs offer, and its client config files are files ``toolvet import`` reads."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

import pytest
from cryptography.fernet import Fernet

from tests.real_software import node22, node_modules, npm_package
from toolvet.schemas.tools import TokenCreate
from toolvet.services import config_import, preferences, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

DOC: Final = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
BOUND: Final = 60.0
ADMIN: Final = Principal(actor="test:admin", role=Role.ADMIN)


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.M | re.S)


@dataclass
class Demo:
    url: str
    token: str  # a consumer's, without the OAuth scope notes:write
    env: dict[str, str]


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):
        into.put(line)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    home = tmp_path_factory.mktemp("clients")
    env = {**os.environ, "TOOLVET_HOME": str(home), "TOOLVET_DATABASE_URL": f"sqlite:///{home}/toolvet.sqlite3",
           "TOOLVET_SECRET_KEY": Fernet.generate_key().decode(), "TOOLVET_PORT": "0"}
    env.pop("TOOLVET_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "toolvet", "demo"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True).start()
    try:
        seen: list[str] = []
        while not any(line.startswith("Ctrl-C") for line in seen):
            try:
                seen.append(lines.get(timeout=BOUND))
            except queue.Empty:
                pytest.fail(f"toolvet demo did not start: {''.join(seen)}")
        url = next(line.split()[-1] for line in seen if line.startswith("toolvet serving on"))
        ctx = Context.open(Settings(home=home, database_url=env["TOOLVET_DATABASE_URL"],
                                    secret_key=env["TOOLVET_SECRET_KEY"]))
        try:
            token = tokens.create_token(ctx, ADMIN, TokenCreate(role="consumer", user="sam", name="recipes"))
            preferences.set_permission_mode(ctx, ADMIN, "sam", "allow")
        finally:
            ctx.close()
        yield Demo(url=url, token=token.token, env={**env, "TOOLVET_URL": url, "TOOLVET_TOKEN": token.token})
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=BOUND)
        if proc.stdout:
            proc.stdout.close()


def run(command: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=BOUND, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_doc_has_one_python_and_two_typescript_snippets():
    assert (len(blocks("python")), len(blocks("js"))) == (1, 2)


@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_python_snippet_lists_calls_and_shows_a_missing_scope_naming_tool_and_scope(
    demo: Demo, mode: str, era: str
):
    [snippet] = blocks("python")
    out = run([sys.executable, "-c", snippet], {**demo.env, "MCP_MODE": mode})
    assert f"protocol {era}\n" in out
    assert "demo_read_note" in out and "'demo_write_note'" in out
    assert "result toolvet keeps what servers claim apart from what people decide.\n" in out
    [refused] = [line for line in out.splitlines() if line.startswith("refused")]
    assert "demo_write_note" in refused and "notes:write" in refused


@pytest.mark.parametrize(("index", "package", "era"), [(0, "@modelcontextprotocol/sdk", None),
                                                       (1, "@modelcontextprotocol/client", "2026-07-28")])
def test_the_typescript_snippets_list_and_call_through_toolvet(
    demo: Demo, tmp_path: Path, index: int, package: str, era: str | None
):
    node = node22()
    npm_package(package)
    # ES modules resolve packages from the script's folder up: give it the installed node_modules.
    (tmp_path / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    script = tmp_path / "client.mjs"
    script.write_text(blocks("js")[index])
    out = run([str(node), str(script)], demo.env, cwd=tmp_path)
    assert "demo_read_note" in out.splitlines()[-2]
    assert out.splitlines()[-1] == "result toolvet keeps what servers claim apart from what people decide."
    if era is not None:
        assert out.splitlines()[0] == f"protocol {era}"


@pytest.mark.parametrize("index", range(4))
def test_each_client_config_in_the_doc_is_a_file_toolvet_import_reads(index: int, tmp_path: Path):
    [*configs] = blocks("json")
    assert len(configs) == 4
    path = tmp_path / "config.json"
    path.write_text(configs[index])
    ctx = Context.open(Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/t.sqlite3",
                                secret_key=Fernet.generate_key().decode()))
    try:
        plan = config_import.plan_import(ctx, ADMIN, path, {"TOOLVET_TOKEN": "tv_x", "TOOLVET_AUTH": "Bearer tv_x"})
    finally:
        ctx.close()
    [item] = plan.items
    assert item.name == "toolvet-server" and item.source == "toolvet"
    endpoint = item.url or " ".join(item.args)
    assert "http://127.0.0.1:8730/mcp" in endpoint
    assert json.loads(configs[index])  # plain JSON, no comments
