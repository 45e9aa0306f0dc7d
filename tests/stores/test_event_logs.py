"""Both event logs keep the same contract: what each replays, to whom, and within which caps.

The Redis log runs here on ``fakeredis`` (its Lua scripts included); tests/replicas runs
it on a real ``redis-server``.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import fakeredis
import pytest
import redis.asyncio
from mcp.types import JSONRPCNotification

from mcp_adapter.serving.events import SessionEventStore
from mcp_adapter.stores import InMemoryEventLog, RedisEventLog, StoredEvent
from mcp_adapter.stores.events import EVENT_OVERHEAD

pytestmark = pytest.mark.anyio

MakeLog = Callable[..., InMemoryEventLog | RedisEventLog]


def redis_log(**limits: int) -> RedisEventLog:
    return RedisEventLog(fakeredis.FakeAsyncRedis(), "test:events", **limits)


@pytest.fixture(params=["memory", "redis"])
def make_log(request: pytest.FixtureRequest) -> MakeLog:
    return InMemoryEventLog if request.param == "memory" else redis_log


async def held(log: InMemoryEventLog | RedisEventLog) -> int:
    return log.size if isinstance(log, InMemoryEventLog) else await log.size()


def event(n: int, size: int = 0) -> StoredEvent:
    return StoredEvent(f"id-{n}", b"x" * size)


def ids(events: object) -> list[str] | None:
    return None if events is None else [e.event_id for e in events]  # type: ignore[attr-defined]


async def test_replays_later_events_of_one_stream_with_their_data(make_log: MakeLog) -> None:
    log = make_log()
    await log.append("s", "a", StoredEvent("prime", None))
    await log.append("s", "a", StoredEvent("one", b'{"n": 1}'))
    await log.append("s", "b", StoredEvent("other", b"{}"))
    await log.append("s", "a", StoredEvent("two", b'{"n": 2}'))
    assert await log.locate("prime") == ("s", "a")
    assert await log.locate("other") == ("s", "b")
    after = await log.events_after("s", "a", "prime")
    assert after == [StoredEvent("one", b'{"n": 1}'), StoredEvent("two", b'{"n": 2}')]
    assert await log.events_after("s", "a", "unknown") is None
    assert await log.events_after("t", "a", "prime") is None
    assert await log.locate("unknown") is None


async def test_a_stream_keeps_its_last_events(make_log: MakeLog) -> None:
    log = make_log(max_events_per_stream=2)
    for n in range(4):
        await log.append("s", "a", event(n))
    await log.append("s", "quiet", event(9))
    assert await log.locate("id-1") is None
    assert ids(await log.events_after("s", "a", "id-2")) == ["id-3"]
    assert await log.locate("id-9") == ("s", "quiet")
    assert await held(log) == 3 * EVENT_OVERHEAD


async def test_a_stream_keeps_at_most_its_bytes_and_drops_a_larger_event(
    make_log: MakeLog,
) -> None:
    log = make_log(max_bytes_per_stream=2 * (EVENT_OVERHEAD + 100))
    for n in range(3):
        await log.append("s", "a", event(n, 100))
    assert await log.locate("id-0") is None
    assert ids(await log.events_after("s", "a", "id-1")) == ["id-2"]
    await log.append("s", "a", event(7, 10_000))  # larger than a stream may hold
    assert await log.locate("id-7") is None
    assert await held(log) == 2 * (EVENT_OVERHEAD + 100)


async def test_over_the_global_cap_the_largest_session_loses_its_oldest_streams(
    make_log: MakeLog,
) -> None:
    size = EVENT_OVERHEAD + 400
    log = make_log(max_bytes=10 * size, max_bytes_per_stream=size)
    for n in range(3):
        await log.append("victim", str(n), event(n, 400))
    for n in range(100, 200):
        await log.append("flooder", str(n), event(n, 400))
    assert await held(log) <= 10 * size
    for n in range(3):
        assert await log.locate(f"id-{n}") is not None
    assert await log.locate("id-100") is None
    assert await log.locate("id-199") == ("flooder", "199")


async def test_a_dropped_session_leaves_nothing(make_log: MakeLog) -> None:
    log = make_log()
    await log.append("s", "a", event(1, 10))
    await log.append("s", "b", event(2, 10))
    await log.append("keep", "a", event(3, 10))
    await log.drop_session("s")
    assert await log.locate("id-1") is None
    assert await log.events_after("s", "a", "id-1") is None
    assert await held(log) == EVENT_OVERHEAD + 10
    assert await log.locate("id-3") == ("keep", "a")


async def test_redis_keys_are_namespaced_and_expire_but_the_totals() -> None:
    client = fakeredis.FakeAsyncRedis()
    log = RedisEventLog(client, "app:srv:events", ttl=60)
    await log.append("abc", "a request id: chosen by the client", event(1, 10))
    keys = sorted(key.decode() for key in await client.keys("*"))
    assert all(key.startswith("app:srv:events:") for key in keys)
    assert "app:srv:events:event:id-1" in keys
    for key in keys:
        ttl = await client.ttl(key)
        if key in {"app:srv:events:bytes", "app:srv:events:sessions"}:
            assert ttl == -1
        else:
            assert 0 < ttl <= 60, key
    assert not any("chosen by the client" in key for key in keys)


async def test_redis_gives_back_the_bytes_of_expired_sessions_before_evicting_live_ones() -> None:
    client = fakeredis.FakeAsyncRedis()
    size = EVENT_OVERHEAD + 400
    log = RedisEventLog(client, "p", max_bytes=4 * size, max_bytes_per_stream=size)
    for n in range(3):
        await log.append("gone", str(n), event(n, 400))
    for key in await client.keys("p:*gone*"):
        await client.delete(key)  # as if its TTL ran out (the replica died)
    for key in await client.keys("p:event:*"):
        await client.delete(key)
    for n in range(10, 14):
        await log.append("live", str(n), event(n, 400))
    for n in range(10, 14):
        assert await log.locate(f"id-{n}") == ("live", str(n))
    assert await log.size() == 4 * size


async def test_two_replicas_see_one_log() -> None:
    server = fakeredis.FakeServer()
    one = RedisEventLog(fakeredis.FakeAsyncRedis(server=server), "p")
    two = RedisEventLog(fakeredis.FakeAsyncRedis(server=server), "p")
    await one.append("s", "a", event(1, 5))
    await one.append("s", "a", event(2, 5))
    assert await two.locate("id-1") == ("s", "a")
    assert ids(await two.events_after("s", "a", "id-1")) == ["id-2"]


@pytest.mark.parametrize("ttl", [0, -5])
def test_a_ttl_is_a_positive_number_of_seconds(ttl: int) -> None:
    with pytest.raises(ValueError, match="ttl must be at least 1 second"):
        RedisEventLog(fakeredis.FakeAsyncRedis(), "p", ttl=ttl)


def test_the_limits_are_checked_as_in_memory() -> None:
    with pytest.raises(ValueError, match="max_events_per_stream"):
        redis_log(max_events_per_stream=0)
    with pytest.raises(ValueError, match="max_bytes_per_stream <= max_bytes"):
        redis_log(max_bytes_per_stream=100, max_bytes=10)


async def test_an_event_redis_cannot_keep_is_still_sent(caplog: pytest.LogCaptureFixture) -> None:
    """Found by the chaos run (docs/reliability.md): the SDK's session router stores every
    message before it sends it, and a Redis restart made that store raise, which ended
    the router; every later request of the session then waited forever. Now the event
    goes out live, not kept for replay, and the log says so."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = redis.asyncio.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    store = SessionEventStore(RedisEventLog(client, "test:events")).open_session()
    message = JSONRPCNotification(jsonrpc="2.0", method="notifications/progress")
    with caplog.at_level(logging.WARNING, "mcp_adapter.stores"):
        event_id = await store.store_event("1", message)
    assert event_id
    assert "event sent but not kept for replay" in caplog.text
    await client.aclose()
