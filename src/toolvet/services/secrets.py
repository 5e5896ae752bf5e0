"""Upstream secrets (server headers and env) encrypted at rest with a Fernet key from the settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from toolvet.errors import ToolvetError
from toolvet.settings import Settings


def shared_key_problem(settings: Settings) -> str | None:
    """Why ``toolvet serve`` must not start with these settings, or None. On PostgreSQL several
    replicas share one database: a key generated per host would seal secrets the others cannot open
    (and stop their discovery), so the key must be configured."""
    if settings.secret_key or settings.secret_key_file:
        return None
    if not settings.resolved_database_url().startswith("postgresql"):
        return None
    return ("on PostgreSQL every replica needs the same secret key: set TOOLVET_SECRET_KEY or "
            "TOOLVET_SECRET_KEY_FILE (generate one with: python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())')")


def load_key(settings: Settings) -> bytes:
    """The configured key, else the one in ``secret_key_file``, else the key file under ``home``,
    generated (mode 0600) on first start."""
    if settings.secret_key:
        return settings.secret_key.encode()
    if settings.secret_key_file is not None:
        try:
            lines = Path(settings.secret_key_file).read_bytes().strip().splitlines()
        except OSError as exc:
            raise ToolvetError(f"cannot read secret_key_file {settings.secret_key_file}: {exc.strerror}") from None
        if not lines:
            raise ToolvetError(f"secret_key_file {settings.secret_key_file} is empty")
        return lines[0].strip()
    path = Path(settings.home) / "secret.key"
    if path.exists():
        return path.read_bytes().strip()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # home: its owner's alone
    key = Fernet.generate_key()
    # O_EXCL: two processes starting at once must not each write a different key.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


class SecretBox:
    """Encrypts a ``{name: value}`` mapping into one opaque string and back."""

    def __init__(self, key: bytes) -> None:
        try:
            self._fernet = Fernet(key)
        except ValueError as exc:
            raise ToolvetError(f"secret_key is not a valid Fernet key: {exc}") from None

    def seal(self, values: dict[str, str]) -> str | None:
        if not values:
            return None
        return self._fernet.encrypt(json.dumps(values).encode()).decode()

    def open(self, sealed: str | None) -> dict[str, str]:
        if not sealed:
            return {}
        try:
            data: dict[str, str] = json.loads(self._fernet.decrypt(sealed.encode()))
        except InvalidToken:
            raise ToolvetError("stored secrets cannot be decrypted with the configured secret_key") from None
        return data
