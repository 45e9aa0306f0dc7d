"""``ClientLogger``: log records for the client, at or above the level it asked for.

2026-07-28: a request asks with ``_meta["io.modelcontextprotocol/logLevel"]``,
and the records go out on that request's own stream. 2025-11-25: a session asks
with ``logging/setLevel`` (:func:`set_level`), and every later request of the
session logs at that level. A request (or session) that did not ask gets no
record. Every record also goes to the server's own log (Python ``logging``).

Records are sent as the SDK's ``notifications/message`` through the request's
session (``send_notification``), not its deprecated logging helpers, so no
deprecation warning reaches users.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any, Final, get_args

from mcp import types
from mcp.types import LOG_LEVEL_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import to_jsonable_python

from mcp_adapter.compat import connection_of
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.notifications.threads import DONE, loop_token, reach

LEVELS: Final[tuple[types.LoggingLevel, ...]] = get_args(types.LoggingLevel)
"""The protocol's levels, least severe first (RFC 5424's order)."""

PYTHON_LEVELS: Final[dict[str, int]] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}
"""What each level is in the server's log (``notice``, ``alert`` and ``emergency`` have
no Python name: they sit between the named levels)."""

LEVEL_KEY = "mcp_adapter.log_level"
"""Where a 2025-11-25 connection's ``state`` keeps the level its client set."""

SERVER_LOGGER = "mcp_adapter.log"
"""The server-side logger records go to (``mcp_adapter.log.<logger>`` with a logger name)."""


def requested_level(request: McpRequest) -> types.LoggingLevel | None:
    """The least severe level the client wants for ``request``; ``None``: it wants none."""
    if request.protocol_version in MODERN_PROTOCOL_VERSIONS:
        wanted = request.meta.get(LOG_LEVEL_META_KEY)
    else:
        connection = connection_of(request.context)
        wanted = None if connection is None else connection.state.get(LEVEL_KEY)
    return wanted if wanted in LEVELS else None


async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    """``logging/setLevel`` (2025-11-25): the level for the rest of the client's session."""
    connection = connection_of(ctx)
    if connection is not None:
        connection.state[LEVEL_KEY] = params.level
    return types.EmptyResult()


class ClientLogger:
    """Logs for the client of the request being served (and for the server's log).

    Inject it by type. Each method takes any JSON value (``data``; anything else
    is sent as its ``str``) and an optional ``logger`` name. ``await
    log.info("started")`` in async code; in a sync handler (a worker thread) the
    plain call ``log.info("started")`` sends before it returns.
    """

    __slots__ = ("_minimum", "_request", "_token")

    def __init__(self, request: McpRequest) -> None:
        self._request = request
        self._token = loop_token()
        wanted = requested_level(request)
        self._minimum = len(LEVELS) if wanted is None else LEVELS.index(wanted)

    def enabled(self, level: types.LoggingLevel) -> bool:
        """Whether a record at ``level`` reaches the client (the server's log gets every one)."""
        return level in LEVELS and LEVELS.index(level) >= self._minimum

    def log(
        self, level: types.LoggingLevel, data: Any, *, logger: str | None = None
    ) -> Awaitable[None]:
        """A record at ``level``: to the server's log, and to the client if it asked."""
        if level not in LEVELS:
            raise ValueError(f"unknown log level {level!r}; one of {', '.join(LEVELS)}")
        value = to_jsonable_python(data, fallback=str)
        name = SERVER_LOGGER if logger is None else f"{SERVER_LOGGER}.{logger}"
        text = value if isinstance(value, str) else repr(value)
        logging.getLogger(name).log(PYTHON_LEVELS[level], "%s", text)
        session = getattr(self._request.context, "session", None)
        if session is None or LEVELS.index(level) < self._minimum:
            return DONE
        return reach(self._token, self._send, session, level, value, logger)

    async def _send(
        self, session: Any, level: types.LoggingLevel, data: Any, logger: str | None
    ) -> None:
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        notification = types.LoggingMessageNotification(params=params)
        await session.send_notification(notification, related_request_id=self._request.id)

    def debug(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("debug", data, logger=logger)

    def info(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("info", data, logger=logger)

    def notice(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("notice", data, logger=logger)

    def warning(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("warning", data, logger=logger)

    def error(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("error", data, logger=logger)

    def critical(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("critical", data, logger=logger)

    def alert(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("alert", data, logger=logger)

    def emergency(self, data: Any, *, logger: str | None = None) -> Awaitable[None]:
        return self.log("emergency", data, logger=logger)
