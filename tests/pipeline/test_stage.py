"""Middleware as one stage of the dispatcher, for every method and every declaration style.

``Server.middleware`` runs around every call (component calls, listings, completion);
a component's own ``middleware`` (``Tool``/``Resource``/``Prompt`` attribute,
``@tool(middleware=...)``) runs innermost; extensions' layers sit between. Changed
arguments are validated again into the component's input, whatever declared it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    CompileError,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    compile_server,
    http_app,
    tool,
)
from mcp_adapter.extensions import Call, Next, ToolExtension
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS
from tests.serving.clients import connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio


class Trail:
    """What the layers saw, in order (a singleton: shared by every call of a test)."""

    def __init__(self) -> None:
        self.seen: list[str] = []


class Unit:
    """A scoped service: one per call, shared by every layer and the handler."""

    def __init__(self) -> None:
        self.marks: list[str] = []


async def server_layer(call: Call, call_next: Next, trail: Trail, unit: Unit) -> Any:
    trail.seen.append(f"server {call.method} {call.name}")
    unit.marks.append("server")
    return await call_next(call)


async def own_layer(call: Call, call_next: Next, trail: Trail, unit: Unit) -> Any:
    trail.seen.append(f"own {call.method} {call.name}")
    unit.marks.append("own")
    return await call_next(call)


class CountInput(Schema):
    count: int


class CountTool(Tool[CountInput]):
    """Echo a count and what the layers marked."""

    name = "count"
    middleware: ClassVar = (own_layer,)

    async def handle(self, payload: CountInput, unit: Unit) -> McpResponse:
        return McpResponse.text(f"{payload.count} {'/'.join(unit.marks)}")


class Note(Resource):
    uri_template = "notes://{number}"

    middleware: ClassVar = (own_layer,)

    async def handle(self, number: int, unit: Unit) -> McpResponse:
        return McpResponse.text(f"note {number + 1} {'/'.join(unit.marks)}")

    async def complete(self, argument: str, value: str) -> list[str]:
        return [value + "1", value + "2"]


class Greeting(Prompt):
    arguments: ClassVar = (PromptArgument(name="who", required=True),)
    middleware: ClassVar = (own_layer,)

    async def handle(self, who: str, unit: Unit) -> McpResponse:
        return McpResponse.text(f"hello {who} {'/'.join(unit.marks)}")


class Staged(Server):
    name = "staged"
    tools = (CountTool,)
    resources = (Note,)
    prompts = (Greeting,)
    middleware: ClassVar = (server_layer,)


def staged_container() -> tuple[Container, Trail]:
    trail = Trail()
    container = Container()
    container.instance(Trail, trail)
    container.scoped(Unit)
    return container, trail


@pytest.mark.parametrize("era", ERAS)
async def test_server_layers_run_outside_the_components_own_for_every_method(era: str) -> None:
    container, trail = staged_container()
    async with McpTestClient(container, Staged, protocol=era) as client:
        (await client.tool("count", {"count": 2})).assertOk().assertTextContains("2 server/own")
        read = (await client.read_resource("notes://41")).assertOk()
        assert read.result is not None
        assert read.result["contents"][0]["text"] == "note 42 server/own"
        got = (await client.prompt("greeting", {"who": "ada"})).assertOk()
        assert got.result is not None
        assert got.result["messages"][0]["content"]["text"] == "hello ada server/own"
        (await client.list_tools()).assertOk()
        (await client.list_prompts()).assertOk()
        completed = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "notes://{number}"},
                "argument": {"name": "number", "value": "4"},
            },
        )
        assert completed.result is not None
        assert completed.result["completion"]["values"] == ["41", "42"]
    assert trail.seen == [
        "server tools/call count",
        "own tools/call count",
        "server resources/read notes://41",
        "own resources/read notes://41",
        "server prompts/get greeting",
        "own prompts/get greeting",
        "server tools/list ",
        "server prompts/list ",
        "server completion/complete note",
    ]


async def test_a_layers_changed_arguments_are_validated_again_for_every_kind() -> None:
    async def to_text(call: Call, call_next: Next) -> Any:
        key = next(iter(call.arguments))
        return await call_next(call.with_arguments(**{key: "not a number"}))

    async def to_valid(call: Call, call_next: Next) -> Any:
        key = next(iter(call.arguments))
        return await call_next(call.with_arguments(**{key: "7"}))

    for layer, answers in ((to_text, False), (to_valid, True)):

        class Changed(Staged):
            middleware: ClassVar = (layer,)

        container, _ = staged_container()
        async with McpTestClient(container, Changed) as client:
            called = await client.tool("count", {"count": 2})
            read = await client.read_resource("notes://41")
            if answers:
                called.assertOk().assertTextContains("7 own")
                assert read.result is not None
                assert read.result["contents"][0]["text"] == "note 8 own"
            else:
                called.assertError("Tool execution failed")
                read.assertError("Resource read failed (incident")


class Doubler(McpExtension):
    async def stamp(self, call: Call, call_next: Next, unit: Unit) -> Any:
        unit.marks.append("own")
        return await call_next(call)

    @tool(middleware=[stamp])
    def double(self, n: int, unit: Unit) -> str:
        """Double n."""
        return f"{n * 2} {'/'.join(unit.marks)}"


class Outer(McpExtension):
    def tool_extensions(self) -> list[ToolExtension]:
        return [ToolExtension("double", middleware=self.outer)]

    async def outer(self, call: Call, call_next: Next, unit: Unit) -> Any:
        unit.marks.append("extension")
        return await call_next(call)


@pytest.mark.parametrize("era", ERAS)
async def test_a_function_tools_own_layers_run_inside_extensions_and_the_servers(era: str) -> None:
    class Host(Server):
        name = "host"
        middleware: ClassVar = (server_layer,)

    container, trail = staged_container()
    catalog = Platform([Doubler(), Outer()], server=Host).compile(container)
    async with McpTestClient(container, catalog, protocol=era) as client:
        called = (await client.tool("double", {"n": 4})).assertOk()
        assert called.texts == ["8 server/extension/own"]
        (await client.tool("double", {"n": "x"})).assertError("Invalid tool arguments")
    assert trail.seen == ["server tools/call double"]  # invalid arguments reach no layer


async def test_a_function_tools_middleware_cannot_give_it_an_invalid_argument() -> None:
    class Breaks(McpExtension):
        def tool_extensions(self) -> list[ToolExtension]:
            return [ToolExtension("double", middleware=self.breaks)]

        async def breaks(self, call: Call, call_next: Next) -> Any:
            return await call_next(call.with_arguments(n="not a number"))

    container, _ = staged_container()
    catalog = Platform([Doubler(), Breaks()]).compile(container)
    async with McpTestClient(container, catalog) as client:
        (await client.tool("double", {"n": 4})).assertError("Tool execution failed")


class Unbound:
    """An abstract service nobody bound."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


def test_bad_server_middleware_is_a_compile_problem_with_its_path() -> None:
    def not_async(call: Call, call_next: Next) -> Any:
        return None

    async def needs(call: Call, call_next: Next, missing: Unbound, request: McpRequest) -> Any:
        return await call_next(call)

    class Bad(Server):
        name = "bad"
        middleware: ClassVar = (not_async, needs)

    with pytest.raises(CompileError) as raised:
        compile_server(Bad, Container())
    message = str(raised.value)
    assert "Bad is not async" in message
    assert "needs(missing) -> Unbound(dsn) -> ???" in message
    assert "path: middleware of server " in message


# -- toolsets of class tools ------------------------------------------------------------


class Pinned(Tool):
    """A class tool in a toolset of its own."""

    toolset = "admin"

    async def handle(self) -> McpResponse:
        return McpResponse.text("pinned")


class Plain(Tool):
    """A class tool in its server's toolset."""

    async def handle(self) -> McpResponse:
        return McpResponse.text("plain")


class Mixed(Server):
    name = "mixed"
    tools = (Pinned, Plain)


def test_class_tools_belong_to_their_servers_toolset_unless_they_name_one() -> None:
    catalog = compile_server(Mixed, Container())
    assert {name: tool.toolset for name, tool in catalog.tools.items()} == {
        "pinned": "admin",
        "plain": "mixed",
    }
    assert catalog.toolsets == {"admin", "mixed"}
    assert set(catalog.select(["admin"]).tools) == {"pinned"}
    assert set(catalog.select(["mixed"]).tools) == {"plain"}

    class Named(Mixed):
        toolset = "core"

    assert compile_server(Named, Container()).tools["plain"].toolset == "core"

    class Spaced(Server):
        name = "not a toolset name"
        tools = (Plain,)

    assert compile_server(Spaced, Container()).tools["plain"].toolset == "spaced"


def test_a_platforms_selection_keeps_or_drops_class_tools_deliberately() -> None:
    catalog = Platform([Doubler()], server=Mixed).compile(Container())
    assert catalog.toolsets == {"admin", "mixed", "doubler"}
    assert set(catalog.select(["doubler"]).tools) == {"double"}
    assert set(catalog.select(["doubler", "mixed"]).tools) == {"double", "plain"}


# -- timeouts -------------------------------------------------------------------------


class Closed:
    """Counts scopes whose finalizer ran."""

    def __init__(self) -> None:
        self.count = 0


class Held:
    """A scoped service with a finalizer."""


def held(closed: Closed) -> Iterator[Held]:
    yield Held()
    closed.count += 1


class Slow(Tool):
    timeout = 0.05

    async def handle(self, held: Held) -> McpResponse:
        import anyio

        await anyio.sleep(30)
        return McpResponse.text("never")


class SlowNote(Resource):
    uri = "notes://slow"

    async def handle(self, held: Held) -> McpResponse:
        import anyio

        await anyio.sleep(30)
        return McpResponse.text("never")


class Quick(Tool):
    async def handle(self) -> McpResponse:
        return McpResponse.text("quick")


class Limited(Server):
    name = "limited"
    tools = (Slow, Quick)
    resources = (SlowNote,)
    timeout = 0.05


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_past_its_timeout_is_cancelled_its_scope_closed_and_answered(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    closed = Closed()
    container = Container()
    container.instance(Closed, closed)
    container.scoped(Held, held)
    async with McpTestClient(container, Limited, protocol=era) as client:
        slow = (await client.tool("slow")).assertError("Tool timed out after 0.05 s (incident ")
        assert slow.result is not None
        incident = slow.result["_meta"]["incident"]
        (await client.tool("quick")).assertOk()
        read = await client.read_resource("notes://slow")
        read.assertError("Resource read failed (incident")
    assert closed.count == 2
    assert f"timed out after 0.05 s (incident {incident})" in caplog.text


def test_a_timeout_that_is_not_a_positive_number_is_a_compile_problem() -> None:
    class Never(Quick):
        timeout = -1

    class Bad(Server):
        name = "bad"
        tools = (Never,)
        timeout = "soon"  # type: ignore[assignment]

    with pytest.raises(CompileError) as raised:
        compile_server(Bad, Container())
    message = str(raised.value)
    assert "timeout must be a positive number of seconds, not -1" in message
    assert "timeout must be a positive number of seconds, not 'soon'" in message


@pytest.mark.parametrize("threads", [0, -1, 2.5, True, "4"])
def test_server_threads_that_is_not_a_positive_whole_number_is_a_compile_problem(
    threads: object,
) -> None:
    class Threaded(Server):
        name = "threaded"
        tools = (Quick,)

    Threaded.threads = threads  # type: ignore[assignment]
    with pytest.raises(CompileError) as raised:
        compile_server(Threaded, Container())
    assert "Threaded.threads" in str(raised.value)
    assert f"at least 1, not {threads!r}" in str(raised.value)


def test_server_threads_is_compiled_into_the_catalog() -> None:
    class Four(Server):
        name = "four"
        tools = (Quick,)
        threads = 4

    assert compile_server(Four, Container()).threads == 4
    assert compile_server(Limited, Container()).threads == 40


# -- middleware given by the app that serves ---------------------------------------------


async def test_http_app_middleware_runs_outside_the_servers_over_real_http() -> None:
    async def agent(call: Call, call_next: Next, http: Request, trail: Trail) -> Any:
        trail.seen.append(f"app {call.method} {http.headers.get('x-agent', '')}")
        return await call_next(call)

    container, trail = staged_container()
    app = http_app(Staged, container, middleware=[agent])
    with serve_app(app) as base:
        for mode in ("auto", "legacy"):
            async with connect(f"{base}/mcp", mode, headers={"x-agent": "probe"}) as client:
                result = await client.call_tool("count", {"count": 3})
                assert not result.is_error
    assert trail.seen[:3] == [
        "app tools/call probe",
        "server tools/call count",
        "own tools/call count",
    ]
    assert trail.seen.count("app tools/call probe") == 2


def test_bad_app_middleware_fails_before_serving() -> None:
    async def needs(call: Call, call_next: Next, missing: Unbound) -> Any:
        return await call_next(call)

    with pytest.raises(CompileError) as raised:
        http_app(Staged, Container(), middleware=[needs])
    assert "middleware of the app serving staged -> " in str(raised.value)
