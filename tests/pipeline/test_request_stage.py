"""The request stage: server-wide layers around everything the adapter does for a request.

What such a layer sees (the client's name and arguments, the protocol result or error),
where it stands among the others, what it may inject, what it sees of a question to the
client in each era, and how what it raises is answered; through the real client, in
both eras.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from mcp import MCPError, types
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    CompileError,
    Identity,
    McpRequest,
    McpResponse,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    ToolError,
    compile_server,
    http_app,
    request_stage,
)
from mcp_adapter.extensions import Call, Next
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS, SDK_MODES, sdk_client
from tests.serving.clients import connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio


class Seen:
    """What the layers saw, in order (a singleton)."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.answers: list[Any] = []
        self.trail: list[str] = []


@request_stage
async def watch(call: Call, call_next: Next, seen: Seen) -> Any:
    seen.calls.append(call)
    try:
        answer = await call_next(call)
    except MCPError as error:
        seen.answers.append(error.error.code)
        raise
    seen.answers.append(type(answer).__name__)
    return answer


class AddInput(Schema):
    a: int
    b: int


class Add(Tool[AddInput]):
    """Add two numbers."""

    async def handle(self, payload: AddInput) -> McpResponse:
        return McpResponse.text(str(payload.a + payload.b))


class Hidden(Tool):
    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


class Note(Resource):
    uri_template = "notes://{number}"

    async def handle(self, number: int) -> McpResponse:
        return McpResponse.text(f"note {number}")


class Greet(Prompt):
    arguments: ClassVar = (PromptArgument(name="who", required=True),)

    async def handle(self, who: str) -> McpResponse:
        return McpResponse.text(f"hello {who}")

    async def complete(self, argument: str, value: str) -> list[str]:
        return [value + "da"]


def served(*layers: Any) -> type[Server]:
    class Watched(Server):
        name = "watched"
        tools = (Add, Hidden)
        resources = (Note,)
        prompts = (Greet,)
        middleware: ClassVar = layers

    return Watched


def watched(*layers: Any, era: str) -> tuple[McpTestClient, Seen]:
    seen = Seen()
    container = Container()
    container.instance(Seen, seen)
    return McpTestClient(container, served(*layers), protocol=era), seen


@pytest.mark.parametrize("era", ERAS)
async def test_it_sees_every_request_as_the_client_sent_it_and_the_protocol_answer(
    era: str,
) -> None:
    mcp, seen = watched(watch, era=era)
    (await mcp.tool("add", {"a": 1, "b": 2})).assertOk()
    (await mcp.tool("add", {"a": "one", "b": [2]})).assertError("Invalid tool arguments")
    assert (await mcp.tool("nope", {"x": 1})).error is not None
    assert (await mcp.tool("hidden")).error is not None
    (await mcp.read_resource("notes://7")).assertOk()
    assert (await mcp.read_resource("elsewhere://7")).error is not None
    (await mcp.prompt("greet", {"who": "ada"})).assertOk()
    (await mcp.list_tools()).assertOk()
    completed = await mcp.request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "a"}},
    )
    assert completed.result is not None
    assert [(c.method, c.name, c.component, dict(c.arguments)) for c in seen.calls] == [
        ("tools/call", "add", "add", {"a": 1, "b": 2}),
        ("tools/call", "add", "add", {"a": "one", "b": (2,)}),  # unvalidated, frozen
        ("tools/call", "nope", None, {"x": 1}),
        ("tools/call", "hidden", "hidden", {}),
        ("resources/read", "notes://7", "notes://{number}", {}),
        ("resources/read", "elsewhere://7", None, {}),
        ("prompts/get", "greet", "greet", {"who": "ada"}),
        ("tools/list", "", "", {}),
        ("completion/complete", "greet", "greet", {"argument": "who", "value": "a"}),
    ]
    assert all(call.stage == "request" for call in seen.calls)
    not_found = types.INVALID_PARAMS if era == ERAS[0] else -32002
    assert seen.answers == [
        "CallToolResult",
        "CallToolResult",  # invalid arguments are a tool error result
        types.INVALID_PARAMS,
        types.INVALID_PARAMS,  # hidden is unknown
        "ReadResourceResult",
        not_found,
        "GetPromptResult",
        "ListToolsResult",
        "CompleteResult",
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_its_arguments_are_read_only(era: str) -> None:
    @request_stage
    async def rewrite(call: Call, call_next: Next) -> Any:
        with pytest.raises(TypeError):
            call.arguments["a"] = 10  # type: ignore[index]
        return await call_next(call.with_arguments(a=10))

    mcp, _ = watched(rewrite, era=era)
    (await mcp.tool("add", {"a": 1, "b": 2})).assertError("Tool execution failed (incident ")


async def call_layer(call: Call, call_next: Next, seen: Seen) -> Any:
    seen.trail.append(f"call {call.method} {dict(call.arguments)}")
    return await call_next(call)


@request_stage
async def request_layer(call: Call, call_next: Next, seen: Seen) -> Any:
    seen.trail.append(f"request {call.method}")
    return await call_next(call)


class OwnLayered(Tool[AddInput]):
    """Add, with a layer of its own."""

    @staticmethod
    async def own(call: Call, call_next: Next, seen: Seen) -> Any:
        seen.trail.append("own")
        return await call_next(call)

    middleware: ClassVar = (own,)

    async def handle(self, payload: AddInput) -> McpResponse:
        return McpResponse.text(str(payload.a + payload.b))


@pytest.mark.parametrize("era", ERAS)
async def test_the_request_stage_runs_first_whatever_the_order_of_declaration(era: str) -> None:
    class Mixed(Server):
        name = "mixed"
        tools = (OwnLayered,)
        middleware: ClassVar = (call_layer, request_layer)

    seen = Seen()
    container = Container()
    container.instance(Seen, seen)
    mcp = McpTestClient(container, Mixed, protocol=era)
    (await mcp.tool("own-layered", {"a": "1", "b": 2})).assertOk()
    (await mcp.tool("own-layered", {"a": "x", "b": 2})).assertError("Invalid tool arguments")
    assert seen.trail == [
        "request tools/call",
        "call tools/call {'a': 1, 'b': 2}",  # validated: "1" became 1
        "own",
        "request tools/call",  # the invalid call never reached the call stage
    ]


async def test_an_apps_request_stage_layer_is_outermost_over_real_http() -> None:
    @request_stage
    async def agent(call: Call, call_next: Next, request: McpRequest, seen: Seen) -> Any:
        http = request.http_request
        seen.trail.append(f"app {call.method} {http.headers.get('x-agent', '')}")
        return await call_next(call)

    seen = Seen()
    container = Container()
    container.instance(Seen, seen)
    app = http_app(served(call_layer, request_layer), container, middleware=[agent])
    with serve_app(app) as base:
        for mode in ("auto", "legacy"):
            async with connect(f"{base}/mcp", mode, headers={"x-agent": "probe"}) as client:
                assert not (await client.call_tool("add", {"a": 1, "b": 2})).is_error
    calls = [entry for entry in seen.trail if "tools/call" in entry]
    assert (
        calls
        == [
            "app tools/call probe",
            "request tools/call",
            "call tools/call {'a': 1, 'b': 2}",
        ]
        * 2
    )


# -- a question to the client: one request in 2025-11-25, a retried call in 2026-07-28 ---


class Confirm(Schema):
    ok: bool


class Delete(Tool):
    """Asks before it deletes."""

    async def handle(self, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("confirm")
        if answer is None:
            return McpResponse.elicit("Delete?", Confirm, key="confirm")
        return McpResponse.text(f"deleted={answer['content']['ok']}")


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_per_question_the_call_stage_runs_per_round_the_request_stage_per_request(
    mode: str,
) -> None:
    class Asking(Server):
        name = "asking"
        tools = (Delete,)
        middleware: ClassVar = (call_layer, request_layer)

    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    seen = Seen()
    container = Container()
    container.instance(Seen, seen)
    async with sdk_client(Asking, container, mode, elicitation_callback=confirm) as sdk:
        result = await sdk.call_tool("delete", {})
    assert result.content == [types.TextContent(type="text", text="deleted=True")]
    # (the SDK's client lists the tools too)
    rounds = [entry.split(" ")[0] for entry in seen.trail if "tools/call" in entry]
    if mode == "legacy":  # the adapter asks within the one request, and calls the handler again
        assert rounds == ["request", "call", "call"]
    else:  # the client retries: a second request
        assert rounds == ["request", "call", "request", "call"]


# -- what a layer may inject, and what it raises ------------------------------------------


class Pool:
    """A singleton: exists outside any request."""


class Connection:
    """A scoped service: one per call."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool


def test_it_may_inject_singletons_and_the_request_only() -> None:
    @request_stage
    async def needs_connection(call: Call, call_next: Next, connection: Connection) -> Any:
        return await call_next(call)

    @request_stage
    async def needs_identity(call: Call, call_next: Next, who: Identity) -> Any:
        return await call_next(call)

    @request_stage
    async def needs_http(call: Call, call_next: Next, http: Request) -> Any:
        return await call_next(call)

    container = Container()
    container.singleton(Pool)
    container.scoped(Connection)
    with pytest.raises(CompileError) as raised:
        compile_server(served(needs_connection, needs_identity, needs_http), container)
    where = "middleware of server served.<locals>.Watched"
    assert all(problem.path[0] == where for problem in raised.value.problems)
    found = {problem.path[-1].split(".")[-1]: problem for problem in raised.value.problems}
    scoped = found["needs_connection(connection)"]
    assert "Connection lives in a request (via Connection)" in scoped.message
    assert "before the call's scope opens" in scoped.message
    identity = found["needs_identity(who)"]
    assert "Identity is a context value of the call's scope" in identity.message
    assert "McpRequest" in identity.hint
    assert "McpRequest" in found["needs_http(http)"].hint
    assert len(found) == 3


@pytest.mark.parametrize("era", ERAS)
async def test_a_singleton_is_injected_and_the_request_is_the_callers(era: str) -> None:
    @request_stage
    async def sees(call: Call, call_next: Next, pool: Pool, request: McpRequest) -> Any:
        assert isinstance(pool, Pool)
        assert request.identity is not None
        assert request.arguments == call.arguments
        return await call_next(call)

    container = Container()
    container.singleton(Pool)
    mcp = McpTestClient(container, served(sees), protocol=era, identity=Identity("ada", "web"))
    (await mcp.tool("add", {"a": 1, "b": 2})).assertOk().assertTextContains("3")


def raising(error: BaseException) -> Any:
    @request_stage
    async def layer(call: Call, call_next: Next) -> Any:
        raise error

    return layer


@pytest.mark.parametrize("era", ERAS)
async def test_what_a_layer_raises_is_answered_as_the_method_answers_it(era: str) -> None:
    refusing, _ = watched(raising(ToolError("closed for the night")), era=era)
    (await refusing.tool("add", {"a": 1, "b": 2})).assertError("closed for the night")
    for answer in (
        await refusing.read_resource("notes://1"),
        await refusing.prompt("greet", {"who": "ada"}),
        await refusing.list_tools(),
    ):
        assert answer.error == {"code": types.INTERNAL_ERROR, "message": "closed for the night"}
    failing, _ = watched(raising(RuntimeError("the secret swordfish leaked")), era=era)
    failed = await failing.tool("add", {"a": 1, "b": 2})
    failed.assertError("Tool execution failed (incident ")
    read = await failing.read_resource("notes://1")
    assert read.error is not None
    assert read.error["message"].startswith("Resource read failed (incident ")
    assert "swordfish" not in str(failed.message) + str(read.message)


@pytest.mark.parametrize("era", ERAS)
async def test_a_layer_returning_something_else_than_a_result_fails_the_call(era: str) -> None:
    @request_stage
    async def wrong(call: Call, call_next: Next) -> Any:
        await call_next(call)
        return McpResponse.text("not a protocol result")

    mcp, _ = watched(wrong, era=era)
    (await mcp.tool("add", {"a": 1, "b": 2})).assertError("Tool execution failed (incident ")
    listing = await mcp.list_tools()
    assert listing.error is not None
    assert listing.error["message"].startswith("Listing failed (incident ")


def test_a_component_cannot_have_a_request_stage_layer() -> None:
    class Own(Tool):
        middleware: ClassVar = (request_layer,)

        async def handle(self) -> McpResponse:
            return McpResponse.text("done")

    class WithOwn(Server):
        name = "with-own"
        tools = (Own,)

    with pytest.raises(CompileError) as raised:
        compile_server(WithOwn, Container())
    (found,) = raised.value.problems
    assert found.path == ("middleware of tool 'own'", "request_layer")
    assert "runs before the component is known" in found.message
    assert "Server.middleware" in found.hint


def test_a_stage_that_is_neither_is_a_compile_problem() -> None:
    class Odd:
        stage = "handler"

        async def __call__(self, call: Call, call_next: Next) -> Any:
            return await call_next(call)

    with pytest.raises(CompileError, match="declares the stage 'handler'"):
        compile_server(served(Odd()), Container())
