"""The stores of one ``SharedRedis`` made from a ``redis+sentinel://`` URL, against a real
Sentinel deployment (``benchmarks/harness/redis_topology.py``), across a forced failover
and across the primary SIGKILLed: the event log and the rate store reach the new primary
with the same client and find what was written before, the subscription bus subscribes
again there (a change another client publishes reaches it), and readiness answers again.

What was written is waited into the replica (``WAIT``) before the primary goes: Redis
replicates asynchronously, and a write the old primary acknowledged but had not sent on
is lost in a failover (docs/deployment.md says so).

Skipped with the reason when ``redis-server`` is missing, failed instead with ``CI=true``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread
import pytest
from benchmarks.harness.redis_topology import SentinelTopology
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent

from mcp_adapter.stores import SharedRedis, StoredEvent
from mcp_adapter.stores.rates import Rate

pytestmark = pytest.mark.anyio

RECOVERED_WITHIN = 60.0
"""Seconds a store has to work again after the new primary is reported (bounded: the
client's retries and the bus's backoff take a few; a loaded machine more)."""


async def until(works: Callable[[], Awaitable[object]]) -> None:
    """Await ``works()`` until it answers without a Redis error, within the bound."""
    from redis.exceptions import RedisError

    with anyio.fail_after(RECOVERED_WITHIN):
        while True:
            try:
                await works()
                return
            except (RedisError, OSError):
                await anyio.sleep(0.1)


@pytest.mark.parametrize("loss", ["failover", "kill_primary"])
async def test_every_store_follows_the_primary_sentinel_names(
    topology: SentinelTopology, loss: str
) -> None:
    shared = SharedRedis.of(topology.url).for_server("notes")
    other = SharedRedis.of(topology.url).for_server("notes")  # another replica's client
    log, rates, bus = shared.event_log(), shared.rate_store(), shared.subscription_bus()
    twice = Rate(2, 3600.0)
    heard: list[ServerEvent] = []
    bus.subscribe(heard.append)
    try:
        async with bus.running():
            assert bus.subscribed
            await log.append("s", "a", StoredEvent("prime", None))
            await log.append("s", "a", StoredEvent("one", b'{"n": 1}'))
            assert await rates.hit("ada", twice, 0.0) is None
            assert await shared.client.wait(1, 10_000) == 1  # on the replica too
            old = topology.primary_address()

            new = await anyio.to_thread.run_sync(getattr(topology, loss))

            assert new != old
            # the event log keeps going when Redis is away (it sends the event live and
            # logs it), so wait on a command that raises until a primary answers
            await until(lambda: shared.client.set(shared.key("probe"), b"1"))
            await log.append("s", "a", StoredEvent("two", b'{"n": 2}'))
            after = await log.events_after("s", "a", "prime")
            assert [e.event_id for e in after or ()] == ["one", "two"]
            assert await rates.hit("ada", twice, 0.0) is None
            assert await rates.hit("ada", twice, 0.0) is not None  # the first hit was kept
            assert await shared.reachable()
            pool = shared.client.connection_pool
            assert pool.master_address == new  # type: ignore[attr-defined]
            assert (await shared.client.execute_command("ROLE"))[0] == b"master"

            changed = ResourceUpdated(uri="notes://public")
            with anyio.fail_after(RECOVERED_WITHIN):  # subscribed again, on the new primary
                while not heard:
                    await other.subscription_bus().publish(changed)
                    await anyio.sleep(0.1)
            assert bus.subscribed
            assert set(heard) == {changed}
    finally:
        await shared.aclose()
        await other.aclose()
