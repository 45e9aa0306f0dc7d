"""Every way a tool call can reach ``StateHandles`` mints a handle that is settled: known
to every replica (and to the next call) when the call answers, and nothing left behind in
the store's record of unsettled mints (``RedisHandles._minted``).

A call reaches ``StateHandles`` through its handler, its constructor, a service of either
(scoped or transient: a session-scoped one or a singleton that takes it is a captive
dependency, refused at compile time), a visibility hook, an input resolver, or a
call-stage layer (its own, its server's, the app's). A request-stage layer cannot take it
(it runs before the call's scope). The compiled tool says once, at compile time, whether
its calls may mint (``CompiledTool.mints``); only those pay for settling."""

from __future__ import annotations

from typing import Annotated, Any

import fakeredis
import mcp
import pytest
from mcp.client.extension import advertise

from container import Container, Lifetime
from mcp_adapter import (
    CompileError,
    McpRequest,
    McpResponse,
    Resolve,
    Server,
    StateHandles,
    Tool,
    build_sdk_server,
    compile_server,
    request_stage,
)
from mcp_adapter.compile.server import with_middleware
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.stores import HandleLimits, MemoryHandles
from mcp_adapter.tasks import EXTENSION
from mcp_adapter.testing import TaskClient
from tests.handles.cart import Shop, shop_container
from tests.handles.test_handles import ERAS, text, token
from tests.handles.test_redis_handles import Replica, add

pytestmark = pytest.mark.anyio


class Box:
    """Scoped: what a layer minted, for the handler to answer with."""

    handle: str = ""


class Minted:
    """Scoped: opens a handle when it is built for a tool call (a listing asks the hooks
    too, and only a tool call can mint in Redis)."""

    def __init__(self, handles: StateHandles, request: McpRequest) -> None:
        self.handle = handles.open() if request.method == "tools/call" else ""


def minting(name: str) -> Any:
    """A call-stage layer that mints for the tool ``name``, and no other."""

    async def layer(call: Any, call_next: Any, handles: StateHandles, box: Box) -> Any:
        if call.name == name:
            box.handle = handles.open()
        return await call_next(call)

    return layer


class Layered(Tool):
    """Answers with what a layer minted: its own layer's."""

    name = "layered"
    middleware = (minting("layered"),)

    async def handle(self, box: Box) -> McpResponse:
        return McpResponse.text(box.handle)


class LayeredByServer(Layered):
    """Minted by the server's layer (``MintingShop.middleware``)."""

    name = "layered_by_server"
    middleware = ()


class LayeredByApp(Layered):
    """Minted by the app's layer (``with_middleware``, as ``http_app(middleware=...)``)."""

    name = "layered_by_app"
    middleware = ()


class ByService(Tool):
    name = "by_service"

    async def handle(self, minted: Minted) -> McpResponse:
        return McpResponse.text(minted.handle)


class ByConstructor(Tool):
    name = "by_constructor"

    def __init__(self, minted: Minted) -> None:
        self.minted = minted

    async def handle(self) -> McpResponse:
        return McpResponse.text(self.minted.handle)


class ByHook(Tool):
    name = "by_hook"

    async def authorize(self, minted: Minted) -> bool:
        return minted is not None

    async def handle(self, minted: Minted) -> McpResponse:
        return McpResponse.text(minted.handle)


def resolved_handle(handles: StateHandles) -> str:
    return handles.open()


class ByResolver(Tool):
    name = "by_resolver"

    async def handle(self, handle: Annotated[str, Resolve(resolved_handle)]) -> McpResponse:
        return McpResponse.text(handle)


class Plain(Tool):
    """Reaches no ``StateHandles``: its calls settle nothing."""

    name = "plain"

    async def handle(self, box: Box) -> McpResponse:
        return McpResponse.text(box.handle or "none")


class HookAtTaskStart(Tool):
    """A task tool whose ``authorize`` mints: it is asked when the task starts, in the
    ``tools/call`` request, before anything is enqueued."""

    name = "hook_at_task_start"
    task_support = "optional"

    async def authorize(self, minted: Minted) -> bool:
        return minted is not None

    async def handle(self) -> McpResponse:
        return McpResponse.text("started")


class RefusedAtTaskStart(HookAtTaskStart):
    """Its ``authorize`` mints, then refuses: the task never starts."""

    name = "refused_at_task_start"

    async def authorize(self, minted: Minted) -> bool:
        return minted is None


class Kept:
    """A singleton a handler wrongly keeps its call's ``StateHandles`` in."""

    handles: StateHandles | None = None


class KeepHandles(Tool):
    name = "keep_handles"

    async def handle(self, handles: StateHandles, kept: Kept) -> McpResponse:
        kept.handles = handles
        return McpResponse.text("kept")


class OpenKept(Tool):
    """Mints through what another call kept: nothing in this call takes ``StateHandles``."""

    name = "open_kept"

    async def handle(self, kept: Kept) -> McpResponse:
        assert kept.handles is not None
        return McpResponse.text(kept.handles.open())


class MintingShop(Shop):
    tools = (
        *Shop.tools,
        Layered,
        LayeredByServer,
        LayeredByApp,
        ByService,
        ByConstructor,
        ByHook,
        ByResolver,
        Plain,
        HookAtTaskStart,
        RefusedAtTaskStart,
    )
    middleware = (minting("layered_by_server"),)
    tasks = Tasks()


MINTING = [
    "layered",
    "layered_by_server",
    "layered_by_app",
    "by_service",
    "by_constructor",
    "by_hook",
    "by_resolver",
]


def bound(container: Container) -> Container:
    container.bind(Box, Box, Lifetime.SCOPED)
    container.bind(Minted, Minted, Lifetime.SCOPED)
    container.instance(Kept, Kept())
    return container


def served(container: Container) -> Catalog:
    """The shop as an app serves it: with the app's own (call-stage) layer too."""
    return with_middleware(
        compile_server(MintingShop, container), [minting("layered_by_app")], container
    )


class Escaping(Shop):
    """No layer around every tool: ``open_kept`` does not mint, as far as compiling knows."""

    tools = (*Shop.tools, KeepHandles, OpenKept)


def replica(server: fakeredis.FakeServer, limits: HandleLimits | None = None) -> Replica:
    found = Replica(server, limits, app=MintingShop)
    found.catalog = served(bound(found.container))
    return found


class Paths(Server):
    """Each path alone: no layer around every tool."""

    name = "paths"
    tools = (Layered, ByService, ByConstructor, ByHook, ByResolver, Plain, HookAtTaskStart)
    tasks = Tasks()


class LayeredPaths(Paths):
    middleware = (minting("plain"),)


def test_a_tool_mints_when_anything_its_calls_resolve_can_take_state_handles() -> None:
    container = bound(Container())
    alone = compile_server(Paths, container)
    assert {name for name, tool in alone.tools.items() if tool.mints} == {
        "layered",
        "by_service",
        "by_constructor",
        "by_hook",
        "by_resolver",
        "hook_at_task_start",
    }
    assert not alone.tools["plain"].mints
    assert (
        with_middleware(alone, [minting("plain")], container).tools["plain"].mints
    )  # the app's layer
    assert compile_server(LayeredPaths, container).tools["plain"].mints  # the server's layer


@pytest.mark.parametrize("lifetime", [Lifetime.SESSION, Lifetime.SINGLETON])
def test_a_longer_lived_service_cannot_take_state_handles(lifetime: Lifetime) -> None:
    """So no service outlives the call whose handles it would mint."""
    container = shop_container()
    container.bind(Box, Box, Lifetime.SCOPED)
    container.bind(Minted, Minted, lifetime)
    with pytest.raises(CompileError, match=r"captive dependency.*StateHandles"):
        compile_server(MintingShop, container)


def test_a_request_stage_layer_cannot_take_state_handles() -> None:
    """It runs before the call's scope opens, outside any call that could settle."""

    @request_stage
    async def early(call: Any, call_next: Any, handles: StateHandles) -> Any:
        return await call_next(call)

    class Early(Paths):
        middleware = (early,)

    with pytest.raises(CompileError, match="StateHandles is a context value of the call's"):
        compile_server(Early, bound(Container()))


@ERAS
@pytest.mark.parametrize("name", MINTING)
async def test_a_handle_minted_anywhere_in_a_call_is_known_on_every_replica(
    name: str, mode: str
) -> None:
    server = fakeredis.FakeServer()
    one, two = replica(server), replica(server)
    async with one.client(mode=mode) as first, two.client(mode=mode) as second:
        minted = await first.call_tool(name, {})
        assert not minted.is_error, minted
        cart = text(minted)
        assert text(await add(first, cart, "tea")) == "tea"  # known here ...
        assert text(await add(second, cart, "jam")) == "jam"  # ... and on the other
        assert text(await first.call_tool("plain", {})) == "none"
        assert len(one.store._minted) == len(two.store._minted) == 0


async def test_a_hook_asked_when_a_task_starts_settles_what_it_minted() -> None:
    one = replica(fakeredis.FakeServer())
    async with one.client(extensions=[advertise(EXTENSION)]) as client:
        tasks = TaskClient(client)
        created = await tasks.call("hook_at_task_start")
        assert created["resultType"] == "task"
        done = await tasks.until(created["taskId"])
        assert done["result"]["content"][0]["text"] == "started"
        assert len(one.store._minted) == 0
        assert len(one.store) == 2  # the hook minted when the task started, and in its body
        assert all(record.known for record in one.store._records.values())
        assert len(await one.redis.zrange("mcp_adapter:shop:handles:all", 0, -1)) == 2


async def test_a_task_whose_start_minted_past_the_cap_never_starts() -> None:
    one = replica(fakeredis.FakeServer(), HandleLimits(max_per_client=1))
    async with one.client(extensions=[advertise(EXTENSION)]) as client:
        tasks = TaskClient(client)
        assert not (await client.call_tool("open_cart", {})).is_error
        answer = await tasks.call("hook_at_task_start")
        assert answer.get("resultType") != "task"
        assert answer["isError"] is True
        assert "Too many open state handles for this client" in answer["content"][0]["text"]
        assert len(one.store._minted) == 0
        assert len(one.store) == 1  # the refused one is dropped


async def test_a_task_refused_at_its_start_drops_what_its_hooks_minted() -> None:
    one = replica(fakeredis.FakeServer())
    async with one.client(extensions=[advertise(EXTENSION)]) as client:
        with pytest.raises(mcp.MCPError):
            await TaskClient(client).call("refused_at_task_start")
        assert len(one.store._minted) == 0
        assert len(one.store) == 0


async def test_state_handles_kept_past_their_call_cannot_mint_in_redis(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The one path no compile-time check finds: it fails loudly, and leaves nothing."""
    one = Replica(fakeredis.FakeServer(), app=Escaping)
    one.catalog = compile_server(Escaping, bound(one.container))
    assert not one.catalog.tools["open_kept"].mints
    async with one.client() as client:
        assert text(await client.call_tool("keep_handles", {})) == "kept"
        answer = await client.call_tool("open_kept", {})
        assert answer.is_error
        assert text(answer).startswith("Tool execution failed")
        assert len(one.store._minted) == 0
        assert len(one.store) == 0
    assert "StateHandles.open() was called outside the tool call it was given to" in caplog.text


@pytest.mark.parametrize("name", MINTING)
async def test_the_memory_store_keeps_a_handle_minted_anywhere_in_a_call(name: str) -> None:
    container = bound(shop_container())
    store = MemoryHandles()
    sdk = build_sdk_server(served(container), container, caller=token("ada"), handles=store)
    async with store.running(), mcp.Client(sdk, cache=None) as client:
        minted = await client.call_tool(name, {})
        assert not minted.is_error, minted
        assert text(await add(client, text(minted), "tea")) == "tea"
