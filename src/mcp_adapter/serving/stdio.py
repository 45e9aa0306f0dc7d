"""Serving a catalog over the process's stdin and stdout (both protocol eras)."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from typing import TYPE_CHECKING, Protocol, Self

import anyio
import anyio.lowlevel
import anyio.to_thread
from mcp.server.request_state import RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from container import Container
from mcp_adapter.compat import claim_stdin
from mcp_adapter.compile.server import with_middleware
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.compiled.context import local_token
from mcp_adapter.declare.middleware import Middleware
from mcp_adapter.declare.request import Identity
from mcp_adapter.errors import CompileError, problem
from mcp_adapter.notifications import SubscriptionLimits
from mcp_adapter.notifications.serve import BusChoice
from mcp_adapter.serving.ids import NO_MESSAGE, has_invalid_id
from mcp_adapter.serving.lifespan import serve_lifespan, transport_lifespan
from mcp_adapter.serving.limits import DEFAULT_SHUTDOWN_TIMEOUT
from mcp_adapter.serving.lowlevel import build_sdk_server
from mcp_adapter.serving.replicas import Readiness, bus_of, rounds_of, shared_redis
from mcp_adapter.serving.servable import Servable, catalog_of
from mcp_adapter.serving.signals import HeldSignals

logger = logging.getLogger("mcp_adapter")

_JSON_WHITESPACE = " \t\r\n"
"""What RFC 8259 calls whitespace (a form feed or a no-break space is not)."""

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from mcp_adapter.stores import SharedRedis


class _Source(Protocol):
    """The read side of the SDK's stdio transport: messages, or why a line was unreadable."""

    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...


class _Sink(Protocol):
    """The write side of the SDK's stdio transport."""

    async def send(self, item: SessionMessage, /) -> None: ...


def unreadable_line_error(exc: Exception) -> ErrorData | None:
    """The JSON-RPC error owed for a stdin line the transport could not read (``None``: blank).

    Not JSON: ``-32700 Parse error``; JSON but not one JSON-RPC message (a
    batch, a number, a request whose ``method`` is not a string, a request
    :class:`ScreenedLines` replaced for its ``id``): ``-32600 Invalid Request``.
    A line of whitespace is no message at all (as between the values of any
    JSON text stream) and is not answered. The error never quotes the line or
    the parser's complaint.
    """
    if not isinstance(exc, ValidationError):
        return ErrorData(code=PARSE_ERROR, message="Parse error")
    problems = exc.errors(include_url=False, include_context=False)
    not_json = [p for p in problems if p["type"] == "json_invalid"]
    if not not_json:
        return ErrorData(code=INVALID_REQUEST, message="Invalid Request")
    if all(
        isinstance(p["input"], str) and not p["input"].strip(_JSON_WHITESPACE) for p in not_json
    ):
        return None
    return ErrorData(code=PARSE_ERROR, message="Parse error")


class ScreenedLines(anyio.AsyncFile[str]):
    """stdin's lines for the SDK's reader, a request with an invalid id replaced by no message.

    The SDK would read such a line as a notification and nobody would answer
    it (see :mod:`mcp_adapter.serving.ids`); in its place the reader gets
    ``null``, which it reports as JSON that is no JSON-RPC message, so
    :class:`AnsweringReadStream` answers it ``-32600`` with ``id: null``, in
    line order like any unreadable line. Every other line passes unchanged;
    everything but iteration is the wrapped file's.

    A wait for the next line can be cancelled (a stop signal while the client
    sends nothing): the read goes on in its thread, and serving ends.
    """

    def __init__(self, source: anyio.AsyncFile[str]) -> None:
        super().__init__(source.wrapped)
        self._source = source

    async def __aiter__(self) -> AsyncIterator[str]:
        readline = self._source.wrapped.readline
        while line := await anyio.to_thread.run_sync(readline, abandon_on_cancel=True):
            yield NO_MESSAGE + "\n" if has_invalid_id(line) else line


@contextmanager
def _stdin(stdin: anyio.AsyncFile[str] | None) -> Iterator[anyio.AsyncFile[str]]:
    """The lines to serve: ``stdin``, or the process's, claimed the way the SDK claims them.

    Handing ``stdio_server`` a stream of our own skips its claim of fd 0, so
    this makes the same claim with the SDK's own helper
    (:func:`mcp_adapter.compat.claim_stdin`): the wire is read from
    a private duplicate while fd 0 points at the null device (a handler or a
    child process reading stdin gets EOF instead of the client's messages), and
    fd 0 is restored afterwards. A second concurrent claim raises, as the SDK's.
    """
    if stdin is not None:
        yield ScreenedLines(stdin)
        return
    text, release = claim_stdin()
    try:
        yield ScreenedLines(anyio.wrap_file(text))
    finally:
        if release is not None:
            release()


class AnsweringReadStream:
    """The stdio transport's read stream with its unreadable lines answered, not passed on.

    The SDK's ``stdio_server`` hands the session the exception for a line it
    could not parse, and the session drops it, so the client never hears of
    it. This stream answers such a line itself (a JSON-RPC error with
    ``id: null``, see :func:`unreadable_line_error`) on the transport's write
    stream, in line order, and yields only messages. The sender's context of
    each message is kept (``last_context``), as the SDK's streams do.
    """

    def __init__(self, source: _Source, sink: _Sink) -> None:
        self._source = source
        self._sink = sink

    @property
    def last_context(self) -> contextvars.Context | None:
        context = getattr(self._source, "last_context", None)
        return context if isinstance(context, contextvars.Context) else None

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._source.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, exc: Exception) -> None:
        error = unreadable_line_error(exc)
        if error is None:
            return
        logger.debug("answered an unreadable stdin line with JSON-RPC error %d", error.code)
        message = SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))
        try:
            await self._sink.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("stdout closed before an unreadable line could be answered")

    async def aclose(self) -> None:
        await self._source.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def refuse_http_only(catalog: Catalog, transport: str) -> None:
    """Raise ``CompileError`` naming each component that needs the HTTP request, which a
    server served over ``transport`` never has."""
    problems = [
        problem(
            (catalog.name, f"{kind} {name!r}"),
            f"{kind} {name!r} needs the HTTP request (the Starlette Request), which exists "
            f"only over HTTP, and this server is served over {transport}",
            "take McpRequest instead (it is there on every transport), or serve it with --http",
        )
        for kind, name in catalog.http_only()
    ]
    if problems:
        raise CompileError(catalog.name, problems)


async def serve_stdio(
    servable: Servable,
    container: Container,
    *,
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
    close_container: bool = False,
    run_lifespan: bool = True,
    request_state_security: RequestStateSecurity | None = None,
    middleware: Sequence[Middleware] = (),
    identity: Identity | None = None,
    subscription_bus: BusChoice = None,
    subscription_limits: SubscriptionLimits | None = None,
    redis: str | Redis | SharedRedis | None = None,
) -> None:
    """Serve ``servable`` over stdio until the client closes stdin.

    Each request runs in its own container scope; singletons live as long as
    ``container``. Before the first message is read, :func:`serve_lifespan`
    starts up (the container's eager singletons, then ``Server.lifespan``); after
    the last answer it shuts down in reverse order, and with
    ``close_container=True`` the container is closed (its singleton finalizers
    run). ``run_lifespan=False`` leaves both to a caller that runs
    ``serve_lifespan`` around this call (``close_container`` still applies). The
    SDK answers both the 2025-11-25 handshake and 2026-07-28 per-request
    envelopes on one stream;
    a line that is not JSON, or not a JSON-RPC message (a request whose ``id``
    is not a string or an integer included), is answered with
    ``-32700``/``-32600`` and ``id: null``. ``request_state_security`` seals
    2026-07-28 ``requestState`` (see :func:`mcp_adapter.serving.lowlevel.build_sdk_server`).
    ``middleware`` runs around every call, outside the server's own (docs/middleware.md).
    ``identity`` is the caller of every request (stdio has no authentication of its
    own: :func:`~mcp_adapter.serving.local_identity.os_user` is the local user), given
    to handlers, hooks and services as over HTTP a verified token's is; without it
    every request is anonymous.
    ``subscription_bus``, ``subscription_limits`` and ``redis`` are ``http_app``'s
    (docs/notifications.md, docs/deployment.md): with ``redis``, changes announced by
    this process reach HTTP replicas' listeners and the reverse, and a ``requestState``
    answered through one of them is refused by the others.
    """
    catalog = with_middleware(catalog_of(servable, container), middleware, container)
    refuse_http_only(catalog, "stdio")
    shared = shared_redis(redis, catalog.name)
    subscription_bus = bus_of(shared, subscription_bus)
    readiness = Readiness.of(shared, subscription_bus)
    server = build_sdk_server(
        catalog,
        container,
        transport="stdio",
        request_state_security=request_state_security,
        caller=None if identity is None else local_token(identity),
        subscription_bus=subscription_bus,
        subscription_limits=subscription_limits,
        rounds=rounds_of(shared, None),
    )
    async with AsyncExitStack() as stack:
        served = transport_lifespan(
            catalog, container, run_lifespan=run_lifespan, close_container=close_container
        )
        await stack.enter_async_context(served)
        await stack.enter_async_context(readiness.serving())
        with _stdin(stdin) as lines:
            async with stdio_server(lines, stdout) as (read, write):
                messages = AnsweringReadStream(read, write)
                await server.run(messages, write, server.create_initialization_options())


def run_stdio(
    servable: Servable,
    container: Container,
    *,
    close_container: bool = False,
    identity: Identity | None = None,
    shutdown_timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT,
    request_state_security: RequestStateSecurity | None = None,
    on_ready: Callable[[Catalog], None] | None = None,
    redis: str | Redis | SharedRedis | None = None,
) -> None:
    """Serve ``servable`` over stdio in this process until stdin closes or a stop signal
    comes, for a script's ``if __name__ == "__main__":`` (``mcp-adapter serve`` uses it).

    Every request is made as ``identity`` when given (see :func:`serve_stdio`).
    Start-up runs first (:func:`serve_lifespan`), then ``on_ready(catalog)``. SIGTERM
    or SIGINT stops serving: the calls in flight are cancelled (their scopes closed),
    then the shutdown runs as after the last line (the session's scope, the
    lifespan, and with ``close_container=True`` the container's singletons), and the
    process ends by that signal. Stopping and the shutdown each have
    ``shutdown_timeout`` seconds (``None``: no bound), and a further signal ends the
    process at once: then it exits with status 1 and a line on stderr saying why.
    """
    catalog = catalog_of(servable, container)
    refuse_http_only(catalog, "stdio")
    held = HeldSignals(shutdown_timeout)

    async def main() -> None:
        with held:
            async with serve_lifespan(catalog, container, close_container=close_container):
                with anyio.CancelScope() as serving:
                    loop = anyio.lowlevel.current_token()

                    def stop(sig: int) -> None:  # in the signal handler, on the loop's thread
                        loop.backend_class.run_sync_soon(serving.cancel, (), loop.native_token)

                    held.install(stop)
                    held.bound_stop()
                    if on_ready is not None:
                        on_ready(catalog)
                    await serve_stdio(
                        catalog,
                        container,
                        run_lifespan=False,
                        request_state_security=request_state_security,
                        identity=identity,
                        redis=redis,
                    )
                held.shutting_down()

    anyio.run(main)
