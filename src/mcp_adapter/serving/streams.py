"""ASGI wrapper: ``GET`` (standalone SSE) streams are refused when stateless and capped when not."""

from __future__ import annotations

from mcp.types import INTERNAL_ERROR
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_adapter.serving.refusals import jsonrpc_refusal


class SseStreamGate:
    """What a ``GET`` on the MCP endpoint may open.

    - Stateless: ``405`` with ``Allow: POST``, as the SDK's 2026-07-28
      transport answers. A stateless server has no session whose messages a
      standalone stream could carry; the SDK's 2025-11-25 path would
      otherwise hold such a stream open for ever.
    - Stateful: at most ``max_streams`` GET streams at once (``None``: no cap);
      one more is refused with ``503``. A stream's place is freed when it ends.
    """

    def __init__(self, app: ASGIApp, *, stateless: bool, max_streams: int | None) -> None:
        self.app = app
        self.stateless = stateless
        self.max_streams = max_streams
        self.open = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        if self.stateless:
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        if self.max_streams is not None and self.open >= self.max_streams:
            refusal = jsonrpc_refusal(503, INTERNAL_ERROR, "Too many open SSE streams")
            await refusal(scope, receive, send)
            return
        self.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
