"""2025-11-25: list changes and ``resources/subscribe`` on a session's own stream, through
the SDK's own client (``mode="legacy"``), in process."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp
import pytest
from mcp import MCPError, types
from mcp.server.subscriptions import InMemorySubscriptionBus

from container import Container
from mcp_adapter.notifications import Notifier, SubscriptionLimits
from tests.notifications.support import CALL_TIMEOUT, LEGACY, client, notes_catalog

pytestmark = pytest.mark.anyio


class Heard:
    """The notifications a legacy client's ``message_handler`` received, in order."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[Any](100)

    async def __call__(self, message: Any) -> None:
        if isinstance(
            message, types.ServerNotification | types.ResourceUpdatedNotification
        ) or hasattr(message, "method"):
            await self.send.send(message)

    async def next(self) -> tuple[str, str | None]:
        with anyio.fail_after(CALL_TIMEOUT):
            while True:
                message = await self.receive.receive()
                method = getattr(message, "method", "")
                if method == "notifications/message":
                    continue
                params = getattr(message, "params", None)
                return method, getattr(params, "uri", None)


@asynccontextmanager
async def legacy(
    container: Container, caller: str | None = None, **options: Any
) -> AsyncIterator[tuple[mcp.Client, Heard]]:
    heard = Heard()
    async with client(
        notes_catalog(container),
        container,
        mode=LEGACY,
        caller=caller,
        message_handler=heard,
        **options,
    ) as sdk:
        yield sdk, heard


async def subscribe(sdk: mcp.Client, *uris: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK client's own method is deprecated at 2026
        for uri in uris:
            await sdk.subscribe_resource(uri)


async def test_initialize_advertises_what_a_session_is_sent() -> None:
    async with legacy(Container()) as (sdk, _):
        capabilities = sdk.server_capabilities
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed is True
        assert capabilities.prompts is not None
        assert capabilities.prompts.list_changed is True
        assert capabilities.resources is not None
        assert capabilities.resources.list_changed is True
        assert capabilities.resources.subscribe is True
        assert capabilities.logging is not None  # a component takes ClientLogger


async def test_without_subscriptions_nothing_is_advertised() -> None:
    async with legacy(Container(), subscription_bus=False) as (sdk, _):
        capabilities = sdk.server_capabilities
        assert capabilities.tools is not None
        assert not capabilities.tools.list_changed
        assert capabilities.resources is not None
        assert not capabilities.resources.subscribe
        with pytest.raises(MCPError, match="Method not found"):
            await subscribe(sdk, "notes://public")
    async with client(notes_catalog(Container()), Container(), subscription_bus=False) as modern:
        found = (await modern.session.discover()).capabilities
        assert found.tools is not None
        assert not found.tools.list_changed
        assert found.resources is not None
        assert not found.resources.subscribe
        with pytest.raises(MCPError):
            async with modern.listen(tools_list_changed=True):
                pass


async def test_2026_discovery_advertises_listen() -> None:
    async with client(notes_catalog(Container()), Container()) as modern:
        found = (await modern.session.discover()).capabilities
        assert found.tools is not None
        assert found.tools.list_changed is True
        assert found.prompts is not None
        assert found.prompts.list_changed is True
        assert found.resources is not None
        assert found.resources.subscribe is True


async def test_list_changes_reach_every_session() -> None:
    container = Container()
    async with legacy(container) as (first, heard_first), legacy(container) as (_, heard_second):
        for kind in ("tools", "prompts", "resources"):
            await first.call_tool("announce", {"kind": kind})
        for heard in (heard_first, heard_second):
            assert [await heard.next() for _ in range(3)] == [
                ("notifications/tools/list_changed", None),
                ("notifications/prompts/list_changed", None),
                ("notifications/resources/list_changed", None),
            ]


async def test_a_session_hears_of_the_uris_it_subscribed_to_until_it_unsubscribes() -> None:
    container = Container()
    async with legacy(container) as (sdk, heard):
        await subscribe(sdk, "notes://public")
        await sdk.call_tool("touch", {"uri": "notes://elsewhere"})
        await sdk.call_tool("touch", {"uri": "notes://public"})
        assert await heard.next() == ("notifications/resources/updated", "notes://public")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await sdk.unsubscribe_resource("notes://public")
        await sdk.call_tool("touch", {"uri": "notes://public"})
        await sdk.call_tool("announce", {"kind": "tools"})
        assert await heard.next() == ("notifications/tools/list_changed", None)


async def test_a_hidden_resource_update_never_reaches_another_identity() -> None:
    container = Container()
    bus = InMemorySubscriptionBus()
    watched = ("notes://ada/diary", "notes://vault", "notes://bob/diary")
    async with (
        legacy(container, caller="ada", subscription_bus=bus) as (ada, ada_heard),
        legacy(container, caller="bob", subscription_bus=bus) as (bob, bob_heard),
    ):
        await subscribe(ada, *watched)
        await subscribe(bob, *watched)
        notifier = container.get(Notifier)
        for uri in watched:
            await notifier.resource_updated(uri)
        assert await bob_heard.next() == ("notifications/resources/updated", "notes://bob/diary")
        assert await ada_heard.next() == ("notifications/resources/updated", "notes://ada/diary")


async def test_a_session_subscribing_to_too_many_uris_is_refused() -> None:
    async with legacy(Container(), subscription_limits=SubscriptionLimits(max_uris=2)) as (sdk, _):
        await subscribe(sdk, "a://1", "a://2", "a://1")
        with pytest.raises(MCPError, match="Too many resource subscriptions on this session"):
            await subscribe(sdk, "a://3")
