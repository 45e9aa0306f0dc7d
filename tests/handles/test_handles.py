"""State handles in process, through the SDK's own client, in both protocol eras: minted
by one call, passed back by the next as an ordinary argument, their ``Lifetime.SESSION``
services shared per handle and finalized exactly once (close, expiry, shutdown)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp
import pytest
from mcp import types
from mcp.server.auth.provider import AccessToken

from mcp_adapter import build_sdk_server, compile_server
from mcp_adapter.stores import HandleLimits, MemoryHandles
from mcp_adapter.testing import McpTestClient
from tests.handles.cart import Ledger, Shop, shop_container

pytestmark = pytest.mark.anyio

BOUND = 30.0
"""Seconds a test may wait for anything (a hang, not a threshold)."""
MODERN = "auto"
"""In process, ``auto`` speaks 2026-07-28."""
LEGACY = "legacy"
ERAS = pytest.mark.parametrize("mode", [MODERN, LEGACY])
UNKNOWN = "Unknown state handle in argument 'cart'"
AGAIN = "close one and try again"


def token(subject: str) -> AccessToken:
    return AccessToken(token=f"{subject}-token", client_id="shop", subject=subject, scopes=[])


class Clock:
    """A clock the test moves: expiry without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Shop_:
    """A container, its catalog and one handle store, served to one client or several."""

    def __init__(self, store: MemoryHandles | None = None) -> None:
        self.ledger = Ledger()
        self.container = shop_container(self.ledger)
        self.catalog = compile_server(Shop, self.container)
        self.store = MemoryHandles() if store is None else store

    @asynccontextmanager
    async def client(self, mode: str = MODERN, caller: str | None = None) -> AsyncIterator[Any]:
        """A client of a server of its own on the shared store, which runs (sweeps) while
        a client is open and finalizes every handle when the last one closes."""
        sdk = build_sdk_server(
            self.catalog,
            self.container,
            caller=None if caller is None else token(caller),
            handles=self.store,
        )
        with anyio.fail_after(BOUND):
            async with self.store.running(), mcp.Client(sdk, mode=mode, cache=None) as client:
                yield client


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def mint(client: Any) -> str:
    result = await client.call_tool("open_cart", {})
    assert not result.is_error, result
    return text(result)


def unknown(result: types.CallToolResult) -> bool:
    return bool(result.is_error) and text(result) == UNKNOWN


@ERAS
async def test_one_handle_shares_its_session_services_and_two_do_not(mode: str) -> None:
    shop = Shop_()
    async with shop.client(mode) as client:
        first, second = await mint(client), await mint(client)
        assert first != second
        assert text(await client.call_tool("add_item", {"cart": first, "item": "tea"})) == "tea"
        assert text(await client.call_tool("add_item", {"cart": second, "item": "jam"})) == "jam"
        added = await client.call_tool("add_item", {"cart": first, "item": "milk"})
        assert text(added) == "tea,milk"
        assert shop.ledger.built == [first, second]  # one cart per handle, built on first use
        assert len(shop.store) == 2


@ERAS
@pytest.mark.parametrize("checkout", ["checkout", "checkout_sync"])
async def test_close_finalizes_the_handle_once_and_it_is_unknown_after(
    mode: str, checkout: str
) -> None:
    """Closed from the call that uses it (async, and a sync handler on a worker thread):
    its session closes once that call is over, exactly once."""
    shop = Shop_()
    async with shop.client(mode) as client:
        cart = await mint(client)
        await client.call_tool("add_item", {"cart": cart, "item": "tea"})
        done = await client.call_tool(checkout, {"cart": cart})
        assert text(done) == "bought tea"
        assert shop.ledger.closed == [cart]
        assert unknown(await client.call_tool("add_item", {"cart": cart, "item": "jam"}))
        assert unknown(await client.call_tool(checkout, {"cart": cart}))
        assert text(await client.call_tool("drop", {"handle": cart})) == "dropped"
    assert shop.ledger.closed == [cart]
    assert len(shop.store) == 0


@ERAS
async def test_a_thread_bound_tool_closes_a_handle_from_its_worker_thread(mode: str) -> None:
    shop = Shop_()
    async with shop.client(mode) as client:
        cart = await mint(client)
        await client.call_tool("add_item", {"cart": cart, "item": "tea"})
        assert shop.catalog.tools["drop_sync"].thread_bound
        assert text(await client.call_tool("drop_sync", {"handle": cart})) == "dropped"
        assert shop.ledger.closed == [cart]
        assert unknown(await client.call_tool("add_item", {"cart": cart, "item": "jam"}))


@ERAS
async def test_an_idle_handle_expires_once_found_on_access(mode: str) -> None:
    clock = Clock()
    shop = Shop_(MemoryHandles(HandleLimits(idle_timeout=60), clock=clock))
    async with shop.client(mode) as client:
        cart = await mint(client)
        await client.call_tool("add_item", {"cart": cart, "item": "tea"})
        clock.now += 59
        assert not (await client.call_tool("add_item", {"cart": cart, "item": "jam"})).is_error
        clock.now += 61
        assert unknown(await client.call_tool("add_item", {"cart": cart, "item": "milk"}))
        assert shop.ledger.closed == [cart]
        assert unknown(await client.call_tool("add_item", {"cart": cart, "item": "milk"}))
    assert shop.ledger.closed == [cart]


async def test_the_sweep_finalizes_an_expired_handle_nobody_calls_again() -> None:
    """The server's lifespan sweeps every ``min(60, idle_timeout)`` seconds."""
    shop = Shop_(MemoryHandles(HandleLimits(idle_timeout=0.01)))
    async with shop.client() as client:
        cart = await mint(client)
        await client.call_tool("add_item", {"cart": cart, "item": "tea"})
        with anyio.fail_after(BOUND):
            while not shop.ledger.closed:
                await anyio.sleep(0.01)
        assert shop.ledger.closed == [cart]
        assert len(shop.store) == 0
    assert shop.ledger.closed == [cart]


@ERAS
async def test_every_open_handle_is_finalized_when_the_server_stops(mode: str) -> None:
    """A server built without a store keeps its own, run by its lifespan."""
    shop = Shop_()
    with anyio.fail_after(BOUND):
        async with mcp.Client(build_sdk_server(shop.catalog, shop.container), mode=mode) as client:
            carts = [await mint(client) for _ in range(3)]
            for cart in carts:
                await client.call_tool("add_item", {"cart": cart, "item": "tea"})
            assert shop.ledger.closed == []
    assert sorted(shop.ledger.closed) == sorted(carts)


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_mcp_test_client_keeps_handles_across_calls_until_closed(protocol: str) -> None:
    shop = Shop_()
    async with McpTestClient(shop.container, shop.catalog, protocol=protocol) as client:
        cart = (await client.tool("open_cart")).texts[0]
        await client.tool("add_item", {"cart": cart, "item": "tea"})
        added = await client.tool("add_item", {"cart": cart, "item": "jam"})
        assert added.texts == ["tea,jam"]
        assert shop.ledger.closed == []
    assert shop.ledger.closed == [cart]


async def test_a_store_shared_by_two_servers_closes_when_the_last_stops() -> None:
    shop = Shop_()
    async with shop.client(caller="ada") as ada:
        async with shop.client(caller="bob") as bob:
            await mint(bob)
        cart = await mint(ada)
        assert text(await ada.call_tool("add_item", {"cart": cart, "item": "tea"})) == "tea"
        assert len(shop.ledger.closed) == 0
    assert len(shop.ledger.closed) == 1


@ERAS
async def test_the_schema_is_a_string_and_names_no_service(mode: str) -> None:
    shop = Shop_()
    async with shop.client(mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = tools["add_item"].input_schema
    assert set(schema["properties"]) == {"cart", "item"}
    cart = schema["properties"]["cart"]
    assert cart["type"] == "string"
    assert cart["maxLength"] == 64
    assert "state handle" in cart["description"]
    assert tools["open_cart"].input_schema["properties"] == {}  # StateHandles is injected
    checkout = tools["checkout_sync"].input_schema
    assert set(checkout["properties"]) == {"cart"}


async def test_a_handle_wins_over_the_2025_session_for_its_calls() -> None:
    """``Visits`` is session-scoped: one per 2025-11-25 session for calls without a
    handle, one per handle for calls with one (a thread-bound tool here)."""
    shop = Shop_()
    async with shop.client(LEGACY) as client:
        cart = await mint(client)
        assert text(await client.call_tool("visit", {})) == "1"
        assert text(await client.call_tool("visit", {})) == "2"
        assert text(await client.call_tool("visit_cart", {"cart": cart})) == "1"
        assert text(await client.call_tool("visit_cart", {"cart": cart})) == "2"
        assert text(await client.call_tool("visit", {})) == "3"


async def test_2026_calls_without_a_handle_share_nothing_and_with_one_share_it() -> None:
    shop = Shop_()
    async with shop.client(MODERN) as client:
        cart = await mint(client)
        assert text(await client.call_tool("visit", {})) == "1"
        assert text(await client.call_tool("visit", {})) == "1"
        assert text(await client.call_tool("visit_cart", {"cart": cart})) == "1"
        assert text(await client.call_tool("visit_cart", {"cart": cart})) == "2"


async def test_an_optional_handle_field_opens_the_handle_only_when_given() -> None:
    shop = Shop_()
    async with shop.client(MODERN) as client:
        cart = await mint(client)
        assert text(await client.call_tool("visit_maybe", {})) == "1"
        assert text(await client.call_tool("visit_maybe", {"cart": None})) == "1"
        assert text(await client.call_tool("visit_maybe", {"cart": cart})) == "1"
        assert text(await client.call_tool("visit_cart", {"cart": cart})) == "2"
        assert text(await client.call_tool("visit_maybe", {"cart": cart})) == "3"
        stolen = await client.call_tool("visit_maybe", {"cart": secrets.token_urlsafe(24)})
        assert text(stolen) == "Unknown state handle in argument 'cart'"


# -- the attacker's side ----------------------------------------------------------------


@ERAS
async def test_a_stolen_handle_answers_exactly_as_an_unknown_one(mode: str) -> None:
    """Bob presents Ada's handle: byte for byte the answer to a guessed, a closed and an
    expired handle; Ada's cart is untouched, and Bob cannot close it either."""
    clock = Clock()
    shop = Shop_(MemoryHandles(HandleLimits(idle_timeout=60), clock=clock))
    async with shop.client(mode, caller="ada") as ada, shop.client(mode, caller="bob") as bob:
        cart = await mint(ada)
        await ada.call_tool("add_item", {"cart": cart, "item": "tea"})
        stolen = await bob.call_tool("add_item", {"cart": cart, "item": "nails"})
        guessed = await bob.call_tool(
            "add_item", {"cart": secrets.token_urlsafe(24), "item": "nails"}
        )
        closed_cart, old_cart = await mint(bob), await mint(bob)
        await bob.call_tool("drop", {"handle": closed_cart})
        closed = await bob.call_tool("add_item", {"cart": closed_cart, "item": "nails"})
        clock.now += 61
        expired = await bob.call_tool("add_item", {"cart": old_cart, "item": "nails"})
        answers = {a.model_dump_json() for a in (stolen, guessed, closed, expired)}
        assert len(answers) == 1, answers
        assert unknown(stolen)
        assert text(await bob.call_tool("drop", {"handle": cart})) == "dropped"
        clock.now -= 61  # Ada's cart is not idle for her next call
        kept = await ada.call_tool("add_item", {"cart": cart, "item": "jam"})
        assert text(kept) == "tea,jam"
        assert cart not in shop.ledger.closed


@ERAS
async def test_one_client_past_its_cap_cannot_exhaust_the_handles_of_others(mode: str) -> None:
    shop = Shop_(MemoryHandles(HandleLimits(max_per_client=2, max_handles=3)))
    async with (
        shop.client(mode, caller="ada") as ada,
        shop.client(mode, caller="bob") as bob,
        shop.client(mode, caller="cy") as cy,
    ):
        await mint(ada)
        await mint(ada)
        refused = await ada.call_tool("open_cart", {})
        assert refused.is_error
        assert text(refused) == f"Too many open state handles for this client: {AGAIN}"
        cart = await mint(bob)  # Ada's cap left room for Bob
        assert text(await bob.call_tool("add_item", {"cart": cart, "item": "tea"})) == "tea"
        refused = await cy.call_tool("open_cart", {})
        assert text(refused) == f"Too many open state handles for the server: {AGAIN}"
        await bob.call_tool("checkout", {"cart": cart})
        assert not (await cy.call_tool("open_cart", {})).is_error


@ERAS
async def test_a_huge_handle_is_refused_by_validation_before_any_lookup(mode: str) -> None:
    shop = Shop_()
    async with shop.client(mode) as client:
        for value in ("x" * 100_000, "not a handle!", 12, ["a"]):
            result = await client.call_tool("add_item", {"cart": value, "item": "tea"})
            assert result.is_error
            assert text(result).startswith("Invalid tool arguments"), text(result)
            assert "x" * 100 not in text(result)
        missing = await client.call_tool("add_item", {"item": "tea"})
        assert text(missing).startswith("Invalid tool arguments")
    assert shop.ledger.built == []
