"""The lean HTTP path for upstream JSON-RPC POSTs (toolvet.lean_http), against real loopback servers
whose every byte the test decides: reuse, closed and stale connections, framing, timeouts,
cancellation, redirects and proxies left to httpx2, and the errors a channel reports."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import h11
import httpx2
import pytest

from toolvet import lean_http
from toolvet.discovery.http_channel import HttpChannel
from toolvet.discovery.protocol import ChannelError
from toolvet.upstream_http import UpstreamClient, upstream_client

pytestmark = pytest.mark.anyio

TIMEOUT = httpx2.Timeout(5)
Reply = Callable[[h11.Request, bytes, int], Awaitable[list[bytes] | None]]


class Upstream:
    """A loopback HTTP/1.1 server speaking through h11; ``reply`` decides each answer's raw bytes
    (None: close the connection without answering)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.connections = 0
        self.requests: list[tuple[int, h11.Request, bytes]] = []  # (connection number, request, body)
        self.port = 0

    async def handle(self, stream: anyio.abc.SocketStream) -> None:
        self.connections += 1
        number = self.connections
        conn = h11.Connection(h11.SERVER)
        async with stream:
            while True:
                request, body = None, b""
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        try:
                            conn.receive_data(await stream.receive(65536))
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            return
                        continue
                    if isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.Data):
                        body += event.data
                    elif isinstance(event, h11.EndOfMessage):
                        break
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                assert request is not None
                self.requests.append((number, request, body))
                parts = await self.reply(request, body, number)
                if parts is None:
                    return
                for part in parts:
                    await stream.send(part)
                conn = h11.Connection(h11.SERVER)


@asynccontextmanager
async def upstream(reply: Reply) -> AsyncIterator[Upstream]:
    server = Upstream(reply)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    server.port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, server.handle)
        yield server
        tg.cancel_scope.cancel()


def answer(body: bytes, *, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> list[bytes]:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers)
    return [head.encode() + b"\r\n" + body]


def rpc_result(request_body: bytes, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": json.loads(request_body)["id"], "result": result}).encode()


def client() -> UpstreamClient:
    return upstream_client(timeout=TIMEOUT, limits=httpx2.Limits(max_connections=8))


def channel(http: UpstreamClient, port: int, path: str = "/mcp", timeout: httpx2.Timeout = TIMEOUT) -> HttpChannel:
    return HttpChannel(http, f"http://127.0.0.1:{port}{path}", {"authorization": "Bearer t"},
                       timeout=timeout, max_response_bytes=8 * 1024 * 1024)


async def echo(request: h11.Request, body: bytes, number: int) -> list[bytes]:
    return answer(rpc_result(body, {"connection": number}))


async def test_requests_reuse_one_connection_and_send_what_the_channel_asked() -> None:
    async with upstream(echo) as server, client() as http:
        ch = channel(http, server.port)
        for _ in range(3):
            assert await ch.request("tools/call", {"name": "x"}, {"mcp-protocol-version": "2026-07-28"}) == {
                "connection": 1}
        assert http.lean.opened == 1 and server.connections == 1
        _, request, body = server.requests[0]
        headers = {k.decode(): v.decode() for k, v in request.headers}
        assert (request.method, request.target) == (b"POST", b"/mcp")
        assert headers["host"] == f"127.0.0.1:{server.port}"
        assert headers["user-agent"] == http.headers["user-agent"]  # the same on both paths
        assert headers["authorization"] == "Bearer t" and headers["mcp-protocol-version"] == "2026-07-28"
        assert headers["content-type"] == "application/json" and "accept-encoding" not in headers
        assert json.loads(body) == {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}


async def test_a_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def close_after(request: h11.Request, body: bytes, number: int) -> list[bytes]:
        return answer(rpc_result(body, number), headers=(("connection", "close"),))

    async with upstream(close_after) as server, client() as http:
        ch = channel(http, server.port)
        assert [await ch.request("ping", None, {}) for _ in range(3)] == [1, 2, 3]
        assert http.lean.opened == 3


async def test_an_idle_connection_past_its_time_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    async with upstream(echo) as server, client() as http:
        ch = channel(http, server.port)
        assert await ch.request("ping", None, {}) == {"connection": 1}
        monkeypatch.setattr(lean_http, "IDLE_SECONDS", 0.0)
        assert await ch.request("ping", None, {}) == {"connection": 2}
        assert http.lean.opened == 2


async def test_chunked_gzip_and_large_bodies_arrive_whole() -> None:
    big = {"text": "x" * (3 * lean_http.READ_HIGH_WATER)}  # past the read high-water mark

    async def chunked_gzip(request: h11.Request, body: bytes, number: int) -> list[bytes]:
        data = gzip.compress(rpc_result(body, big))
        head = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
                b"transfer-encoding: chunked\r\n\r\n")
        half = len(data) // 2
        return [head, b"%x\r\n%s\r\n" % (half, data[:half]), b"%x\r\n%s\r\n0\r\n\r\n" % (len(data) - half, data[half:])]

    async with upstream(chunked_gzip) as server, client() as http:
        ch = channel(http, server.port)
        assert await ch.request("ping", None, {}) == big
        assert await ch.request("ping", None, {}) == big
        assert http.lean.opened == 1  # a chunked answer read to its end leaves the connection reusable


async def test_an_sse_answer_is_read_from_the_stream() -> None:
    async def sse(request: h11.Request, body: bytes, number: int) -> list[bytes]:
        event = b"event: message\ndata: " + rpc_result(body, {"ok": True}) + b"\n\n"
        return [b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
                b"%x\r\n%s\r\n" % (len(b": ping\n\n"), b": ping\n\n"), b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event)]

    async with upstream(sse) as server, client() as http:
        assert await channel(http, server.port).request("ping", None, {}) == {"ok": True}


async def test_failures_become_clear_channel_errors() -> None:
    async def hang_up(request: h11.Request, body: bytes, number: int) -> None:
        return None

    async def slow(request: h11.Request, body: bytes, number: int) -> list[bytes]:
        await anyio.sleep(5)
        return answer(b"{}")

    async with upstream(hang_up) as server, client() as http:
        with pytest.raises(ChannelError, match="Server disconnected without sending a response"):
            await channel(http, server.port).request("ping", None, {})
    async with upstream(slow) as server, client() as http:
        with pytest.raises(ChannelError, match=r"HTTP timeout \(ReadTimeout\)"):
            await channel(http, server.port, timeout=httpx2.Timeout(0.3)).request("ping", None, {})

    class Cutting(Upstream):
        async def handle(self, stream: anyio.abc.SocketStream) -> None:  # answer part, then close
            async with stream:
                await stream.receive(65536)
                await stream.send(answer(b'{"jsonrpc":"2.0","id":1,"result":"' + b"x" * 1000 + b'"}')[0][:-500])

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, client() as http, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, Cutting(echo).handle)
        with pytest.raises(ChannelError, match="RemoteProtocolError"):
            await channel(http, port).request("ping", None, {})
        tg.cancel_scope.cancel()
    async with client() as http:
        with pytest.raises(ChannelError, match=f"cannot connect to http://127.0.0.1:{port}/mcp"):
            await channel(http, port).request("ping", None, {})
    async with upstream(echo) as server, client() as http:
        ch = HttpChannel(http, f"http://127.0.0.1:{server.port}/mcp", {"x-bad": "a\r\nb: c"}, timeout=TIMEOUT,
                         max_response_bytes=1024)
        with pytest.raises(ChannelError, match="cannot send the request"):
            await ch.request("ping", None, {})
        assert server.requests == []  # nothing went out


async def test_a_cancelled_request_closes_its_connection() -> None:
    release = anyio.Event()

    async def slow_first(request: h11.Request, body: bytes, number: int) -> list[bytes]:
        if number == 1:
            await release.wait()
        return answer(rpc_result(body, number))

    async with upstream(slow_first) as server, client() as http:
        ch = channel(http, server.port)
        with anyio.move_on_after(0.2):
            await ch.request("ping", None, {})
        release.set()
        assert await ch.request("ping", None, {}) == 2  # a new connection: the first is not reused
        assert http.lean.opened == 2


async def test_a_redirect_is_followed_by_httpx2_within_the_origin() -> None:
    async def redirect(request: h11.Request, body: bytes, number: int) -> list[bytes]:
        if request.target == b"/mcp":
            return answer(b"", status=307, headers=(("location", "/mcp/"),))
        return answer(rpc_result(body, request.target.decode()))

    async with upstream(redirect) as server, client() as http:
        assert await channel(http, server.port).request("ping", None, {}) == "/mcp/"
        targets = [request.target for _, request, _ in server.requests]
        assert targets == [b"/mcp", b"/mcp", b"/mcp/"]  # lean, then httpx2, which follows it


async def test_proxied_and_unusual_urls_go_through_httpx2(monkeypatch: pytest.MonkeyPatch) -> None:
    async with client() as http:
        # httpx2's own idle connections expire as soon as the lean pool's
        assert http._transport._pool._keepalive_expiry == lean_http.IDLE_SECONDS  # type: ignore[attr-defined]
        assert http.lean_route("http://127.0.0.1:8000/mcp?x=1") == (
            lean_http.Origin("http", "127.0.0.1", 8000), "/mcp?x=1")
        assert http.lean_route("https://example.org/mcp") == (lean_http.Origin("https", "example.org", 443), "/mcp")
        assert http.lean_route("http://user:pw@127.0.0.1:8000/mcp") is None
        assert http.lean_route("http://127.0.0.1:8000/a b") is None  # httpx2 encodes what must be
        assert http.lean_route("http://bücher.example/mcp") is None  # and the IDNA host
        assert http.lean_route("http://127.0.0.1:99999/mcp") is None  # httpx2 says what is wrong
        assert http.lean_route("http://[::1]:8000/mcp")[0].host_header == "[::1]:8000"  # type: ignore[index]
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with client() as http:
        assert http.lean_route("http://example.org/mcp") is None  # httpx2 sends it through the proxy


def _certificates(directory: Any) -> tuple[Any, Any]:
    """A CA (its PEM file) and a server context whose certificate it signed, for 127.0.0.1."""
    import datetime
    import ipaddress
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, key: Any, issuer: str, signer: Any, ca: bool) -> x509.Certificate:
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = build("toolvet test CA", ca_key, "toolvet test CA", ca_key, True)
    leaf = build("127.0.0.1", leaf_key, "toolvet test CA", ca_key, False)
    ca_file, chain_file, key_file = directory / "ca.pem", directory / "leaf.pem", directory / "leaf.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(chain_file, key_file)
    return ca_file, server


async def test_https_uses_the_clients_tls_settings(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An https upstream is verified as httpx2 would verify it: refused with an unknown CA, accepted
    once SSL_CERT_FILE names it (httpx2 reads the environment when the client is built)."""
    from anyio.streams.tls import TLSListener

    ca_file, server_context = _certificates(tmp_path)
    server = Upstream(echo)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    url = f"https://127.0.0.1:{port}/mcp"
    async with TLSListener(listener, server_context, standard_compatible=False) as tls, anyio.create_task_group() as tg:
        tg.start_soon(tls.serve, server.handle)
        async with client() as http:
            assert http.lean_route(url) is not None
            with pytest.raises(ChannelError, match="CERTIFICATE_VERIFY_FAILED"):
                await HttpChannel(http, url, {}, timeout=TIMEOUT, max_response_bytes=1024).request("ping", None, {})
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        async with client() as http:
            ch = HttpChannel(http, url, {}, timeout=TIMEOUT, max_response_bytes=1024)
            assert await ch.request("ping", None, {}) == {"connection": server.connections}
            assert await ch.request("ping", None, {}) == {"connection": server.connections}
            assert http.lean.opened == 1
        tg.cancel_scope.cancel()
