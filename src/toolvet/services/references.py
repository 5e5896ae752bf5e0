"""Values given by reference in the files toolvet reads: ``${NAME}`` (an environment variable),
``${NAME:-default}``, ``${env:NAME}`` (VS Code's spelling) and ``${file:PATH}`` (a file's content,
stripped of its trailing newline). Clients' config files and ``toolvet apply`` files name secrets
this way, so the files can be kept in version control without them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

#: One reference: ``${...}`` holding no brace.
REFERENCE: Final = re.compile(r"\$\{([^{}]*)\}")
#: Longest file a ``${file:...}`` reference may name (a secret, not a document).
MAX_FILE_BYTES: Final = 64 * 1024


class Unresolved(Exception):
    """A reference with no value here; ``reference`` is its text without ``${}``."""

    def __init__(self, reference: str, why: str) -> None:
        super().__init__(f"${{{reference}}} {why}")
        self.reference = reference
        self.why = why


def _file(path_text: str, base: Path | None) -> str:
    path = Path(path_text).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise Unresolved(f"file:{path_text}", f"cannot be read ({exc.strerror})") from None
    if len(data) > MAX_FILE_BYTES:
        raise Unresolved(f"file:{path_text}", f"names a file over {MAX_FILE_BYTES} bytes")
    return data.decode("utf-8", errors="replace").rstrip("\r\n")


def _one(reference: str, environ: Mapping[str, str], base: Path | None) -> str:
    if reference.startswith("file:"):
        return _file(reference.removeprefix("file:"), base)
    if reference.startswith("input:"):
        raise Unresolved(reference, "asks a person for the value (a VS Code input), which toolvet cannot do")
    name, sep, default = reference.removeprefix("env:").partition(":-")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise Unresolved(reference, "is not an environment variable or a file toolvet can read")
    value = environ.get(name)
    if value is None or (sep and value == ""):
        if sep:
            return default
        raise Unresolved(reference, f"needs the environment variable {name}, which is not set")
    return value


def expand(text: str, environ: Mapping[str, str], base: Path | None = None) -> str:
    """``text`` with every reference replaced; raises :class:`Unresolved` for the first one without a
    value (relative ``${file:...}`` paths are read from ``base``)."""
    return REFERENCE.sub(lambda m: _one(m.group(1), environ, base), text)


def is_reference(text: str) -> bool:
    """True when ``text`` is one reference and nothing else (how ``toolvet apply`` takes a secret)."""
    return REFERENCE.fullmatch(text) is not None
