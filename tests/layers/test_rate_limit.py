"""``RateLimit``: calls per caller, counted in a ``RateStore``; what an attacker tries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import anyio
import pytest
from mcp import types
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    CompileError,
    Identity,
    McpRequest,
    McpResponse,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.layers import (
    InMemoryRateStore,
    Rate,
    RateLimit,
    RateStore,
    client_key,
    identity_key,
)
from mcp_adapter.testing import McpResult, McpTestClient
from schemas import Schema
from tests.components.support import ERAS
from tests.layers.support import client

pytestmark = pytest.mark.anyio

ADA = Identity(subject="ada", client_id="client-1")
BOB = Identity(subject="bob", client_id="client-1")


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def limited(result: McpResult, wait: str) -> None:
    result.assertError(f"Rate limit exceeded; retry after {wait} s")


@pytest.mark.parametrize("era", ERAS)
async def test_one_callers_burst_does_not_throttle_another_and_arguments_do_not_escape(
    era: str,
) -> None:
    clock = Clock()
    limit = RateLimit(2, 60, clock=clock)
    async with (
        client(limit, era=era, identity=ADA) as ada,
        client(limit, era=era, identity=BOB) as bob,
    ):
        (await ada.tool("echo", {"text": "1"})).assertOk()
        (await ada.tool("echo", {"text": "2"})).assertOk()
        limited(await ada.tool("echo", {"text": "3"}), "30")
        # other arguments, another tool, another kind: the same caller, the same budget
        limited(await ada.tool("echo", {"text": "other", "mode": "error"}), "30")
        limited(await ada.tool("repeat", {"times": 1}), "30")
        read = await ada.read_resource("notes://1")
        (await bob.tool("echo", {"text": "1"})).assertOk()
        (await bob.tool("echo", {"text": "2"})).assertOk()
        limited(await bob.tool("echo", {"text": "3"}), "30")
        clock.now += 30  # one call's worth refilled
        (await ada.tool("echo", {"text": "4"})).assertOk()
        limited(await ada.tool("echo", {"text": "5"}), "30")
    assert read.error == {
        "code": types.INTERNAL_ERROR,
        "message": "Rate limit exceeded; retry after 30 s",
    }


@pytest.mark.parametrize("era", ERAS)
async def test_a_concurrent_burst_gets_exactly_the_limit(era: str) -> None:
    answers: list[bool] = []
    async with client(RateLimit(5, 60), era=era, identity=ADA) as ada:

        async def call(number: int) -> None:
            answers.append((await ada.tool("echo", {"text": str(number)})).is_error)

        async with anyio.create_task_group() as group:
            for number in range(40):
                group.start_soon(call, number)
    assert answers.count(False) == 5
    assert answers.count(True) == 35


@pytest.mark.parametrize("era", ERAS)
async def test_prompts_listings_and_completion_are_limited_unless_methods_says_otherwise(
    era: str,
) -> None:
    async with client(RateLimit(1, 60), era=era) as mcp:
        (await mcp.prompt("greeting", {"who": "ada"})).assertOk()
        for refused in (
            await mcp.prompt("greeting", {"who": "ada"}),
            await mcp.list_tools(),
            await mcp.request(
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "notes://{number}"},
                    "argument": {"name": "number", "value": "4"},
                },
            ),
        ):
            assert refused.error is not None
            assert refused.error["code"] == types.INTERNAL_ERROR
            assert refused.error["message"].startswith("Rate limit exceeded; retry after ")
    async with client(RateLimit(1, 60, methods={"tools/call"}), era=era) as mcp:
        for _ in range(3):
            (await mcp.list_tools()).assertOk()
            (await mcp.prompt("greeting", {"who": "ada"})).assertOk()
        (await mcp.tool("echo", {"text": "1"})).assertOk()
        (await mcp.tool("echo", {"text": "2"})).assertError("Rate limit exceeded")


def app_of(request: McpRequest) -> str:
    """The signed-in caller's OAuth client: every user of one app shares its budget."""
    assert request.identity is not None
    return request.identity.client_id


@pytest.mark.parametrize("era", ERAS)
async def test_per_client_and_per_function_choose_who_shares_a_budget(era: str) -> None:
    by_client = RateLimit(1, 60, per="client")
    by_app = RateLimit(1, 60, per=app_of)
    for limit in (by_client, by_app):
        async with (
            client(limit, era=era, identity=ADA) as ada,
            client(limit, era=era, identity=BOB) as bob,
        ):
            (await ada.tool("echo", {"text": "1"})).assertOk()
            (await bob.tool("echo", {"text": "1"})).assertError("Rate limit exceeded")
    request = McpRequest(identity=ADA)
    assert by_client.key(request) == "mcp_adapter.rate:client:memory"
    assert by_app.key(request) == "mcp_adapter.rate:client-1"
    assert RateLimit(1, namespace="search").key(request) == "search:identity:ada"


def http_request(client: tuple[str, int] | None) -> Request:
    return Request(
        {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "client": client}
    )


def test_keys_name_the_identity_else_the_http_client_else_the_transport() -> None:
    from_10 = http_request(("10.0.0.7", 50123))
    assert identity_key(McpRequest(transport="http", http_request=from_10)) == "client:10.0.0.7"
    signed = McpRequest(transport="http", http_request=from_10, identity=ADA)
    assert identity_key(signed) == "identity:ada"
    assert client_key(signed) == "client:10.0.0.7"
    nowhere = McpRequest(transport="http", http_request=http_request(None))
    assert client_key(nowhere) == "client:unknown"
    assert identity_key(McpRequest(transport="stdio")) == "client:stdio"
    # a subject that looks like an address is still an identity's key, not that client's
    sneaky = McpRequest(identity=Identity(subject="client:10.0.0.7", client_id="c"))
    assert identity_key(sneaky) == "identity:client:10.0.0.7"


async def test_memory_stays_bounded_with_100k_distinct_keys() -> None:
    store = InMemoryRateStore(max_keys=10_000)
    rate = Rate(1, 60)
    now = 5_000.0
    for number in range(100_000):
        assert await store.hit(f"k{number}", rate, now) is None
    assert len(store) == 10_000
    # the most recent callers are still counted; the oldest were dropped first
    assert await store.hit("k99999", rate, now) == pytest.approx(60)
    assert await store.hit("k0", rate, now) is None
    # once a caller's bucket is full again its key is forgotten
    assert await store.hit("late", rate, now + 61) is None
    assert len(store) == 1


async def test_the_store_refills_one_call_per_interval_and_refused_calls_do_not_count() -> None:
    store, rate = InMemoryRateStore(), Rate(3, 3.0)
    assert [await store.hit("k", rate, 0.0) for _ in range(4)] == [None, None, None, 1.0]
    for _ in range(10):  # hammering while refused does not push the next slot later
        assert await store.hit("k", rate, 0.5) == 0.5
    assert await store.hit("k", rate, 1.0) is None
    assert await store.hit("k", rate, 1.0) == 1.0
    assert await store.hit("other", rate, 1.0) is None


class Recording:
    """A store that refuses every call with a fixed wait, and records what it was asked."""

    def __init__(self, wait: float | None) -> None:
        self.wait = wait
        self.hits: list[tuple[str, Rate, float]] = []

    async def hit(self, key: str, rate: Rate, now: float) -> float | None:
        self.hits.append((key, rate, now))
        return self.wait


@pytest.mark.parametrize(
    ("wait", "shown"), [(0.31, "0.4"), (0.3, "0.3"), (0.0001, "0.1"), (2.0, "2"), (61.25, "61.3")]
)
async def test_a_pluggable_store_gets_the_key_rate_and_time_and_its_wait_is_shown(
    wait: float, shown: str
) -> None:
    store = Recording(wait)
    assert isinstance(store, RateStore)
    clock = Clock()
    async with client(RateLimit(7, 2.0, store=store, clock=clock), era=ERAS[0]) as mcp:
        limited(await mcp.tool("echo", {"text": "1"}), shown)
    assert store.hits == [("mcp_adapter.rate:client:memory", Rate(7, 2.0), clock.now)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"calls": 0}, "positive whole number of calls"),
        ({"calls": 2.5}, "positive whole number of calls"),
        ({"calls": 1, "period": 0}, "positive period"),
        ({"calls": 1, "per": "ip"}, "per= is 'identity', 'client' or a function"),
    ],
)
def test_bad_settings_fail_when_the_layer_is_made(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RateLimit(**options)


# -- the request stage: counted before anything else runs -------------------------------


class Opened:
    """Counts what a call opened: hooks run, scoped services built and closed."""

    def __init__(self) -> None:
        self.hooks = 0
        self.services = 0
        self.closed = 0


class Database:
    """A scoped service with a finalizer (a connection per call)."""


def database(opened: Opened) -> Iterator[Database]:
    opened.services += 1
    try:
        yield Database()
    finally:
        opened.closed += 1


class CountInput(Schema):
    count: int


class Guarded(Tool[CountInput]):
    """A tool whose authorize hook and constructor need the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def authorize(self, opened: Opened, db: Database) -> bool:
        opened.hooks += 1
        return True

    async def handle(self, payload: CountInput) -> McpResponse:
        return McpResponse.text(str(payload.count))


class Hidden(Tool):
    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


def guarded(*layers: Any, era: str, identity: Identity = ADA) -> tuple[McpTestClient, Opened]:
    class Guarding(Server):
        name = "guarding"
        tools = (Guarded, Hidden)
        middleware: ClassVar = layers

    opened = Opened()
    container = Container()
    container.instance(Opened, opened)
    container.scoped(Database, database)
    return McpTestClient(container, Guarding, protocol=era, identity=identity), opened


@pytest.mark.parametrize("era", ERAS)
async def test_a_refused_call_runs_no_hook_and_opens_no_service(era: str) -> None:
    mcp, opened = guarded(RateLimit(2, 60, clock=Clock()), era=era)
    for number in range(12):
        answer = await mcp.tool("guarded", {"count": number})
        if number < 2:
            answer.assertOk()
        else:
            limited(answer, "30")
    assert (opened.hooks, opened.services, opened.closed) == (2, 2, 2)


@pytest.mark.parametrize("era", ERAS)
async def test_unknown_hidden_and_invalid_calls_spend_the_budget(era: str) -> None:
    mcp, opened = guarded(RateLimit(3, 60, clock=Clock()), era=era)
    assert (await mcp.tool("made-up")).error is not None
    assert (await mcp.tool("hidden")).error is not None
    (await mcp.tool("guarded", {"count": "many"})).assertError("Invalid tool arguments")
    limited(await mcp.tool("guarded", {"count": 1}), "20")
    # past the limit, what is refused is refused before the name is even looked up
    limited(await mcp.tool("made-up"), "20")
    limited(await mcp.tool("hidden"), "20")
    assert opened.services == 1  # the invalid call's hook ran (it came before validation)


@pytest.mark.parametrize("era", ERAS)
async def test_at_the_call_stage_only_calls_that_reach_the_handler_count(era: str) -> None:
    mcp, opened = guarded(RateLimit(1, 60, stage="call", clock=Clock()), era=era)
    for _ in range(3):
        assert (await mcp.tool("made-up")).error is not None
        (await mcp.tool("guarded", {"count": "many"})).assertError("Invalid tool arguments")
    (await mcp.tool("guarded", {"count": 1})).assertOk()
    limited(await mcp.tool("guarded", {"count": 2}), "60")
    assert opened.hooks == 5  # the hooks ran before the layer refused


class OwnLimit(Tool):
    """A tool with a limit of its own."""

    middleware: ClassVar = (RateLimit(1, 60, stage="call", clock=Clock()),)

    async def handle(self) -> McpResponse:
        return McpResponse.text("done")


async def test_on_a_component_it_stands_at_the_call_stage_and_the_request_stage_is_refused() -> (
    None
):
    class Own(Server):
        name = "own"
        tools = (OwnLimit,)

    mcp = McpTestClient(Container(), Own)
    (await mcp.tool("own-limit")).assertOk()
    limited(await mcp.tool("own-limit"), "60")

    class Misplaced(Tool):
        middleware: ClassVar = (RateLimit(1, 60),)

        async def handle(self) -> McpResponse:
            return McpResponse.text("done")

    class Wrong(Server):
        name = "wrong"
        tools = (Misplaced,)

    with pytest.raises(CompileError) as raised:
        compile_server(Wrong, Container())
    (found,) = raised.value.problems
    assert found.path == ("middleware of tool 'misplaced'", "RateLimit")
    assert "stands in the request stage" in found.message
    assert "stage='call'" in found.hint
