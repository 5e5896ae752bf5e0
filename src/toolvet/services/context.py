"""What every service needs: the database, the secret box and the settings, built once per process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolvet.db.engine import Database
from toolvet.db.migrate import upgrade
from toolvet.services.secrets import SecretBox, load_key
from toolvet.settings import Settings, get_settings


@dataclass
class Context:
    settings: Settings
    db: Database
    secrets: SecretBox
    #: The running ``CallService`` of this process (set by ``toolvet serve``; None elsewhere).
    calls: Any = None
    #: The discovery writer process of big sweeps, started on first use (``services.discovery_writer``).
    discovery_writer: Any = None

    @classmethod
    def open(cls, settings: Settings | None = None, *, migrate: bool = True) -> Context:
        """Connect to the configured database (migrating it to the newest schema unless told not to)."""
        settings = settings or get_settings()
        db = Database(settings.resolved_database_url())
        if migrate:
            upgrade(db.engine)
        return cls(settings=settings, db=db, secrets=SecretBox(load_key(settings)))

    def close(self) -> None:
        writer, self.discovery_writer = self.discovery_writer, None
        if writer is not None:
            writer.close()
        self.db.dispose()
