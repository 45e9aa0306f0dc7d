"""The MCP endpoint of an HTTP app: the SDK's session manager and the ASGI layers around it.

:func:`session_manager` builds the manager an app's options describe (sessions
or none, resumability, the total session cap and idle timeout, the body size),
and :func:`endpoint` wraps the SDK's ASGI app for it in the adapter's layers,
outermost last: the stream and per-client session limits, the invalid-request
answers, the body deadline, cancel-on-disconnect (JSON answers), the toolset
gate and, with auth, the token requirement.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mcp.server import Server as SdkServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from mcp_adapter.serving.auth import BearerAuth
from mcp_adapter.serving.body_timeout import BodyTimeout
from mcp_adapter.serving.disconnect import CancelOnDisconnect
from mcp_adapter.serving.events import Resumability
from mcp_adapter.serving.invalid_requests import CleanInvalidRequests, RefuseInvalidIds
from mcp_adapter.serving.limits import HttpLimits
from mcp_adapter.serving.session_events import SessionScopedEventsManager
from mcp_adapter.serving.session_quota import SessionQuota
from mcp_adapter.serving.streams import SseStreamGate
from mcp_adapter.serving.toolsets import ToolsetGate


def session_manager(
    server: SdkServer[Any],
    *,
    stateless: bool,
    json_response: bool,
    security: TransportSecuritySettings | None,
    limits: HttpLimits,
    resumability: Resumability | None,
) -> StreamableHTTPSessionManager:
    """The SDK's manager for ``server``: its own session cap, idle timeout and body size."""
    if stateless and resumability is not None:
        raise ValueError("resumability needs stateless=False: there is no stream to resume")
    options: dict[str, Any] = {
        "json_response": json_response,
        "security_settings": security,
        "max_request_body_size": limits.max_body_size,
        "max_sessions": limits.max_sessions,
        "session_idle_timeout": limits.session_idle_timeout,
    }
    if resumability is not None:
        return SessionScopedEventsManager(
            server,
            resumability.event_store,
            retry_interval=resumability.retry_interval,
            **options,
        )
    return StreamableHTTPSessionManager(app=server, stateless=stateless, **options)


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


def endpoint(
    manager: StreamableHTTPSessionManager,
    *,
    limits: HttpLimits,
    json_response: bool,
    toolsets: Collection[str],
    auth: BearerAuth | None,
) -> ASGIApp:
    """The ASGI app answering the MCP path: ``manager``'s, inside the adapter's layers."""
    app: ASGIApp = limited(StreamableHTTPASGIApp(manager), manager, limits)
    app = CleanInvalidRequests(RefuseInvalidIds(app, limits.max_body_size))
    if limits.body_timeout is not None:
        app = BodyTimeout(app, limits.body_timeout)
    if json_response:
        app = CancelOnDisconnect(app)
    app = ToolsetGate(app, toolsets)
    if auth is not None:
        app = auth.protect(app)
    return app
