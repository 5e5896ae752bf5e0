"""Arguments mirrored into HTTP headers: the annotations the protocol forbids, and credentials in headers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from toolvet.domain.findings import static_findings


def _tool(properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": "run", "description": "Runs the thing.", "inputSchema": {"type": "object",
                                                                            "properties": properties}}


def _header(name: str, kind: str = "string", token: str = "X") -> dict[str, Any]:
    return {name: {"type": kind, "x-mcp-header": token}}


@pytest.mark.parametrize(("properties", "expected"), [
    (_header("region", token="Region"), []),
    (_header("api_key", token="Api-Key"), [("sensitive-header", "warning",
                                            "inputSchema.properties.api_key.x-mcp-header")]),
    (_header("accessToken", token="Access"), [("sensitive-header", "warning",
                                               "inputSchema.properties.accessToken.x-mcp-header")]),
    (_header("session", token="Session-Token"), [("sensitive-header", "warning",
                                                  "inputSchema.properties.session.x-mcp-header")]),
    ({"auth": {"type": "object", "properties": _header("password", token="Pw")}},
     [("sensitive-header", "warning", "inputSchema.properties.auth.properties.password.x-mcp-header")]),
    (_header("page_token", token="Page-Token"), []),
    (_header("next_token", token="Next"), []),
    (_header("max_tokens", "integer", "Max-Tokens"), []),
    (_header("token_count", "integer", "Token-Count"), []),
    (_header("region", token="Region Name"), [("header-declaration", "warning", "inputSchema")]),
    (_header("scope", "object", "Scope"), [("header-declaration", "warning", "inputSchema")]),
    (_header("region", token="Region\r\nX-Admin: 1"), [("header-declaration", "high", "inputSchema")]),
    ({**_header("a", token="Same"), **_header("b", token="same")}, [("header-declaration", "warning", "inputSchema")]),
])
def test_header_annotations_earn_what_they_risk(properties: dict[str, Any], expected: list[tuple[str, str, str]]):
    found = [(f["code"], f["severity"], f["path"]) for f in static_findings(_tool(properties))
             if f["code"] in ("sensitive-header", "header-declaration")]
    assert found == expected


def test_a_forbidden_annotation_says_why_and_that_clients_drop_the_tool():
    [finding] = static_findings(_tool(_header("scope", "object", "Scope")))
    assert "integer/string/boolean" in finding["evidence"]
    assert "conforming clients drop the tool" in finding["message"]


def test_the_sdk_is_loaded_only_for_a_definition_that_declares_a_header():
    script = textwrap.dedent("""
        import sys
        from toolvet.domain.findings import static_findings
        from toolvet.jsontext import compact
        plain = {"name": "t", "description": "Mentions nothing.", "inputSchema": {"type": "object"}}
        static_findings(plain, compact(plain))
        before = "mcp" in sys.modules
        declared = {"name": "t", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}}
        static_findings(declared, compact(declared))
        print(before, "mcp" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True"]
