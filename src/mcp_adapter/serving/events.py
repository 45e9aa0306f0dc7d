"""A bounded in-memory ``EventStore``: SSE resumability for one stateful process.

With it, a client whose SSE stream was closed mid-call (``Last-Event-ID`` on
reconnect, SEP-1699) gets the events it missed, including the call's result.
Events live in this process only: use it with ``stateless=False`` and one worker.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.types import JSONRPCMessage


class InMemoryEventStore(EventStore):
    """Keeps the last ``limit`` events of every stream, oldest dropped first."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._ids))
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self.limit:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id
