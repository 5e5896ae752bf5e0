"""Connect: an operator authorizes toolvet at an OAuth-protected server's authorization server, and
the callback the authorization server sends them back to."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.responses import Response

from toolvet.console.visit import PREFIX, Visit, url_part
from toolvet.errors import UpstreamError
from toolvet.schemas.oauth import OAuthGrant
from toolvet.services import servers
from toolvet.services.oauth_connect import connect_now, session_key


async def connect(visit: Visit) -> Response:
    """Start the authorization-code flow and send the operator to consent (a client-credentials
    server gets its token at once)."""
    name = visit.request.path_params["name"]
    server = await visit.run(servers.get_server, name)
    if server.oauth is not None and server.oauth.grant is OAuthGrant.CLIENT_CREDENTIALS:
        await connect_now(visit.ctx, visit.principal, name)
        return visit.redirect(f"{PREFIX}/servers/{url_part(name)}", f"Connected {name}.")
    flows = visit.ctx.connects
    if flows is None:
        raise UpstreamError("Connect needs the running toolvet (toolvet serve)")
    url = await flows.start(visit.principal, name, session_key(visit.session.csrf))
    minutes = max(round(visit.ctx.settings.oauth_connect_seconds / 60), 1)
    return visit.render("connect.html", title=f"Connect {name}", server=name, url=url,
                        host=urlsplit(url).netloc, minutes=minutes)


async def callback(visit: Visit) -> Response:
    """The authorization server's redirect back: hand the code to its flow, show how it went."""
    flows = visit.ctx.connects
    if flows is None:
        raise UpstreamError("Connect needs the running toolvet (toolvet serve)")
    server, failure = await flows.finish(
        visit.field("state"), visit.field("code") or None, visit.field("iss") or None,
        visit.field("error_description") or visit.field("error") or None, session_key(visit.session.csrf),
    )
    back = f"{PREFIX}/servers/{url_part(server)}"
    if failure is not None:
        return visit.redirect(back, f"Connecting {server} failed: {failure}", "error")
    return visit.redirect(back, f"Connected {server}.")
