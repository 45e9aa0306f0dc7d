"""ASGI wrapper: at most N open stateful sessions per client (principal, else peer address)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import INTERNAL_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_adapter.compat import open_session_ids
from mcp_adapter.compiled.context import client_key
from mcp_adapter.serving.refusals import jsonrpc_refusal

_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
_VERSION_HEADER = b"mcp-protocol-version"


class SessionQuota:
    """A request that would open a session beyond ``per_client`` for its client gets ``429``.

    Sessions are counted per :func:`client_key`; a session's place is freed
    once the SDK's manager no longer holds it (closed with DELETE, expired
    after ``session_idle_timeout``, or never established). Requests opening a
    session concurrently count while they are in flight.
    """

    def __init__(
        self, app: ASGIApp, manager: StreamableHTTPSessionManager, per_client: int
    ) -> None:
        self.app = app
        self.manager = manager
        self.per_client = per_client
        self.sessions: defaultdict[Hashable, set[str]] = defaultdict(set)
        self.opening: defaultdict[Hashable, int] = defaultdict(int)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _opens_session(scope):
            await self.app(scope, receive, send)
            return
        key = client_key(scope)
        mine = self.sessions[key]
        mine.intersection_update(open_session_ids(self.manager))
        if len(mine) + self.opening[key] >= self.per_client:
            if not mine and not self.opening[key]:
                del self.sessions[key]
            refusal = jsonrpc_refusal(429, INTERNAL_ERROR, "Too many open sessions for this client")
            await refusal(scope, receive, send)
            return

        async def noting_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message.get("status", 500) < 400:
                for name, value in message.get("headers") or ():
                    if bytes(name).lower() == _SESSION_HEADER:
                        mine.add(bytes(value).decode("latin-1"))
            await send(message)

        self.opening[key] += 1
        try:
            await self.app(scope, receive, noting_send)
        finally:
            self.opening[key] -= 1
            if not self.opening[key]:  # the last in flight: forget a client with no session
                del self.opening[key]
                if not mine:
                    self.sessions.pop(key, None)


def _opens_session(scope: Scope) -> bool:
    """A 2025-11-25 POST without a session id: the SDK opens a session if it succeeds."""
    if scope["type"] != "http" or scope.get("method") != "POST":
        return False
    version: bytes | None = None
    for name, value in scope.get("headers") or ():
        lowered = bytes(name).lower()
        if lowered == _SESSION_HEADER:
            return False
        if lowered == _VERSION_HEADER and version is None:
            version = bytes(value)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
