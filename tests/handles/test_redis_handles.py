"""State handles in Redis (``fakeredis``; tests/replicas runs them on a real Redis behind
haproxy): two servers on one Redis stand for two replicas, each with its own container,
driven by the SDK's own client. A handle minted through one works through the other,
each builds the handle's session services of its own, a close through either ends it on
both (noted to the other at once: its session services are finalized without another
call), the caps hold across them, and another caller's handle is unknown."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio
import fakeredis
import mcp
import pytest
from mcp.client.extension import advertise

from container import Container
from mcp_adapter import (
    McpResponse,
    Resource,
    Server,
    StateHandles,
    Tool,
    build_sdk_server,
    compile_server,
)
from mcp_adapter.compiled.handles import handle_sessions
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.stores import HandleLimits, MemoryHandles, RedisHandles, SharedRedis
from mcp_adapter.stores.handles import HandleRecord
from mcp_adapter.stores.redis_handles import digest
from mcp_adapter.tasks import EXTENSION
from mcp_adapter.testing import TaskClient
from tests.handles.cart import Cart, CartInput, Ledger, Shop, shop_container
from tests.handles.test_handles import BOUND, ERAS, MODERN, mint, text, token, unknown

pytestmark = pytest.mark.anyio

PREFIX = "mcp_adapter:shop:handles"
NOTED = 5.0
"""Seconds a test waits for a close note to reach another replica (a hang, not a
threshold: it takes milliseconds)."""


class Gate:
    """Holds a ``hold`` call in flight until the test lets it go."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.go = anyio.Event()


class Hold(Tool[CartInput]):
    name = "hold"

    async def handle(self, payload: CartInput, gate: Gate, cart: Cart) -> McpResponse:
        gate.entered.set()
        await gate.go.wait()
        return McpResponse.text("held")


class HoldShop(Shop):
    tools = (*Shop.tools, Hold)


class OpenInTask(Tool):
    name = "open_in_task"
    task_support = "optional"

    def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


class MintingNote(Resource):
    """Mints from a resource read: in memory it may, in Redis it may not."""

    name = "minting-note"
    uri = "shop://mint"

    def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


class TaskShop(HoldShop):
    tools = (*HoldShop.tools, OpenInTask)
    resources = (MintingNote,)
    tasks = Tasks()


class Replica:
    """One server of the shop: its own container (its own session services), and a
    handle store on the Redis every replica shares."""

    def __init__(
        self,
        server: fakeredis.FakeServer,
        limits: HandleLimits | None = None,
        app: type[Server] = HoldShop,
    ) -> None:
        self.ledger = Ledger()
        self.ledger.finalized = self._finalized
        self.closing = anyio.Event()
        self.gate = Gate()
        self.container: Container = shop_container(self.ledger)
        self.container.instance(Gate, self.gate)
        self.catalog = compile_server(app, self.container)
        self.redis = fakeredis.FakeAsyncRedis(server=server)
        shared = SharedRedis(self.redis).for_server("shop")
        limits = HandleLimits() if limits is None else limits
        self.store = shared.handles(limits, handle_sessions(self.container))

    def _finalized(self, handle: str) -> None:
        self.closing.set()
        self.closing = anyio.Event()

    async def finalized(self, handle: str) -> None:
        """Wait until this replica has finalized the session of ``handle`` (``NOTED`` s)."""
        with anyio.fail_after(NOTED):
            while handle not in self.ledger.closed:
                await self.closing.wait()

    @asynccontextmanager
    async def client(
        self, caller: str = "ada", mode: str = MODERN, **options: Any
    ) -> AsyncIterator[Any]:
        sdk = build_sdk_server(
            self.catalog, self.container, caller=token(caller), handles=self.store
        )
        with anyio.fail_after(BOUND):
            client = mcp.Client(sdk, mode=mode, cache=None, **options)
            async with self.store.running(), client:
                yield client


def pair(limits: HandleLimits | None = None) -> tuple[Replica, Replica]:
    server = fakeredis.FakeServer()
    return Replica(server, limits), Replica(server, limits)


async def add(client: Any, cart: str, item: str) -> Any:
    return await client.call_tool("add_item", {"cart": cart, "item": item})


@ERAS
async def test_a_handle_minted_on_one_replica_works_on_the_other_and_closes_on_both(
    mode: str,
) -> None:
    one, two = pair()
    async with one.client(mode=mode) as first, two.client(mode=mode) as second:
        cart = await mint(first)
        assert text(await add(second, cart, "tea")) == "tea"
        assert text(await add(first, cart, "jam")) == "jam"  # one's own session: its own cart
        assert text(await add(second, cart, "milk")) == "tea,milk"
        assert one.ledger.built == two.ledger.built == [cart]
        assert text(await second.call_tool("checkout", {"cart": cart})) == "bought tea,milk"
        assert two.ledger.closed == [cart]
        await one.finalized(cart)  # noted to one at once: no call of one needed
        assert one.ledger.closed == [cart]
        assert unknown(await add(first, cart, "salt"))
        assert unknown(await add(second, cart, "salt"))
        assert await one.redis.keys("*") == []
    assert one.ledger.closed == two.ledger.closed == [cart]  # exactly once on each


async def test_a_close_through_one_replica_finalizes_the_others_sessions_at_once() -> None:
    one, two = pair()
    async with one.client() as first, two.client() as second:
        cart = await mint(first)
        await add(first, cart, "jam")
        await add(second, cart, "tea")  # two builds its own cart
        await first.call_tool("drop", {"handle": cart})
        assert one.ledger.closed == [cart]
        await two.finalized(cart)  # no call, no sweep on two: the close note
        assert two.ledger.closed == [cart]
        assert len(two.store) == 0
    assert one.ledger.closed == two.ledger.closed == [cart]  # once on each


async def test_a_close_note_is_the_digest_of_a_handle_closed_and_nothing_else() -> None:
    one, two = pair()
    ada, bob = ("principal", "ada"), ("principal", "bob")
    one.store.begin("call")
    one.store.add(ada, "h1", handle_sessions(one.container)("h1"), "call")
    await one.store.settle("call")
    notes: Any = one.redis.pubsub(ignore_subscribe_messages=True)
    await notes.subscribe(f"{PREFIX}:closed")
    await two.store.close(bob, "h1")  # not bob's: nothing closes, nothing is noted
    await two.store.close(ada, "h1")
    await one.store.close(ada, "h1")  # closed already: noted once
    with anyio.fail_after(BOUND):
        heard = [await notes.get_message(timeout=0.2) for _ in range(3)]
    await notes.aclose()
    (note,) = [message["data"] for message in heard if message is not None]
    assert note == digest(digest(repr(ada)), "h1").encode()


async def test_the_sweep_finalizes_a_session_whose_handle_went_without_a_note() -> None:
    """An expiry is no note; nor is a close while a replica could not reach Redis."""
    one, two = pair()
    async with one.client() as first, two.client() as second:
        cart = await mint(first)
        await add(second, cart, "tea")
        (key,) = await one.redis.keys(f"{PREFIX}:h:*")
        await one.redis.delete(key)  # gone from Redis, and no note
        assert two.ledger.closed == []
        await two.store.sweep()
        assert two.ledger.closed == [cart]
        assert len(two.store) == 0


async def test_a_message_on_the_channel_that_is_no_close_note_is_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    one, two = pair()
    channel = f"{PREFIX}:closed"
    async with one.client() as first, two.client() as second:
        cart = await mint(first)
        await add(second, cart, "tea")
        caplog.set_level(logging.WARNING, "mcp_adapter")
        for junk in (b"not a digest", b"0" * 100_000, b"Z" * 32, "é".encode() * 16):
            await one.redis.publish(channel, junk)
        await one.redis.publish(channel, b"0" * 32)  # a digest of no handle here: nothing
        await first.call_tool("drop", {"handle": cart})
        await two.finalized(cart)  # the receiver went on
    ignored = [r for r in caplog.records if "no close note" in r.getMessage()]
    assert len(ignored) == 4 * 2  # each junk message, on each replica
    assert two.ledger.closed == [cart]


async def test_another_callers_handle_is_unknown_on_every_replica_and_cannot_be_closed() -> None:
    one, two = pair()
    async with (
        one.client("ada") as ada,
        two.client("bob") as bob,
        one.client("bob") as bob_on_one,
    ):
        cart = await mint(ada)
        assert unknown(await add(bob, cart, "tea"))
        assert unknown(await add(bob_on_one, cart, "tea"))
        assert text(await bob.call_tool("drop", {"handle": cart})) == "dropped"
        guessed = cart[:-1] + ("A" if cart[-1] != "A" else "B")
        assert unknown(await add(ada, guessed, "tea"))
        assert text(await add(ada, cart, "tea")) == "tea"  # bob's close did nothing
        keys = [key.decode() for key in await one.redis.keys("*")]
        assert all(key.startswith(PREFIX + ":") for key in keys)
        assert all(cart not in key and "principal" not in key for key in keys)
        assert max(map(len, keys)) <= len(PREFIX) + 36


async def test_the_caps_hold_across_replicas() -> None:
    one, two = pair(HandleLimits(max_per_client=2, max_handles=3))
    async with (
        one.client("ada") as ada_one,
        two.client("ada") as ada_two,
        two.client("bob") as bob,
    ):
        await mint(ada_one)
        await mint(ada_two)
        refused = await ada_one.call_tool("open_cart", {})
        assert refused.is_error
        assert "for this client: close one" in text(refused)
        await mint(bob)
        full = await bob.call_tool("open_cart", {})
        assert full.is_error
        assert "for the server: close one" in text(full)
        assert len(await one.redis.zrange(f"{PREFIX}:all", 0, -1)) == 3
        assert (len(one.store), len(two.store)) == (1, 2)  # the refused ones are dropped


async def test_concurrent_mints_on_two_replicas_never_pass_the_cap() -> None:
    one, two = pair(HandleLimits(max_per_client=None, max_handles=3))
    answers: list[bool] = []
    async with one.client() as first, two.client() as second:

        async def open_on(client: Any) -> None:
            answers.append(not (await client.call_tool("open_cart", {})).is_error)

        async with anyio.create_task_group() as group:
            for n in range(10):
                group.start_soon(open_on, first if n % 2 else second)
    assert sorted(answers) == [False] * 7 + [True] * 3


async def test_a_handle_in_use_on_one_replica_outlives_its_idle_timeout_and_then_expires() -> None:
    one, two = pair(HandleLimits(idle_timeout=30))  # a call's lease is 60 s
    async with one.client() as first, two.client() as second:
        cart = await mint(first)
        (key,) = list(await one.redis.keys(f"{PREFIX}:h:*"))
        assert 0 < await one.redis.pttl(key) <= 30_000
        async with anyio.create_task_group() as group:
            group.start_soon(second.call_tool, "hold", {"cart": cart})
            await two.gate.entered.wait()
            assert await one.redis.pttl(key) > 30_000  # the call's lease
            await one.redis.pexpire(key, 500)  # as if the lease were running out
            await two.store.renew()  # what two does every 20 s while the call runs
            assert await one.redis.pttl(key) > 30_000
            assert text(await add(first, cart, "tea")) == "tea"  # one's call ends first
            assert await one.redis.pttl(key) > 30_000  # two's call is still in flight
            two.gate.go.set()
        assert 0 < await one.redis.pttl(key) <= 30_000  # idle from the last call's end
        await one.redis.pexpire(key, 1)  # as if idle past its timeout
        with anyio.fail_after(BOUND):
            while await one.redis.exists(key):
                await anyio.sleep(0.01)
        assert unknown(await add(first, cart, "jam"))
        assert one.ledger.closed == [cart]
        assert two.ledger.closed == []  # an expiry is no note: two finds it at its sweep
        await two.store.sweep()
        assert two.ledger.closed == [cart]
    assert one.ledger.closed == two.ledger.closed == [cart]


async def test_a_handle_whose_replica_died_mid_call_still_expires() -> None:
    """Its call's lease is all that holds it: no count of calls in flight pins it."""
    one, two = pair(HandleLimits(idle_timeout=30))
    owner = ("principal", "ada")
    one.store.begin("call")
    one.store.add(owner, "h1", handle_sessions(one.container)("h1"), "call")
    await one.store.settle("call")
    (key,) = await one.redis.keys(f"{PREFIX}:h:*")
    assert await two.store.take(owner, "h1") is not None  # and two dies: no release, no renewal
    assert 30_000 < await one.redis.pttl(key) <= 60_000  # the lease two took, and no more
    assert await one.redis.hget(key, "u") == b"1"
    await one.redis.pexpire(key, 1)  # as if the lease had run out
    with anyio.fail_after(BOUND):
        while await one.redis.exists(key):
            await anyio.sleep(0.01)
    assert await one.store.take(owner, "h1") is None


async def test_a_close_while_another_replica_has_a_call_in_flight() -> None:
    """Unknown everywhere at once; the replica with the call, told at once, finalizes
    after the call ends."""
    one, two = pair()
    async with one.client() as first, two.client() as second:
        cart, spare = await mint(first), await mint(first)
        await add(second, spare, "tea")
        async with anyio.create_task_group() as group:
            group.start_soon(second.call_tool, "hold", {"cart": cart})
            await two.gate.entered.wait()
            await first.call_tool("drop", {"handle": cart})
            await first.call_tool("drop", {"handle": spare})
            assert unknown(await add(first, cart, "tea"))
            await two.finalized(spare)  # the notes come in order: cart's is in too
            assert len(two.store) == 0  # two forgot cart ...
            assert two.ledger.closed == [spare]  # ... and its call is still in flight there
            two.gate.go.set()
        assert two.ledger.closed == [spare, cart]
        assert unknown(await add(second, cart, "tea"))
        assert two.ledger.closed == [spare, cart]


async def test_two_replicas_closing_at_once_close_once() -> None:
    one, two = pair()
    owner = ("principal", "ada")
    session_one = handle_sessions(one.container)
    one.store.begin("call")
    one.store.add(owner, "h1", session_one("h1"), "call")
    await one.store.settle("call")
    records = [await one.store.take(owner, "h1"), await two.store.take(owner, "h1")]
    assert all(record is not None for record in records)
    async with anyio.create_task_group() as group:
        group.start_soon(one.store.close, owner, "h1")
        group.start_soon(two.store.close, owner, "h1")
    assert await one.store.take(owner, "h1") is None
    assert await two.store.take(owner, "h1") is None
    for store, record in zip((one.store, two.store), records, strict=True):
        assert record is not None
        assert not record.finalized
        await store.release(record)
        assert record.finalized


@contextmanager
def silent_redis() -> Iterator[str]:
    """A TCP port that accepts connections and never answers: a stalled Redis."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"


async def test_a_stalled_redis_answers_a_tool_error_within_the_timeout() -> None:
    import redis.asyncio

    with silent_redis() as url:
        replica = Replica(fakeredis.FakeServer())
        client = redis.asyncio.Redis.from_url(url)
        sessions = handle_sessions(replica.container)
        replica.store = RedisHandles(client, PREFIX, sessions=sessions, timeout=0.2)
        async with replica.client() as caller:
            with anyio.fail_after(BOUND):
                opened = await caller.call_tool("open_cart", {})
                added = await add(caller, "x" * 32, "tea")
        await client.aclose()
    for answer in (opened, added):
        assert answer.is_error
        assert text(answer) == "State handles are unavailable for a moment: try again"
    assert replica.ledger.built == []


async def test_a_task_body_mints_a_handle_the_other_replica_serves() -> None:
    server = fakeredis.FakeServer()
    one, two = Replica(server, app=TaskShop), Replica(server, app=TaskShop)
    extensions = [advertise(EXTENSION)]
    async with one.client(extensions=extensions) as first, two.client() as second:
        tasks = TaskClient(first)
        created = await tasks.call("open_in_task")
        assert created["resultType"] == "task"
        done = await tasks.until(created["taskId"])
        (content,) = done["result"]["content"]
        assert text(await add(second, content["text"], "tea")) == "tea"


async def test_a_resource_cannot_mint_in_redis_and_can_in_memory() -> None:
    (replica, _) = pair()
    replica.catalog = compile_server(TaskShop, replica.container)
    async with replica.client() as client:
        with pytest.raises(mcp.MCPError):
            await client.read_resource("shop://mint")
    assert await replica.redis.keys("*") == []
    memory = Replica(fakeredis.FakeServer(), app=TaskShop)
    memory.store = MemoryHandles()
    async with memory.client() as client:
        read = await client.read_resource("shop://mint")
    assert len(read.contents) == 1


@pytest.mark.parametrize("noted", [False, True], ids=["unnoted", "noted"])
async def test_takes_and_closes_racing_on_two_replicas_leave_nothing_behind(noted: bool) -> None:
    one, two = pair()
    async with AsyncExitStack() as served:
        if noted:  # the close notes race the takes too
            await served.enter_async_context(one.store.running())
            await served.enter_async_context(two.store.running())
        await race(one, two)


async def race(one: Replica, two: Replica) -> None:
    owner = ("principal", "ada")
    handles = [f"h{n}" for n in range(20)]
    sessions = handle_sessions(one.container)
    one.store.begin("call")
    for handle in handles:
        one.store.add(owner, handle, sessions(handle), "call")
    await one.store.settle("call")
    taken: list[tuple[RedisHandles, HandleRecord]] = []

    async def use(store: RedisHandles, handle: str) -> None:
        record = await store.take(owner, handle)
        if record is not None:
            taken.append((store, record))

    async with anyio.create_task_group() as group:
        for handle in handles:
            group.start_soon(use, two.store, handle)
            group.start_soon(one.store.close, owner, handle)
            group.start_soon(use, one.store, handle)
    for store, record in taken:
        await store.release(record)
        assert record.finalized
    for store in (one.store, two.store):
        assert [await store.take(owner, handle) for handle in handles] == [None] * len(handles)
        assert len(store) == 0
    assert await one.redis.keys("*") == []
