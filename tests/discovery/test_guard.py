"""The SSRF guard: link-local and cloud metadata addresses are never reached, ranges the settings deny
neither, checked on the resolved address at connect time, on every transport toolvet connects with."""

from __future__ import annotations

import ipaddress

import anyio
import httpx2
import pytest
from pydantic import ValidationError

from tests.upstreams import modern_http_server, sse_server
from toolvet.discovery import Limits, Target, fetch_listing
from toolvet.errors import UpstreamError
from toolvet.settings import Settings
from toolvet.upstream.guard import AddressGuard, Refused
from toolvet.upstream.http import http_client
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
