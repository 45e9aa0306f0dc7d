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

Where events live is an :class:`~mcp_adapter.stores.EventLog`
(:mod:`mcp_adapter.stores`): :class:`~mcp_adapter.stores.InMemoryEventLog` (one
process, ``stateless=False``, one worker) or
:class:`~mcp_adapter.stores.RedisEventLog` (replicas sharing one Redis); both
bound what they keep per stream and in all.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.types import JSONRPCMessage, jsonrpc_message_adapter

from mcp_adapter.stores.events import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_BYTES_PER_STREAM,
    DEFAULT_MAX_EVENTS_PER_STREAM,
    EVENT_OVERHEAD,
    EventLog,
    InMemoryEventLog,
    StoredEvent,
)

__all__ = [
    "EVENT_OVERHEAD",
    "EventLog",
    "InMemoryEventLog",
    "InMemoryEventStore",
    "Resumability",
    "SessionEventStore",
    "SessionEvents",
    "StoredEvent",
    "new_event_id",
]


def new_event_id() -> EventId:
    """A random, unguessable event id (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


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
