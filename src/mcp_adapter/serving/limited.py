"""The SDK's endpoint wrapped in the app-level stream and session limits of :class:`HttpLimits`."""

from __future__ import annotations

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp

from mcp_adapter.serving.limits import HttpLimits
from mcp_adapter.serving.session_quota import SessionQuota
from mcp_adapter.serving.streams import SseStreamGate


def limited(
    endpoint: ASGIApp, manager: StreamableHTTPSessionManager, limits: HttpLimits
) -> ASGIApp:
    """``endpoint`` behind the GET-stream gate and (stateful) the per-client session cap.

    The total session cap and idle timeout are the manager's own
    (``max_sessions``, ``session_idle_timeout``).
    """
    if not manager.stateless and limits.max_sessions_per_client is not None:
        endpoint = SessionQuota(endpoint, manager, limits.max_sessions_per_client)
    return SseStreamGate(endpoint, stateless=manager.stateless, max_streams=limits.max_sse_streams)
