"""Embedded secrets: credentials in well-known key formats written into a definition.

A definition is public to every reviewer and, through the gateway, to every model: a live key in it is
leaked. Only formats with a fixed prefix and length are matched, so a description naming a format
("AKIA followed by 16 characters", "sk-...") earns nothing, and a value that says it is a placeholder
(AWS's documented ``AKIAIOSFODNN7EXAMPLE``, ``xoxb-your-bot-token``, ``ghp_XXXX…``) is none.
"""

from __future__ import annotations

import re
from typing import Any, Final

from toolvet.domain.findings.finding import finding
from toolvet.domain.findings.strings import Text
from toolvet.domain.findings.text import Normalised

_FORMATS: Final = (
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a GitHub token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,40}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20}\b"),
    # a workspace's or user's number first ("xoxb-your-bot-token" is a placeholder)
    ("a Slack token", r"\bxox[abposr]-\d+-[A-Za-z0-9-]{10,}\b"),
    ("an OpenAI or Anthropic key", r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{32,}\b"),
    ("a Stripe key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}\b"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("a private key block", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"),
)
_PATTERN: Final = re.compile("|".join(f"(?P<k{i}>{rx})" for i, (_, rx) in enumerate(_FORMATS)))
#: What a placeholder says of itself.
_PLACEHOLDER: Final = re.compile(r"example|your|placeholder|dummy|sample|redacted|changeme|x{4}|0{8}", re.IGNORECASE)


def check(text: Text, norm: Normalised) -> list[dict[str, Any]]:
    m = next((m for m in _PATTERN.finditer(norm.cased) if _PLACEHOLDER.search(m.group()) is None), None)
    if m is None:
        return []
    label = _FORMATS[int(str(m.lastgroup)[1:])][0]
    a, b = norm.span(m.start(), m.end())
    shown = norm.original[a:b]
    return [finding("embedded-secret", "warning", f"{label} is written into the definition", text.path,
                    span=(a, b), evidence=shown[:8] + "…" if len(shown) > 8 else shown)]
