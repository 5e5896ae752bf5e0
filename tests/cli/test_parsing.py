"""The CLI's JSON options refuse a document nested too deep to read with the option's name, not a crash."""

from __future__ import annotations

import pytest

from toolvet.cli.parsing import json_document
from toolvet.errors import InvalidInput


def test_a_json_option_nested_thousands_deep_is_refused_naming_the_option() -> None:
    with pytest.raises(InvalidInput) as refused:
        json_document("[" * 100_000 + "]" * 100_000, "--input-schema")
    assert refused.value.field == "--input-schema" and "nested too deep" in refused.value.reason


def test_a_json_option_nested_a_little_is_read() -> None:
    assert json_document("[" * 50 + "]" * 50, "--input-schema") is not None
