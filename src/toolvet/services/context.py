"""The process's application object: what every service needs (the database, the secret box, the
settings), built once per process, and the long-lived parts a running process holds.

It is built in one place per kind of process: ``Context.open`` (the CLI, ``toolvet serve``, tests);
``api.app.create_app`` enters the call service (which owns the upstream pool) and the gateway for
the app's lifespan, and ``serving.serve`` runs the scheduler beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from sqlalchemy import event
from sqlalchemy.orm import Session

from toolvet.cache import TtlCache
from toolvet.db.engine import Database, make_engine
from toolvet.db.migrate import current_revision, head_revision, upgrade
from toolvet.services.events import CACHE, EventBus, open_bus
from toolvet.services.secrets import SecretBox, load_key
from toolvet.services.setup_errors import explain
from toolvet.settings import Settings, get_settings

if TYPE_CHECKING:  # the services that set these import this module
    from toolvet.services.alerts import Alerts
    from toolvet.services.auth import Principal
    from toolvet.services.calls import CallService
    from toolvet.services.discovery_writer import ProcessWriter
    from toolvet.services.oauth_connect import ConnectFlows
    from toolvet.services.rate_limit import RateLimiter
    from toolvet.upstream.oauth import TokenSource


#: ``session.info`` key of the kinds of registry objects an uncommitted transaction changed
#: (``services.audit.record`` adds them); published on the ``cache`` topic once it commits.
CHANGED: Final = "toolvet.changed"


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
    #: OAuth-protected servers' token sources in this process, by server id (``services.oauth``).
    token_sources: dict[int, TokenSource] = field(default_factory=dict)
    #: The operators' Connect flows waiting for consent (set while the HTTP app runs).
    connects: ConnectFlows | None = None
    #: The event bus of this process (``services.events``), by the database: shared on PostgreSQL.
    bus: EventBus = field(default=None)  # type: ignore[assignment]  # set in __post_init__
    #: The per-token request counter (``services.rate_limit``), made on first use.
    rate_limiter: RateLimiter | None = None

    def __post_init__(self) -> None:
        if self.bus is None:
            self.bus = open_bus(self.db)
        event.listen(self.db.sessions, "after_commit", self._committed)
        event.listen(self.db.sessions, "after_rollback", self._rolled_back)

    def _committed(self, session: Session) -> None:
        """An operator's change committed: every process drops what it cached of it (``cache`` topic)."""
        changed = session.info.pop(CHANGED, None)
        if changed:
            self.bus.publish({"type": "changed", "what": sorted(changed)}, CACHE)

    def _rolled_back(self, session: Session) -> None:
        session.info.pop(CHANGED, None)

    @classmethod
    def open(cls, settings: Settings | None = None, *, migrate: bool = True) -> Context:
        """Connect to the configured database (migrating it to the newest schema unless told not to)."""
        settings = settings or get_settings()
        url = settings.resolved_database_url()
        db: Database | None = None
        try:
            db = Database(url)
            if migrate:
                upgrade(db.engine)
            return cls(settings=settings, db=db, secrets=SecretBox(load_key(settings)))
        except Exception as exc:
            if db is not None:
                db.dispose()
            plainly = explain(settings, url, exc)
            if plainly is None:
                raise
            raise plainly from exc

    def close(self) -> None:
        event.remove(self.db.sessions, "after_commit", self._committed)
        event.remove(self.db.sessions, "after_rollback", self._rolled_back)
        writer, self.discovery_writer = self.discovery_writer, None
        if writer is not None:
            writer.close()
        self.db.dispose()


def schema_revisions(settings: Settings) -> tuple[str | None, str]:
    """The revision the configured database is at, without migrating it (None when it has none or
    cannot be read: opening it says why), and the newest this toolvet knows."""
    engine = make_engine(settings.resolved_database_url())
    try:
        return current_revision(engine), head_revision()
    finally:
        engine.dispose()
