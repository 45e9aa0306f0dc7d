"""Resumable SSE streams (SEP-1699) whose events stay with the session that made them.

The SDK gives one ``EventStore`` to every session of an app and never tells it
which session is calling: ``store_event(stream_id, message)`` gets the JSON-RPC
request id (or the GET stream's key) as ``stream_id``, which two sessions share
as soon as they both send request ``1``. So the store the user gives
:func:`~mcp_adapter.serving.http_app` (in :class:`Resumability`) is a
:class:`SessionEventStore`, and every
session gets its own view of it (:meth:`SessionEventStore.open_session`, done by
:mod:`mcp_adapter.serving.session_events`). A view:

- names each event with a random 128-bit id (``secrets.token_urlsafe(16)``),
  mapped on the server to (session, stream); nothing about it is sequential;
- replays after an id only if the id is one of *its own session's* events, and
  then only that stream's later events: another session's id, guessed or copied,
  yields nothing;
- forgets its session's events when the session ends.

Where events live is an :class:`EventLog`: :class:`InMemoryEventLog` here (one
process, ``stateless=False``, one worker), a Redis log could follow with the
same four calls. The in-memory log's limits:

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

import secrets
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.types import JSONRPCMessage, jsonrpc_message_adapter

MiB = 1024 * 1024
EVENT_OVERHEAD = 128
"""Bytes an event counts on top of its serialized message."""
DEFAULT_MAX_EVENTS_PER_STREAM = 1_000
DEFAULT_MAX_BYTES_PER_STREAM = 4 * MiB
DEFAULT_MAX_BYTES = 64 * MiB


def new_event_id() -> EventId:
    """A random, unguessable event id (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


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


class SessionEvents(EventStore):
    """The SDK's ``EventStore`` for one session: a view of a :class:`SessionEventStore`."""

    def __init__(self, log: EventLog, session: str) -> None:
        self._log = log
        self._session = session

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = new_event_id()
        data = None
        if message is not None:
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        await self._log.append(self._session, stream_id, StoredEvent(event_id, data))
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = await self._log.locate(last_event_id)
        if found is None or found[0] != self._session:
            return None
        stream = found[1]
        events = await self._log.events_after(self._session, stream, last_event_id)
        if events is None:
            return None
        for event in events:
            if event.data is not None:
                message = jsonrpc_message_adapter.validate_json(event.data, by_name=False)
                await send_callback(EventMessage(message, event.event_id))
        return stream

    async def close(self) -> None:
        """The session ended: its events can never be asked for again."""
        await self._log.drop_session(self._session)


class SessionEventStore:
    """SSE resumability for all sessions of an app, each session isolated from the others."""

    def __init__(self, log: EventLog) -> None:
        self.log = log

    def open_session(self) -> SessionEvents:
        """A view for one new session, under a random key only the server knows."""
        return SessionEvents(self.log, secrets.token_hex(16))


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
        if max_events_per_stream < 1:
            raise ValueError("max_events_per_stream must be at least 1")
        if not EVENT_OVERHEAD <= max_bytes_per_stream <= max_bytes:
            raise ValueError(
                f"need {EVENT_OVERHEAD} <= max_bytes_per_stream <= max_bytes"
                f" (got {max_bytes_per_stream} and {max_bytes})"
            )
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


class InMemoryEventStore(SessionEventStore):
    """The default :class:`SessionEventStore`: an :class:`InMemoryEventLog` with these limits."""

    log: InMemoryEventLog

    def __init__(
        self,
        *,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes_per_stream: int = DEFAULT_MAX_BYTES_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        super().__init__(
            InMemoryEventLog(
                max_events_per_stream=max_events_per_stream,
                max_bytes_per_stream=max_bytes_per_stream,
                max_bytes=max_bytes,
            )
        )


@dataclass(frozen=True, slots=True)
class Resumability:
    """SSE resumability for a stateful app: ``http_app(..., resumability=Resumability(store))``.

    Every event of a session's streams is kept in ``event_store`` under an id,
    each stream opens with a priming event, and a client that lost a stream
    reconnects with ``Last-Event-ID`` to receive what it missed (clients of
    2025-11-25 or later).
    """

    event_store: SessionEventStore
    """Where events are kept; a :class:`SessionEventStore` (``InMemoryEventStore()``),
    so that each session resumes only its own streams."""
    retry_interval: int | None = None
    """Milliseconds a client should wait before reconnecting: the priming event's SSE
    ``retry`` field (``None``: no hint, the client's own default)."""

    def __post_init__(self) -> None:
        if not isinstance(self.event_store, SessionEventStore):
            raise TypeError(
                "event_store must be a SessionEventStore (e.g. InMemoryEventStore()): the SDK"
                " gives one EventStore to every session, so a plain one would let sessions"
                " read each other's events"
            )
        if self.retry_interval is not None and self.retry_interval < 0:
            raise ValueError("retry_interval must be a number of milliseconds, 0 or more")
