"""Services reach tools from the container: constructor and ``handle()`` injection.

One container scope per call: scoped services are shared inside it, finalized
after the result is built, also on failure and cancellation.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict, model_validator
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    McpRequest,
    McpResponse,
    Server,
    Tool,
    build_sdk_server,
    compile_server,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.tools.drivers import MODERN, Driver

pytestmark = pytest.mark.anyio

events: list[Any] = []


@pytest.fixture(autouse=True)
def _forget() -> None:
    events.clear()


class Unit:
    """A scoped unit of work."""


class Repository:
    def __init__(self, unit: Unit) -> None:
        self.unit = unit


class Settings:
    """A singleton."""


class Stamp:
    """A transient."""


def _container() -> Container:
    container = Container()
    container.scoped(Unit)
    container.scoped(Repository)
    container.singleton(Settings)
    container.transient(Stamp)
    return container


class LookupInput(Schema):
    key: str


class LookupTool(Tool[LookupInput]):
    name = "lookup"

    def __init__(self, unit: Unit, settings: Settings, stamp: Stamp) -> None:
        self.unit = unit
        self.settings = settings
        self.stamp = stamp

    async def handle(
        self,
        payload: LookupInput,
        repository: Repository,
        unit: Unit,
        settings: Settings,
        stamp: Stamp,
    ) -> McpResponse:
        events.append(
            {
                "key": payload.key,
                "unit": unit,
                "constructor unit": self.unit,
                "repository unit": repository.unit,
                "settings": settings,
                "constructor settings": self.settings,
                "stamp": stamp,
                "constructor stamp": self.stamp,
            }
        )
        return McpResponse.text(payload.key)


class LookupServer(Server):
    tools = (LookupTool,)


async def test_constructor_and_handle_services_are_injected(driver: Driver) -> None:
    result = await driver.call(_container(), LookupServer, "lookup", {"key": "k"})
    result.assertOk()
    (seen,) = events
    assert seen["key"] == "k"
    assert isinstance(seen["constructor unit"], Unit)
    assert isinstance(seen["repository unit"], Unit)
    assert isinstance(seen["settings"], Settings)


async def test_scoped_services_are_shared_within_one_call(driver: Driver) -> None:
    await driver.call(_container(), LookupServer, "lookup", {"key": "k"})
    (seen,) = events
    assert seen["unit"] is seen["constructor unit"] is seen["repository unit"]
    assert seen["settings"] is seen["constructor settings"]
    assert seen["stamp"] is not seen["constructor stamp"], "transients are never shared"


async def test_scoped_services_differ_across_calls_and_singletons_do_not(
    driver: Driver,
) -> None:
    container = _container()
    catalog = compile_server(LookupServer, container)
    await driver.call(container, catalog, "lookup", {"key": "first"})
    await driver.call(container, catalog, "lookup", {"key": "second"})
    first, second = events
    assert first["unit"] is not second["unit"]
    assert first["settings"] is second["settings"]


async def test_the_tool_instance_is_built_for_each_call(driver: Driver) -> None:
    built: list[object] = []

    class CountedTool(Tool):
        def __init__(self) -> None:
            built.append(self)

        async def handle(self) -> McpResponse:
            return McpResponse.text(str(len(built)))

    class CountedServer(Server):
        tools = (CountedTool,)

    catalog = compile_server(CountedServer, Container())
    await driver.call(Container(), catalog, "counted", {})
    await driver.call(Container(), catalog, "counted", {})
    assert len(built) == 2
    assert built[0] is not built[1]


async def test_invalid_arguments_build_nothing(driver: Driver) -> None:
    result = await driver.call(_container(), LookupServer, "lookup", {"key": 1})
    result.assertError("Invalid tool arguments")
    assert events == []


class Connection:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


async def connect() -> Connection:
    await anyio.lowlevel.checkpoint()
    return Connection("db://primary")


class QueryTool(Tool):
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def handle(self, connection: Connection) -> McpResponse:
        same = connection is self.connection
        return McpResponse.text(f"{connection.dsn} shared={same}")


class QueryServer(Server):
    tools = (QueryTool,)


async def test_async_factories_are_awaited_for_constructor_and_handle() -> None:
    container = Container()
    container.scoped(Connection, connect)
    result = await McpTestClient(container, QueryServer).tool("query", {})
    result.assertOk()
    assert result.texts == ["db://primary shared=True"]


# -- a payload never replaces a service -------------------------------------------------------


class Clock:
    def now(self) -> str:
        return "service clock"


class ClockInput(Schema):
    """A payload field that happens to share the injected parameter's name."""

    clock: str


class ClockTool(Tool[ClockInput]):
    name = "clock"

    async def handle(self, payload: ClockInput, clock: Clock) -> McpResponse:
        return McpResponse.text(f"{clock.now()} / payload {payload.clock}")


class OpenInput(BaseModel):
    """Not a ``Schema``: unknown keys are allowed (and kept on the payload)."""

    model_config = ConfigDict(extra="allow")
    note: str = ""


class OpenTool(Tool[OpenInput]):
    name = "open"

    async def handle(self, payload: OpenInput, clock: Clock) -> McpResponse:
        return McpResponse.text(clock.now())


class NamesInput(Schema):
    name: str


class NamesTool(Tool[NamesInput]):
    name = "names"

    async def handle(self, payload: NamesInput, clock: Clock) -> McpResponse:
        events.append("handled")
        return McpResponse.text(clock.now())


class ClockServer(Server):
    tools = (ClockTool, OpenTool, NamesTool)


async def test_a_payload_field_named_like_a_service_does_not_replace_it(driver: Driver) -> None:
    result = await driver.call(Container(), ClockServer, "clock", {"clock": "forged"})
    result.assertOk()
    assert result.texts == ["service clock / payload forged"]


async def test_an_allowed_extra_key_named_like_a_service_does_not_replace_it(
    driver: Driver,
) -> None:
    result = await driver.call(Container(), ClockServer, "open", {"clock": "forged"})
    result.assertOk()
    assert result.texts == ["service clock"]


async def test_a_key_named_like_a_service_is_rejected_by_a_closed_contract(
    driver: Driver,
) -> None:
    result = await driver.call(Container(), ClockServer, "names", {"name": "a", "clock": "x"})
    result.assertError("Invalid tool arguments").assertTextContains("clock")
    assert events == []


async def test_injected_parameters_are_not_in_the_input_schema(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), ClockServer, "names")
    assert set(entry["inputSchema"]["properties"]) == {"name"}


# -- defaults, McpRequest and the HTTP request ----------------------------------------------


class PageTool(Tool[NamesInput]):
    name = "page"

    async def handle(self, payload: NamesInput, limit: int = 10) -> McpResponse:
        return McpResponse.text(f"{payload.name}:{limit}")


class RequestTool(Tool[NamesInput]):
    name = "request"

    async def handle(self, payload: NamesInput, request: McpRequest) -> McpResponse:
        events.append(request)
        return McpResponse.text(request.method)


class HttpOnlyTool(Tool):
    name = "http-only"

    async def handle(self, http: Request) -> McpResponse:
        return McpResponse.text(http.url.path)


class ContextServer(Server):
    name = "context"
    tools = (PageTool, RequestTool, HttpOnlyTool)


async def test_a_default_is_used_and_is_not_an_argument(driver: Driver) -> None:
    result = await driver.call(Container(), ContextServer, "page", {"name": "a"})
    assert result.texts == ["a:10"]
    rejected = await driver.call(Container(), ContextServer, "page", {"name": "a", "limit": 99})
    rejected.assertError("Invalid tool arguments").assertTextContains("limit")
    entry = await driver.tool_entry(Container(), ContextServer, "page")
    assert set(entry["inputSchema"]["properties"]) == {"name"}


async def test_mcp_request_is_an_immutable_snapshot_of_the_call(driver: Driver) -> None:
    result = await driver.call(Container(), ContextServer, "request", {"name": "Ada"})
    result.assertOk()
    (request,) = events
    assert isinstance(request, McpRequest)
    assert request.method == "tools/call"
    assert request.server_id == "context"
    assert request.transport == "memory"
    assert dict(request.arguments) == {"name": "Ada"}
    assert request.protocol_version == driver.era
    assert request.http_request is None
    with pytest.raises(TypeError):
        request.arguments["name"] = "Eve"  # type: ignore[index]
    with pytest.raises(AttributeError):
        request.method = "tools/list"  # type: ignore[misc]


async def test_the_http_request_is_unavailable_off_http(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    result = await driver.call(Container(), ContextServer, "http-only", {})
    result.assertError("Tool execution failed")
    assert "HTTP request" in caplog.text


# -- sync handlers run off the event loop ---------------------------------------------------


class WhereTool(Tool):
    name = "where-sync"

    def handle(self, unit: Unit) -> McpResponse:
        events.append(("sync", threading.get_ident(), unit))
        return McpResponse.text("sync")


class WhereAsyncTool(Tool):
    name = "where-async"

    async def handle(self, unit: Unit) -> McpResponse:
        events.append(("async", threading.get_ident(), unit))
        return McpResponse.text("async")


class WhereServer(Server):
    tools = (WhereTool, WhereAsyncTool)


async def test_a_sync_handler_runs_in_a_worker_thread(driver: Driver) -> None:
    loop_thread = threading.get_ident()
    container = Container()
    container.scoped(Unit)
    (await driver.call(container, WhereServer, "where-sync", {})).assertOk()
    (await driver.call(container, WhereServer, "where-async", {})).assertOk()
    (sync_kind, sync_thread, sync_unit), (async_kind, async_thread, _) = events
    assert (sync_kind, async_kind) == ("sync", "async")
    assert sync_thread != loop_thread
    assert async_thread == loop_thread
    assert isinstance(sync_unit, Unit)


# -- finalizers -----------------------------------------------------------------------------


class Session:
    """A scoped service with a finalizer (the code after ``yield``)."""


def open_session() -> Iterator[Session]:
    events.append("open")
    error = yield Session()
    events.append(f"close: {type(error).__name__ if error else 'ok'}")


async def open_async_session() -> AsyncIterator[Session]:
    events.append("open")
    error = yield Session()
    await anyio.lowlevel.checkpoint()
    events.append(f"close: {type(error).__name__ if error else 'ok'}")


class Receipt(Schema):
    total: int

    @model_validator(mode="after")
    def _seen(self) -> Receipt:
        events.append("output validated")
        return self


class CheckoutInput(Schema):
    total: int


class CheckoutTool(Tool[CheckoutInput, Receipt]):
    name = "checkout"

    def __init__(self, session: Session) -> None:
        self.session = session

    async def handle(self, payload: CheckoutInput, session: Session) -> McpResponse:
        assert session is self.session
        events.append("handle")
        if payload.total < 0:
            raise RuntimeError("negative total")
        if payload.total == 0:
            return McpResponse.structured({"total": "not a number"})
        return McpResponse.structured({"total": payload.total})


class CheckoutServer(Server):
    tools = (CheckoutTool,)


@pytest.fixture(params=["generator", "async generator"])
def session_container(request: pytest.FixtureRequest) -> Container:
    container = Container()
    factory = open_session if request.param == "generator" else open_async_session
    container.scoped(Session, factory)
    return container


async def test_finalizers_run_after_the_result_is_built(
    driver: Driver, session_container: Container
) -> None:
    result = await driver.call(session_container, CheckoutServer, "checkout", {"total": 3})
    result.assertOk().assertStructured({"total": 3})
    assert events == ["open", "handle", "output validated", "close: ok"]


async def test_finalizers_run_when_the_handler_raises(
    driver: Driver, session_container: Container
) -> None:
    result = await driver.call(session_container, CheckoutServer, "checkout", {"total": -1})
    result.assertError("Tool execution failed")
    assert events == ["open", "handle", "close: RuntimeError"]


async def test_finalizers_run_when_the_output_is_rejected(
    driver: Driver, session_container: Container
) -> None:
    result = await driver.call(session_container, CheckoutServer, "checkout", {"total": 0})
    result.assertError("Tool execution failed")
    assert events == ["open", "handle", "close: OutputContractError"]


class Started:
    """Set by the handler once it runs; the test then cancels the call."""

    def __init__(self) -> None:
        self.event = anyio.Event()


class SlowTool(Tool):
    name = "slow"

    async def handle(self, session: Session, started: Started) -> McpResponse:
        events.append("handle")
        started.event.set()
        await anyio.sleep_forever()
        return McpResponse.text("never")


class SlowServer(Server):
    tools = (SlowTool,)


def _cancellable(finalized: anyio.Event) -> tuple[Container, Started]:
    def session() -> Iterator[Session]:
        events.append("open")
        error = yield Session()
        events.append(f"close: {type(error).__name__ if error else 'ok'}")
        finalized.set()

    started = Started()
    container = Container()
    container.scoped(Session, session)
    container.instance(Started, started)
    return container, started


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_finalizers_run_when_an_sdk_client_cancels_the_call(mode: str) -> None:
    finalized = anyio.Event()
    container, started = _cancellable(finalized)
    sdk_server = build_sdk_server(compile_server(SlowServer, container), container)
    async with Client(sdk_server, mode=mode) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "slow", {})
            await started.event.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(10):  # a hang guard, not a timing assertion
            await finalized.wait()
        assert events == ["open", "handle", "close: CancelledError"]


@pytest.mark.parametrize("protocol", [MODERN, "2025-11-25"])
async def test_finalizers_run_when_a_test_client_call_is_abandoned(protocol: str) -> None:
    finalized = anyio.Event()
    container, started = _cancellable(finalized)
    client = McpTestClient(container, SlowServer, protocol=protocol)  # type: ignore[arg-type]
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.tool, "slow", {})
        await started.event.wait()
        tg.cancel_scope.cancel()
    with anyio.fail_after(10):  # a hang guard, not a timing assertion
        await finalized.wait()
    assert events == ["open", "handle", "close: CancelledError"]


# -- overlapping calls ----------------------------------------------------------------------


class Rendezvous:
    """A singleton both calls meet at: each waits until the other is inside its handler."""

    def __init__(self) -> None:
        self.arrived = 0
        self.both = anyio.Event()


class MeetTool(Tool):
    name = "meet"

    async def handle(self, unit: Unit, rendezvous: Rendezvous) -> McpResponse:
        rendezvous.arrived += 1
        if rendezvous.arrived == 2:
            rendezvous.both.set()
        await rendezvous.both.wait()
        events.append(unit)
        return McpResponse.text("met")


class MeetServer(Server):
    tools = (MeetTool,)


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_overlapping_calls_on_one_connection_get_their_own_scopes(mode: str) -> None:
    container = Container()
    container.scoped(Unit)
    container.instance(Rendezvous, Rendezvous())
    sdk_server = build_sdk_server(compile_server(MeetServer, container), container)
    async with Client(sdk_server, mode=mode) as client:
        with anyio.fail_after(10):  # a hang guard: the calls must run at the same time
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "meet", {})
                tg.start_soon(client.call_tool, "meet", {})
    first, second = events
    assert isinstance(first, Unit)
    assert first is not second
