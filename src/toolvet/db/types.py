"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from toolvet.jsontext import compact


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both databases (SQLite stores no zone; this restores it)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC) if dialect.name != "sqlite" else value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def bind_processor(self, dialect: Dialect) -> Any:
        """The usual processor (``process_bind_param``, then the dialect's own), remembering its last
        answer: a discovery pass binds one ``now`` to every row it writes (tens of thousands of times
        in a big sweep), and converting it again each time was a tenth of the pass's write cost."""
        inner = super().bind_processor(dialect)
        if inner is None:  # pragma: no cover - TypeDecorator always gives one when process_bind_param exists
            return None
        last: list[tuple[Any, Any]] = [(None, None)]  # (value, processed); replaced whole, never mutated

        def process(value: Any) -> Any:
            seen, processed = last[0]
            if value is seen:  # the very same (immutable) datetime object
                return processed
            processed = inner(value)
            last[0] = (value, processed)
            return processed

        return process


class Preserialized(str):
    """JSON text already encoded exactly as a JSON column encodes the value
    (:func:`toolvet.jsontext.compact`, the engines' ``json_serializer``).

    Bound to a :data:`Json` column it is stored as this text, not serialised again: a caller that has
    the text (e.g. a definition and its members for the tool row and its history row) pays for one
    encoding, not one per column. Never wrap None (a NULL column), wrap nothing but a value's own
    ``compact`` text.
    """

    __slots__ = ()

    @classmethod
    def of(cls, value: Any) -> Preserialized:
        """``compact(value)`` as a Preserialized text."""
        return cls(compact(value))


def _passthrough(text: str) -> str:
    return text


class _JsonColumn(TypeDecorator[Any]):
    """SQLAlchemy's ``JSON(none_as_null=True)`` that also takes a :class:`Preserialized` text as is."""

    impl = JSON(none_as_null=True)
    cache_ok = True

    def bind_processor(self, dialect: Dialect) -> Any:
        impl = self.impl_instance  # already the dialect's JSON implementation
        inner = impl.bind_processor(dialect)
        if dialect.driver == "psycopg":
            from psycopg.types.json import Json as PsycopgJson  # only a PostgreSQL process loads psycopg

            # psycopg: the value is wrapped in psycopg's Json (as the dialect's JSON type wraps what it
            # serialises), whose ``dumps`` here hands the text over as it is.
            def text(value: Preserialized) -> Any:
                return PsycopgJson(str(value), _passthrough)
        else:
            # Elsewhere JSON binds the serializer's text as a string: bind it as the dialect binds a String.
            string_process = String().dialect_impl(dialect).bind_processor(dialect)

            def text(value: Preserialized) -> Any:
                return string_process(str(value)) if string_process is not None else str(value)

        def process(value: Any) -> Any:
            if type(value) is Preserialized:
                return text(value)
            return inner(value) if inner is not None else value

        return process


# Plain JSON, not JSONB: PostgreSQL's json keeps the text as sent (key order included), which is what
# "verbatim" means for a server's claims. A :class:`Preserialized` text is stored as given.
Json = _JsonColumn()


def utcnow() -> datetime:
    return datetime.now(UTC)

