"""Upstream secrets (server headers and env) encrypted at rest with a Fernet key from the settings."""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from toolvet.errors import ToolvetError
from toolvet.settings import Settings

if TYPE_CHECKING:
    from cryptography.fernet import Fernet


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
    from cryptography.fernet import Fernet  # only the first start of a home makes a key

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
    """Encrypts a ``{name: value}`` mapping into one opaque string and back.

    The key is checked at once (32 url-safe base64-encoded bytes, as Fernet requires); cryptography is
    loaded on the first seal or open, so a command that touches no secret (``toolvet tool list``) does
    not pay for it."""

    def __init__(self, key: bytes) -> None:
        try:
            raw = base64.urlsafe_b64decode(key)
        except (binascii.Error, ValueError) as exc:
            raise ToolvetError(f"secret_key is not a valid Fernet key: {exc}") from None
        if len(raw) != 32:
            raise ToolvetError("secret_key is not a valid Fernet key: Fernet key must be 32 url-safe "
                               "base64-encoded bytes.")
        self._key = key
        self._box: Fernet | None = None

    @property
    def _fernet(self) -> Fernet:
        if self._box is None:
            from cryptography.fernet import Fernet

            self._box = Fernet(self._key)
        return self._box

    def seal(self, values: dict[str, str]) -> str | None:
        if not values:
            return None
        return self._fernet.encrypt(json.dumps(values).encode()).decode()

    def open(self, sealed: str | None) -> dict[str, str]:
        if not sealed:
            return {}
        from cryptography.fernet import InvalidToken

        try:
            data: dict[str, str] = json.loads(self._fernet.decrypt(sealed.encode()))
        except InvalidToken:
            raise ToolvetError("stored secrets cannot be decrypted with the configured secret_key") from None
        return data
