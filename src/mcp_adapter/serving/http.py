"""Streamable HTTP: an ASGI app for uvicorn, or to mount into Starlette/FastAPI."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from mcp.server import Server as SdkServer
from mcp.server.auth.provider import TokenVerifier
from mcp.server.request_state import RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from container import Container
from mcp_adapter.sdk import build_sdk_server
from mcp_adapter.serving.auth import BearerAuth, RequestAuthContext
from mcp_adapter.serving.body_timeout import BodyTimeout
from mcp_adapter.serving.disconnect import CancelOnDisconnect
from mcp_adapter.serving.events import SessionEventStore
from mcp_adapter.serving.host_security import transport_security
from mcp_adapter.serving.invalid_requests import CleanInvalidRequests, RefuseInvalidIds
from mcp_adapter.serving.lifespan import serve_lifespan
from mcp_adapter.serving.limited import limited
from mcp_adapter.serving.limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_KEEP_ALIVE_TIMEOUT,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    DEFAULT_MAX_SSE_STREAMS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SHUTDOWN_TIMEOUT,
    HttpLimits,
)
from mcp_adapter.serving.servable import Servable, catalog_of
from mcp_adapter.serving.session_events import SessionScopedEventsManager
from mcp_adapter.serving.toolsets import TOOLSET_PATH_PARAM, ToolsetGate, ToolsetRouter


def http_app(
    servable: Servable,
    container: Container,
    *,
    path: str = "/mcp",
    stateless: bool = True,
    json_response: bool = False,
    token_verifier: TokenVerifier | None = None,
    required_scopes: Collection[str] = (),
    anonymous: bool = False,
    resource_server_url: str | None = None,
    issuer_url: str | None = None,
    validate_token_resource: bool = False,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    toolsets: Collection[str] | None = None,
    close_container: bool = False,
    run_lifespan: bool = True,
    event_store: SessionEventStore | None = None,
    retry_interval: int | None = None,
    max_request_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
    configure: Callable[[SdkServer[Any]], None] | None = None,
    request_state_security: RequestStateSecurity | None = None,
    debug: bool = False,
    # Limits (docs/serving.md); the connection-level ones are applied by uvicorn_config().
    header_timeout: float | None = DEFAULT_HEADER_TIMEOUT,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE_TIMEOUT,
    max_connections: int | None = None,
    shutdown_timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT,
    max_sse_streams: int | None = DEFAULT_MAX_SSE_STREAMS,
    max_sessions: int | None = DEFAULT_MAX_SESSIONS,
    max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT,
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
) -> Starlette:
    """A Starlette app serving ``servable`` over streamable HTTP at ``path``.

    - ``stateless=True`` (default): no sessions, so any worker answers any
      request (``uvicorn --workers N`` behind a load balancer). Both protocol
      eras are served; server-to-client requests of the 2025-11-25 era
      (elicitation) need ``stateless=False``.
    - ``json_response``: answer with a JSON body instead of an SSE stream; a
      client that disconnects before its answer cancels the call.
    - ``token_verifier``: require ``Authorization: Bearer`` (401 otherwise;
      403 without every scope of ``required_scopes``); with ``anonymous=True``
      a request without the header passes with no identity.
    - ``host``: the host the app is served on; loopback hosts keep DNS-rebinding
      protection (``allowed_hosts``/``allowed_origins`` override it).
    - ``toolsets``: serve only these toolsets; clients can narrow further per
      request with ``X-MCP-Toolsets`` or ``{path}/x/{toolset}``.
    - ``event_store``/``retry_interval`` (stateful only): SSE resumability, and
      the ``retry`` milliseconds suggested to clients (SEP-1699). The store is a
      :class:`~mcp_adapter.serving.SessionEventStore` (``InMemoryEventStore``):
      each session resumes only its own streams.
    - ``run_lifespan`` (default): the app's lifespan runs :func:`serve_lifespan`
      (the container's eager singletons, then ``Server.lifespan``; left in
      reverse order at shutdown, and with ``close_container=True`` the container
      closed last). ``False`` when the caller runs ``serve_lifespan`` around the
      app itself (``mcp-adapter serve`` does, to start up before binding).
    - ``max_request_body_size``: a POST body larger than this many bytes is
      refused with 413 before it is buffered (default: the SDK's 4 MiB).
    - ``configure``: called with the SDK's low-level server before serving, to
      register handlers the adapter does not own (``logging/setLevel``,
      ``resources/subscribe``, ...).
    - ``request_state_security``: the SDK's policy sealing 2026-07-28
      ``requestState`` (default: a key made for this process only; several
      workers or replicas need ``RequestStateSecurity(keys=[...])``).
    - Limits (each ``None`` lifts it; defaults in :mod:`mcp_adapter.serving.limits`):
      ``body_timeout`` (408 for a body not received in time),
      ``max_sse_streams`` (503 beyond that many open GET streams; a
      stateless ``GET`` is 405), ``max_sessions`` (503), ``max_sessions_per_client``
      (429) and ``session_idle_timeout`` (stateful sessions). The
      connection-level ``header_timeout``, ``keep_alive_timeout``,
      ``max_connections`` and ``shutdown_timeout`` are recorded on
      ``app.state.mcp_http_limits`` and applied by :func:`uvicorn_config`
      (which ``mcp-adapter serve`` uses).

    The app's lifespan must run (uvicorn does that); when mounting it, run
    :func:`mcp_lifespan` in the parent app's lifespan. ``app.state.mcp_catalog``
    is the catalog served, ``app.state.mcp_session_manager`` the SDK's manager.
    """
    catalog = catalog_of(servable, container)
    if toolsets is not None:
        catalog = catalog.select(toolsets)
    server = build_sdk_server(
        catalog, container, transport="http", request_state_security=request_state_security
    )
    if catalog.toolsets:
        ToolsetRouter(catalog, container).install(server)
    if configure is not None:
        configure(server)
    if token_verifier is None and (required_scopes or resource_server_url):
        raise ValueError("required_scopes and resource_server_url need a token_verifier")
    if stateless and event_store is not None:
        raise ValueError("event_store needs stateless=False: there is no stream to resume")
    if event_store is not None and not isinstance(event_store, SessionEventStore):
        raise TypeError(
            "event_store must be a SessionEventStore (e.g. InMemoryEventStore()): the SDK gives"
            " one EventStore to every session, so a plain one would let sessions read each"
            " other's events"
        )
    limits = HttpLimits(
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        keep_alive_timeout=keep_alive_timeout,
        max_connections=max_connections,
        shutdown_timeout=shutdown_timeout,
        max_sse_streams=max_sse_streams,
        max_sessions=max_sessions,
        max_sessions_per_client=max_sessions_per_client,
        session_idle_timeout=session_idle_timeout,
    )
    options: dict[str, Any] = {
        "retry_interval": retry_interval,
        "json_response": json_response,
        "security_settings": transport_security(host, allowed_hosts, allowed_origins),
        "max_request_body_size": max_request_body_size,
        "max_sessions": limits.max_sessions,
        "session_idle_timeout": limits.session_idle_timeout,
    }
    manager: StreamableHTTPSessionManager
    if event_store is not None:
        manager = SessionScopedEventsManager(server, event_store, **options)
    else:
        manager = StreamableHTTPSessionManager(app=server, stateless=stateless, **options)
    endpoint: ASGIApp = limited(StreamableHTTPASGIApp(manager), manager, limits)
    endpoint = CleanInvalidRequests(RefuseInvalidIds(endpoint, max_request_body_size))
    if limits.body_timeout is not None:
        endpoint = BodyTimeout(endpoint, limits.body_timeout)
    if json_response:
        endpoint = CancelOnDisconnect(endpoint)
    endpoint = ToolsetGate(endpoint, catalog.toolsets)
    auth = None
    if token_verifier is not None:
        auth = BearerAuth(
            token_verifier,
            required_scopes=tuple(required_scopes),
            anonymous=anonymous,
            resource_server_url=resource_server_url,
            issuer_url=issuer_url,
            validate_token_resource=validate_token_resource,
        )
        endpoint = auth.protect(endpoint)
    path = "/" + path.strip("/")
    routes: list[BaseRoute] = [Route(path, endpoint=endpoint)]
    if catalog.toolsets:
        routes.append(Route(f"{path.rstrip('/')}/x/{{{TOOLSET_PATH_PARAM}}}", endpoint=endpoint))
    if auth is not None:
        routes.extend(auth.routes())

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if run_lifespan:
                startup = serve_lifespan(catalog, container, close_container=close_container)
                await stack.enter_async_context(startup)
            elif close_container:
                stack.push_async_callback(container.aclose)
            await stack.enter_async_context(manager.run())
            yield

    app = Starlette(
        debug=debug,
        routes=routes,
        middleware=auth.middleware() if auth is not None else [Middleware(RequestAuthContext)],
        lifespan=lifespan,
    )
    app.state.mcp_session_manager = manager
    app.state.mcp_catalog = catalog
    app.state.mcp_http_limits = limits
    return app


@asynccontextmanager
async def run_mcp_apps(*apps: Starlette) -> AsyncIterator[None]:
    """Run the lifespans of MCP apps mounted in another app (their session managers).

    Use it inside the parent's own lifespan::

        @asynccontextmanager
        async def lifespan(app):
            async with run_mcp_apps(mcp):
                yield
    """
    async with AsyncExitStack() as stack:
        for app in apps:
            await stack.enter_async_context(app.router.lifespan_context(app))
        yield


def mcp_lifespan(*apps: Starlette) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """A parent app's ``lifespan=`` that runs the mounted MCP apps' lifespans.

    ``Starlette(routes=[Mount("/", app=mcp)], lifespan=mcp_lifespan(mcp))``.
    """

    def lifespan(_: Any) -> AbstractAsyncContextManager[None]:
        return run_mcp_apps(*apps)

    return lifespan
