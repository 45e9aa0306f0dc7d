"""Context values given by middleware: the multi-tenant helpdesk on SQLite
(``examples/helpdesk``), whose request-stage layer gives each call its ``Tenant``.

Two tenants share one database and never see each other's rows, whatever they send;
the tenant reaches the tool's constructor, its hooks and every service, on the worker
thread a thread-bound call runs on; what is wrong is a compile problem with its path,
or an incident.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from examples.helpdesk.server import HelpdeskServer, Settings, Tickets, build_container
from examples.helpdesk.tenancy import Directory, Tenant, tenancy

from container import Container
from mcp_adapter import (
    CompileError,
    Identity,
    McpResponse,
    Server,
    Tool,
    compile_server,
    request_stage,
)
from mcp_adapter.extensions import Call, Next
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS

pytestmark = pytest.mark.anyio

MEMBERS = {
    "ada": Tenant("acme"),
    "carol": Tenant("acme"),
    "bob": Tenant("globex"),
    "mallory": Tenant("initech", suspended=True),
}


@pytest.fixture
def helpdesk(tmp_path: Path) -> Iterator[Container]:
    container = build_container(tmp_path / "helpdesk.db", MEMBERS)
    yield container
    container.close()


def signed_in(container: Container, subject: str | None, era: str) -> McpTestClient:
    identity = Identity(subject, "helpdesk-app") if subject is not None else None
    return McpTestClient(container, HelpdeskServer, protocol=era, identity=identity)


def titles(answer: Any) -> list[str]:
    return list(answer.assertOk().structured["titles"])


@pytest.mark.parametrize("era", ERAS)
async def test_two_tenants_never_see_each_others_rows(helpdesk: Container, era: str) -> None:
    ada, carol, bob = (signed_in(helpdesk, who, era) for who in ("ada", "carol", "bob"))
    (await ada.tool("open-ticket", {"title": "printer jammed"})).assertTextContains("#1")
    (await bob.tool("open-ticket", {"title": "vpn down"})).assertTextContains("#2")
    (await carol.tool("open-ticket", {"title": "coffee"})).assertTextContains("#3")
    assert titles(await ada.tool("list-tickets")) == ["printer jammed", "coffee"]
    assert titles(await bob.tool("list-tickets")) == ["vpn down"]
    (await ada.read_resource("tickets://2")).assertError("Resource not found")  # bob's
    (await bob.read_resource("tickets://1")).assertError("Resource not found")  # ada's
    (await carol.read_resource("tickets://1")).assertOk().assertTextContains("printer jammed")


@pytest.mark.parametrize("era", ERAS)
async def test_nothing_a_client_sends_chooses_the_tenant(helpdesk: Container, era: str) -> None:
    bob = signed_in(helpdesk, "bob", era)
    (await signed_in(helpdesk, "ada", era).tool("open-ticket", {"title": "acme only"})).assertOk()
    smuggled = await bob.tool("list-tickets", {"tenant": "acme"})
    smuggled.assertError("Invalid tool arguments")  # not an argument of the tool
    sneaky = await bob.request(
        "tools/call",
        {"name": "list-tickets", "_meta": {"tenant": "acme", "Tenant": {"id": "acme"}}},
    )
    assert titles(sneaky) == []
    for subject in (None, "eve"):  # anonymous, or no helpdesk of its own
        stranger = signed_in(helpdesk, subject, era)
        (await stranger.tool("list-tickets")).assertError("Sign in as a member of a helpdesk")
        listing = await stranger.list_tools()
        assert listing.error is not None
        assert listing.error["message"] == "Sign in as a member of a helpdesk"


@pytest.mark.parametrize("era", ERAS)
async def test_the_hooks_see_the_tenant(helpdesk: Container, era: str) -> None:
    mallory = signed_in(helpdesk, "mallory", era)
    refused = await mallory.tool("open-ticket", {"title": "let me in"})
    assert refused.error is not None
    assert refused.error["code"] == -32003
    listed = [tool["name"] for tool in (await mallory.list_tools()).assertOk().result["tools"]]
    assert listed == ["list-tickets"]  # the listing's hooks get the tenant too


@pytest.mark.parametrize("era", ERAS)
async def test_concurrent_calls_of_two_tenants_each_get_their_own(
    helpdesk: Container, era: str
) -> None:
    clients = {who: signed_in(helpdesk, who, era) for who in ("ada", "bob")}

    async def open_many(who: str) -> None:
        for number in range(15):
            await clients[who].tool("open-ticket", {"title": f"{who} {number}"})

    async with anyio.create_task_group() as group:
        group.start_soon(open_many, "ada")
        group.start_soon(open_many, "bob")
    for who, client in clients.items():
        seen = titles(await client.tool("list-tickets"))
        assert sorted(seen) == sorted(f"{who} {number}" for number in range(15))


def test_the_tool_is_thread_bound_and_the_layer_does_not_change_that(helpdesk: Container) -> None:
    catalog = compile_server(HelpdeskServer, helpdesk)
    assert catalog.tools["open-ticket"].thread_bound
    assert catalog.provided == frozenset({Tenant})


# -- what is checked ------------------------------------------------------------------------


class Bare(Server):
    name = "bare"
    tools = HelpdeskServer.tools


def test_a_context_value_nobody_gives_is_a_problem_with_its_path_and_a_hint(
    helpdesk: Container,
) -> None:
    with pytest.raises(CompileError) as raised:
        compile_server(Bare, helpdesk)
    first = raised.value.problems[0]
    assert first.path == (
        "tool 'open-ticket'",
        "OpenTicket.__init__",
        "OpenTicket",
        "Tickets",
        "Tenant",
    )
    assert "Tenant is a context value, and nothing gives it" in first.message
    assert "@request_stage(provides=[Tenant])" in first.hint
    paths = [problem.path for problem in raised.value.problems]
    assert ("tool 'open-ticket'", "OpenTicket.authorize(tenant)", "Tenant") in paths


class Forgetful:
    """A layer that says it gives the tenant and does not."""

    stage = "request"
    provides = (Tenant,)

    async def __call__(self, call: Call, call_next: Next) -> Any:
        return await call_next(call)


@pytest.mark.parametrize("era", ERAS)
async def test_a_layer_that_declared_a_value_and_did_not_give_it_fails_the_call(
    helpdesk: Container, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Forgets(Server):
        name = "forgets"
        tools = HelpdeskServer.tools
        middleware: ClassVar = (Forgetful(),)

    mcp = McpTestClient(helpdesk, Forgets, protocol=era, identity=Identity("ada", "x"))
    failed = await mcp.tool("list-tickets")
    failed.assertError("Tool execution failed (incident ")
    assert failed.result is not None
    incident = failed.result["_meta"]["incident"]
    (logged,) = [r for r in caplog.records if incident in r.getMessage()]
    assert "declares it provides Tenant" in str(logged.exc_info[1] if logged.exc_info else "")


def test_a_provided_value_must_be_a_declared_context_value() -> None:
    class Region:
        pass

    @request_stage(provides=[Region, Identity])
    async def regional(call: Call, call_next: Next) -> Any:
        return await call_next(call)

    class Regional(Server):
        name = "regional"
        middleware: ClassVar = (regional,)

    with pytest.raises(CompileError) as raised:
        compile_server(Regional, Container())
    messages = [problem.message for problem in raised.value.problems]
    assert any("Identity is given by the adapter" in message for message in messages)
    assert any("does not declare a context value" in message for message in messages)
    assert any("container.context(" in problem.hint for problem in raised.value.problems)


def test_only_a_request_stage_layer_of_the_server_gives_values(helpdesk: Container) -> None:
    @request_stage(provides=[Tenant])
    async def from_the_app(call: Call, call_next: Next) -> Any:
        return await call_next(call.with_context({Tenant: Tenant("acme")}))

    async def at_the_call_stage(call: Call, call_next: Next) -> Any:
        return await call_next(call.with_context({Tenant: Tenant("acme")}))

    at_the_call_stage.provides = (Tenant,)  # type: ignore[attr-defined]

    from mcp_adapter.compile.server import with_middleware

    catalog = compile_server(HelpdeskServer, helpdesk)
    with pytest.raises(CompileError, match="a layer of the app cannot give context values"):
        with_middleware(catalog, [from_the_app], helpdesk)

    class CallStage(Server):
        name = "call-stage"
        middleware: ClassVar = (at_the_call_stage,)

    with pytest.raises(CompileError, match="only a request-stage layer gives context values"):
        compile_server(CallStage, helpdesk)


@pytest.mark.parametrize("era", ERAS)
async def test_with_context_at_the_call_stage_fails_the_call(era: str) -> None:
    async def too_late(call: Call, call_next: Next) -> Any:
        return await call_next(call.with_context({Tenant: Tenant("acme")}))

    class Late(Tool):
        middleware: ClassVar = (too_late,)

        async def handle(self) -> McpResponse:
            return McpResponse.text("never")

    class LateServer(Server):
        name = "late"
        tools = (Late,)

    mcp = McpTestClient(Container(), LateServer, protocol=era)
    (await mcp.tool("late")).assertError("Tool execution failed (incident ")


def test_the_settings_of_the_rate_limit_come_from_the_container(tmp_path: Path) -> None:
    first = build_container(tmp_path / "a.db", MEMBERS, Settings(calls_per_minute=2))
    second = build_container(tmp_path / "b.db", MEMBERS)
    limits = [
        layer.function
        for container in (first, second)
        for layer in compile_server(HelpdeskServer, container).request_layers
        if type(layer.function).__name__ == "RateLimit"
    ]
    assert [limit.rate.calls for limit in limits] == [2, 60]  # type: ignore[attr-defined]
    assert first.get(Directory) is not second.get(Directory)
    assert Tickets in (first.binding(Tickets).key,)  # type: ignore[union-attr]
    assert tenancy.provides == frozenset({Tenant})  # type: ignore[attr-defined]
