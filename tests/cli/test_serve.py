"""``toolvet serve`` in its own process: it migrates, prints its address, answers HTTP, stops on SIGINT."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path


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
