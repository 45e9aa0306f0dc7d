"""Streamable HTTP: an ASGI app for uvicorn, or to mount into Starlette/FastAPI."""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from mcp.server import Server as SdkServer
from mcp.server.auth.provider import TokenVerifier
from mcp.server.request_state import RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecuritySettings,
)
from mcp.types import INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from container import Container
from mcp_adapter.sdk import build_sdk_server
from mcp_adapter.serving.auth import BearerAuth, RequestAuthContext
from mcp_adapter.serving.body_timeout import BodyTimeout
from mcp_adapter.serving.events import SessionEventStore
from mcp_adapter.serving.ids import NO_MESSAGE, has_invalid_id
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

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(
    host: str,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> TransportSecuritySettings | None:
    """DNS-rebinding protection: on for every loopback host (as the SDK does), or explicit lists.

    On a loopback host (``localhost``, any of ``127.0.0.0/8``, ``::1``) the
    ``Host`` and ``Origin`` headers accepted are ``localhost``, ``127.0.0.1``,
    ``[::1]`` and the host itself, on any port; any other name is refused.
    """
    if allowed_hosts is not None or allowed_origins is not None:
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(allowed_hosts or ()),
            allowed_origins=list(allowed_origins or ()),
        )
    if is_loopback(host):
        names = ["127.0.0.1", "localhost", "[::1]"]
        bound = f"[{host.strip('[]')}]" if ":" in host else host
        if bound not in names:
            names.append(bound)
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}:*" for name in names],
            allowed_origins=[f"http://{name}:*" for name in names],
        )
    return None


_DISCONNECT: Message = {"type": "http.disconnect"}


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or None under another event loop (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class CancelOnDisconnect:
    """ASGI wrapper: a client that goes away before its answer cancels the request's handling.

    In JSON-response mode the SDK reads the request body, then waits for the
    handler's result with nobody listening to the connection, so a client that
    disconnects mid-call would leave the call (and its container scope) running
    to the end for nobody. Once the app has read the whole body, a watcher task
    becomes the one reader of ``receive``: on ``http.disconnect`` before the
    response is complete it cancels the app's cancel scope, so the handler is
    cancelled and its scope's finalizers run. The app's own later ``receive()``
    calls get ``http.disconnect`` once it happened.

    On asyncio the watcher is a plain task started when the body has been read
    and cancelled when the app returns, which costs a few microseconds; an
    anyio task group per request cost about 130 µs (docs/performance-http.md).
    Other event loops (trio) get the task group.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = _asyncio_loop()
        request = anyio.CancelScope()
        disconnected = anyio.Event()
        watching = False
        answered = False
        watcher: asyncio.Task[None] | None = None
        body_read = anyio.Event() if loop is None else None

        async def watch() -> None:
            if body_read is not None:
                await body_read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected.set()
            if not answered:
                request.cancel()

        async def app_receive() -> Message:
            nonlocal watching, watcher
            if watching or disconnected.is_set():
                await disconnected.wait()
                return _DISCONNECT
            message = await receive()
            if message["type"] == "http.disconnect":
                disconnected.set()
            elif message["type"] == "http.request" and not message.get("more_body", False):
                watching = True
                if loop is not None:
                    watcher = loop.create_task(watch())
                else:
                    assert body_read is not None
                    body_read.set()
            return message

        async def app_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        if loop is not None:
            try:
                with request:
                    await self.app(scope, app_receive, app_send)
            finally:
                if watcher is not None:
                    watcher.cancel()
            return
        failure: Exception | None = None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            with request:
                try:
                    await self.app(scope, app_receive, app_send)
                except Exception as exc:  # noqa: BLE001 - re-raised below as itself, not in a group
                    failure = exc
            tasks.cancel_scope.cancel()
        if failure is not None:
            raise failure


_INVALID_REQUEST_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": "Invalid Request"},
    },
    separators=(",", ":"),
).encode()
_HELD_BODY_LIMIT = 16 * 1024
"""The largest 400 answer :class:`CleanInvalidRequests` holds back (the SDK's are ~1 KiB)."""


class CleanInvalidRequests:
    """ASGI wrapper: the SDK's answer to JSON that is no JSON-RPC message, made clean and standard.

    The SDK's 2025-11-25 transport answers such a body with ``400`` and
    ``-32602 "Validation error: "`` followed by pydantic's report (model names,
    ``input_value=...`` echoing the request, documentation URLs). This wrapper
    holds back a ``400`` ``application/json`` answer that declares at most
    ``_HELD_BODY_LIMIT`` bytes, and when it is that error (``id: null``) sends
    the JSON-RPC 2.0 answer instead: ``-32600 "Invalid Request"``, ``id: null``,
    still ``400``. Every other answer passes unchanged; nothing larger is held.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        held: list[bytes] = []
        size = 0

        async def app_send(message: Message) -> None:
            nonlocal start, size
            if message["type"] == "http.response.start" and _small_json_error(message):
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body = bytes(message.get("body", b""))
            held.append(body)
            size += len(body)
            if size > _HELD_BODY_LIMIT:  # more than declared: let it through as it is
                await send(start)
                start = None
                await send({**message, "body": b"".join(held)})
                return
            if message.get("more_body", False):
                return
            held_start, whole = start, b"".join(held)
            start = None
            if _is_validation_error(whole):
                whole = _INVALID_REQUEST_BODY
            await send({**held_start, "headers": _with_length(held_start["headers"], len(whole))})
            await send({"type": "http.response.body", "body": whole})

        await self.app(scope, receive, app_send)


def _small_json_error(start: Message) -> bool:
    if start.get("status") != 400:
        return False
    headers = {bytes(k).lower(): bytes(v) for k, v in start.get("headers") or ()}
    length = headers.get(b"content-length", b"")
    return (
        headers.get(b"content-type", b"").startswith(b"application/json")
        and length.isdigit()
        and int(length) <= _HELD_BODY_LIMIT
    )


def _is_validation_error(body: bytes) -> bool:
    """Whether ``body`` is the SDK's ``-32602 "Validation error: ..."`` with ``id: null``."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict) or message.get("id", 0) is not None:
        return False
    error = message.get("error")
    return (
        isinstance(error, dict)
        and error.get("code") == INVALID_PARAMS
        and str(error.get("message", "")).startswith("Validation error")
    )


def _with_length(headers: Iterable[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    kept = [(bytes(k), bytes(v)) for k, v in headers if bytes(k).lower() != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


_PROTOCOL_VERSION_HEADER = b"mcp-protocol-version"


class RefuseInvalidIds:
    """ASGI wrapper: a 2025-11-25 request whose ``id`` is no valid id is refused, not dropped.

    The SDK's 2025-11-25 path reads ``{"id": true, "method": ...}`` (or an ``id``
    that is a list, an object, ``null``, a fraction) as a notification and
    answers ``202`` with no body (see :mod:`mcp_adapter.serving.ids`). This
    wrapper reads the body of such a POST first, and when it is a JSON object
    with an invalid ``id`` hands the SDK ``null`` in its place: the SDK then
    refuses it, after its own checks (``Host``, ``Accept``, ``Content-Type``),
    as JSON that is no JSON-RPC message, which :class:`CleanInvalidRequests`
    answers ``400`` with ``-32600 Invalid Request`` and ``id: null``. Other
    bodies reach the SDK as they came.

    Nothing larger than ``max_body_size`` is held: a body that declares more,
    or streams past it, goes on to the SDK as it arrives (which refuses it with
    ``413``). The 2026-07-28 path (a ``Mcp-Protocol-Version`` header the
    handshake does not know) and other methods pass untouched: that path
    answers invalid ids itself.
    """

    def __init__(self, app: ASGIApp, max_body_size: int) -> None:
        self.app = app
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._screened(scope):
            await self.app(scope, receive, send)
            return
        held: deque[Message] = deque()
        size = 0
        while True:
            message = await receive()
            held.append(message)
            if message["type"] != "http.request":  # a disconnect: the SDK finds out itself
                break
            size += len(message.get("body", b""))
            if size > self.max_body_size:  # too large to hold: the SDK refuses it as it streams
                break
            if not message.get("more_body", False):
                body = b"".join(bytes(m.get("body", b"")) for m in held)
                whole = NO_MESSAGE.encode() if has_invalid_id(body) else body
                held = deque([{"type": "http.request", "body": whole, "more_body": False}])
                break

        async def replay() -> Message:
            return held.popleft() if held else await receive()

        await self.app(scope, replay, send)

    def _screened(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        version: bytes | None = None
        for key, value in scope.get("headers") or ():
            name = bytes(key).lower()
            if name == b"content-length":
                length = bytes(value)
                if not length.isdigit() or int(length) > self.max_body_size:
                    return False
            elif name == _PROTOCOL_VERSION_HEADER and version is None:  # the first, as the SDK
                version = bytes(value)
        return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


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
    if len(catalog.toolsets) > 1:  # one toolset: every selection the gate lets in is all
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
