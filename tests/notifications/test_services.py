"""The services themselves: the ``Notifier`` a container gets, standing it in for a test,
and the limits' own checks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable

import pytest
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged

from container import Container
from mcp_adapter import compile_server, serve_lifespan
from mcp_adapter.notifications import Notifier, SubscriptionLimits
from mcp_adapter.testing import McpTestClient
from tests.notifications.apps import NotesServer
from tests.notifications.support import client, next_event, notes_catalog
from tests.notifications.test_sessions import legacy

pytestmark = pytest.mark.anyio


def test_compiling_binds_one_notifier_per_container() -> None:
    container = Container()
    compile_server(NotesServer, container)
    notifier = container.get(Notifier)
    assert isinstance(notifier, Notifier)
    compile_server(NotesServer, container)
    assert container.get(Notifier) is notifier


class FakeNotifier(Notifier):
    """What a test puts in the Notifier's place to see what a handler announces."""

    def __init__(self) -> None:
        super().__init__()
        self.announced: list[str] = []

    def resource_updated(self, uri: str) -> Awaitable[None]:
        self.announced.append(uri)
        return super().resource_updated(uri)


class StandIn:
    """Not a Notifier at all: the server serves without publishing through it."""

    def __init__(self) -> None:
        self.announced: list[str] = []

    async def resource_updated(self, uri: str) -> None:
        self.announced.append(uri)


@pytest.mark.parametrize("fake", [FakeNotifier, StandIn])
async def test_a_test_may_stand_in_for_the_notifier(fake: type) -> None:
    stand_in = fake()
    client = McpTestClient(Container(), NotesServer, overrides={Notifier: stand_in})
    result = await client.tool("touch", {"uri": "notes://public"})
    result.assertOk()
    assert stand_in.announced == ["notes://public"]


def test_a_notifier_refuses_what_is_no_uri() -> None:
    with pytest.raises(TypeError, match="takes the resource's URI as a string"):
        Notifier().resource_updated(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["max_listeners", "max_listeners_per_client", "max_uris"])
@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_limits_are_whole_numbers_of_at_least_one(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"{field} must be a whole number of at least 1"):
        SubscriptionLimits(**{field: value})  # type: ignore[arg-type]


async def test_the_lifespan_and_background_code_resolve_the_same_notifier() -> None:
    seen: list[Notifier] = []

    class Announcing(NotesServer):
        async def lifespan(self, notifier: Notifier) -> AsyncIterator[None]:
            seen.append(notifier)
            yield

    container = Container()
    catalog = compile_server(Announcing, container)
    async with serve_lifespan(catalog, container):
        assert seen == [container.get(Notifier)]


# -- the notifier taken before any server is compiled ------------------------------------------


def test_a_container_has_one_notifier_before_and_after_compiling() -> None:
    container = Container()
    early = container.get(Notifier)
    assert container.get(Notifier) is early
    with container.scope() as scope:
        assert scope.get(Notifier) is early
    compile_server(NotesServer, container)
    assert container.get(Notifier) is early
    assert Container().get(Notifier) is not early  # one per container


async def test_a_notifier_taken_before_compiling_reaches_2026_listeners() -> None:
    """Background code holding the notifier it took before the server existed: what it
    announces while nothing serves reaches nobody (dropped, no error); once the server
    serves, its announcements reach the listeners, as a handler's do."""
    container = Container()
    early = container.get(Notifier)
    await early.prompt_list_changed()  # nothing serves: nobody to tell
    catalog = notes_catalog(container)
    async with (
        client(catalog, container) as sdk,
        sdk.listen(tools_list_changed=True, prompts_list_changed=True) as listening,
    ):
        await early.tool_list_changed()
        assert await next_event(listening) == ToolsListChanged()
        await sdk.call_tool("announce", {"kind": "prompts"})  # the usual way: a handler's
        assert await next_event(listening) == PromptsListChanged()


async def test_a_notifier_taken_before_compiling_reaches_2025_sessions() -> None:
    container = Container()
    early = container.get(Notifier)
    async with legacy(container) as (sdk, heard):
        await sdk.list_tools()  # a round trip: the session's feed (after initialized) is on
        await early.tool_list_changed()
        assert await heard.next() == ("notifications/tools/list_changed", None)
        await sdk.call_tool("announce", {"kind": "prompts"})
        assert await heard.next() == ("notifications/prompts/list_changed", None)
