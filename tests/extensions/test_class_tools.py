"""Extensions extending the class tools of a ``Server`` declaration by name.

A ``ToolExtension`` (or ``@tool_middleware``) naming a class tool applies to it
as to a contributed tool: amendments change its ``tools/list`` entry, middleware
(with injected parameters, folded into the tool's handler plan) runs around its
``handle``, seeing the validated payload's fields as ``call.arguments``;
arguments middleware changes are re-validated into the payload model. A class
tool cannot be replaced; one nobody extends is served exactly as compiled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from mcp.server.caching import CacheHint
from mcp.types import ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from container import Container
from mcp_adapter import (
    CompileError,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    PluginManifest,
    Server,
    Tool,
    ToolSpec,
    tool,
)
from mcp_adapter.compile.server import compile_server
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.extensions import Call, Next, ToolExtension, tool_middleware
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS, SDK_MODES, sdk_client, signed_in
from tests.extensions.journal import Journal, Session, journal_container

pytestmark = pytest.mark.anyio


class LaunchInput(Schema):
    sandbox_name: str
    variant: str = "eval"
    cpus: int = 1


class LaunchOutput(Schema):
    sandbox: str
    variant: str
    cpus: int
    session: int


class LaunchTool(Tool[LaunchInput, LaunchOutput]):
    """Launch a sandbox."""

    name = "launch"
    title = "Launch"
    meta: ClassVar[Mapping[str, Any]] = {"owner": "platform"}
    cache = CacheHint(ttl_ms=0)

    async def handle(self, payload: LaunchInput, session: Session) -> McpResponse:
        session.journal.events.append(f"handle {session.number} {payload.variant}")
        return McpResponse.structured(
            LaunchOutput(
                sandbox=payload.sandbox_name,
                variant=payload.variant,
                cpus=payload.cpus,
                session=session.number,
            )
        )


class SyncEchoTool(Tool[LaunchInput]):
    """A sync handle: it runs in a worker thread at the end of the chain."""

    name = "sync_echo"

    def handle(self, payload: LaunchInput) -> McpResponse:
        return McpResponse.text(f"{payload.sandbox_name}/{payload.variant}/{payload.cpus}")


class PingTool(Tool):
    """Answer pong."""

    name = "ping"

    async def handle(self) -> McpResponse:
        return McpResponse.text("pong")


class Demo(Server):
    name = "Demo"
    version = "2.0.0"
    tools = (LaunchTool, SyncEchoTool, PingTool)


class Stack(McpExtension):
    """Contributes the ToolExtensions it is given."""

    def __init__(self, name: str, *extensions: ToolExtension) -> None:
        self.name = name
        self.extensions = list(extensions)

    def manifest(self) -> PluginManifest:
        return PluginManifest(name=self.name, version="1.0.0")

    def tool_extensions(self) -> list[ToolExtension]:
        return self.extensions


class Sandboxes(McpExtension):
    @tool()
    def stop_sandbox(self, sandbox_name: str) -> str:
        """Stop a sandbox."""
        return f"stopped {sandbox_name}"


def compile_with(*extensions: McpExtension, journal: Journal | None = None) -> Catalog:
    return Platform(list(extensions), server=Demo).compile(journal_container(journal or Journal()))


def compile_problems(*extensions: McpExtension) -> str:
    with pytest.raises(CompileError) as caught:
        compile_with(*extensions)
    return str(caught.value)


# -- amendments --------------------------------------------------------------------------------

AMENDED = ToolExtension(
    "launch",
    description="Launch a sandbox (audited).",
    title="Launch (audited)",
    annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False),
    meta={"audit": True},
)


@pytest.mark.parametrize("era", ERAS)
async def test_amendments_are_what_tools_list_says_in_both_eras(era: str) -> None:
    catalog = compile_with(Stack("audit", AMENDED))
    client = McpTestClient(journal_container(Journal()), catalog, protocol=era)  # type: ignore[arg-type]
    listed = {entry["name"]: entry for entry in (await client.list_tools()).result["tools"]}
    launch = listed["launch"]
    assert launch["description"] == "Launch a sandbox (audited)."
    assert launch["title"] == "Launch (audited)"
    assert launch["annotations"] == {"destructiveHint": False, "idempotentHint": False}
    # merged over the class's own meta
    assert launch["_meta"] == {"owner": "platform", "audit": True}
    # what is not amended stays the class's
    assert set(launch["inputSchema"]["properties"]) == {"sandbox_name", "variant", "cpus"}
    assert launch["outputSchema"] == catalog.tools["launch"].modern.output_schema
    assert listed["ping"]["description"] == "Answer pong."


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_lists_the_amended_class_tool(mode: str) -> None:
    catalog = compile_with(Stack("audit", AMENDED))
    async with sdk_client(catalog, journal_container(Journal()), mode) as client:
        listed = {entry.name: entry for entry in (await client.list_tools()).tools}
        assert listed["launch"].description == "Launch a sandbox (audited)."
        assert listed["launch"].title == "Launch (audited)"
        assert listed["launch"].meta == {"owner": "platform", "audit": True}
        result = await client.call_tool("launch", {"sandbox_name": "a"})
        assert result.structured_content == {
            "sandbox": "a",
            "variant": "eval",
            "cpus": 1,
            "session": 1,
        }


def test_amendments_alone_leave_the_handler_plan_untouched() -> None:
    catalog = compile_with(Stack("audit", AMENDED))
    launch = catalog.tools["launch"]
    assert launch.handler.function is None
    assert launch.handler.payload == "payload"
    assert launch.cls is LaunchTool


# -- middleware --------------------------------------------------------------------------------


class Audit(McpExtension):
    """``@tool_middleware`` on a class tool, with the scoped service and the request."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], int, str]] = []

    def manifest(self) -> PluginManifest:
        return PluginManifest(name="audit", version="1.0.0")

    @tool_middleware("launch", meta={"audit": True})
    async def audit(
        self, call: Call, call_next: Next, session: Session, request: McpRequest
    ) -> Any:
        session.journal.events.append(f"audit {session.number}")
        self.seen.append((call.name, dict(call.arguments), session.number, request.method))
        if call.arguments["variant"] == "prod":
            return McpResponse.error("The prod variant cannot be launched from a session.")
        return await call_next(call)


@pytest.mark.parametrize("era", ERAS)
async def test_middleware_with_a_scoped_service_shares_the_calls_instance_with_handle(
    era: str,
) -> None:
    journal = Journal()
    audit = Audit()
    container = journal_container(journal)
    catalog = Platform([audit], server=Demo).compile(container)
    client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
    first = await client.tool("launch", {"sandbox_name": "a"})
    first.assertOk().assertStructured({"sandbox": "a", "variant": "eval", "cpus": 1, "session": 1})
    refused = await client.tool("launch", {"sandbox_name": "b", "variant": "prod"})
    refused.assertError("prod variant")
    assert journal.events == [
        "open 1",
        "audit 1",
        "handle 1 eval",
        "close 1",
        "open 2",
        "audit 2",
        "close 2",
    ]
    # the validated payload's fields, defaults included; the service is not an argument
    assert audit.seen == [
        ("launch", {"sandbox_name": "a", "variant": "eval", "cpus": 1}, 1, "tools/call"),
        ("launch", {"sandbox_name": "b", "variant": "prod", "cpus": 1}, 2, "tools/call"),
    ]
    for entry in (catalog.tools["launch"].modern, catalog.tools["launch"].legacy):
        assert set(entry.input_schema["properties"]) == {"sandbox_name", "variant", "cpus"}
        assert entry.meta == {"owner": "platform", "audit": True}
    sent = await client.tool("launch", {"sandbox_name": "c", "session": 1})
    sent.assertError("Invalid tool arguments")  # an injected name is never an argument
    assert journal.events[-1] == "close 2"  # nothing ran for it


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_sees_the_middleware(mode: str) -> None:
    journal = Journal()
    container = journal_container(journal)
    catalog = Platform([Audit()], server=Demo).compile(container)
    async with sdk_client(catalog, container, mode) as client:
        result = await client.call_tool("launch", {"sandbox_name": "a"})
        assert result.structured_content == {
            "sandbox": "a",
            "variant": "eval",
            "cpus": 1,
            "session": 1,
        }
        refused = await client.call_tool("launch", {"sandbox_name": "b", "variant": "prod"})
        assert refused.is_error
    assert journal.events == [
        "open 1",
        "audit 1",
        "handle 1 eval",
        "close 1",
        "open 2",
        "audit 2",
        "close 2",
    ]


async def test_middleware_runs_first_registered_outermost_and_changed_arguments_are_validated() -> (
    None
):
    journal = Journal()
    order: list[str] = []

    async def outer(call: Call, call_next: Next, session: Session) -> Any:
        order.append(f"outer {session.number} {dict(call.arguments)}")
        # "4" is validated into the payload model's int, as a client's "4" would not be:
        # middleware is trusted code, its values are checked like a Python caller's
        return await call_next(call.with_arguments(variant="gpu", cpus="4"))

    async def inner(call: Call, call_next: Next) -> Any:
        order.append(f"inner {dict(call.arguments)}")
        response = await call_next(call)
        order.append("inner after")
        return response

    container = journal_container(journal)
    catalog = Platform(
        [
            Stack("outer", ToolExtension("launch", middleware=outer)),
            Stack("inner", ToolExtension("launch", middleware=inner)),
        ],
        server=Demo,
    ).compile(container)
    for era in ERAS:
        order.clear()
        client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
        result = await client.tool("launch", {"sandbox_name": "a"})
        assert result.structured["variant"] == "gpu"
        assert result.structured["cpus"] == 4
        assert order == [
            f"outer {result.structured['session']} "
            "{'sandbox_name': 'a', 'variant': 'eval', 'cpus': 1}",
            "inner {'sandbox_name': 'a', 'variant': 'gpu', 'cpus': '4'}",
            "inner after",
        ]


async def test_invalid_or_unknown_changed_arguments_fail_the_call_safely() -> None:
    async def bad_value(call: Call, call_next: Next) -> Any:
        return await call_next(call.with_arguments(cpus="many"))

    async def unknown_name(call: Call, call_next: Next) -> Any:
        return await call_next(call.with_arguments(gpu=True))

    reached: list[str] = []

    class Probe(Tool[LaunchInput]):
        name = "probe"

        async def handle(self, payload: LaunchInput) -> McpResponse:
            reached.append(payload.sandbox_name)
            return McpResponse.text("reached")

    class Probes(Server):
        tools = (Probe,)

    for layer in (bad_value, unknown_name):
        container = Container()
        platform = Platform([Stack("m", ToolExtension("probe", middleware=layer))], server=Probes)
        client = McpTestClient(container, platform.compile(container))
        failed = await client.tool("probe", {"sandbox_name": "a"})
        failed.assertError("Tool execution failed")  # middleware's error, not the client's
        assert "many" not in str(failed.message)
    assert reached == []


async def test_a_sync_handle_and_a_handle_without_a_payload() -> None:
    seen: list[dict[str, Any]] = []

    async def watch(call: Call, call_next: Next) -> Any:
        seen.append(dict(call.arguments))
        return await call_next(call.with_arguments(variant="gpu") if call.arguments else call)

    catalog = compile_with(
        Stack(
            "w",
            ToolExtension("sync_echo", middleware=watch),
            ToolExtension("ping", middleware=watch),
        )
    )
    for era in ERAS:
        client = McpTestClient(journal_container(Journal()), catalog, protocol=era)  # type: ignore[arg-type]
        assert (await client.tool("sync_echo", {"sandbox_name": "s"})).texts == ["s/gpu/1"]
        assert (await client.tool("ping", {})).texts == ["pong"]
        (await client.tool("ping", {"x": 1})).assertError("Invalid tool arguments")
    assert seen == [{"sandbox_name": "s", "variant": "eval", "cpus": 1}, {}] * 2


async def test_middleware_around_a_class_tool_and_a_contributed_one() -> None:
    calls: list[str] = []

    async def log(call: Call, call_next: Next) -> Any:
        calls.append(call.name)
        return await call_next(call)

    catalog = compile_with(
        Sandboxes(),
        Stack(
            "log",
            ToolExtension("launch", middleware=log),
            ToolExtension("stop_sandbox", middleware=log),
        ),
    )
    client = McpTestClient(journal_container(Journal()), catalog)
    (await client.tool("launch", {"sandbox_name": "a"})).assertOk()
    stopped = await client.tool("stop_sandbox", {"sandbox_name": "a"})
    assert stopped.texts == ["stopped a"]  # a str output is its own text
    assert calls == ["launch", "stop_sandbox"]


class Guarded(Tool):
    """Only for admins."""

    name = "guarded"

    def authorize(self, request: McpRequest) -> bool:
        return request.identity is not None and request.identity.subject == "ada"

    async def handle(self) -> McpResponse:
        return McpResponse.text("secret")


class GuardedServer(Server):
    tools = (Guarded,)


@pytest.mark.parametrize("era", ERAS)
async def test_the_class_tools_own_hooks_still_decide_who_sees_it(era: str) -> None:
    ran: list[str] = []

    async def log(call: Call, call_next: Next) -> Any:
        ran.append(call.name)
        return await call_next(call)

    platform = Platform(
        [Stack("log", ToolExtension("guarded", middleware=log))], server=GuardedServer
    )
    catalog = platform.compile(Container())
    client = McpTestClient(Container(), catalog, protocol=era)  # type: ignore[arg-type]
    assert (await client.list_tools()).result["tools"] == []
    refused = await client.tool("guarded", {})
    assert refused.error == {"code": -32003, "message": "Not authorized to use tool guarded"}
    assert ran == []
    with signed_in("ada"):
        assert [e["name"] for e in (await client.list_tools()).result["tools"]] == ["guarded"]
        assert (await client.tool("guarded", {})).texts == ["secret"]
    assert ran == ["guarded"]


# -- what cannot work --------------------------------------------------------------------------


def test_replacing_a_class_tool_is_refused_at_build_time() -> None:
    def launch(sandbox_name: str) -> str:
        return sandbox_name

    message = compile_problems(
        Stack("swap", ToolExtension("launch", replace=ToolSpec(name="launch", handler=launch)))
    )
    assert "swap replaces tool 'launch', a class tool of the Server declaration" in message
    assert "take it out of the declaration's tools" in message


def test_conflicting_amendments_of_a_class_tool_are_reported_and_equal_ones_are_not() -> None:
    message = compile_problems(
        Stack("a", ToolExtension("launch", description="A", meta={"k": 1, "same": 1})),
        Stack("b", ToolExtension("launch", description="B", meta={"k": 2, "same": 1})),
    )
    assert "conflicting descriptions of tool 'launch' from a, b" in message
    assert "conflicting meta 'k' of tool 'launch' from a, b" in message
    assert "'same'" not in message
    catalog = compile_with(
        Stack("a", ToolExtension("launch", title="Same")),
        Stack("b", ToolExtension("launch", title="Same")),
    )
    assert catalog.tools["launch"].modern.title == "Same"


def test_unknown_names_are_still_reported_and_name_the_class_tools() -> None:
    message = compile_problems(Sandboxes(), Stack("typo", ToolExtension("lunch", title="L")))
    assert "typo extends tool 'lunch', which no extension contributed" in message
    assert "contributed tools: stop_sandbox" in message
    assert "class tools of the Server declaration: launch, ping, sync_echo" in message


class Repository:
    """Needs a DSN nobody bound."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


def test_bad_middleware_of_a_class_tool_is_reported_with_its_path() -> None:
    async def wants_a_repository(call: Call, call_next: Next, repo: Repository) -> Any:
        return await call_next(call)

    def not_async(call: Call, call_next: Next) -> Any:
        return None

    async def no_call_next(call: Call) -> Any:
        return None

    message = compile_problems(
        Stack("a", ToolExtension("launch", middleware=wants_a_repository)),
        Stack("b", ToolExtension("ping", middleware=not_async)),
        Stack("c", ToolExtension("sync_echo", middleware=no_call_next)),
        Stack("d", ToolExtension("launch", middleware="nope")),  # type: ignore[arg-type]
    )
    assert "path: middleware of tool 'launch' -> " in message
    assert "wants_a_repository(repo) -> Repository(dsn) -> ???" in message
    assert "of tool 'ping' is not async" in message
    assert "of tool 'sync_echo' does not take (call, call_next)" in message
    assert "the middleware 'nope' is not callable" in message


# -- class tools nobody extends ----------------------------------------------------------------


async def test_class_tools_nobody_extends_are_served_as_compiled() -> None:
    container = journal_container(Journal())
    plain = compile_server(Demo, container)

    async def log(call: Call, call_next: Next) -> Any:
        return await call_next(call)

    extended = Platform(
        [Sandboxes(), Stack("log", ToolExtension("launch", middleware=log))], server=Demo
    ).compile(container)
    async with container.scope() as scope:
        for name in ("ping", "sync_echo"):
            tool, alone = extended.tools[name], plain.tools[name]
            assert tool.modern == alone.modern
            assert tool.legacy == alone.legacy
            assert tool.handler.function is None
            assert tool.handler.slots == alone.handler.slots
            assert tool.handler.is_async is alone.handler.is_async
            assert type(await tool.instance(scope)) is tool.cls
            assert tool.middleware == ()
        launch = extended.tools["launch"]
        assert type(await launch.instance(scope)) is launch.cls  # the component itself
        assert [layer.function for layer in launch.middleware] == [log]
    assert launch.modern == plain.tools["launch"].modern  # middleware alone changes no entry


# -- payload kinds and async construction ------------------------------------------------------


class AliasedInput(Schema):
    sandbox_name: str = Field(alias="sandboxName")
    cpus: int = 1


@dataclass
class DataInput:
    sandbox_name: str
    cpus: int = 1


class DictInput(TypedDict):
    sandbox_name: str
    cpus: int


class AliasedTool(Tool[AliasedInput]):
    name = "aliased"

    async def handle(self, payload: AliasedInput) -> McpResponse:
        return McpResponse.text(f"{payload.sandbox_name} {payload.cpus!r}")


class DataTool(Tool[DataInput]):
    name = "data"

    async def handle(self, payload: DataInput) -> McpResponse:
        return McpResponse.text(f"{payload.sandbox_name} {payload.cpus!r}")


class DictTool(Tool[DictInput]):
    name = "typed_dict"

    async def handle(self, payload: DictInput) -> McpResponse:
        return McpResponse.text(f"{payload['sandbox_name']} {payload['cpus']!r}")


class Lease:
    """Built by an async factory: a tool needing it is built asynchronously."""


class LeasedTool(Tool[DataInput]):
    name = "leased"

    def __init__(self, lease: Lease) -> None:
        self.lease = lease

    async def handle(self, payload: DataInput, lease: Lease) -> McpResponse:
        return McpResponse.text(f"{payload.sandbox_name} {payload.cpus!r} {lease is self.lease}")


class Kinds(Server):
    tools = (AliasedTool, DataTool, DictTool, LeasedTool)


@pytest.mark.parametrize("name", ["aliased", "data", "typed_dict", "leased"])
async def test_every_kind_of_payload_is_seen_by_field_and_revalidated(name: str) -> None:
    seen: list[dict[str, Any]] = []

    async def double(call: Call, call_next: Next) -> Any:
        seen.append(dict(call.arguments))
        return await call_next(call.with_arguments(cpus=str(call.arguments["cpus"] * 2)))

    async def lease() -> Lease:
        return Lease()

    container = Container()
    container.scoped(Lease, lease)
    catalog = Platform([Stack("d", ToolExtension(name, middleware=double))], server=Kinds).compile(
        container
    )
    assert catalog.tools[name].build_is_async is (name == "leased")
    key = "sandboxName" if name == "aliased" else "sandbox_name"
    for era in ERAS:
        client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
        result = await client.tool(name, {key: "a", "cpus": 2})
        expected = "a 4 True" if name == "leased" else "a 4"
        assert result.texts == [expected]
    assert seen == [{"sandbox_name": "a", "cpus": 2}] * 2
