"""The listening socket toolvet serves on."""

import socket

from toolvet.serving import bind


def test_accepted_connections_get_tcp_nodelay():
    # asyncio enables TCP_NODELAY on accepted sockets only when the listener's proto is TCP; with
    # Nagle on, every response waited ~40 ms for a delayed ACK.
    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
