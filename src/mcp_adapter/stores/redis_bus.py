"""The SDK's ``SubscriptionBus`` over Redis pub/sub: a change announced on one replica
reaches the listeners of every replica.

The bus carries the SDK's typed events (``ToolsListChanged``, ``ResourceUpdated(uri)``,
...), never a listener's identity nor a JSON-RPC frame: each replica's listen streams
and sessions filter what they receive as with the in-memory bus (the kinds and URIs
asked for, then the resource's visibility hooks run with the listener's own request).

``publish`` sends the event on one channel (``{prefix}:changes``); a task of each
replica (:meth:`RedisSubscriptionBus.running`) receives the channel and calls the
local listeners. While Redis cannot be reached, ``publish`` delivers to this replica's
listeners only (and logs it), and the receiving task (``redis_channel.receive``)
subscribes again, backing off up to ``MAX_BACKOFF`` seconds. As the SDK says of every
bus, delivery is fire-and-forget: what was announced while a replica was cut off is not
replayed (clients listen again and read again).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcp_adapter.distribution import needs_extra
from mcp_adapter.stores.redis_channel import receive

with needs_extra("redis", "the Redis subscription bus"):
    from redis.exceptions import RedisError

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger("mcp_adapter.stores")

MAX_MESSAGE = 64 * 1024
"""Bytes at most of one message on the channel; a larger one is dropped and logged."""

_KINDS: dict[str, ServerEvent] = {
    "tools_list_changed": ToolsListChanged(),
    "prompts_list_changed": PromptsListChanged(),
    "resources_list_changed": ResourcesListChanged(),
}


def encode(event: ServerEvent) -> bytes:
    """The event as the channel carries it.

    >>> encode(ResourceUpdated(uri="notes://today"))
    b'{"kind": "resource_updated", "uri": "notes://today"}'
    """
    if isinstance(event, ResourceUpdated):
        return json.dumps({"kind": "resource_updated", "uri": event.uri}).encode()
    kind = next(name for name, known in _KINDS.items() if known == event)
    return json.dumps({"kind": kind}).encode()


def decode(data: bytes | str) -> ServerEvent | None:
    """The event ``data`` carries, or None for anything else (logged by the caller).

    >>> decode(b'{"kind": "tools_list_changed"}')
    ToolsListChanged()
    >>> decode(b'{"kind": "resource_updated", "uri": 7}') is None
    True
    """
    if len(data) > MAX_MESSAGE:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    kind = value.get("kind")
    if kind == "resource_updated":
        uri = value.get("uri")
        return ResourceUpdated(uri=uri) if isinstance(uri, str) else None
    return _KINDS.get(kind) if isinstance(kind, str) else None


class RedisSubscriptionBus:
    """A ``SubscriptionBus`` shared by every replica publishing on one Redis channel.

    Run :meth:`running` around the serving (``http_app`` and ``serve_stdio`` do, for the
    bus they make from ``redis=``, and for one given as ``subscription_bus=``).
    """

    def __init__(self, client: Redis, channel: str) -> None:
        self.client = client
        self.channel = channel
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self._subscribed = False

    @property
    def subscribed(self) -> bool:
        """The receiving task is subscribed: changes from other replicas reach this one."""
        return self._subscribed

    async def publish(self, event: ServerEvent) -> None:
        try:
            await self.client.publish(self.channel, encode(event))
        except (RedisError, OSError) as exc:
            logger.warning("Redis unreachable (%s): change delivered on this replica only", exc)
            self._deliver(event)
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    @asynccontextmanager
    async def running(self) -> AsyncIterator[RedisSubscriptionBus]:
        """Receive the channel while the block runs (subscribed before it starts, if Redis
        answers)."""
        async with anyio.create_task_group() as tasks:
            ready = anyio.Event()
            tasks.start_soon(
                receive, self.client, self.channel, self._received, ready, self._now_subscribed
            )
            with anyio.move_on_after(5):
                await ready.wait()
            try:
                yield self
            finally:
                tasks.cancel_scope.cancel()

    def _now_subscribed(self, subscribed: bool) -> None:
        self._subscribed = subscribed

    def _received(self, data: bytes | str) -> None:
        event = decode(data)
        if event is None:
            logger.warning("ignored a message on %s that is no change event", self.channel)
            return
        self._deliver(event)

    def _deliver(self, event: ServerEvent) -> None:
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:  # fan-out boundary: one listener must not starve the others
                logger.exception("subscription listener raised; continuing")
