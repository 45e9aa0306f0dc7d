"""A task body's progress and log messages, as its ``statusMessage``.

In a task, ``Progress`` and ``ClientLogger`` have no client session to send on: the
body's request context carries a :class:`StatusSession` instead, which keeps the
latest message in Docket's store (the execution's progress, readable by
``tasks/get`` from any process) and so wakes the task's listeners, whose streams
carry ``notifications/tasks``. Writes are rate-bounded per task: at most one every
:data:`STATUS_INTERVAL` seconds, the latest message written once the interval has
passed (never lost), and the last one kept with the task's outcome.
"""

from __future__ import annotations

import json
from typing import Any, Final

import anyio
import anyio.abc
from mcp import types

from mcp_adapter.distribution import needs_extra
from mcp_adapter.errors import logger

STATUS_INTERVAL: Final = 0.25
"""Seconds between two writes of one task's status message (and so its notifications)."""

MAX_STATUS_CHARS: Final = 1024
"""The longest status message kept; a longer one is cut, ending with ``…``."""


def status_text(progress: float, total: float | None, message: str | None) -> str:
    """What a progress report shows: its message, else ``progress/total``."""
    if message:
        return message
    return f"{progress:g}" if total is None else f"{progress:g}/{total:g}"


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_STATUS_CHARS else text[: MAX_STATUS_CHARS - 1] + "…"


class StatusSession:
    """Stands for the client session in a task body: progress reports and log records
    become the task's status message (``Progress`` and ``ClientLogger`` call it as they
    would a session; a log record reaches it only at or above the level the call asked)."""

    def __init__(self, progress: Any, group: anyio.abc.TaskGroup) -> None:
        self._progress = progress  # Docket's ExecutionProgress of the task
        self._group = group
        self.latest: str | None = None
        self._written: str | None = None
        self._next = 0.0
        self._pending = False

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await self._set(status_text(progress, total, message))

    async def send_notification(self, notification: Any, related_request_id: Any = None) -> None:
        if isinstance(notification, types.LoggingMessageNotification):
            data = notification.params.data
            await self._set(data if isinstance(data, str) else json.dumps(data))

    async def _set(self, text: str) -> None:
        self.latest = _bounded(text)
        if self._pending:
            return  # the write already planned takes the latest message
        wait = self._next - anyio.current_time()
        if wait <= 0:
            await self._write()
        else:
            self._pending = True
            self._group.start_soon(self._later, wait)

    async def _later(self, wait: float) -> None:
        await anyio.sleep(wait)
        self._pending = False
        await self._write()

    async def _write(self) -> None:
        latest = self.latest
        if latest is None or latest == self._written:
            return
        self._next = anyio.current_time() + STATUS_INTERVAL
        self._written = latest
        try:
            await self._progress.set_message(latest)
        except Exception as exc:
            with needs_extra("redis", "the task store"):  # Docket depends on it
                from redis.exceptions import RedisError

            if not isinstance(exc, RedisError | OSError):
                raise
            # the body goes on; the outcome keeps the last message
            logger.warning("a task's status message was not stored: %r", exc)
