"""Which addresses toolvet may connect to for an upstream (the SSRF guard).

An operator names an upstream by URL, and toolvet then sends JSON-RPC there with the headers the
operator chose and shows readers what answered. Link-local addresses (where clouds serve instance
metadata and credentials) and the cloud metadata names are never reached; loopback and private
ranges are (internal MCP servers are the common case) unless ``TOOLVET_UPSTREAM_DENY`` lists them.

The check runs on the **resolved address at connect time**, in the network backend every upstream
HTTP connection of toolvet is made through (``upstream.connections``): a name that resolved to an allowed
address when it was registered and to a denied one later (DNS rebinding), and every numeric spelling
of an address (``0x7f000001``, ``2130706433``, ``127.1``, ``::ffff:169.254.169.254``), meet the same check,
because the resolver turns them all into the address that would be connected to.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from typing import Final

import anyio

__all__ = ["ALWAYS_DENIED", "METADATA_NAMES", "AddressGuard", "Refused"]

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Never reached, whatever the settings: link-local (instance metadata lives there on every major
#: cloud), the unspecified addresses (connecting to them reaches this host), and the few metadata
#: services that sit elsewhere.
ALWAYS_DENIED: Final[tuple[tuple[IPNetwork, str], ...]] = tuple(
    (ipaddress.ip_network(cidr), why) for cidr, why in (
        ("169.254.0.0/16", "link-local, where cloud instance metadata is served"),
        ("fe80::/10", "link-local"),
        ("0.0.0.0/8", "the unspecified address, which reaches this host"),
        ("::/128", "the unspecified address, which reaches this host"),
        ("fd00:ec2::254/128", "a cloud instance metadata service"),
        ("100.100.100.200/32", "a cloud instance metadata service"),
        ("168.63.129.16/32", "a cloud platform's host service"),
    )
)
#: Names of cloud metadata services, refused before they are resolved.
METADATA_NAMES: Final = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal",
    "metadata.azure.internal", "metadata.tencentyun.com", "metadata.packet.net",
})


class Refused(Exception):
    """toolvet may not connect there; the message says which address and why."""


class AddressGuard:
    """The addresses toolvet may connect to: all but :data:`ALWAYS_DENIED` and ``deny``."""

    def __init__(self, deny: Iterable[str] = ()) -> None:
        self.deny: list[tuple[IPNetwork, str]] = [*ALWAYS_DENIED]
        for cidr in deny:
            self.deny.append((ipaddress.ip_network(cidr.strip(), strict=False), "denied by TOOLVET_UPSTREAM_DENY"))

    def reason(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be reached, or None when it may."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        for network, why in self.deny:
            if address.version == network.version and address in network:
                return why
        return None

    def check_name(self, host: str) -> None:
        """Refuse a cloud metadata name (before anything resolves it)."""
        if host.rstrip(".").lower() in METADATA_NAMES:
            raise Refused(f"{host} is a cloud metadata service, which toolvet never reaches")

    async def addresses(self, host: str, port: int) -> Sequence[str]:
        """The addresses ``host`` resolves to that toolvet may connect to; Refused when there are none."""
        self.check_name(host)
        try:
            found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise OSError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
        allowed: list[str] = []
        refused: list[str] = []
        for *_, sockaddr in found:
            text = str(sockaddr[0]).split("%", 1)[0]
            why = self.reason(ipaddress.ip_address(text))
            if why is None:
                if text not in allowed:
                    allowed.append(text)
            else:
                refused.append(f"{text} ({why})")
        if not allowed:
            raise Refused(f"{host} resolves to {', '.join(refused) or 'no address'}, which toolvet may not reach")
        return allowed
