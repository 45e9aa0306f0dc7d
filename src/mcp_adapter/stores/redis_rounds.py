"""A :class:`~mcp_adapter.stores.rounds.RoundLedger` in Redis: a round answered on one
replica is refused on every other.

One key per answered round, ``{prefix}:{key}`` (``key`` is a digest of the round's id,
never a client's string), set with ``SET ... NX PX``: atomic however many replicas
take the same state at once, and gone when the state could no longer be opened.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import anyio

from mcp_adapter.stores.rounds import LedgerUnavailable

if TYPE_CHECKING:
    from redis.asyncio import Redis


class RedisRounds:
    """Records answered rounds in Redis, so N replicas refuse one replay.

    ``client`` is a ``redis.asyncio.Redis``; ``prefix`` namespaces the keys. A command
    that fails, or takes longer than ``timeout`` seconds (``None``: the client's own
    timeouts bound it; ``SharedRedis.rounds()`` gives its command timeout), is
    :class:`~mcp_adapter.stores.rounds.LedgerUnavailable`: the retry is refused, not let
    through unrecorded.
    """

    def __init__(
        self, client: Redis, prefix: str = "mcp_adapter:rounds", timeout: float | None = None
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.timeout = timeout

    async def consume(self, key: str, ttl: float) -> bool:
        from redis.exceptions import RedisError

        millis = max(1, math.ceil(ttl * 1000))
        try:
            with anyio.fail_after(self.timeout):
                done = await self.client.set(f"{self.prefix}:{key}", b"1", nx=True, px=millis)
        except (RedisError, OSError, TimeoutError) as exc:
            raise LedgerUnavailable(f"Redis did not record the round: {exc}") from exc
        return bool(done)
