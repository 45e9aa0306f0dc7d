"""Serving a catalog over the process's stdin and stdout (both protocol eras)."""

from __future__ import annotations

import contextvars
import logging
from types import TracebackType
from typing import Protocol, Self

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from container import Container
from mcp_adapter.sdk import build_sdk_server
from mcp_adapter.serving.servable import Servable, catalog_of

logger = logging.getLogger("mcp_adapter")

_JSON_WHITESPACE = " \t\r\n"
"""What RFC 8259 calls whitespace (a form feed or a no-break space is not)."""


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
    batch, a number, a request whose ``method`` is not a string):
    ``-32600 Invalid Request``. A line of whitespace is no message at all (as
    between the values of any JSON text stream) and is not answered. The
    error never quotes the line or the parser's complaint.
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

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def serve_stdio(
    servable: Servable,
    container: Container,
    *,
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
    close_container: bool = False,
) -> None:
    """Serve ``servable`` over stdio until the client closes stdin.

    Each request runs in its own container scope; singletons live as long as
    ``container``. With ``close_container=True`` the container is closed (its
    singleton finalizers run) when serving ends. The SDK answers both the
    2025-11-25 handshake and 2026-07-28 per-request envelopes on one stream;
    a line that is not JSON, or not a JSON-RPC message, is answered with
    ``-32700``/``-32600`` and ``id: null``.
    """
    catalog = catalog_of(servable, container)
    server = build_sdk_server(catalog, container, transport="stdio")
    try:
        async with stdio_server(stdin, stdout) as (read, write):
            messages = AnsweringReadStream(read, write)
            await server.run(messages, write, server.create_initialization_options())
    finally:
        if close_container:
            await container.aclose()


def run_stdio(servable: Servable, container: Container, *, close_container: bool = False) -> None:
    """Blocking form of :func:`serve_stdio`, for a script's ``if __name__ == "__main__":``."""
    anyio.run(lambda: serve_stdio(servable, container, close_container=close_container))
