"""The SSRF guard: link-local and cloud metadata addresses are never reached, ranges the settings deny
neither, checked on the resolved address at connect time, on every transport toolvet connects with
(the httpx2 client's and the direct route's pool alike)."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import anyio
import httpx2
import pytest
from pydantic import ValidationError
from starlette.types import Receive, Scope, Send

from tests.upstreams import modern_http_server, serve, sse_server
from toolvet.discovery import Limits, Target, fetch_listing
from toolvet.errors import UpstreamError
from toolvet.settings import Settings
from toolvet.upstream.errors import ChannelError
from toolvet.upstream.guard import AddressGuard, Refused
from toolvet.upstream.http import HttpChannel, http_client
from toolvet.upstream.pool import UpstreamPool

pytestmark = pytest.mark.anyio

LOOPBACK_DENIED = AddressGuard(["127.0.0.0/8"])


@pytest.mark.parametrize("address", ["169.254.169.254", "::ffff:169.254.169.254", "fe80::1", "0.0.0.0",
                                     "fd00:ec2::254", "100.100.100.200"])
def test_link_local_and_metadata_addresses_are_always_refused(address: str) -> None:
    assert AddressGuard().reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "192.168.0.9", "::1"])
def test_loopback_and_private_ranges_are_allowed_unless_the_settings_deny_them(address: str) -> None:
    assert AddressGuard().reason(ipaddress.ip_address(address)) is None
    assert AddressGuard(["127.0.0.0/8", "10.0.0.0/8", "192.168.0.0/16", "::1/128"]).reason(
        ipaddress.ip_address(address)) == "denied by TOOLVET_UPSTREAM_DENY"


@pytest.mark.parametrize("spelling", ["127.0.0.1", "0x7f000001", "2130706433", "127.1", "0177.0.0.1", "localhost"])
async def test_every_spelling_of_a_denied_address_is_refused_once_resolved(spelling: str) -> None:
    assert await AddressGuard().addresses(spelling, 80)  # allowed by default
    with pytest.raises(Refused, match="denied by TOOLVET_UPSTREAM_DENY"):
        await LOOPBACK_DENIED.addresses(spelling, 80)


@pytest.mark.parametrize("name", ["metadata.google.internal", "METADATA.google.internal.", "instance-data"])
async def test_cloud_metadata_names_are_refused_before_they_are_resolved(name: str) -> None:
    with pytest.raises(Refused, match="cloud metadata service"):
        await AddressGuard().addresses(name, 80)


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_discovery_and_calls_never_connect_to_a_denied_address(transport: str) -> None:
    serving = modern_http_server() if transport == "streamable-http" else sse_server()
    with serving as up:
        # "localhost": a name, resolved at connect time to the denied loopback address.
        target = Target(transport, url=up.url.replace("127.0.0.1", "localhost"))  # type: ignore[arg-type]
        async with http_client(timeout=httpx2.Timeout(10), guard=LOOPBACK_DENIED) as http:
            listing = await fetch_listing(target, Limits(read_timeout=10, pass_timeout=20), http)
            pool = UpstreamPool(http, guard=LOOPBACK_DENIED)
            async with pool.run():
                with anyio.fail_after(20), pytest.raises(UpstreamError) as refused:
                    await pool.call("demo", target, "tools/call", {"name": "tool_0", "arguments": {"a": 1, "b": 2}})
            allowed = await fetch_listing(Target(transport, url=up.url), Limits(read_timeout=10))  # type: ignore[arg-type]
    assert listing.status == "failed" and "which toolvet may not reach" in (listing.error or "")
    assert "which toolvet may not reach" in refused.value.message
    assert allowed.status == "ok"
    assert up.requests == [r for r in up.requests if r.headers.get("host", "").startswith("127.0.0.1")]


def test_the_deny_setting_takes_a_json_list_or_commas_and_names_a_bad_range() -> None:
    assert Settings(upstream_deny='["10.0.0.0/8"]').upstream_deny == ["10.0.0.0/8"]
    assert Settings(upstream_deny="10.0.0.0/8, 127.0.0.0/8").upstream_deny == ["10.0.0.0/8", "127.0.0.0/8"]
    with pytest.raises(ValidationError, match="'ten' is not an address range"):
        Settings(upstream_deny="ten")


def closing_app() -> Any:
    """A JSON-RPC endpoint answering every request with an empty result, closing each connection after
    its answer: every request needs a new connection, so the guard sees each one."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = json.loads((await receive()).get("body", b"") or b"{}")
        body = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": {}}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    return app


def channel(http: httpx2.AsyncClient, url: str) -> HttpChannel:
    return HttpChannel(http, url, {}, timeout=httpx2.Timeout(5), max_response_bytes=1 << 20)


async def test_the_direct_route_never_connects_to_a_name_resolving_to_a_denied_address() -> None:
    with serve(closing_app()) as up:
        url = up.url.replace("127.0.0.1", "localhost")
        async with http_client(timeout=httpx2.Timeout(5), guard=LOOPBACK_DENIED) as http:
            assert http.direct.applies(url)
            with anyio.fail_after(10), pytest.raises(ChannelError) as refused:
                await channel(http, url).request("tools/list", None, {})
    assert "localhost resolves to 127.0.0.1 (denied by TOOLVET_UPSTREAM_DENY), which toolvet may not reach" in str(
        refused.value)
    assert up.requests == []


@pytest.mark.parametrize(("host", "guard", "why"), [
    ("127.0.0.1", LOOPBACK_DENIED, "denied by TOOLVET_UPSTREAM_DENY"),
    ("[::ffff:127.0.0.1]", LOOPBACK_DENIED, "denied by TOOLVET_UPSTREAM_DENY"),
    ("169.254.169.254", AddressGuard(), "link-local"),
    ("[fe80::1]", AddressGuard(), "link-local"),
])
async def test_the_direct_route_refuses_a_denied_ip_literal_before_connecting(
    host: str, guard: AddressGuard, why: str
) -> None:
    with serve(closing_app()) as up:
        url = up.url.replace("127.0.0.1", host)
        async with http_client(timeout=httpx2.Timeout(5), guard=guard) as http:
            assert http.direct.applies(url)
            with anyio.fail_after(10), pytest.raises(ChannelError) as refused:
                await channel(http, url).request("tools/list", None, {})
    assert why in str(refused.value) and "which toolvet may not reach" in str(refused.value)
    assert up.requests == []


@pytest.mark.parametrize("spelling", ["2130706433", "0x7f000001", "127.1"])
async def test_a_legacy_numeric_spelling_on_the_direct_route_meets_the_same_guard(spelling: str) -> None:
    with serve(closing_app()) as up:
        url = up.url.replace("127.0.0.1", spelling)
        async with http_client(timeout=httpx2.Timeout(5)) as http:
            with anyio.fail_after(10):
                assert await channel(http, url).request("tools/list", None, {}) == {}
        async with http_client(timeout=httpx2.Timeout(5), guard=LOOPBACK_DENIED) as http:
            assert http.direct.applies(url)
            with anyio.fail_after(10), pytest.raises(ChannelError, match="which toolvet may not reach"):
                await channel(http, url).request("tools/list", None, {})
    assert len(up.requests) == 1


async def test_the_direct_route_checks_every_new_connection_against_the_rules_then() -> None:
    # A name that rebinds is caught because nothing between two connections is remembered: each new
    # connection resolves the name through the guard and connects only to an address it allowed.
    guard = AddressGuard()
    with serve(closing_app()) as up:
        url = up.url.replace("127.0.0.1", "localhost")
        async with http_client(timeout=httpx2.Timeout(5), guard=guard) as http:
            pipe = channel(http, url)
            with anyio.fail_after(10):
                assert await pipe.request("tools/list", None, {}) == {}
                guard.deny.extend(LOOPBACK_DENIED.deny[len(guard.deny):])
                with pytest.raises(ChannelError, match="which toolvet may not reach"):
                    await pipe.request("tools/list", None, {})
    assert len(up.requests) == 1
