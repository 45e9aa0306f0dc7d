"""One listener's pending events: deduplicated, so bounded by what it may receive.

Every event is a level trigger ("this changed, look again"), so an event that
is already pending is not queued twice. A listener only queues the kinds and
URIs it subscribed to, so its backlog holds at most three list events and one
event per watched URI, however fast the server publishes. The bus calls
``put`` synchronously on the event loop; the listener's own task drains.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
from mcp.shared.subscriptions import ServerEvent

from mcp_adapter.errors import logger


class Feed:
    """Events waiting for one listener, oldest first, each at most once."""

    def __init__(self, admits: Callable[[ServerEvent], bool]) -> None:
        self._admits = admits
        self._pending: dict[ServerEvent, None] = {}
        self._wake = anyio.Event()
        self._closed = False

    def put(self, event: ServerEvent) -> None:
        """The bus's listener: queue ``event`` if this listener wants it (never raises)."""
        if self._closed or event in self._pending or not self._admits(event):
            return
        self._pending[event] = None
        self._wake.set()

    def close(self) -> None:
        """End the feed: the iteration stops once what is pending is drained."""
        self._closed = True
        self._wake.set()

    def __len__(self) -> int:
        return len(self._pending)

    async def __aiter__(self) -> AsyncIterator[ServerEvent]:
        while True:
            while self._pending:
                event = next(iter(self._pending))
                del self._pending[event]
                yield event
            if self._closed:
                return
            await self._wake.wait()
            self._wake = anyio.Event()


def unsubscribe_from_bus(unsubscribe: Callable[[], None]) -> None:
    """A bus's unsubscribe; a custom bus failing it must not stop a listener's cleanup."""
    try:
        unsubscribe()
    except Exception:  # noqa: BLE001 - logged; the listener still gives back its place
        logger.exception("the subscription bus failed to unsubscribe a listener")
