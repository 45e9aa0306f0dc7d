"""An answered round recorded on a primary that is no longer the primary: ``RedisRounds``
with ``wait_replicas`` against a real Redis Sentinel deployment
(``benchmarks/harness/redis_topology.py``) and a lone ``redis-server``.

After ``SENTINEL FAILOVER`` the old primary keeps answering as a primary, taking writes,
until the Sentinels demote it (seconds later); what it acknowledged then is gone once it
follows the new primary. Without ``wait_replicas`` an answered round recorded there is
acknowledged, lost, and its replay taken again on the new primary (asserted below: the
hazard is real); with ``wait_replicas=1`` ``WAIT`` finds the replica gone and the round
is refused, its record taken back.

Skipped with the reason when ``redis-server`` is missing, failed instead with ``CI=true``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio.to_thread
import pytest
import redis.asyncio
from benchmarks.harness.redis_topology import SentinelTopology, command, info, role, wait_until

from mcp_adapter.stores import LedgerUnavailable, RedisRounds, SharedRedis
from tests.replicas.cluster import Redis

pytestmark = pytest.mark.anyio

TTL = 600.0


def client_on(port: int) -> redis.asyncio.Redis:
    """A plain client on one data node (no Sentinel: it stays on that node)."""
    return redis.asyncio.Redis(host="127.0.0.1", port=port, socket_timeout=10)


async def until(ready: Callable[[], bool], what: str) -> None:
    await anyio.to_thread.run_sync(lambda: wait_until(ready, what))


async def is_primary(client: redis.asyncio.Redis) -> bool:
    return bool((await client.execute_command("ROLE"))[0] == b"master")


@pytest.fixture
async def lone(tmp_path: Path) -> AsyncIterator[redis.asyncio.Redis]:
    """A client on a ``redis-server`` that has no replica."""
    server = Redis(tmp_path)
    server.start()
    client = client_on(server.port)
    try:
        yield client
    finally:
        await client.aclose()
        server.stop()


async def test_a_round_its_replica_holds_is_taken_once(topology: SentinelTopology) -> None:
    shared = dataclasses.replace(SharedRedis.of(topology.url).for_server("bank"), wait_replicas=1)
    (replica,) = [port for _, port in topology.replica_addresses()]
    rounds = shared.rounds()
    try:
        assert (rounds.wait_replicas, rounds.wait_timeout) == (1, 1.0)
        assert await rounds.consume("digest", TTL)
        assert not await rounds.consume("digest", TTL)
        held = client_on(replica)  # acknowledged once the replica had it
        assert await held.exists("mcp_adapter:bank:rounds:digest") == 1
        await held.aclose()
    finally:
        await shared.aclose()


async def test_a_primary_without_its_replicas_refuses_the_round(
    lone: redis.asyncio.Redis,
) -> None:
    fenced = RedisRounds(lone, "p:rounds", timeout=5, wait_replicas=1, wait_timeout=0.1)
    for _ in range(2):  # refused, not spent: the same round is refused again, not replayed
        with pytest.raises(LedgerUnavailable, match="did not confirm the round on 1 replica"):
            await fenced.consume("digest", TTL)
        assert await lone.exists("p:rounds:digest") == 0  # the record was taken back
    assert await RedisRounds(lone, "p:rounds", timeout=5).consume("digest", TTL)
    assert not await fenced.consume("digest", TTL)  # taken already: no WAIT asked


async def test_a_demoted_primary_cannot_take_a_round_that_a_failover_would_lose(
    topology: SentinelTopology,
) -> None:
    old = topology.primary_address()[1]
    (promoted,) = [port for _, port in topology.replica_addresses()]
    on_old, on_new = client_on(old), client_on(promoted)
    fenced = RedisRounds(on_old, "p:rounds", timeout=5, wait_replicas=1)
    plain = RedisRounds(on_old, "p:rounds", timeout=5)
    try:
        assert await fenced.consume("before", TTL)  # healthy: the replica confirms

        command(topology.sentinels[0].port, "SENTINEL", "FAILOVER", topology.service)
        await until(
            lambda: topology.primary_address()[1] == promoted and role(promoted) == "master",
            f"{promoted} promoted",
        )
        await until(lambda: info(old)["connected_slaves"] == "0", f"{promoted} gone from {old}")
        assert await is_primary(on_old)
        with pytest.raises(LedgerUnavailable, match="did not confirm the round on 1 replica"):
            await fenced.consume("answered", TTL)
        assert await on_old.exists("p:rounds:answered") == 0
        assert await plain.consume("answered", TTL)  # acknowledged by the old primary...
        assert await is_primary(on_old)  # ...which was one still, all along: a split brain

        await until(
            lambda: role(old) == "slave" and info(old).get("master_link_status") == "up",
            f"{old} demoted, following {promoted}",
        )
        assert await on_old.exists("p:rounds:answered") == 0  # ...and lost: the replay
        assert await RedisRounds(on_new, "p:rounds", timeout=5).consume("answered", TTL)
        assert await on_new.exists("p:rounds:before") == 1  # what WAIT confirmed is kept
        again = RedisRounds(on_new, "p:rounds", timeout=5, wait_replicas=1)
        assert await again.consume("after", TTL)  # the old primary is its replica now
    finally:
        await on_old.aclose()
        await on_new.aclose()
