"""``subscriptions/listen`` (2026-07-28) through the SDK's own client, in process.

The ordering tests rely on one fact: a listener's events arrive in the order
they were published, so an event that must not arrive is followed by one that
must, and the first to arrive tells.
"""

from __future__ import annotations

import threading

import anyio
import pytest
from mcp import MCPError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from container import Container
from mcp_adapter.notifications import Notifier, SubscriptionLimits
from tests.notifications.support import client, next_event, notes_catalog

pytestmark = pytest.mark.anyio


async def test_a_listener_gets_the_kinds_and_uris_it_asked_for_in_order() -> None:
    container = Container()
    catalog = notes_catalog(container)
    async with (
        client(catalog, container) as sdk,
        sdk.listen(tools_list_changed=True, resource_subscriptions=["notes://public"]) as listening,
    ):
        assert listening.honored.tools_list_changed is True
        assert listening.honored.resource_subscriptions == ["notes://public"]
        assert listening.honored.prompts_list_changed is None
        await sdk.call_tool("announce", {"kind": "prompts"})  # not asked for
        await sdk.call_tool("touch", {"uri": "notes://elsewhere"})  # not asked for
        await sdk.call_tool("touch", {"uri": "notes://public"})
        await sdk.call_tool("announce", {"kind": "tools"})
        assert await next_event(listening) == ResourceUpdated(uri="notes://public")
        assert await next_event(listening) == ToolsListChanged()


async def test_every_kind_reaches_a_listener_that_asked_for_it() -> None:
    container = Container()
    catalog = notes_catalog(container)
    async with (
        client(catalog, container) as sdk,
        sdk.listen(
            tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
        ) as listening,
    ):
        received: list[ServerEvent] = []
        for kind in ("tools", "prompts", "resources"):
            await sdk.call_tool("announce", {"kind": kind})
            received.append(await next_event(listening))
    assert received == [ToolsListChanged(), PromptsListChanged(), ResourcesListChanged()]


async def test_a_hidden_resource_update_never_reaches_another_identity() -> None:
    """The attacker (bob) subscribes to ada's diary and the vault; he hears only of
    what he may read himself. Ada hears of her diary."""
    container = Container()
    catalog = notes_catalog(container)
    bus = InMemorySubscriptionBus()  # one server per caller, sharing the bus
    async with (
        client(catalog, container, caller="ada", subscription_bus=bus) as ada,
        client(catalog, container, caller="bob", subscription_bus=bus) as bob,
    ):
        watched = ["notes://ada/diary", "notes://vault", "notes://public", "notes://bob/diary"]
        async with (
            ada.listen(resource_subscriptions=watched) as ada_hears,
            bob.listen(resource_subscriptions=watched) as bob_hears,
        ):
            for uri in watched:
                await ada.call_tool("touch", {"uri": uri})
            assert await next_event(bob_hears) == ResourceUpdated(uri="notes://public")
            assert await next_event(bob_hears) == ResourceUpdated(uri="notes://bob/diary")
            assert await next_event(ada_hears) == ResourceUpdated(uri="notes://ada/diary")
            assert await next_event(ada_hears) == ResourceUpdated(uri="notes://public")


async def test_visibility_is_decided_at_delivery_not_at_subscription() -> None:
    container = Container()
    catalog = notes_catalog(container)
    watched = ["notes://ada/diary", "notes://public"]
    # nobody signed in: every diary is hidden, the public note is not
    async with (
        client(catalog, container) as anonymous,
        anonymous.listen(resource_subscriptions=watched) as hears,
    ):
        notifier = container.get(Notifier)
        await notifier.resource_updated("notes://ada/diary")
        await notifier.resource_updated("notes://public")
        assert await next_event(hears) == ResourceUpdated(uri="notes://public")


async def test_the_notifier_publishes_from_a_thread_of_its_own() -> None:
    container = Container()
    catalog = notes_catalog(container)
    async with (
        client(catalog, container) as sdk,
        sdk.listen(resource_subscriptions=["notes://public"]) as hears,
    ):
        notifier = container.get(Notifier)
        done: list[object] = []
        thread = threading.Thread(
            target=lambda: done.append(notifier.resource_updated("notes://public"))
        )
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        assert len(done) == 1
        assert await next_event(hears) == ResourceUpdated(uri="notes://public")


async def test_a_client_flooding_listen_is_bounded_per_client_and_in_all() -> None:
    container = Container()
    catalog = notes_catalog(container)
    limits = SubscriptionLimits(max_listeners=3, max_listeners_per_client=2)
    bus = InMemorySubscriptionBus()
    async with (
        client(
            catalog, container, caller="ada", subscription_bus=bus, subscription_limits=limits
        ) as ada,
        client(
            catalog, container, caller="bob", subscription_bus=bus, subscription_limits=limits
        ) as bob,
    ):
        async with ada.listen(tools_list_changed=True), ada.listen(tools_list_changed=True):
            with pytest.raises(MCPError, match="this client has 2 subscription streams open"):
                async with ada.listen(tools_list_changed=True):
                    pass
            # bob is another client: he still gets one, until the server's total is reached
            async with bob.listen(tools_list_changed=True) as bobs:
                assert bobs.honored.tools_list_changed is True
        # a closed stream gives its place back
        async with ada.listen(tools_list_changed=True) as again:
            assert again.honored.tools_list_changed is True


async def test_the_server_total_is_a_limit_of_its_own() -> None:
    container = Container()
    catalog = notes_catalog(container)
    limits = SubscriptionLimits(max_listeners=1, max_listeners_per_client=5)
    async with (
        client(catalog, container, subscription_limits=limits) as sdk,
        sdk.listen(tools_list_changed=True),
    ):
        with pytest.raises(MCPError, match="the server has 1 subscription streams open"):
            async with sdk.listen(prompts_list_changed=True):
                pass


async def test_too_many_uris_in_one_listen_request_are_refused() -> None:
    container = Container()
    catalog = notes_catalog(container)
    limits = SubscriptionLimits(max_uris=2)
    async with client(catalog, container, subscription_limits=limits) as sdk:
        with pytest.raises(MCPError, match="Too many resource subscriptions: 3, at most 2"):
            async with sdk.listen(resource_subscriptions=["a://1", "a://2", "a://3"]):
                pass
        async with sdk.listen(resource_subscriptions=["a://1", "a://2"]) as fine:
            assert fine.honored.resource_subscriptions == ["a://1", "a://2"]
