"""The process's application object: what every service needs (the database, the secret box, the
settings), built once per process, and the long-lived parts a running process holds.

It is built in one place per kind of process: ``Context.open`` (the CLI, ``toolvet serve``, tests);
``api.app.create_app`` enters the call service (which owns the upstream pool) and the gateway for
the app's lifespan, and ``serving.serve`` runs the scheduler beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from toolvet.cache import TtlCache
from toolvet.db.engine import Database
from toolvet.db.migrate import upgrade
from toolvet.services.secrets import SecretBox, load_key
from toolvet.settings import Settings, get_settings

if TYPE_CHECKING:  # the services that set these import this module
    from toolvet.services.alerts import Alerts
    from toolvet.services.auth import Principal
    from toolvet.services.calls import CallService
    from toolvet.services.discovery_writer import ProcessWriter


@dataclass
class Context:
    settings: Settings
    db: Database
    secrets: SecretBox
    #: The running call service of this process, with its upstream pool (set while the HTTP app runs).
    calls: CallService | None = None
    #: The running alert sender of this process (set while the HTTP app runs).
    alerts: Alerts | None = None
    #: The discovery writer process of big sweeps, started on first use (``services.discovery_writer``).
    discovery_writer: ProcessWriter | None = None
    #: Principals of tokens the gateway authenticated lately (for ``toolvet.cache.READ_TTL``), by token;
    #: revoking a token in this process clears it, so the revocation holds at once on every route.
    principals: TtlCache[str, Principal] = field(default_factory=TtlCache)

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
