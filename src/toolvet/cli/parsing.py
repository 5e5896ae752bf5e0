"""Turning option strings into values: ``'K: V'`` headers, ``K=V`` env, ``JSON|@file`` documents.

Each refusal names the option it came from and happens before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolvet.errors import InvalidInput


def headers(values: list[str] | None) -> dict[str, str] | None:
    """``['Authorization: Bearer x']`` -> ``{'Authorization': 'Bearer x'}``; None when none given."""
    if not values:
        return None
    out: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise InvalidInput(f"expected 'Name: value', got {_hint(value)}", "--header")
        out[name.strip()] = content.strip()
    return out


def env(values: list[str] | None) -> dict[str, str] | None:
    """``['KEY=value']`` -> ``{'KEY': 'value'}``; None when none given."""
    if not values:
        return None
    out: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition("=")
        if not sep or not name:
            raise InvalidInput(f"expected KEY=VALUE, got {_hint(value)}", "--env")
        out[name] = content
    return out


def _hint(value: str) -> str:
    # The value may be a secret: show its shape, never its content.
    return f"a value of {len(value)} characters without the separator" if value else "an empty value"


def json_document(value: str | None, option: str) -> Any:
    """Inline JSON, or ``@path`` to read JSON from a file; None when the option was not given."""
    if value is None:
        return None
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"cannot read {str(path)!r}: {exc.strerror or exc}", option) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", option
        ) from None
    except RecursionError:  # the parser recurses: a document nested thousands deep ends it
        raise InvalidInput("JSON nested too deep to read", option) from None
