"""A :class:`~mcp_adapter.stores.rates.RateStore` in Redis: one limit for every replica.

The same generic cell rate algorithm as the in-memory store, run by one Lua script per
call (atomic however many replicas count at once), on Redis's own clock (replicas'
clocks may differ): one key per caller, ``{prefix}:{key}``, holding the time its bucket
is full again, and expiring then (an idle caller holds no key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_adapter.stores.rates import Rate

if TYPE_CHECKING:
    from redis.asyncio import Redis

_HIT = """
local period, interval = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local full_at = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local wait = full_at - now - (period - interval)
if wait > 0 then return string.format('%.6f', wait) end
local due = full_at + interval
local ttl = math.max(1, math.ceil((due - now) * 1000))
redis.call('SET', KEYS[1], string.format('%.6f', due), 'PX', ttl)
return false
"""


class RedisRateStore:
    """Counts ``RateLimit``'s calls in Redis, so N replicas enforce one limit.

    ``client`` is a ``redis.asyncio.Redis``; ``prefix`` namespaces the keys
    (``RateLimit`` adds its own namespace and the caller: identity or client).
    The ``now`` ``RateLimit`` passes is not used: Redis's clock is.
    """

    def __init__(self, client: Redis, prefix: str = "mcp_adapter") -> None:
        self.client = client
        self.prefix = prefix
        self._hit = client.register_script(_HIT)

    async def hit(self, key: str, rate: Rate, now: float) -> float | None:
        wait = await self._hit(keys=[f"{self.prefix}:{key}"], args=[rate.period, rate.interval])
        return None if wait is None else float(wait)
