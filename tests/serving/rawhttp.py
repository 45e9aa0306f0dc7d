"""Raw HTTP on loopback for the limit tests: sessions opened and closed by hand, slow sockets."""

from __future__ import annotations

import json
import selectors
import socket
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx2

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SESSION = "mcp-session-id"
TIMEOUT = 10.0


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    return parts.hostname, parts.port


def open_session(
    http: httpx2.Client, url: str, headers: Mapping[str, str] | None = None
) -> httpx2.Response:
    """POST ``initialize`` (2025-11-25) and, when it opened a session, confirm it."""
    sent = {**POST_HEADERS, **(headers or {})}
    response = http.post(url, content=json.dumps(INITIALIZE), headers=sent)
    session = response.headers.get(SESSION)
    if response.status_code == 200 and session:
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        sent = {**sent, SESSION: session, "Mcp-Protocol-Version": "2025-11-25"}
        assert http.post(url, content=json.dumps(initialized), headers=sent).status_code == 202
    return response


def close_session(
    http: httpx2.Client, url: str, session: str, headers: Mapping[str, str] | None = None
) -> None:
    sent = {**(headers or {}), SESSION: session, "Mcp-Protocol-Version": "2025-11-25"}
    assert http.delete(url, headers=sent).status_code == 200


def refusal(response: httpx2.Response) -> Any:
    return response.json()["error"]["message"]


def open_slow_sockets(host: str, port: int, count: int, partial: bytes) -> list[socket.socket]:
    """``count`` connections; every other one sends ``partial`` (headers never finished)."""
    sockets = []
    for index in range(count):
        sock = socket.create_connection((host, port), timeout=TIMEOUT)
        if index % 2:
            sock.sendall(partial)
        sockets.append(sock)
    return sockets


def wait_all_closed(sockets: list[socket.socket], timeout: float) -> int:
    """Wait (at most ``timeout``) until the server closed every socket; return how many it did."""
    selector = selectors.DefaultSelector()
    for sock in sockets:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    closed = 0
    deadline = time.monotonic() + timeout
    while closed < len(sockets) and (remaining := deadline - time.monotonic()) > 0:
        for key, _ in selector.select(remaining):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            if not data:
                selector.unregister(sock)
                closed += 1
    selector.close()
    return closed


def read_until_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends on ``sock`` until it closes it (bounded by ``timeout``)."""
    sock.settimeout(timeout)
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = sock.recv(4096)
        except ConnectionResetError:
            break
        if not data:
            break
        received += data
    return received
