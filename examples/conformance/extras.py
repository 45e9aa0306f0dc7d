"""What the conformance suite asks of the protocol layer rather than of components.

``logging/setLevel`` and ``resources/subscribe``/``unsubscribe`` are handlers
on the SDK's low-level server, registered through ``http_app(configure=...)``.
Both are 2025-11-25 features (2026-07-28 replaces them with per-request log
levels and ``subscriptions/listen``).
"""

from __future__ import annotations

from typing import Any, get_args
from weakref import WeakKeyDictionary

from mcp import types
from mcp.server import Server as SdkServer

LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)


def connection_of(session: Any) -> Any:
    """The SDK connection a request's session belongs to (one per client session)."""
    return getattr(session, "_connection", session)


class LogLevels:
    """The level each client connection asked for (everything until it asks)."""

    def __init__(self) -> None:
        self._by_connection: WeakKeyDictionary[Any, str] = WeakKeyDictionary()

    def set(self, session: Any, level: str) -> None:
        self._by_connection[connection_of(session)] = level

    def allows(self, session: Any, level: str) -> bool:
        wanted = self._by_connection.get(connection_of(session), "debug")
        return LEVELS.index(level) >= LEVELS.index(wanted)


class Subscriptions:
    """The resource URIs each client connection watches."""

    def __init__(self) -> None:
        self._by_connection: WeakKeyDictionary[Any, set[str]] = WeakKeyDictionary()

    def add(self, session: Any, uri: str) -> None:
        self._by_connection.setdefault(connection_of(session), set()).add(uri)

    def remove(self, session: Any, uri: str) -> None:
        self._by_connection.get(connection_of(session), set()).discard(uri)

    def watching(self, session: Any, uri: str) -> bool:
        return uri in self._by_connection.get(connection_of(session), set())


LOG_LEVELS = LogLevels()
SUBSCRIPTIONS = Subscriptions()


def configure(server: SdkServer[Any]) -> None:
    """Register the protocol-level handlers on the SDK's server."""

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        LOG_LEVELS.set(ctx.session, params.level)
        return types.EmptyResult()

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        SUBSCRIPTIONS.add(ctx.session, str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        SUBSCRIPTIONS.remove(ctx.session, str(params.uri))
        return types.EmptyResult()

    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    server.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)
