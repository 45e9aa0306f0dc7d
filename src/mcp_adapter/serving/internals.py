"""Every reach into private parts of uvicorn and sse-starlette, in one place.

The ``mcp`` SDK's private parts are read in :mod:`mcp_adapter.compat`,
which checks the SDK's version.

Each piece names what it relies on, so an upgrade of one of them is checked here:

- :class:`LimitedH11Protocol` subclasses uvicorn's ``H11Protocol`` (its
  ``conn``, ``transport``, ``loop``, ``connections``, ``cycle``, ``scope``,
  ``on_response_complete`` and ``shutdown``) to add what uvicorn 0.54 lacks:
  a deadline for request headers, a connection cap enforced when a connection
  is accepted, and a shutdown that closes open GET (SSE) streams while
  requests in flight finish.
- :func:`keep_sse_streams_on_shutdown` turns off sse-starlette's cutting of
  every SSE stream on SIGTERM (process-wide ``AppStatus``), which otherwise
  ends in-flight 2025-11-25 calls without their result.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from sse_starlette.sse import AppStatus
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline, an accept-time cap and a draining shutdown.

    Reads ``mcp_header_timeout`` and ``mcp_max_connections`` from the config
    (:class:`mcp_adapter.serving.uvicorn_config.LimitedConfig` sets them).

    - A connection that has not sent complete request headers within
      ``mcp_header_timeout`` seconds of opening (or of its previous answer)
      is closed: slowloris clients cannot hold connections.
    - A connection accepted while ``mcp_max_connections`` are open is closed
      at once, so the process never runs out of file descriptors.
    - On shutdown, a connection streaming a GET response (an SSE stream, which
      would never end by itself) is closed; one answering any other request
      finishes first (uvicorn's ``keep_alive = False``).
    """

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.mcp_header_timeout: float | None = getattr(config, "mcp_header_timeout", None)
        self.mcp_max_connections: int | None = getattr(config, "mcp_max_connections", None)
        self.mcp_header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        cap = self.mcp_max_connections
        if cap is not None and len(self.connections) > cap:
            transport.close()
            return
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request line and headers are in
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:  # waiting for the next request's headers
            self._arm_header_timer()

    def shutdown(self) -> None:
        if self._streaming_get():
            self.transport.close()  # the app sees http.disconnect and ends the stream
            return
        super().shutdown()

    def _streaming_get(self) -> bool:
        cycle = self.cycle
        return (
            cycle is not None
            and cycle.response_started
            and not cycle.response_complete
            and self.scope.get("method") == "GET"
        )

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        if self.mcp_header_timeout is not None:
            self.mcp_header_timer = self.loop.call_later(
                self.mcp_header_timeout, self._header_timeout_expired
            )

    def _disarm_header_timer(self) -> None:
        if self.mcp_header_timer is not None:
            self.mcp_header_timer.cancel()
            self.mcp_header_timer = None

    def _header_timeout_expired(self) -> None:
        self.mcp_header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def keep_sse_streams_on_shutdown() -> None:
    """Let SSE responses in flight finish on SIGTERM instead of being cut (process-wide).

    Safe with :class:`LimitedH11Protocol`, which closes long-lived GET streams
    on shutdown itself; uvicorn's graceful-shutdown timeout bounds the rest.
    """
    AppStatus.enable_automatic_graceful_drain = False  # = disable_automatic_graceful_drain()
