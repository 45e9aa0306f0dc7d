"""The listening socket `mcp-adapter serve --http` binds for uvicorn."""

from __future__ import annotations

import socket

from mcp_adapter.cli.serve import _bind


def test_the_listener_is_a_tcp_socket_so_asyncio_disables_nagle() -> None:
    """asyncio sets TCP_NODELAY only on sockets created with IPPROTO_TCP; without it
    each keep-alive response waits for the client's delayed ACK (about 40 ms)."""
    sock = _bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
