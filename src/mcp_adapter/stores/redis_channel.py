"""One Redis pub/sub channel, received for as long as a task runs: what the subscription
bus (``redis_bus``) and the close notes of state handles (``redis_handles``) share.

:func:`receive` subscribes to the channel, hands the data of each message to a callback,
and, while Redis cannot be reached, subscribes again, backing off up to ``MAX_BACKOFF``
seconds. Delivery is fire-and-forget: what was published while the subscription was
lost is not replayed (each user of a channel says how it makes up for that).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcp_adapter.distribution import needs_extra

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger("mcp_adapter.stores")

MAX_BACKOFF = 2.0
"""Seconds at most between two attempts to subscribe again after Redis went away."""


async def receive(
    client: Redis,
    channel: str,
    received: Callable[[bytes | str], None],
    ready: anyio.Event,
    subscribed: Callable[[bool], None] = lambda _: None,
    timeout: float | None = None,
) -> None:
    """Call ``received`` with the data of every message on ``channel``, until cancelled.

    ``ready`` is set once subscribed, or once the first attempt failed (the caller does
    not wait for a Redis that is not there); ``subscribed`` is told each time the
    subscription starts (``True``) and ends (``False``). ``received`` is a plain call on
    the receiving task: it must not raise (a message it cannot read is its to log).
    ``timeout`` bounds each attempt to subscribe (``None``: the client's own timeouts),
    so that a stalled Redis is tried again as one that refuses.
    """
    with needs_extra("redis", "a Redis pub/sub channel"):
        from redis.exceptions import RedisError
    backoff = 0.05
    while True:
        pubsub: Any = client.pubsub(ignore_subscribe_messages=True)
        live = False
        try:
            with anyio.fail_after(timeout):
                await pubsub.subscribe(channel)
            live = True
            subscribed(True)
            backoff = 0.05
            ready.set()
            while True:
                message = await pubsub.get_message(timeout=1.0)
                if message is not None and message.get("type") == "message":
                    received(message["data"])
        except (RedisError, OSError) as exc:
            if live:
                logger.warning("Redis subscription lost (%s); subscribing again", exc)
            ready.set()
        finally:
            if live:
                subscribed(False)
            with anyio.CancelScope(shield=True):
                try:
                    await pubsub.aclose()
                except (RedisError, OSError):
                    logger.debug("closing a lost Redis subscription failed", exc_info=True)
        await anyio.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF)
