"""Streamable HTTP: an ASGI app for uvicorn, or to mount into Starlette/FastAPI."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server import Server as SdkServer
from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route

from container import Container
from mcp_adapter.compile.server import with_middleware
from mcp_adapter.declare.middleware import Middleware
from mcp_adapter.dispatch.inflight import CallsInFlight
from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.notifications import SubscriptionLimits
from mcp_adapter.notifications.serve import BusChoice, Delivery
from mcp_adapter.serving.auth import BearerAuth, app_middleware
from mcp_adapter.serving.endpoint import endpoint, session_manager
from mcp_adapter.serving.events import Resumability
from mcp_adapter.serving.host_security import default_transport_security
from mcp_adapter.serving.lifespan import transport_lifespan
from mcp_adapter.serving.limits import HttpLimits
from mcp_adapter.serving.lowlevel import build_sdk_server, uses_handles
from mcp_adapter.serving.replicas import (
    Readiness,
    bus_of,
    handles_of,
    resumability_of,
    rounds_of,
    shared_redis,
)
from mcp_adapter.serving.servable import Servable, catalog_of
from mcp_adapter.serving.toolsets import TOOLSET_PATH_PARAM, ToolsetRouter
from mcp_adapter.stores.rounds import RoundLedger

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from mcp_adapter.stores import SharedRedis


def http_app(
    servable: Servable,
    container: Container,
    *,
    path: str = "/mcp",
    stateless: bool = True,
    json_response: bool = False,
    host: str = "127.0.0.1",
    toolsets: Collection[str] | None = None,
    auth: BearerAuth | None = None,
    transport_security: TransportSecuritySettings | None = None,
    limits: HttpLimits | None = None,
    resumability: Resumability | None = None,
    request_state_security: RequestStateSecurity | None = None,
    middleware: Sequence[Middleware] = (),
    configure: Callable[[SdkServer[Any]], None] | None = None,
    subscription_bus: BusChoice = None,
    subscription_limits: SubscriptionLimits | None = None,
    redis: str | Redis | SharedRedis | None = None,
    rounds: RoundLedger | None = None,
    run_lifespan: bool = True,
    close_container: bool = False,
    debug: bool = False,
) -> Starlette:
    """A Starlette app serving ``servable`` over streamable HTTP at ``path``.

    - ``stateless=True`` (default): no sessions, so any worker answers any
      request (``uvicorn --workers N`` behind a load balancer). Both protocol
      eras are served; server-to-client requests of the 2025-11-25 era
      (elicitation) need ``stateless=False``.
    - ``json_response``: answer with a JSON body instead of an SSE stream; a
      client that disconnects before its answer cancels the call.
    - ``host``: the host the app is served on; a loopback host keeps DNS-rebinding
      protection (:func:`default_transport_security`).
    - ``middleware``: layers around every call of every method, outside the
      server's own ``Server.middleware`` (docs/middleware.md);
    - ``toolsets``: serve only these toolsets; clients can narrow further per
      request with ``X-MCP-Toolsets`` or ``{path}/x/{toolset}``.
    - ``auth``: a :class:`BearerAuth`, to require ``Authorization: Bearer``
      tokens (and scopes; optional with ``anonymous=True``), and to publish
      RFC 9728 protected-resource metadata.
    - ``transport_security``: the SDK's ``TransportSecuritySettings``
      (``Host``/``Origin`` allow-lists), in place of ``host``'s default.
    - ``limits``: an :class:`HttpLimits` (default ``HttpLimits()``): body size
      and deadline, GET streams, sessions, calls in flight, and the connection-level limits
      recorded on ``app.state.mcp_http_limits`` for :func:`uvicorn_config`
      (which ``mcp-adapter serve`` uses).
    - ``resumability`` (stateful only): a :class:`Resumability`, SSE streams a
      client can resume (``Last-Event-ID``), each session only its own.
    - ``request_state_security``: the SDK's policy sealing 2026-07-28
      ``requestState`` (default: a key made for this process only; several
      workers or replicas need ``RequestStateSecurity(keys=[...])``).
    - ``configure``: called with the SDK's low-level server before serving, to
      register handlers the adapter does not own (``logging/setLevel``,
      ``resources/subscribe``, ...).
    - ``subscription_bus``: the SDK's ``SubscriptionBus`` that carries change
      notifications to listening clients (default: an in-memory bus of this app;
      one shared by replicas fans out across them; ``False``: no subscriptions).
      2026-07-28 ``subscriptions/listen`` needs SSE answers (not
      ``json_response``); 2025-11-25 list changes and ``resources/subscribe``
      need sessions (``stateless=False``). See docs/notifications.md.
    - ``subscription_limits``: a :class:`SubscriptionLimits` (default
      ``SubscriptionLimits()``): listen streams per client and in all, URIs watched.
    - ``redis``: the Redis that replicas of this server share (a URL
      ``redis://host:port/db``, a ``redis.asyncio.Redis`` or a ``SharedRedis``):
      change notifications cross replicas on it, a stateful app's resumable
      streams keep their events there, and the answered rounds of input requests
      are recorded there, and so are state handles (their session services stay
      in each replica: docs/state.md, docs/deployment.md). ``None``: everything
      stays in this process.
    - ``rounds``: where answered rounds of input requests are recorded, each
      ``requestState`` good for one retry (default: in ``redis`` when given, else
      ``MemoryRounds()``, at most 100,000 at once; docs/input.md).
    - ``run_lifespan`` (default): the app's lifespan runs :func:`serve_lifespan`
      (the container's eager singletons, then ``Server.lifespan``; left in
      reverse order at shutdown, and with ``close_container=True`` the container
      closed last). ``False`` when the caller runs ``serve_lifespan`` around the
      app itself (``mcp-adapter serve`` does, to start up before binding).
    - ``debug``: Starlette's ``debug`` (tracebacks in error pages).

    ``GET /healthz`` answers 200 while the process serves, ``GET /readyz`` 200 once
    the lifespan has started and while Redis (when given) answers, else 503; neither
    needs a token.

    The app's lifespan must run (uvicorn does that); when mounting it, run
    :func:`mcp_lifespan` in the parent app's lifespan. ``app.state.mcp_catalog``
    is the catalog served, ``app.state.mcp_session_manager`` the SDK's manager.
    """
    limits = HttpLimits() if limits is None else limits
    if transport_security is None:
        transport_security = default_transport_security(host)
    else:  # the app's own copy: the SDK's settings are a mutable model
        transport_security = transport_security.model_copy(deep=True)
    catalog = with_middleware(catalog_of(servable, container), middleware, container)
    if toolsets is not None:
        catalog = catalog.select(toolsets)
    threads = Threads(catalog.threads)
    shared = shared_redis(redis, catalog.name)
    subscription_bus = bus_of(shared, subscription_bus)
    resumability = resumability_of(shared, resumability, stateless=stateless)
    readiness = Readiness.of(shared, subscription_bus)
    calls = CallsInFlight(limits.max_calls, limits.max_calls_per_client)
    handles = handles_of(shared, limits.handles, container)
    server = build_sdk_server(
        catalog,
        container,
        transport="http",
        request_state_security=request_state_security,
        threads=threads,
        calls=calls,
        subscription_bus=subscription_bus,
        subscription_limits=subscription_limits,
        delivery=Delivery(listen=not json_response, sessions=not stateless),
        handles=handles,
        rounds=rounds_of(shared, rounds),
    )
    if len(catalog.toolsets) > 1:  # one toolset: every selection the gate lets in is all
        router = ToolsetRouter(catalog, container, threads=threads, calls=calls, handles=handles)
        router.install(server)
    if configure is not None:
        configure(server)
    manager = session_manager(
        server,
        stateless=stateless,
        json_response=json_response,
        security=transport_security,
        limits=limits,
        resumability=resumability,
    )
    mcp = endpoint(
        manager, limits=limits, json_response=json_response, toolsets=catalog.toolsets, auth=auth
    )
    path = "/" + path.strip("/")
    routes: list[BaseRoute] = [Route(path, endpoint=mcp), *readiness.routes()]
    if catalog.toolsets:
        routes.append(Route(f"{path.rstrip('/')}/x/{{{TOOLSET_PATH_PARAM}}}", endpoint=mcp))
    if auth is not None:
        routes.extend(auth.routes())

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            served = transport_lifespan(
                catalog, container, run_lifespan=run_lifespan, close_container=close_container
            )
            await stack.enter_async_context(served)
            await stack.enter_async_context(readiness.serving())
            if uses_handles(catalog):
                await stack.enter_async_context(handles.running())
            await stack.enter_async_context(manager.run())
            yield

    app = Starlette(debug=debug, routes=routes, middleware=app_middleware(auth), lifespan=lifespan)
    app.state.mcp_session_manager = manager
    app.state.mcp_catalog = catalog
    app.state.mcp_http_limits = limits
    app.state.mcp_readiness = readiness
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
