"""``toolvet serve`` in its own process: it migrates, prints its address, answers HTTP, stops on SIGINT."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.conftest import new_pg_database


def test_serve_prints_its_address_and_answers_until_interrupted(home: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolvet", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once the server accepts connections
        assert line.startswith("toolvet serving on http://127.0.0.1:"), (
            line,
            proc.stderr and proc.stderr.read(),
        )
        url = line.split()[-1]
        with urllib.request.urlopen(f"{url}/openapi.json", timeout=10) as response:
            assert response.status == 200
        assert (home / "toolvet.sqlite3").exists()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert proc.returncode == 0


def _raw(port: int, request: bytes) -> bytes:
    """Send ``request`` on a new connection; what the server answers before it closes (or 64 KiB)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while len(answer) < 65536 and (chunk := sock.recv(65536)):
            answer += chunk
            if b"\r\n\r\n" in answer and b"connection: close" not in answer.lower():
                break
        return answer


def test_serve_refuses_malformed_http_and_oversized_bodies_and_keeps_serving(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever parser uvicorn runs (``serving.http_protocol``): a malformed request is a 400, a body
    past TOOLVET_MAX_BODY_BYTES a 413 on the REST API and on ``/mcp``, and the server goes on
    answering, several requests on one kept-alive connection."""
    monkeypatch.setenv("TOOLVET_MAX_BODY_BYTES", "1000")
    proc = subprocess.Popen([sys.executable, "-m", "toolvet", "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("toolvet serving on http://127.0.0.1:"), (line, proc.stderr and proc.stderr.read())
        port = int(line.split()[-1].rsplit(":", 1)[1])
        assert _raw(port, b"NOT HTTP AT ALL\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert _raw(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Name: v\r\n\r\n").startswith(
            b"HTTP/1.1 400 ")
        big = b"x" * 2000
        for path in (b"/api/v1/servers", b"/mcp"):
            answer = _raw(port, b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                          b"\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2000\r\n\r\n" + big)
            assert answer.startswith(b"HTTP/1.1 413 "), (path, answer[:200])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            for _ in range(3):  # one connection, kept alive between requests
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                assert (response.status, json.loads(response.read())) == (200, {"status": "ok"})
        finally:
            connection.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == 0


def test_serve_on_a_busy_port_is_one_error_line(home: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "toolvet", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(os.environ),
            check=False,
        )
    assert proc.returncode == 1 and proc.stderr.startswith(f"error: port {port} is in use (on 127.0.0.1)")
    assert proc.stderr.count("\n") == 1


@pytest.mark.postgres
def test_serve_on_postgresql_without_a_shared_key_refuses_in_one_line(home: Path, pg_base_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TOOLVET_SECRET_KEY"}
    env["TOOLVET_DATABASE_URL"] = new_pg_database(pg_base_url)
    proc = subprocess.run([sys.executable, "-m", "toolvet", "serve", "--port", "0"], capture_output=True,
                          text=True, timeout=60, env=env, check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: on PostgreSQL every replica needs the same secret key")
    assert proc.stderr.count("\n") == 1
    assert not (home / "secret.key").exists()  # no per-host key was made


@pytest.mark.postgres
def test_serve_on_postgresql_reads_the_shared_key_from_a_file(home: Path, pg_base_url: str) -> None:
    key_file = home / "shared.key"
    key_file.write_text(Fernet.generate_key().decode() + "\n")
    env = {k: v for k, v in os.environ.items() if k != "TOOLVET_SECRET_KEY"}
    env |= {"TOOLVET_DATABASE_URL": new_pg_database(pg_base_url), "TOOLVET_SECRET_KEY_FILE": str(key_file)}
    proc = subprocess.Popen([sys.executable, "-m", "toolvet", "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("toolvet serving on http://127.0.0.1:")
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert not (home / "secret.key").exists()
