"""The file format of ``toolvet apply``/``export``: the shipped JSON Schema is the models' own, and
every example in docs/config.md is a file the schema and the apply accept."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

from toolvet.schemas.config_file import json_schema
from toolvet.services.config_apply import config_schema, parse_config

DOC = Path(__file__).resolve().parent.parent / "docs" / "config.md"
SHIPPED = resources.files("toolvet") / "services" / "data" / "config.schema.json"


def yaml_examples() -> list[str]:
    return re.findall(r"^```yaml\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)


def test_the_shipped_schema_is_generated_from_the_models():
    assert json.loads(SHIPPED.read_text("utf-8")) == json_schema(), (
        "regenerate: python -c 'import json; from toolvet.schemas.config_file import json_schema; "
        "print(json.dumps(json_schema(), indent=2))' > src/toolvet/services/data/config.schema.json")


def test_the_shipped_schema_is_a_valid_json_schema():
    Draft202012Validator.check_schema(config_schema())


def test_every_example_in_docs_config_md_matches_the_schema_and_reads():
    examples = yaml_examples()
    assert examples, "docs/config.md has no ```yaml example"
    validator = Draft202012Validator(config_schema())
    for text in examples:
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(text))]
        assert errors == [], errors
        config = parse_config(text)
        assert config.servers or config.tool_sets or config.scopes or config.users


def test_the_schema_refuses_what_the_apply_refuses():
    validator = Draft202012Validator(config_schema())
    assert not validator.is_valid({"version": 2})
    assert not validator.is_valid({"servers": {"x": {"enabeld": True}}})
    assert not validator.is_valid({"users": {"alice": {"mode": "sometimes"}}})
    assert not validator.is_valid({"servers": {"x": {"software": "Crm"}}})
    assert validator.is_valid({"servers": {"x": {"software": "crm"}}})
    assert validator.is_valid({"servers": {"x": {"software": None}}})
