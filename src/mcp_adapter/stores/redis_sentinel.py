"""The ``redis.asyncio.Redis`` of a ``redis+sentinel://`` URL (its form:
:mod:`mcp_adapter.stores.sentinel_url`): redis-py's Sentinel client, whose pool asks the
Sentinels for the primary at each new connection."""

from __future__ import annotations

from typing import Any

from mcp_adapter.distribution import needs_extra
from mcp_adapter.stores.sentinel_url import parse_sentinel_url

with needs_extra("redis", "Redis Sentinel"):
    from redis.asyncio import Redis
    from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool


def sentinel_client(url: str, **defaults: Any) -> Redis:
    """A ``redis.asyncio.Redis`` on the primary that the Sentinels of ``url`` name.

    Each new connection asks the Sentinels for the primary, so after a failover the
    client (its pub/sub connections too) reaches the new one; a connection to a primary
    demoted to a replica is dropped at its first ``READONLY`` answer. ``defaults`` are
    the connection options the URL does not set; the Sentinel daemons get its timeouts.
    Closing the client closes its connections to the Sentinels as well.
    """
    parsed = parse_sentinel_url(url)
    timeouts = {k: v for k, v in defaults.items() if k.startswith("socket_")}
    sentinels = Sentinel(  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
        list(parsed.sentinels), sentinel_kwargs={**timeouts, **parsed.sentinel}
    )
    options = {"db": parsed.db, **defaults, **parsed.connection}
    client: Redis = sentinels.master_for(
        parsed.service, connection_pool_class=OwnedSentinelPool, **options
    )
    return client


class OwnedSentinelPool(SentinelConnectionPool):
    """redis-py's Sentinel pool, closing the Sentinel manager's clients with its own
    connections (the manager has no ``aclose`` of its own)."""

    async def aclose(self) -> None:
        await super().aclose()
        for client in self.sentinel_manager.sentinels:
            await client.aclose()
