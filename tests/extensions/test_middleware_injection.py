"""Middleware with injected parameters: ``async def m(call, call_next, audit: Audit, ...)``.

The parameters after ``call`` and ``call_next`` are injected like a handler's
(services from the call's scope, ``McpRequest``, the HTTP ``Request``), classified
when the server is compiled, resolved in the one scope of the call (the handler
sees the same scoped instances), and never part of the tool's ``inputSchema``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    CompileError,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    PluginManifest,
    http_app,
    tool,
)
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.extensions import Call, Next, ToolExtension, tool_middleware
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client
from tests.extensions.journal import Journal, Session, journal_container
from tests.serving.clients import connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio


class Quota:
    """A scoped service built by an async factory."""

    def __init__(self, left: int) -> None:
        self.left = left


class Lease:
    """A scoped service from an async generator (closed after the call)."""


def container_for(journal: Journal) -> Container:
    async def quota() -> Quota:
        return Quota(3)

    container = journal_container(journal)
    container.scoped(Quota, quota)
    return container


class Sandboxes(McpExtension):
    def manifest(self) -> PluginManifest:
        return PluginManifest(name="sandboxes", version="1.0.0")

    @tool()
    def launch_sandbox(self, sandbox_name: str, session: Session, variant: str = "eval") -> dict:
        """Launch a sandbox (sync: it runs in a worker thread at the end of the chain)."""
        session.journal.events.append(f"handle {session.number}")
        return {"sandbox": sandbox_name, "variant": variant, "session": session.number}


class Audit(McpExtension):
    """Middleware as a method, with a scoped service, an async one and the request."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str, int]] = []

    def manifest(self) -> PluginManifest:
        return PluginManifest(name="audit", version="1.0.0")

    @tool_middleware("launch_sandbox")
    async def audit(
        self,
        call: Call,
        call_next: Next,
        session: Session,
        request: McpRequest,
        quota: Quota,
        label: str = "audit",
    ) -> Any:
        session.journal.events.append(f"{label} {session.number}")
        self.seen.append((session.number, request.method, quota.left))
        if call.arguments["variant"] == "prod":
            return McpResponse.error("The prod variant cannot be launched from a session.")
        value = await call_next(call)
        assert value["session"] == session.number  # the handler got the same instance
        return {**value, "audited": True}


def compile_with(*extensions: McpExtension, journal: Journal) -> tuple[Container, Catalog]:
    container = container_for(journal)
    return container, Platform(list(extensions)).compile(container)


async def test_the_injected_names_are_not_in_the_input_schema_and_cannot_be_sent() -> None:
    journal = Journal()
    container, catalog = compile_with(Sandboxes(), Audit(), journal=journal)
    for entry in (catalog.tools["launch_sandbox"].modern, catalog.tools["launch_sandbox"].legacy):
        assert set(entry.input_schema["properties"]) == {"sandbox_name", "variant"}
        assert entry.input_schema["additionalProperties"] is False
    for era in ERAS:
        client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
        for name in ("quota", "label", "request", "middleware[0].quota"):
            sent = await client.tool("launch_sandbox", {"sandbox_name": "a", name: 1})
            sent.assertError("Invalid tool arguments")
    assert journal.events == []  # nothing ran, no scope did anything


@pytest.mark.parametrize("era", ERAS)
async def test_middleware_and_handler_share_the_calls_scope_through_the_host(era: str) -> None:
    journal = Journal()
    audit = Audit()
    container, catalog = compile_with(Sandboxes(), audit, journal=journal)
    client = McpTestClient(container, catalog, protocol=era)  # type: ignore[arg-type]
    first = await client.tool("launch_sandbox", {"sandbox_name": "a"})
    first.assertOk().assertStructured(
        {"sandbox": "a", "variant": "eval", "session": 1, "audited": True}
    )
    second = await client.tool("launch_sandbox", {"sandbox_name": "b"})
    assert second.structured["session"] == 2
    refused = await client.tool("launch_sandbox", {"sandbox_name": "c", "variant": "prod"})
    refused.assertError("prod variant")
    assert journal.events == [
        "open 1",
        "audit 1",
        "handle 1",
        "close 1",
        "open 2",
        "audit 2",
        "handle 2",
        "close 2",
        "open 3",
        "audit 3",
        "close 3",
    ]
    assert audit.seen == [(1, "tools/call", 3), (2, "tools/call", 3), (3, "tools/call", 3)]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_sees_the_same(mode: str) -> None:
    journal = Journal()
    audit = Audit()
    container, catalog = compile_with(Sandboxes(), audit, journal=journal)
    async with sdk_client(catalog, container, mode) as client:
        [listed] = (await client.list_tools()).tools
        assert set(listed.input_schema["properties"]) == {"sandbox_name", "variant"}
        result = await client.call_tool("launch_sandbox", {"sandbox_name": "a"})
        assert result.structured_content == {
            "sandbox": "a",
            "variant": "eval",
            "session": 1,
            "audited": True,
        }
        refused = await client.call_tool("launch_sandbox", {"sandbox_name": "b", "quota": 9})
        assert refused.is_error
        assert refused.content[0].text.startswith("Invalid tool arguments")  # type: ignore[union-attr]
    assert journal.events == ["open 1", "audit 1", "handle 1", "close 1"]
    assert audit.seen == [(1, "tools/call", 3)]


class Stack(McpExtension):
    """Contributes the ToolExtensions it is given."""

    def __init__(self, name: str, *extensions: ToolExtension) -> None:
        self.name = name
        self.extensions = list(extensions)

    def manifest(self) -> PluginManifest:
        return PluginManifest(name=self.name, version="1.0.0")

    def tool_extensions(self) -> list[ToolExtension]:
        return self.extensions


async def test_each_layer_gets_its_own_parameters_outermost_first() -> None:
    journal = Journal()

    async def outer(call: Call, call_next: Next, session: Session) -> Any:
        session.journal.events.append(f"outer {session.number}")
        return await call_next(call.with_arguments(variant="gpu"))

    async def middle(call: Call, call_next: Next) -> Any:  # nothing injected
        journal.events.append("middle")
        return await call_next(call)

    async def inner(call: Call, call_next: Next, journal: Journal, session: Session) -> Any:
        journal.events.append(f"inner {session.number} sees {call.arguments['variant']}")
        return await call_next(call)

    container, catalog = compile_with(
        Sandboxes(),
        Stack("outer", ToolExtension("launch_sandbox", middleware=outer)),
        Stack("middle", ToolExtension("launch_sandbox", middleware=middle)),
        Stack("inner", ToolExtension("launch_sandbox", middleware=inner)),
        journal=journal,
    )
    result = await McpTestClient(container, catalog).tool("launch_sandbox", {"sandbox_name": "a"})
    result.assertOk().assertStructured({"sandbox": "a", "variant": "gpu", "session": 1})
    assert journal.events == [
        "open 1",
        "outer 1",
        "middle",
        "inner 1 sees gpu",
        "handle 1",
        "close 1",
    ]


async def test_an_async_handler_and_a_handler_parameter_named_like_a_middlewares() -> None:
    class Quotas(McpExtension):
        @tool()
        async def spend(self, amount: int, quota: Quota) -> dict:
            quota.left -= amount
            return {"left": quota.left}

    async def check(call: Call, call_next: Next, quota: Quota) -> Any:
        if call.arguments["amount"] > quota.left:
            return McpResponse.error("Over quota.")
        value = await call_next(call)
        return {**value, "after": quota.left}  # the handler's change, on the same instance

    container, catalog = compile_with(
        Quotas(), Stack("check", ToolExtension("spend", middleware=check)), journal=Journal()
    )
    client = McpTestClient(container, catalog)
    (await client.tool("spend", {"amount": 2})).assertStructured({"left": 1, "after": 1})
    (await client.tool("spend", {"amount": 4})).assertError("Over quota.")


class Admin(McpExtension):
    @tool()
    def whoami(self) -> dict:
        """Who is calling."""
        return {}


async def test_the_http_request_is_injected_into_middleware_over_http() -> None:
    async def agent(call: Call, call_next: Next, http: Request) -> Any:
        return {**(await call_next(call)), "agent": http.headers.get("x-agent", "")}

    platform = Platform([Admin(), Stack("agents", ToolExtension("whoami", middleware=agent))])
    app = http_app(platform, Container())
    with serve_app(app) as base:
        for mode in ("auto", "legacy"):
            async with connect(f"{base}/mcp", mode, headers={"x-agent": "probe"}) as client:
                result = await client.call_tool("whoami", {})
                assert result.structured_content == {"agent": "probe"}
    # In memory there is no HTTP request: a failure like any other, logged, no details.
    catalog = platform.compile(Container())
    failed = await McpTestClient(Container(), catalog).tool("whoami", {})
    failed.assertError("Tool execution failed")


# -- compile-time problems ---------------------------------------------------------------------


class Repository:
    """Needs a DSN nobody bound."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


def problems_of(*middleware: Any) -> str:
    extensions = [
        Stack(f"m{index}", ToolExtension("launch_sandbox", middleware=layer))
        for index, layer in enumerate(middleware)
    ]
    with pytest.raises(CompileError) as caught:
        Platform([Sandboxes(), *extensions]).compile(container_for(Journal()))
    return str(caught.value)


def test_middleware_parameters_without_a_source_are_reported_at_once_with_their_path() -> None:
    async def wants_an_argument(call: Call, call_next: Next, sandbox_name: str) -> Any:
        return await call_next(call)

    async def wants_a_repository(call: Call, call_next: Next, repo: Repository) -> Any:
        return await call_next(call)

    async def unannotated(call: Call, call_next: Next, extra) -> Any:  # type: ignore[no-untyped-def]
        return await call_next(call)

    message = problems_of(wants_an_argument, wants_a_repository, unannotated)
    assert message.startswith("Cannot compile mcp-adapter: 3 problems")
    assert "parameter sandbox_name: str of " in message
    assert "wants_an_argument has no valid source" in message
    assert "path: middleware of tool 'launch_sandbox' -> " in message
    assert "wants_an_argument(sandbox_name)" in message
    # the dependency path, from the tool's middleware to what is missing
    assert "wants_a_repository(repo) -> Repository(dsn) -> ???" in message
    assert "parameter 'extra' of " in message
    assert "has no annotation and no default" in message


def test_middleware_signatures_that_cannot_be_called_are_reported() -> None:
    async def no_call_next(call: Call) -> Any:
        return None

    async def keyword_only(*, call: Call, call_next: Next) -> Any:
        return None

    async def positional_only(call: Call, call_next: Next, session: Session, /) -> Any:
        return None

    async def variadic(call: Call, call_next: Next, **services: Any) -> Any:
        return None

    message = problems_of(no_call_next, keyword_only, positional_only, variadic)
    assert message.count("does not take (call, call_next) as its first two parameters") == 2
    assert "'session' of middleware " in message
    assert "is positional-only; injected parameters are passed by name" in message
    assert "handlers cannot accept *args or **kwargs" in message
    assert "path: middleware of tool 'launch_sandbox' -> " in message


def test_a_sync_middleware_and_a_non_callable_are_reported() -> None:
    def sync(call: Call, call_next: Next, session: Session) -> Any:
        return None

    message = problems_of(sync, "not a function")
    assert "of tool 'launch_sandbox' is not async" in message
    assert "the middleware 'not a function' is not callable" in message


async def test_an_async_generator_service_is_closed_after_the_call() -> None:
    closed: list[str] = []

    async def lease() -> AsyncIterator[Lease]:
        yield Lease()
        closed.append("lease")

    seen: list[Lease] = []

    class Leased(McpExtension):
        @tool()
        async def use(self, lease: Lease) -> str:
            seen.append(lease)
            return "used"

    async def hold(call: Call, call_next: Next, lease: Lease) -> Any:
        seen.append(lease)
        return await call_next(call)

    container = Container()
    container.scoped(Lease, lease)
    platform = Platform([Leased(), Stack("hold", ToolExtension("use", middleware=hold))])
    catalog = platform.compile(container)
    assert (await McpTestClient(container, catalog).tool("use", {})).texts == ["used"]
    assert seen[0] is seen[1]
    assert closed == ["lease"]
