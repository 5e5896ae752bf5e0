"""``toolvet demo`` end to end in a subprocess: the bundled server is registered and discovered."""

import json
import os
import subprocess
import sys

from cryptography.fernet import Fernet


def test_demo_registers_and_discovers_the_bundled_server(tmp_path):
    env = {**os.environ, "TOOLVET_HOME": str(tmp_path), "TOOLVET_SECRET_KEY": Fernet.generate_key().decode()}
    env.pop("TOOLVET_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "toolvet", "demo", "--no-serve"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "discovered demo: ok (+5" in done.stdout
    listed = subprocess.run([sys.executable, "-m", "toolvet", "tool", "list", "--json"], env=env,
                            capture_output=True, text=True, timeout=60)
    tools = {t["name"]: t for t in json.loads(listed.stdout)["items"]}
    assert set(tools) == {"read_note", "delete_note", "forecast", "refresh_chart", "write_note"}
    assert tools["read_note"]["advertised_read_only"] is True
    assert tools["delete_note"]["annotations"]["destructiveHint"] is True
    assert tools["forecast"]["output_schema"] is not None
    assert tools["refresh_chart"]["meta"]["ui"]["visibility"] == ["app"]
    server = json.loads(subprocess.run([sys.executable, "-m", "toolvet", "server", "show", "demo", "--json"],
                                       env=env, capture_output=True, text=True, timeout=60).stdout)
    assert server["header_names"] == ["Authorization"] and "headers" not in server
