"""The Redis bus and rate store on ``fakeredis`` (tests/replicas runs them on a real Redis)."""

from __future__ import annotations

import anyio
import fakeredis
import pytest
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent, ToolsListChanged

from mcp_adapter.stores import Rate, RedisRateStore, RedisSubscriptionBus, SharedRedis
from mcp_adapter.stores.redis_bus import decode, encode

pytestmark = pytest.mark.anyio


async def test_a_change_published_on_one_bus_reaches_the_listeners_of_every_bus() -> None:
    server = fakeredis.FakeServer()
    one = RedisSubscriptionBus(fakeredis.FakeAsyncRedis(server=server), "p:changes")
    two = RedisSubscriptionBus(fakeredis.FakeAsyncRedis(server=server), "p:changes")
    other = RedisSubscriptionBus(fakeredis.FakeAsyncRedis(server=server), "q:changes")
    heard: dict[str, list[ServerEvent]] = {"one": [], "two": [], "other": []}
    one.subscribe(heard["one"].append)
    unsubscribe = two.subscribe(heard["two"].append)
    other.subscribe(heard["other"].append)
    async with one.running(), two.running(), other.running():
        assert one.subscribed
        assert two.subscribed
        await one.publish(ResourceUpdated(uri="notes://1"))
        with anyio.fail_after(10):
            while len(heard["two"]) < 1 or len(heard["one"]) < 1:
                await anyio.sleep(0.01)
        unsubscribe()
        unsubscribe()  # idempotent
        await two.publish(ToolsListChanged())
        with anyio.fail_after(10):
            while len(heard["one"]) < 2:
                await anyio.sleep(0.01)
    assert heard["one"] == [ResourceUpdated(uri="notes://1"), ToolsListChanged()]
    assert heard["two"] == [ResourceUpdated(uri="notes://1")]
    assert heard["other"] == []  # another prefix: another deployment
    assert not one.subscribed


async def test_foreign_messages_on_the_channel_are_ignored() -> None:
    server = fakeredis.FakeServer()
    client = fakeredis.FakeAsyncRedis(server=server)
    bus = RedisSubscriptionBus(client, "p:changes")
    heard: list[ServerEvent] = []
    bus.subscribe(heard.append)
    async with bus.running():
        for junk in (b"not json", b"[1]", b'{"kind": "nope"}', b"x" * 100_000):
            await client.publish("p:changes", junk)
        await client.publish("p:changes", encode(ToolsListChanged()))
        with anyio.fail_after(10):
            while not heard:
                await anyio.sleep(0.01)
    assert heard == [ToolsListChanged()]


def test_every_event_kind_goes_through_the_channel() -> None:
    from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged

    for event in (
        ToolsListChanged(),
        PromptsListChanged(),
        ResourcesListChanged(),
        ResourceUpdated(uri="a://b"),
    ):
        assert decode(encode(event)) == event


async def test_without_redis_a_change_still_reaches_this_replica() -> None:
    shared = SharedRedis.of("redis://127.0.0.1:1/0")  # nothing listens on port 1
    bus = shared.subscription_bus()
    heard: list[ServerEvent] = []
    bus.subscribe(heard.append)
    await bus.publish(ToolsListChanged())
    assert heard == [ToolsListChanged()]
    assert not await shared.reachable()
    await shared.aclose()


async def test_n_stores_on_one_redis_enforce_one_limit_per_key() -> None:
    server = fakeredis.FakeServer()
    stores = [RedisRateStore(fakeredis.FakeAsyncRedis(server=server), "p") for _ in range(3)]
    rate = Rate(4, 3600.0)
    answers = [await stores[n % 3].hit("ada", rate, 0.0) for n in range(6)]
    assert answers[:4] == [None] * 4
    waits = [wait for wait in answers[4:] if wait is not None]
    assert len(waits) == 2
    assert all(0 < wait <= 900.0 for wait in waits)  # one call's interval, at most
    assert await stores[1].hit("bob", rate, 0.0) is None


async def test_a_rate_key_expires_when_its_bucket_is_full_again() -> None:
    client = fakeredis.FakeAsyncRedis()
    store = RedisRateStore(client, "p:rates")
    await store.hit("mcp_adapter.rate:identity:ada", Rate(2, 10.0), 0.0)
    assert await client.keys("*") == [b"p:rates:mcp_adapter.rate:identity:ada"]
    assert 0 < await client.pttl("p:rates:mcp_adapter.rate:identity:ada") <= 5_000


def test_shared_redis_names_and_checks() -> None:
    shared = SharedRedis.of("redis://user:pw@127.0.0.1:6379/2")
    assert shared.owns_client
    served = shared.for_server("notes")
    assert served.key("events") == "mcp_adapter:notes:events"
    assert served.subscription_bus().channel == "mcp_adapter:notes:changes"
    with pytest.raises(
        ValueError, match=r"rediss://, unix:// or redis\+sentinel://, not 'http://u:\*\*\*@h"
    ):
        SharedRedis.of("http://u:secret@h:1")
    with pytest.raises(ValueError, match="a Redis prefix is a word"):
        SharedRedis(shared.client, prefix="a b")
