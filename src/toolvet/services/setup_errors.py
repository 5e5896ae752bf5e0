"""Setup mistakes said plainly: what ``Context.open`` meets when the settings point at something
unusable, turned into one ``ToolvetError`` naming the setting. A database URL that is not
one, a PostgreSQL server that cannot be reached, a home or database file that cannot be written.

Anything else is left as it is: an unexpected failure stays one, and ``TOOLVET_DEBUG=1`` shows it.
"""

from __future__ import annotations

import errno
from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from toolvet.errors import InvalidInput, SetupError, ToolvetError
from toolvet.settings import Settings

URL_SETTING = "TOOLVET_DATABASE_URL"
HOME_SETTING = "TOOLVET_HOME"


def _reason(exc: BaseException) -> str:
    """The last clause of a driver's first line: ``connection ... failed: Connection refused`` ->
    ``Connection refused``."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return first.rsplit(": ", 1)[-1].strip() or first


def _setting_for(settings: Settings, url: str, path: str | None) -> str:
    """Which setting put toolvet at ``path``: the database URL when it was set and the path is its
    file or one of that file's directories, else the home."""
    database = make_url(url).database if url.startswith("sqlite") else None
    if settings.database_url and database and path:
        target = Path(database).absolute()
        if Path(path).absolute() in (target, *target.parents):
            return URL_SETTING
    return HOME_SETTING


def explain(settings: Settings, url: str, exc: BaseException) -> ToolvetError | None:
    """The setup mistake behind ``exc``, raised while opening ``url``; None when it is not one."""
    if isinstance(exc, ArgumentError):
        return InvalidInput("not a database URL", URL_SETTING)
    if isinstance(exc, NoSuchModuleError):
        return InvalidInput(f"{url.split(':', 1)[0]!r} is not a database toolvet knows (sqlite or postgresql)",
                            URL_SETTING)
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR,
                                                  errno.ENOENT, errno.EEXIST):
        where = exc.filename if isinstance(exc.filename, str) else None
        setting = _setting_for(settings, url, where)
        shown = where or str(settings.home)
        # mkdir of a path that is a file answers "File exists": what is wrong is that it is no directory.
        why = "Not a directory" if exc.errno == errno.EEXIST else exc.strerror or str(exc)
        return SetupError(f"{setting}: cannot write to {shown}: {why}")
    if isinstance(exc, OperationalError):
        parsed = make_url(url)
        if parsed.get_backend_name() == "postgresql":
            return SetupError(f"cannot reach PostgreSQL at {parsed.host or 'localhost'}:{parsed.port or 5432}: "
                              f"{_reason(exc.orig or exc)}")
        if parsed.get_backend_name() == "sqlite":
            setting = _setting_for(settings, url, parsed.database)
            return SetupError(f"{setting}: cannot open the SQLite database {parsed.database}: "
                              f"{_reason(exc.orig or exc)}")
    return None
