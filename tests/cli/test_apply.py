"""``toolvet apply -f`` and ``toolvet export`` on the command line: the plan as a diff, a second
apply that changes nothing, an export that applies back unchanged and holds no secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Toolvet

FILE = """version: 1
servers:
  wiki:
    url: https://wiki.example/mcp
    headers: {Authorization: "${WIKI_AUTH}"}
    approval: always
users:
  alice: {mode: ask}
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WIKI_AUTH", "Bearer wiki-secret-1")
    path = tmp_path / "toolvet.yaml"
    path.write_text(FILE)
    return path


def test_a_dry_run_prints_the_plan_as_a_diff_and_changes_nothing(toolvet: Toolvet, config: Path) -> None:
    out = toolvet.ok("apply", "-f", str(config), "--dry-run").stdout
    assert out.splitlines() == [
        '+ server:wiki: "https://wiki.example/mcp"',
        '~ user:alice mode: — -> "ask"',
        "would apply 2 change(s)",
    ]
    assert toolvet.json("server", "list")["items"] == []


def test_applying_twice_changes_once(toolvet: Toolvet, config: Path) -> None:
    assert toolvet.ok("apply", "-f", str(config)).stdout.endswith("applied 2 change(s)\n")
    assert toolvet.json("server", "show", "wiki")["approval"] == "always"
    again = toolvet.json("apply", "-f", str(config))
    assert again == {"applied": True, "changes": []}
    assert "nothing to change" in toolvet.ok("apply", "-f", str(config)).stdout


def test_an_export_applies_back_unchanged_and_names_its_secrets_only_by_reference(
    toolvet: Toolvet, config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolvet.ok("apply", "-f", str(config))
    exported = tmp_path / "exported.yaml"
    assert toolvet.ok("export", "-o", str(exported)).stdout == f"wrote {exported}\n"
    text = exported.read_text()
    assert "wiki-secret-1" not in text and "#   TOOLVET_SECRET_WIKI_AUTHORIZATION\n" in text
    assert toolvet.ok("export").stdout == text
    monkeypatch.setenv("TOOLVET_SECRET_WIKI_AUTHORIZATION", "Bearer wiki-secret-1")
    assert toolvet.json("apply", "-f", str(exported))["changes"] == []


def test_an_inline_secret_is_refused_before_anything_is_written(toolvet: Toolvet, tmp_path: Path) -> None:
    path = tmp_path / "inline.yaml"
    path.write_text(FILE.replace("${WIKI_AUTH}", "Bearer pasted"))
    error = toolvet.fails("apply", "-f", str(path))
    assert "servers.wiki.headers.Authorization" in error and "by reference" in error
    assert "pasted" not in error
    assert toolvet.json("server", "list")["items"] == []


def test_a_software_is_exported_and_planned_and_applied_as_it_is_set_changed_and_cleared(
    toolvet: Toolvet, tmp_path: Path
) -> None:
    path = tmp_path / "software.yaml"
    path.write_text("servers:\n  crm-eu: {url: https://eu.example/mcp, software: crm}\n")
    toolvet.ok("apply", "-f", str(path))
    assert toolvet.json("server", "show", "crm-eu")["software"] == "crm"
    exported = toolvet.ok("export").stdout
    assert "  crm-eu:\n" in exported and "    software: crm\n" in exported
    toolvet.ok("server", "add", "wiki", "--url", "https://wiki.example/mcp")
    assert "software" not in toolvet.ok("export").stdout.split("  wiki:\n")[1]  # none: left out
    for line, after in (("software: crm-next", "crm-next"), ("software: null", None)):
        path.write_text(f"servers:\n  crm-eu: {{url: https://eu.example/mcp, {line}}}\n")
        before = toolvet.json("server", "show", "crm-eu")["software"]
        plan = toolvet.json("apply", "-f", str(path), "--dry-run")
        assert plan["changes"] == [
            {"op": "~", "object": "server:crm-eu", "field": "software", "before": before, "after": after, "note": None}
        ]
        assert toolvet.json("server", "show", "crm-eu")["software"] == before  # a dry run writes nothing
        assert toolvet.json("apply", "-f", str(path))["changes"] == plan["changes"]
        assert toolvet.json("server", "show", "crm-eu")["software"] == after
        assert toolvet.json("apply", "-f", str(path))["changes"] == []
    last = toolvet.json("audit")["items"][0]  # the clearing apply, audited by the server service
    assert (last["action"], last["object_id"]) == ("server.update", "server:crm-eu")
    assert (last["before"]["software"], last["after"]["software"]) == ("crm-next", None)


def test_a_bad_software_in_the_file_is_refused_naming_where_and_nothing_is_written(
    toolvet: Toolvet, tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("servers:\n  crm-eu: {url: https://eu.example/mcp, software: CRM_EU}\n")
    error = toolvet.fails("apply", "-f", str(path))
    assert error.startswith("error: servers.crm-eu.software: ") and "'CRM_EU' does not match" in error
    assert toolvet.json("server", "list")["items"] == []
