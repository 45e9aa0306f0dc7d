"""Where resumable streams' events live: the :class:`EventLog` protocol and its in-memory log.

:class:`~mcp_adapter.serving.events.SessionEventStore` (the SDK's ``EventStore``,
one view per session) keeps its events in an :class:`EventLog`: this module's
:class:`InMemoryEventLog` (one process) or
:class:`~mcp_adapter.stores.redis_events.RedisEventLog` (shared by replicas).
Both keep the same limits:

- per stream, at most ``max_events_per_stream`` events and
  ``max_bytes_per_stream`` bytes: the stream's oldest events go first; an event
  larger than ``max_bytes_per_stream`` is delivered live but not kept;
- in all, at most ``max_bytes`` bytes: while over it, the session holding the
  most bytes loses its oldest stream, whole. A session can only make another
  lose events by holding fewer bytes than it.

An event's size is its serialized JSON-RPC message plus ``EVENT_OVERHEAD``
bytes (its id and bookkeeping), so priming events, which carry no message,
count too.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mcp.server.streamable_http import EventId, StreamId

MiB = 1024 * 1024
EVENT_OVERHEAD = 128
"""Bytes an event counts on top of its serialized message."""
DEFAULT_MAX_EVENTS_PER_STREAM = 1_000
DEFAULT_MAX_BYTES_PER_STREAM = 4 * MiB
DEFAULT_MAX_BYTES = 64 * MiB


@dataclass(frozen=True)
class StoredEvent:
    """One event as a log keeps it: ``data`` is the serialized message, None for a priming event."""

    event_id: EventId
    data: bytes | None

    @property
    def size(self) -> int:
        return EVENT_OVERHEAD + (len(self.data) if self.data is not None else 0)


class EventLog(Protocol):
    """Where a :class:`SessionEventStore` keeps events. Session keys never leave the server."""

    async def append(self, session: str, stream: StreamId, event: StoredEvent) -> None:
        """Keep ``event`` as the newest of ``session``'s ``stream`` (the log's limits apply)."""
        ...

    async def locate(self, event_id: EventId) -> tuple[str, StreamId] | None:
        """The session and stream holding ``event_id``, or None if it is not kept."""
        ...

    async def events_after(
        self, session: str, stream: StreamId, event_id: EventId
    ) -> Sequence[StoredEvent] | None:
        """The events of ``session``'s ``stream`` after ``event_id``, or None if it is not kept."""
        ...

    async def drop_session(self, session: str) -> None:
        """Forget every event of ``session``."""
        ...


def check_limits(max_events_per_stream: int, max_bytes_per_stream: int, max_bytes: int) -> None:
    """Refuse limits a log cannot keep (every log checks the same)."""
    if max_events_per_stream < 1:
        raise ValueError("max_events_per_stream must be at least 1")
    if not EVENT_OVERHEAD <= max_bytes_per_stream <= max_bytes:
        raise ValueError(
            f"need {EVENT_OVERHEAD} <= max_bytes_per_stream <= max_bytes"
            f" (got {max_bytes_per_stream} and {max_bytes})"
        )


@dataclass
class _Stream:
    events: deque[StoredEvent] = field(default_factory=deque)
    size: int = 0


@dataclass
class _Session:
    streams: OrderedDict[StreamId, _Stream] = field(default_factory=OrderedDict)
    size: int = 0


class InMemoryEventLog:
    """An :class:`EventLog` in this process's memory, bounded per stream and in all."""

    def __init__(
        self,
        *,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes_per_stream: int = DEFAULT_MAX_BYTES_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        check_limits(max_events_per_stream, max_bytes_per_stream, max_bytes)
        self.max_events_per_stream = max_events_per_stream
        self.max_bytes_per_stream = max_bytes_per_stream
        self.max_bytes = max_bytes
        self._sessions: dict[str, _Session] = {}
        self._index: dict[EventId, tuple[str, StreamId]] = {}
        self._size = 0

    @property
    def size(self) -> int:
        """Bytes held, as counted against ``max_bytes``."""
        return self._size

    async def append(self, session: str, stream: StreamId, event: StoredEvent) -> None:
        if event.size > self.max_bytes_per_stream:
            return
        owner = self._sessions.setdefault(session, _Session())
        held = owner.streams.get(stream)
        if held is None:
            held = owner.streams[stream] = _Stream()
        held.events.append(event)
        held.size += event.size
        owner.size += event.size
        self._size += event.size
        self._index[event.event_id] = (session, stream)
        while (
            len(held.events) > self.max_events_per_stream or held.size > self.max_bytes_per_stream
        ):
            self._drop_oldest_event(session, stream)
        while self._size > self.max_bytes:
            largest = max(self._sessions, key=lambda key: self._sessions[key].size)
            self._drop_stream(largest, next(iter(self._sessions[largest].streams)))

    async def locate(self, event_id: EventId) -> tuple[str, StreamId] | None:
        return self._index.get(event_id)

    async def events_after(
        self, session: str, stream: StreamId, event_id: EventId
    ) -> Sequence[StoredEvent] | None:
        owner = self._sessions.get(session)
        held = owner.streams.get(stream) if owner is not None else None
        if held is None:
            return None
        ids = [event.event_id for event in held.events]
        if event_id not in ids:
            return None
        return list(held.events)[ids.index(event_id) + 1 :]

    async def drop_session(self, session: str) -> None:
        owner = self._sessions.get(session)
        while owner is not None and owner.streams:
            self._drop_stream(session, next(iter(owner.streams)))

    def _drop_oldest_event(self, session: str, stream: StreamId) -> None:
        owner = self._sessions[session]
        held = owner.streams[stream]
        event = held.events.popleft()
        del self._index[event.event_id]
        held.size -= event.size
        owner.size -= event.size
        self._size -= event.size
        if not held.events:
            self._forget_empty(session, stream)

    def _drop_stream(self, session: str, stream: StreamId) -> None:
        owner = self._sessions[session]
        held = owner.streams[stream]
        for event in held.events:
            del self._index[event.event_id]
        owner.size -= held.size
        self._size -= held.size
        held.events.clear()
        self._forget_empty(session, stream)

    def _forget_empty(self, session: str, stream: StreamId) -> None:
        owner = self._sessions[session]
        del owner.streams[stream]
        if not owner.streams:
            del self._sessions[session]
